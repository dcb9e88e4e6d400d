#include <pacer/core/bad_input.hpp>
#include <pacer/report/end_report.hpp>
#include <pacer/report/html_report.hpp>
#include <pacer/report/report_job.hpp>
#include <pacer/report/result_folder.hpp>
#include <pacer/report/tables.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>

#include <fmt/format.h>

#include <filesystem>

namespace pacer::report {

namespace fs = std::filesystem;

namespace {

// `packets`: keep every packet (export's packets table); else fold them as read (report.html).
result_folder read_folder(const std::string& dir, bool packets = false) {
    return packets ? read_result_folder(dir) : read_folded_result_folder(dir);
}

} // namespace

int run_report(const report_settings& s) {
    if (s.inputs.empty() || s.inputs.size() > 2)
        throw bad_input("report takes one result folder, or two to compare");
    // Every input is read and checked before anything is written.
    std::vector<result_folder> folders;
    for (const auto& in : s.inputs)
        folders.push_back(read_folder(in));
    fs::path out = s.output;
    // The folder's own page (no -o) is pacer's, made from the folder: a new one replaces it.
    const bool own_page = out.empty();
    if (out.empty() && folders.size() == 1)
        out = fs::path(s.inputs[0]) / "report.html";
    if (out.empty()) {
        // Named after the other folder: `A/report-vs-B.html` (also for `.` or a trailing '/').
        auto other = fs::absolute(s.inputs[1]).lexically_normal();
        if (other.filename().empty())
            other = other.parent_path();
        out = fs::path(s.inputs[0]) / fmt::format("report-vs-{}.html", other.filename().string());
    }
    std::error_code ec;
    const bool replaces = fs::exists(out, ec);
    if (replaces && (!own_page || !fs::is_regular_file(out, ec)))
        throw bad_input(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose another file",
            out.string()));
    if (out.has_parent_path() && !fs::is_directory(out.parent_path(), ec))
        throw bad_input(fmt::format("--output {}: folder {} does not exist", out.string(),
                                    out.parent_path().string()));
    if (s.dry_run) {
        fmt::print(
            "pacer report --dry-run: checked; nothing written\n  input      {}\n  report     "
            "{}\n",
            folders.size() == 1 ? s.inputs[0] : s.inputs[0] + " against " + s.inputs[1],
            out.string());
        return runtime::exit_ok;
    }
    const std::string html =
        folders.size() == 1 ? render_report(folders[0]) : render_comparison(folders[0], folders[1]);
    if (replaces)
        replace_file(out, html); // atomically: the old page stays if this fails
    else
        runtime::write_new_file(out, html);
    fmt::print("pacer report: {} ({})\n  report     {}\n",
               folders.size() == 1 ? to_string(folders[0].kind) : "comparison",
               folders.size() != 1 ? fmt::format("{} against {}", s.inputs[0], s.inputs[1])
               : folders[0].kind == folder_kind::http
                   ? fmt::format("{} requests", folders[0].requests.size())
               : folders[0].kind == folder_kind::http_capacity
                   ? fmt::format("{} probes", folders[0].parts.size())
                   : fmt::format("{} session{}, {} packets", folders[0].sessions.size(),
                                 folders[0].sessions.size() == 1 ? "" : "s",
                                 folders[0].packet_count()),
               out.string());
    return runtime::exit_ok;
}

int run_export(const export_settings& s) {
    const auto folder = read_folder(s.input, true);
    const fs::path out = s.output.empty() ? fs::path(s.input) / fmt::format("tables-{}", s.format)
                                          : fs::path(s.output);
    const auto tables = build_tables(folder);
    if (fs::exists(out))
        throw bad_input(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            out.string()));
    if (s.dry_run) {
        fmt::print("pacer export --dry-run: checked; nothing written\n  input      {} ({})\n"
                   "  tables     {} as {} in {}\n",
                   s.input, to_string(folder.kind), tables.size(), s.format, out.string());
        return runtime::exit_ok;
    }
    const auto files = write_table_files(tables, out, s.format);
    fmt::print("pacer export: {} as {}\n", to_string(folder.kind), s.format);
    for (std::size_t i = 0; i < tables.size(); ++i)
        fmt::print("  {:<10} {} rows  {}\n", tables[i].name, tables[i].rows.size(),
                   files[i].string());
    return runtime::exit_ok;
}

} // namespace pacer::report

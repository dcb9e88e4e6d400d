// `pacer report`: a self-contained report.html for a result folder (or two, compared);
// `pacer export`: the folder's flat tables as CSV or JSONL.

#include <pacer/cli/auto_report.hpp>
#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/report/html_report.hpp>
#include <pacer/report/result_folder.hpp>
#include <pacer/report/tables.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace pacer::cli {

namespace fs = std::filesystem;

namespace {

struct report_settings {
    std::vector<std::string> inputs;
    std::string output;
    bool dry_run = false;
};

// `packets`: keep every packet (export's packets table); else fold them as read (report.html).
report::result_folder read_folder(const std::string& dir, bool packets = false) {
    try {
        return packets ? report::read_result_folder(dir) : report::read_folded_result_folder(dir);
    } catch (const report::folder_error& e) {
        throw usage_error(e.what());
    }
}

int run_report(const report_settings& s) {
    if (s.inputs.empty() || s.inputs.size() > 2)
        throw usage_error("report takes one result folder, or two to compare");
    // Every input is read and checked before anything is written.
    std::vector<report::result_folder> folders;
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
        throw usage_error(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose another file",
            out.string()));
    if (out.has_parent_path() && !fs::is_directory(out.parent_path(), ec))
        throw usage_error(fmt::format("--output {}: folder {} does not exist", out.string(),
                                      out.parent_path().string()));
    if (s.dry_run) {
        fmt::print(
            "pacer report --dry-run: checked; nothing written\n  input      {}\n  report     "
            "{}\n",
            folders.size() == 1 ? s.inputs[0] : s.inputs[0] + " against " + s.inputs[1],
            out.string());
        return runtime::exit_ok;
    }
    std::string html;
    try {
        html = folders.size() == 1 ? report::render_report(folders[0])
                                   : report::render_comparison(folders[0], folders[1]);
    } catch (const report::folder_error& e) {
        throw usage_error(e.what());
    }
    if (replaces)
        replace_file(out, html); // atomically: the old page stays if this fails
    else
        runtime::write_new_file(out, html);
    fmt::print("pacer report: {} ({})\n  report     {}\n",
               folders.size() == 1 ? to_string(folders[0].kind) : "comparison",
               folders.size() != 1 ? fmt::format("{} against {}", s.inputs[0], s.inputs[1])
               : folders[0].kind == report::folder_kind::http
                   ? fmt::format("{} requests", folders[0].requests.size())
               : folders[0].kind == report::folder_kind::http_capacity
                   ? fmt::format("{} probes", folders[0].parts.size())
                   : fmt::format("{} session{}, {} packets", folders[0].sessions.size(),
                                 folders[0].sessions.size() == 1 ? "" : "s",
                                 folders[0].packet_count()),
               out.string());
    return runtime::exit_ok;
}

struct export_settings {
    std::string input;
    std::string format = "csv";
    std::string output;
    bool dry_run = false;
};

int run_export(const export_settings& s) {
    const auto folder = read_folder(s.input, true);
    const fs::path out = s.output.empty() ? fs::path(s.input) / fmt::format("tables-{}", s.format)
                                          : fs::path(s.output);
    const auto tables = report::build_tables(folder);
    if (fs::exists(out))
        throw usage_error(fmt::format(
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

} // namespace

command add_report_command(CLI::App& app) {
    auto s = std::make_shared<report_settings>();
    auto* sub = app.add_subcommand(
        "report",
        "Write report.html for a result folder of pacer run (closed or open loop), a merged run "
        "(--processes or pacer merge), pacer serve, pacer record (run.json) or pacer http (also "
        "a --find-capacity folder): one self-contained "
        "file (inline SVG, no "
        "script, no network) with the pacing deviation distribution and the 80 ms line, late "
        "packets over time, a per-session heat strip, loop lag, send time, the open-loop "
        "arrivals, dispatch lag and latency, the serve levels against their SLOs, a "
        "recording's statuses and variants, an http run's arrivals, TTFT/E2EL/TPOT/ITL from the "
        "schedule and from dispatch, goodput and errors, the environment, and every plotted "
        "number in a table. "
        "Two folders: compared side by side. See "
        "docs/report.md.\nExit status: 0 written; 1 the file could not be written; 2 bad input "
        "(nothing written).");
    sub->add_option("folders", s->inputs, "One result folder, or two (A B) to compare")
        ->required()
        ->expected(1, 2);
    sub->add_option("-o,--output", s->output,
                    "The new HTML file; an existing one is refused. Without it: DIR/report.html "
                    "(comparing: A/report-vs-<B>.html), which replaces the page already there "
                    "(a run's own, or an earlier `pacer report`'s)")
        ->check(non_empty_path());
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return run_report(*s); }};
}

command add_export_command(CLI::App& app) {
    auto s = std::make_shared<export_settings>();
    auto* sub = app.add_subcommand(
        "export",
        "Write the flat tables of a result folder for pandas and spreadsheets: "
        "packets, sessions (a recording: one per variant), levels (serve) and requests (open "
        "loop); for pacer http requests and tokens (a --find-capacity folder: probes); with "
        "telemetry, telemetry (one row per sample) and energy (one per window); with "
        "units in "
        "the column names (_s: seconds). See docs/report.md.\nExit status: 0 written; 1 a "
        "file could not be written; 2 bad input (nothing written).");
    sub->add_option("folder", s->input,
                    "A result folder of pacer run, merge, serve, record or http")
        ->required();
    sub->add_option("--format", s->format, "csv or jsonl")
        ->check(CLI::IsMember({"csv", "jsonl"}))
        ->capture_default_str();
    sub->add_option("-o,--output", s->output,
                    "New folder for the tables (default: DIR/tables-<format>); never overwritten")
        ->check(non_empty_path());
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return run_export(*s); }};
}

} // namespace pacer::cli

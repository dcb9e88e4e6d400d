#include <pacer/report/end_report.hpp>
#include <pacer/report/html_report.hpp>
#include <pacer/report/result_folder.hpp>
#include <pacer/report/tables.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/output_dir.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>

namespace pacer::report {

void replace_file(const std::filesystem::path& file, const std::string& html) {
    const auto tmp = std::filesystem::path(file.string() + ".tmp");
    std::error_code ec;
    std::filesystem::remove(tmp, ec); // a crashed attempt's
    try {
        runtime::write_new_file(tmp, html);
        std::filesystem::rename(tmp, file);
    } catch (...) {
        std::filesystem::remove(tmp, ec);
        throw;
    }
}

std::optional<std::filesystem::path> write_end_report(const std::filesystem::path& dir) {
    return write_end_report(dir, false);
}

std::optional<std::filesystem::path> write_end_report(const std::filesystem::path& dir,
                                                      bool replace) {
    const auto file = dir / "report.html";
    std::error_code ec;
    const bool existed = std::filesystem::exists(file, ec);
    try {
        auto html = render_report(read_folded_result_folder(dir));
        if (replace)
            replace_file(file, html);
        else
            runtime::write_new_file(file, html);
        return file;
    } catch (const std::exception& e) {
        if (!existed) // no half-written page: `pacer report DIR` must be able to write it
            std::filesystem::remove(file, ec);
        std::fflush(stdout); // the warning follows what the run has printed so far
        fmt::print(stderr,
                   "pacer: warning: report.html not written: {} (the results are kept; "
                   "`pacer report {}` tries again)\n",
                   e.what(), dir.string());
        return std::nullopt;
    }
}

std::vector<std::filesystem::path> write_table_files(const std::vector<table>& tables,
                                                     const std::filesystem::path& out,
                                                     std::string_view format) {
    runtime::create_output_dir(out); // refuses an existing folder
    std::vector<std::filesystem::path> files;
    for (const auto& t : tables) {
        auto file = out / (t.name + (format == "csv" ? ".csv" : ".jsonl"));
        runtime::write_new_file(file, format == "csv" ? to_csv(t) : to_jsonl(t));
        files.push_back(std::move(file));
    }
    return files;
}

std::optional<std::filesystem::path> write_end_tables(const std::filesystem::path& dir,
                                                      std::string_view format) {
    const auto out = dir / fmt::format("tables-{}", format);
    std::error_code ec;
    const bool existed = std::filesystem::exists(out, ec);
    try {
        write_table_files(build_tables(read_result_folder(dir)), out, format);
        return out;
    } catch (const std::exception& e) {
        if (!existed) // no half-written folder: `pacer export DIR` must be able to write it
            std::filesystem::remove_all(out, ec);
        std::fflush(stdout);
        fmt::print(stderr,
                   "pacer: warning: tables not written: {} (the results are kept; `pacer export "
                   "{} --format {}` tries again)\n",
                   e.what(), dir.string(), format);
        return std::nullopt;
    }
}

} // namespace pacer::report

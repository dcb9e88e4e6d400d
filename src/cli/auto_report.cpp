#include <pacer/cli/auto_report.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/report/html_report.hpp>
#include <pacer/report/result_folder.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>

namespace pacer::cli {

std::optional<std::filesystem::path> write_end_report(const std::filesystem::path& dir) {
    const auto file = dir / "report.html";
    std::error_code ec;
    const bool existed = std::filesystem::exists(file, ec);
    try {
        write_new_file(file, report::render_report(report::read_result_folder(dir)));
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

} // namespace pacer::cli

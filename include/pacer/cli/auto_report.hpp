#pragma once
// report.html at the end of `pacer run` and `pacer serve` (unless --no-report): the page that
// `pacer report DIR` writes, made once the folder's summary.json is on disk.

#include <filesystem>
#include <optional>

namespace pacer::cli {

/// Writes `dir`/report.html and returns its path. A failure never loses the run: it prints one
/// line on stderr ("pacer: warning: report.html not written: ...") and returns nullopt.
std::optional<std::filesystem::path> write_end_report(const std::filesystem::path& dir);

} // namespace pacer::cli

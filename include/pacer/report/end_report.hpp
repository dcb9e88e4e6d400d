#pragma once
// report.html at the end of `pacer run` and `pacer serve` (unless --no-report): the page that
// `pacer report DIR` writes, made once the folder's summary.json is on disk; and, with
// --export csv|jsonl, the tables `pacer export DIR` writes.

#include <pacer/report/tables.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::report {

/// Writes `dir`/report.html and returns its path. A failure never loses the run: it prints one
/// line on stderr ("pacer: warning: report.html not written: ...") and returns nullopt.
std::optional<std::filesystem::path> write_end_report(const std::filesystem::path& dir);
/// The same; with `replace`, an existing report.html (an earlier attempt's, e.g. before `record
/// --resume`) is replaced by the new page, atomically: written beside it, then renamed over it,
/// so a page that cannot be made leaves the old one.
std::optional<std::filesystem::path> write_end_report(const std::filesystem::path& dir,
                                                      bool replace);

/// Writes `html` to `file`, replacing an existing file atomically (a temporary file beside it,
/// then a rename). Throws on failure, leaving `file` as it was and no temporary file.
void replace_file(const std::filesystem::path& file, const std::string& html);

/// Creates the folder `out` (refused when it exists) and writes one file per table into it,
/// `<name>.csv` or `<name>.jsonl` (`format` is "csv" or "jsonl"); returns the files in order.
/// Throws on failure (what `pacer export` reports). Shared by `pacer export` and --export.
std::vector<std::filesystem::path> write_table_files(const std::vector<table>& tables,
                                                     const std::filesystem::path& out,
                                                     std::string_view format);

/// --export csv|jsonl at the end of `pacer run` and `pacer serve`: the folder's tables into
/// `dir`/tables-<format>, as `pacer export DIR --format <format>` writes them. Returns that
/// folder. A failure never loses the run: one line on stderr ("pacer: warning: tables not
/// written: ..."), no partial folder left, nullopt.
std::optional<std::filesystem::path> write_end_tables(const std::filesystem::path& dir,
                                                      std::string_view format);

} // namespace pacer::report

#pragma once
// `pacer report` and `pacer export` executed (their flags are module cli's): every input read
// and checked before anything is written; bad input is a bad_input (exit 2).

#include <string>
#include <vector>

namespace pacer::report {

/// `pacer report`: one result folder, or two to compare.
struct report_settings {
    std::vector<std::string> inputs;
    std::string output; ///< empty: DIR/report.html (comparing: A/report-vs-<B>.html)
    bool dry_run = false;
};

/// Writes report.html (or the comparison) and prints where; with `dry_run`, prints the plan
/// and writes nothing. Returns the exit status.
int run_report(const report_settings& s);

/// `pacer export`: a folder's flat tables.
struct export_settings {
    std::string input;
    std::string format = "csv"; ///< csv or jsonl
    std::string output;         ///< empty: DIR/tables-<format>
    bool dry_run = false;
};

/// Writes the tables into a new folder and prints them; with `dry_run`, prints the plan and
/// writes nothing. Returns the exit status.
int run_export(const export_settings& s);

} // namespace pacer::report

// `pacer merge` executed (see merge.hpp): the parts read and checked, the `--dry-run` plan, or
// the pooled summary.json written and its lines printed.

#include <pacer/core/bad_input.hpp>
#include <pacer/core/json_text.hpp>
#include <pacer/metrics/merge.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/output_dir.hpp>

#include <boost/json/string.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace pacer::metrics {

namespace {

namespace fs = std::filesystem;

// What `merge` would do, as checked: `--dry-run` prints it instead of writing.
void print_merge_plan(const merge_request& s, std::span<const run_part> parts) {
    fmt::print("pacer merge --dry-run: checked; nothing written\n");
    for (std::size_t i = 0; i < parts.size(); ++i)
        fmt::print("  part       {}\n", s.inputs[i]);
    fmt::print("  clocks     agree within {:g} ms{}\n", s.max_clock_error_ms,
               s.allow_clock_skew ? " (or skew allowed)" : "");
    fmt::print("  output     {}/summary.json\n", s.output);
}

} // namespace

int execute_merge(const merge_request& s) {
    if (s.inputs.empty())
        throw bad_input("merge needs at least one run folder");
    if (fs::exists(s.output))
        throw bad_input(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            s.output));
    std::vector<run_part> parts;
    for (const auto& in : s.inputs) {
        // A part that cannot be read is pacer's failure to `run --processes`, which wrote it,
        // and bad input here, where the user named it.
        try {
            parts.push_back(read_run_part(in));
        } catch (const std::runtime_error& e) {
            throw bad_input(e.what());
        }
    }
    check_distinct(parts);
    check_compatible(parts);
    check_clocks(parts, s.max_clock_error_ms / 1e3, s.allow_clock_skew);
    const auto disjoint = check_overlap(parts, s.allow_disjoint);
    if (s.dry_run) {
        print_merge_plan(s, parts);
        return runtime::exit_ok;
    }
    auto merged = merge_parts(parts);
    merged["clock_check"] = boost::json::object{{"max_error_s", s.max_clock_error_ms / 1e3},
                                                {"allow_clock_skew", s.allow_clock_skew}};
    merged["allow_disjoint"] = s.allow_disjoint;
    if (disjoint) {
        const auto warning = "--allow-disjoint: " + *disjoint +
                             "; the pooled figures are not those of one simultaneous run";
        merged["warnings"].as_array().push_back(boost::json::string(warning));
        fmt::print(stderr, "pacer merge: warning: {}\n", warning);
    }
    runtime::create_output_dir(s.output);
    runtime::write_new_file(fs::path(s.output) / "summary.json", json_text(merged) + "\n");
    const auto summary = (fs::path(s.output) / "summary.json").string();
    fmt::print("{}", merge_report_text(merged, parts.size(), summary));
    if (const auto which = incomplete_parts_text(merged); !which.empty()) {
        fmt::print(stderr, "pacer merge: incomplete parts: {}\n", which);
        return runtime::exit_failed;
    }
    const auto* ol = merged.if_contains("open_loop");
    const bool schedule_kept = ol == nullptr || ol->at("schedule_kept").as_bool();
    return merged.at("pacing_qualified").as_bool() && schedule_kept ? runtime::exit_ok
                                                                    : runtime::exit_unqualified;
}

} // namespace pacer::metrics

// `pacer merge`: pools the raw samples of runs that streamed at the same time.

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/core/json_text.hpp>
#include <pacer/metrics/merge.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>

#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <optional>
#include <span>
#include <string>

namespace pacer::cli {

namespace fs = std::filesystem;

namespace {

struct merge_settings {
    std::vector<std::string> inputs;
    std::string output;
    bool allow_clock_skew = false;
    bool allow_disjoint = false;
    double max_clock_error_ms = 10;
    bool dry_run = false;
};

// What `merge` would do, as checked: `--dry-run` prints it instead of writing.
void print_merge_plan(const merge_settings& s, std::span<const metrics::run_part> parts) {
    fmt::print("pacer merge --dry-run: checked; nothing written\n");
    for (std::size_t i = 0; i < parts.size(); ++i)
        fmt::print("  part       {}\n", s.inputs[i]);
    fmt::print("  clocks     agree within {:g} ms{}\n", s.max_clock_error_ms,
               s.allow_clock_skew ? " (or skew allowed)" : "");
    fmt::print("  output     {}/summary.json\n", s.output);
}

int run_merge(const merge_settings& s) {
    if (s.inputs.empty())
        throw usage_error("merge needs at least one run folder");
    if (fs::exists(s.output))
        throw usage_error(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            s.output));
    std::vector<metrics::run_part> parts;
    for (const auto& in : s.inputs) {
        try {
            parts.push_back(metrics::read_run_part(in));
        } catch (const std::runtime_error& e) {
            throw usage_error(e.what());
        }
    }
    std::optional<std::string> disjoint;
    try {
        metrics::check_distinct(parts);
        metrics::check_compatible(parts);
        metrics::check_clocks(parts, s.max_clock_error_ms / 1e3, s.allow_clock_skew);
        disjoint = metrics::check_overlap(parts, s.allow_disjoint);
    } catch (const std::runtime_error& e) {
        throw usage_error(e.what());
    }
    if (s.dry_run) {
        print_merge_plan(s, parts);
        return runtime::exit_ok;
    }
    auto merged = metrics::merge_parts(parts);
    merged["clock_check"] = boost::json::object{{"max_error_s", s.max_clock_error_ms / 1e3},
                                                {"allow_clock_skew", s.allow_clock_skew}};
    merged["allow_disjoint"] = s.allow_disjoint;
    if (disjoint) {
        const auto warning = "--allow-disjoint: " + *disjoint +
                             "; the pooled figures are not those of one simultaneous run";
        merged["warnings"].as_array().push_back(boost::json::string(warning));
        fmt::print(stderr, "pacer merge: warning: {}\n", warning);
    }
    create_output_dir(s.output);
    runtime::write_new_file(fs::path(s.output) / "summary.json", json_text(merged) + "\n");
    const auto summary = (fs::path(s.output) / "summary.json").string();
    fmt::print("{}", metrics::merge_report_text(merged, parts.size(), summary));
    if (const auto which = metrics::incomplete_parts_text(merged); !which.empty()) {
        fmt::print(stderr, "pacer merge: incomplete parts: {}\n", which);
        return runtime::exit_failed;
    }
    const auto* ol = merged.if_contains("open_loop");
    const bool schedule_kept = ol == nullptr || ol->at("schedule_kept").as_bool();
    return merged.at("pacing_qualified").as_bool() && schedule_kept ? runtime::exit_ok
                                                                    : runtime::exit_unqualified;
}

} // namespace

command add_merge_command(CLI::App& app) {
    auto s = std::make_shared<merge_settings>();
    auto* sub = app.add_subcommand(
        "merge", "Pool the raw samples of runs that streamed at the same time (worker processes or "
                 "shards on several hosts): percentiles over every packet of every part, late "
                 "packets, sessions, and the peak number of overlapping input streams, aligned on "
                 "the wall clock with each part's recorded (monotonic, realtime) pair. Open-loop "
                 "shards of one schedule also pool dispatch lag and latency over every arrival.\n"
                 "Refused (exit 2): a part given twice (same folder, or a copy of one run), parts "
                 "of different schedules, parts that did not stream at the same time (unless "
                 "--allow-disjoint).\nExit status: 0 pooled and paced; 1 a part was interrupted "
                 "or had incomplete sessions (named on stderr and in incomplete_parts); 2 bad "
                 "input; 3 pacing-unqualified or schedule not kept.");
    sub->add_option("runs", s->inputs, "Run folders (each with summary.json and samples.json)")
        ->required();
    sub->add_option("-o,--output", s->output, "New folder for the pooled summary.json")
        ->required()
        ->check(non_empty_path());
    sub->add_option("--max-clock-error-ms", s->max_clock_error_ms,
                    "Parts from several hosts: each host's realtime clock must be NTP-synchronised "
                    "with at most this maximum error (as recorded by adjtimex at its run)")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_flag("--allow-clock-skew", s->allow_clock_skew,
                  "Merge parts from several hosts even when their clocks are not known to agree");
    sub->add_flag("--allow-disjoint", s->allow_disjoint,
                  "Merge parts that did not stream at the same time (their runs do not overlap on "
                  "the wall clock) anyway; the summary records a warning");
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return run_merge(*s); }};
}

} // namespace pacer::cli

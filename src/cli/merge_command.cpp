// `pacer merge`: pools the raw samples of runs that streamed at the same time. The options are
// declared here; metrics::execute_merge checks the parts and pools them.

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/metrics/merge.hpp>

#include <CLI/CLI.hpp>

#include <memory>

namespace pacer::cli {

command add_merge_command(CLI::App& app) {
    auto s = std::make_shared<metrics::merge_request>();
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
    return {sub, [s] { return metrics::execute_merge(*s); }};
}

} // namespace pacer::cli

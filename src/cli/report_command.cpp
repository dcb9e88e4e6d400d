// `pacer report`: a self-contained report.html for a result folder (or two, compared);
// `pacer export`: the folder's flat tables as CSV or JSONL.

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/report/report_job.hpp>

#include <CLI/CLI.hpp>

#include <memory>

namespace pacer::cli {

command add_report_command(CLI::App& app) {
    auto s = std::make_shared<report::report_settings>();
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
    return {sub, [s] { return report::run_report(*s); }};
}

command add_export_command(CLI::App& app) {
    auto s = std::make_shared<report::export_settings>();
    auto* sub = app.add_subcommand(
        "export",
        "Write the flat tables of a result folder for pandas and spreadsheets: "
        "packets, sessions (a recording: one per variant), levels (serve), requests (open "
        "loop) and turns (a multi-turn --scenario); for pacer http requests and tokens (a "
        "--find-capacity folder: probes); with "
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
    return {sub, [s] { return report::run_export(*s); }};
}

} // namespace pacer::cli

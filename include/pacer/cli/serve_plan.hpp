#pragma once
// `pacer serve` in the command line: the options as CLI11 fills them (serve_command.cpp
// declares them), their checks into a sweep::serve_job (serve_plan.cpp, with sweep's own in
// sweep/serve_checks.hpp) and `serve`, which runs it (serve_run.cpp).

#include <pacer/cli/telemetry_options.hpp>
#include <pacer/run/client_settings.hpp>
#include <pacer/sweep/serve_checks.hpp>

namespace pacer::cli {

/// The options of `pacer serve`, with what only the command needs on top.
struct serve_settings : sweep::serve_options {
    telemetry_settings telemetry;   ///< --gpu-telemetry & co. (not --server-metrics: above)
    run::client_settings client;    ///< wss:// trust and handshake headers
    run::omni_cli omni;             ///< vllm-omni's --chunk-ms, --ref-audio, --ack, --ack-ms
    bool stable_rule_given = false; ///< one of the --stable-* options was typed
    bool dry_run = false;
};

/// Checks `s` into a job, all but its observer and functions: the target, the runs, the warm-up
/// rule, the settle pause and the server's stats, the scenario and the SLOs, the inputs (each
/// file's at the protocol's rate into `direct`), the output folder (which must not exist), the
/// disk and the descriptors. Bad input: bad_input, one line, before anything is created.
sweep::serve_job check_serve(const serve_settings& s, sweep::direct_wire& direct);

/// Checks `s` (bad input: bad_input, one line, before anything is created), then prints the
/// plan (`--dry-run`) or starts the built-in mock when no `--url` is given, creates the output
/// folder and runs the sweep (sweep::execute_serve) with the progress line and
/// `--metrics-listen`. Returns the exit status.
int serve(const serve_settings& s);

} // namespace pacer::cli

// `pacer replay DIR`: offline, from the kept artifacts of `pacer run --keep-traces`, recompute
// the serving metrics (docs/protocol.md §4) and check every session against the native protocol
// oracle (docs/protocol.md §4.5). Writes `report.json`; never touches the network. The options
// are declared here; metrics::replay_folder checks them and the folders and replays them.

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/metrics/replay.hpp>

#include <CLI/CLI.hpp>

#include <memory>

namespace pacer::cli {

command add_replay_command(CLI::App& app) {
    auto s = std::make_shared<metrics::replay_request>();
    auto* sub = app.add_subcommand(
        "replay",
        "Offline: recompute the serving metrics of kept session artifacts (trace.jsonl + "
        "input-send-receipts.json) and check each session against the native protocol oracle. "
        "Writes report.json.\n"
        "Exit status: 0 every case passed; 1 some case failed or was not exercised; 2 bad input "
        "(nothing written).");
    sub->add_option("DIR", s->dir,
                    "A session folder, or a run folder holding session-NNN/ folders "
                    "(pacer run --keep-traces)")
        ->required();
    sub->add_option("--profile", s->profile,
                    "Server profile: nemotron (nemotron-voicechat-pr2188) or minicpmo "
                    "(minicpmo-native-pr2377). Default: the profile the run recorded in its "
                    "summary.json, or nemotron when it recorded none. A --profile that "
                    "contradicts the recorded one is refused");
    sub->add_option("--startup-reserve-ms", s->startup_reserve_ms,
                    "Playback startup reserve of the underrun simulation")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--output", s->output, "Report file; must not exist. Default: DIR/report.json");
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return metrics::replay_folder(*s); }};
}

} // namespace pacer::cli

#pragma once
// The telemetry flags of `pacer run` (and, once wired, `pacer serve`): `--gpu-telemetry`,
// `--nvml-library` (a test option), `--server-metrics`, `--telemetry-interval`,
// `--idle-baseline` and `--metrics-listen`. docs/telemetry.md describes them.

#include <pacer/telemetry/recorder.hpp>

#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace pacer::cli {

/// The flags as typed.
struct telemetry_settings {
    std::string gpu;
    std::string nvml_library;
    std::string server_metrics;
    std::string interval = "100ms";
    std::string idle_baseline; ///< "": 5 s when telemetry is on
};

/// Adds the telemetry flags (group "Telemetry") to `sub`; `--metrics-listen` fills `listen`.
/// `with_server_metrics` false leaves `--server-metrics` out, for a command that gives that
/// name another meaning (`pacer serve`'s native-mock `/stats`): `s.server_metrics` then stays
/// as the command sets it.
void add_telemetry_options(CLI::App& sub, telemetry_settings& s, std::string& listen,
                           bool with_server_metrics = true);

/// What `open_telemetry` gives: the recorder (nullptr: no telemetry asked, or a dry run) and
/// the dry run's lines.
struct opened_telemetry {
    std::shared_ptr<telemetry::recorder> recorder;
    std::vector<std::string> plan;
};

/// Checks the flags and, unless `dry_run`, opens what they name (NVML loaded, its GPUs
/// checked; the URL parsed); the listen address is checked. A dry run loads nothing (as it
/// connects to no server). Throws usage_error (exit 2, one line) for anything wrong, before
/// any file is written. Scrape warnings go to stderr, each once.
opened_telemetry open_telemetry(const telemetry_settings& s, const std::string& listen,
                                bool dry_run);

} // namespace pacer::cli

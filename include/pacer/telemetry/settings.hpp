#pragma once
// The telemetry flags of `pacer run`, `pacer http` and `pacer serve` as typed (`settings`:
// `--gpu-telemetry`, `--nvml-library`, `--server-metrics`, `--telemetry-interval`,
// `--idle-baseline`; their declarations are module cli's) and `open_telemetry`, which checks
// them into recorder options and opens the recorder (docs/telemetry.md).

#include <pacer/telemetry/recorder.hpp>

#include <memory>
#include <string>
#include <vector>

namespace pacer::telemetry {

/// The flags as typed.
struct settings {
    std::string gpu;
    std::string nvml_library;
    std::string server_metrics;
    std::string interval = "100ms";
    std::string idle_baseline; ///< "": 5 s when telemetry is on
};

/// What `open_telemetry` gives: the recorder (nullptr: no telemetry asked, or a dry run) and
/// the dry run's lines.
struct opened_telemetry {
    std::shared_ptr<telemetry::recorder> recorder;
    std::vector<std::string> plan;
};

/// Checks the flags and, unless `dry_run`, opens what they name (NVML loaded, its GPUs
/// checked; the URL parsed); the listen address (`--metrics-listen`) is checked. A dry run
/// loads nothing (as it connects to no server). Throws runtime::usage_error (exit 2, one line)
/// for anything wrong, before any file is written. Scrape warnings go to stderr, each once.
opened_telemetry open_telemetry(const settings& s, const std::string& listen, bool dry_run);

} // namespace pacer::telemetry

#pragma once
// The telemetry flags of `pacer run`, `pacer http` and `pacer serve` as typed (`settings`:
// `--gpu-telemetry`, `--nvml-library`, `--server-metrics`, `--telemetry-interval`,
// `--idle-baseline`; their declarations are module cli's) and `open_telemetry`, which checks
// them into recorder options and opens the recorder (docs/telemetry.md).

#include <pacer/telemetry/metrics_listener.hpp>
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
    /// --metrics-linger: how long the final totals stay served for a watcher's scrape.
    std::string metrics_linger = "15s";
};

/// What `open_telemetry` gives: the recorder (nullptr: no telemetry asked, or a dry run), the
/// bound `--metrics-listen` endpoint (nullptr: none, or a dry run) and the dry run's lines.
struct opened_telemetry {
    std::shared_ptr<telemetry::recorder> recorder;
    std::shared_ptr<telemetry::metrics_listener> listener;
    std::vector<std::string> plan;
};

/// Checks the flags and opens what they name: NVML loaded and its GPUs checked, the URL parsed,
/// the `--metrics-listen` address bound (a busy port is refused here). A dry run checks the same
/// (NVML loaded, the address bound) and lets it go: it only does not scrape the server's URL, as
/// it connects to no server. Throws bad_input (exit 2, one line) for anything wrong,
/// before any file is written or any header printed. Scrape warnings go to stderr, each once.
opened_telemetry open_telemetry(const settings& s, const std::string& listen, bool dry_run);

/// The end of a command with `--metrics-listen`: `l` (nullptr: none) has its final totals
/// (`serve_final`); when someone scraped it, says so on stderr and waits until they scrape the
/// final totals or `--metrics-linger` passes.
void finish_listening(metrics_listener* l);

} // namespace pacer::telemetry

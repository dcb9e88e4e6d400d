// The telemetry flags (telemetry_options.hpp).

#include <pacer/cli/telemetry_options.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace pacer::cli {

void add_telemetry_options(CLI::App& sub, telemetry_settings& s, std::string& listen,
                           bool with_server_metrics) {
    const char* group = "Telemetry (docs/telemetry.md)";
    // What the energy is divided by: pacer http's work is requests, run's and serve's sessions.
    const bool http = sub.get_name() == "http";
    sub.add_option("--gpu-telemetry", s.gpu,
                   fmt::format("Sample local GPUs through NVML (loaded at run time, and by "
                               "--dry-run; no GPU, no library: one error line): nvml for every "
                               "GPU, nvml:0,2 for those. summary.json gets `telemetry` (energy "
                               "J, mean/peak W, {}), the samples go to telemetry.jsonl",
                               http ? "J per successful request" : "J per session-second of input"))
        ->group(group);
    sub.add_option("--nvml-library", s.nvml_library,
                   "Test option: load this file instead of libnvidia-ml.so.1 (the tests' fake "
                   "NVML)")
        ->group(group);
    if (with_server_metrics)
        sub.add_option(
               "--server-metrics", s.server_metrics,
               "Scrape this Prometheus text endpoint (e.g. DCGM exporter's "
               "http://HOST:9400/metrics, vLLM's /metrics) at the telemetry interval: "
               "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION and DCGM_FI_DEV_POWER_USAGE give energy "
               "and power, every gauge is recorded")
            ->group(group);
    sub.add_option("--telemetry-interval", s.interval,
                   "How often the telemetry is sampled, on its own thread")
        ->capture_default_str()
        ->group(group);
    sub.add_option("--idle-baseline", s.idle_baseline,
                   fmt::format("Sample this long before the {} start, to measure the idle "
                               "power (default 5s with --gpu-telemetry or --server-metrics; 0 "
                               "for none)",
                               http ? "requests" : "sessions"))
        ->group(group);
    sub.add_option("--metrics-listen", listen,
                   "Serve the live progress counters in the Prometheus text format at "
                   "http://HOST:PORT/metrics during the run, on a thread of its own (port 0: "
                   "any free port, printed on stderr); bound before anything is written (a "
                   "busy port: one error line)")
        ->group(group);
    sub.add_option("--metrics-linger", s.metrics_linger,
                   "--metrics-listen: after the run, keep serving the final totals until they "
                   "are scraped, at most this long, when the endpoint was scraped before (0: "
                   "stop at once)")
        ->capture_default_str()
        ->group(group);
}

} // namespace pacer::cli

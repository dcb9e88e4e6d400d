#include <pacer/cli/commands.hpp>
#include <pacer/cli/telemetry_options.hpp>
#include <pacer/core/units.hpp>
#include <pacer/telemetry/metrics_listener.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

namespace pacer::cli {

void add_telemetry_options(CLI::App& sub, telemetry_settings& s, std::string& listen,
                           bool with_server_metrics) {
    const char* group = "Telemetry (docs/telemetry.md)";
    sub.add_option("--gpu-telemetry", s.gpu,
                   "Sample local GPUs through NVML (loaded at run time; no GPU, no library: "
                   "one error line): nvml for every GPU, nvml:0,2 for those. summary.json gets "
                   "`telemetry` (energy J, mean/peak W, J per session-second of input), "
                   "the samples go to telemetry.jsonl")
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
                   "Sample this long before the sessions start, to measure the idle power "
                   "(default 5s with --gpu-telemetry or --server-metrics; 0 for none)")
        ->group(group);
    sub.add_option("--metrics-listen", listen,
                   "Serve the live progress counters in the Prometheus text format at "
                   "http://HOST:PORT/metrics during the run, on a thread of its own (port 0: "
                   "any free port, printed on stderr)")
        ->group(group);
}

opened_telemetry open_telemetry(const telemetry_settings& s, const std::string& listen,
                                bool dry_run) {
    telemetry::options o;
    o.gpu = s.gpu;
    o.nvml_library = s.nvml_library;
    o.server_metrics = s.server_metrics;
    const auto interval = parse_duration(s.interval);
    if (!interval || interval->count() <= 0)
        throw usage_error(fmt::format(
            "--telemetry-interval '{}' is not a positive duration such as 100ms", s.interval));
    o.interval = *interval;
    if (!s.idle_baseline.empty()) {
        const auto idle = parse_duration(s.idle_baseline);
        if (!idle)
            throw usage_error(fmt::format(
                "--idle-baseline '{}' is not a duration such as 5s (0 for none)", s.idle_baseline));
        o.idle_baseline = *idle;
    }
    if (!o.on() && !s.idle_baseline.empty())
        throw usage_error("--idle-baseline needs --gpu-telemetry or --server-metrics");
    if (s.gpu.empty() && !s.nvml_library.empty())
        throw usage_error("--nvml-library needs --gpu-telemetry nvml");
    opened_telemetry out;
    try {
        if (!listen.empty()) {
            telemetry::check_listen_address(listen);
            out.plan.push_back(fmt::format("live counters served at http://{}/metrics", listen));
        }
        if (dry_run) {
            auto lines = telemetry::recorder::plan(o);
            out.plan.insert(out.plan.begin(), lines.begin(), lines.end());
            return out;
        }
        out.recorder = telemetry::recorder::open(o, [](const std::string& warning) {
            fmt::print(stderr, "pacer: warning: {}\n", warning);
            std::fflush(stderr);
        });
    } catch (const telemetry::telemetry_error& e) {
        throw usage_error(e.what());
    }
    return out;
}

} // namespace pacer::cli

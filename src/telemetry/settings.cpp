// The telemetry flags checked and opened (settings.hpp).

#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/telemetry/metrics_listener.hpp>
#include <pacer/telemetry/settings.hpp>

#include <fmt/format.h>

#include <cstdio>

namespace pacer::telemetry {

opened_telemetry open_telemetry(const settings& s, const std::string& listen, bool dry_run) {
    options o;
    o.gpu = s.gpu;
    o.nvml_library = s.nvml_library;
    o.server_metrics = s.server_metrics;
    const auto interval = parse_duration(s.interval);
    if (!interval || interval->count() <= 0)
        throw bad_input(fmt::format(
            "--telemetry-interval '{}' is not a positive duration such as 100ms", s.interval));
    o.interval = *interval;
    if (!s.idle_baseline.empty()) {
        const auto idle = parse_duration(s.idle_baseline);
        if (!idle)
            throw bad_input(fmt::format(
                "--idle-baseline '{}' is not a duration such as 5s (0 for none)", s.idle_baseline));
        o.idle_baseline = *idle;
    }
    if (!o.on() && !s.idle_baseline.empty())
        throw bad_input("--idle-baseline needs --gpu-telemetry or --server-metrics");
    if (s.gpu.empty() && !s.nvml_library.empty())
        throw bad_input("--nvml-library needs --gpu-telemetry nvml");
    const auto linger = parse_duration(s.metrics_linger);
    if (!linger || linger->count() < 0)
        throw bad_input(fmt::format(
            "--metrics-linger '{}' is not a duration such as 15s (0 for none)", s.metrics_linger));
    if (listen.empty() && s.metrics_linger != settings{}.metrics_linger)
        throw bad_input("--metrics-linger needs --metrics-listen");
    opened_telemetry out;
    if (!listen.empty()) {
        // Bound now, before any folder or header: a busy port is this one line.
        out.listener = std::make_shared<metrics_listener>(listen, nullptr, *linger);
        out.plan.push_back(fmt::format("live counters served at http://{}/metrics", listen));
    }
    if (dry_run) {
        auto lines = recorder::plan(o);
        out.plan.insert(out.plan.begin(), lines.begin(), lines.end());
        out.listener.reset(); // the port was free: a dry run serves nothing
        return out;
    }
    out.recorder = recorder::open(o, [](const std::string& warning) {
        fmt::print(stderr, "pacer: warning: {}\n", warning);
        std::fflush(stderr);
    });
    return out;
}

void finish_listening(metrics_listener* l) {
    if (!l)
        return;
    if (l->watched()) {
        fmt::print(stderr,
                   "pacer: the final totals stay at {} until they are scraped (at most {:g} s, "
                   "--metrics-linger)\n",
                   l->url(), std::chrono::duration<double>(l->linger_time()).count());
        std::fflush(stderr);
    }
    l->linger();
}

} // namespace pacer::telemetry

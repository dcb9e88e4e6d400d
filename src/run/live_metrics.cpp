#include <pacer/run/live_metrics.hpp>
#include <pacer/telemetry/exposition.hpp>

#include <algorithm>

namespace pacer::run {

std::string live_metrics_text(const session::live_counters& c, std::optional<std::size_t> level) {
    using telemetry::metric_family;
    using telemetry::metric_type;
    const auto load = [](const std::atomic<std::uint64_t>& a) {
        return static_cast<double>(a.load(std::memory_order_relaxed));
    };
    const double started = load(c.started), done = load(c.done), failed = load(c.failed);
    const auto one = [](const char* name, const char* help, metric_type type, double v) {
        return metric_family{name, help, type, {{{}, v}}};
    };
    std::vector<metric_family> f{
        one("pacer_sessions_started_total", "Sessions that began (admission on)",
            metric_type::counter, started),
        one("pacer_sessions_active", "Sessions begun and not yet ended", metric_type::gauge,
            std::max(0.0, started - done - failed)),
        one("pacer_sessions_done_total", "Sessions that ended complete", metric_type::counter,
            done),
        one("pacer_sessions_failed_total", "Sessions that ended otherwise", metric_type::counter,
            failed),
        one("pacer_packets_sent_total", "Audio appends handed to the socket", metric_type::counter,
            load(c.packets_sent)),
        one("pacer_packets_late_total", "Appends started more than 80 ms off their deadline",
            metric_type::counter, load(c.late_packets)),
        one("pacer_errors_total", "Error lines the sessions recorded", metric_type::counter,
            load(c.errors)),
        one("pacer_loop_lag_max_seconds", "The session contexts' largest loop lag so far",
            metric_type::gauge,
            static_cast<double>(c.loop_lag_max_ns.load(std::memory_order_relaxed)) / 1e9),
    };
    if (level)
        f.push_back(one("pacer_level_concurrency", "The concurrency of the level running",
                        metric_type::gauge, static_cast<double>(*level)));
    return telemetry::format_exposition(f);
}

} // namespace pacer::run

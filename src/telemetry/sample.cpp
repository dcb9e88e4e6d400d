#include <pacer/telemetry/sample.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <cmath>

namespace pacer::telemetry {

std::string to_jsonl(const sample& s) {
    boost::json::object o;
    o["monotonic_s"] = s.monotonic_s;
    o["realtime_s"] = s.realtime_s;
    o["source"] = s.source;
    if (s.energy_mj)
        o["energy_mj"] = *s.energy_mj;
    const auto put = [&](const char* key, const std::optional<double>& v) {
        if (v)
            o[key] = std::isfinite(*v) ? boost::json::value(*v) : boost::json::value(nullptr);
    };
    put("power_w", s.power_w);
    put("utilization_pct", s.utilization_pct);
    put("memory_utilization_pct", s.memory_utilization_pct);
    put("memory_used_bytes", s.memory_used_bytes);
    put("memory_total_bytes", s.memory_total_bytes);
    put("sm_clock_mhz", s.sm_clock_mhz);
    put("temperature_c", s.temperature_c);
    if (s.gpus > 0)
        o["gpus"] = s.gpus;
    if (!s.gauges.empty()) {
        boost::json::object g;
        for (const auto& [name, value] : s.gauges)
            g[name] =
                std::isfinite(value) ? boost::json::value(value) : boost::json::value(nullptr);
        o["gauges"] = std::move(g);
    }
    if (!s.error.empty())
        o["error"] = s.error;
    return boost::json::serialize(o) + "\n";
}

} // namespace pacer::telemetry

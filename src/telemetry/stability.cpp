#include <pacer/core/clock.hpp>
#include <pacer/telemetry/stability.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace pacer::telemetry {

namespace {

struct spread {
    double lo = 0, hi = 0, sum = 0;
    std::size_t n = 0;

    void add(double v) {
        lo = n ? std::min(lo, v) : v;
        hi = n ? std::max(hi, v) : v;
        sum += v;
        ++n;
    }
};

} // namespace

stability_verdict judge_stability(std::span<const sample> samples, double start_s, double now_s,
                                  const stability_rule& rule) {
    stability_verdict v;
    v.waited_s = now_s - start_s;
    const double window_s = to_seconds(rule.window);
    const double from = now_s - window_s;
    struct acc {
        spread power, temperature;
        bool covers = false; // a sample at or before the window's start (and after start_s)
        std::size_t samples = 0;
    };
    std::map<std::string, acc> by_source;
    for (const auto& s : samples) {
        if (!s.error.empty() || s.monotonic_s < start_s || s.monotonic_s > now_s)
            continue;
        const bool judged = s.power_w || s.temperature_c;
        if (!judged)
            continue;
        auto& a = by_source[s.source];
        if (s.monotonic_s <= from) {
            a.covers = true; // older samples only say the window is covered
            continue;
        }
        ++a.samples;
        if (s.power_w && std::isfinite(*s.power_w))
            a.power.add(*s.power_w);
        if (s.temperature_c && std::isfinite(*s.temperature_c))
            a.temperature.add(*s.temperature_c);
    }
    std::vector<std::string> unsteady;
    for (const auto& [source, a] : by_source) {
        source_stability s;
        s.source = source;
        s.samples = a.samples;
        if (a.power.n > 0 && a.power.sum > 0)
            s.power_spread_fraction =
                (a.power.hi - a.power.lo) / (a.power.sum / static_cast<double>(a.power.n));
        if (a.temperature.n > 0)
            s.temperature_spread_c = a.temperature.hi - a.temperature.lo;
        const bool power_ok = a.power.n == 0 || (s.power_spread_fraction &&
                                                 *s.power_spread_fraction <= rule.power_fraction);
        const bool temperature_ok =
            !s.temperature_spread_c || *s.temperature_spread_c <= rule.temperature_c;
        s.stable = a.covers && a.samples > 0 && power_ok && temperature_ok;
        if (!a.covers || a.samples == 0)
            unsteady.push_back(
                fmt::format("{}: sampled for less than the {:g} s window", source, window_s));
        else if (!power_ok)
            unsteady.push_back(fmt::format("{}: power varied {:.1f} % (limit {:g} %)", source,
                                           s.power_spread_fraction.value_or(0) * 100,
                                           rule.power_fraction * 100));
        else if (!temperature_ok)
            unsteady.push_back(fmt::format("{}: temperature varied {:g} °C (limit {:g} °C)", source,
                                           *s.temperature_spread_c, rule.temperature_c));
        v.sources.push_back(std::move(s));
    }
    v.stable = !v.sources.empty() && unsteady.empty();
    if (v.sources.empty())
        v.why = "no sample with a power or temperature reading";
    for (const auto& u : unsteady)
        v.why += (v.why.empty() ? "" : "; ") + u;
    v.gave_up = !v.stable && v.waited_s >= to_seconds(rule.max_wait);
    return v;
}

boost::json::object stability_json(const stability_rule& rule, const stability_verdict& v,
                                   std::size_t runs) {
    boost::json::array sources;
    const auto opt = [](const std::optional<double>& x) {
        return x ? boost::json::value(*x) : boost::json::value(nullptr);
    };
    for (const auto& s : v.sources)
        sources.push_back(
            boost::json::object{{"source", s.source},
                                {"samples", s.samples},
                                {"power_spread_fraction", opt(s.power_spread_fraction)},
                                {"temperature_spread_c", opt(s.temperature_spread_c)},
                                {"stable", s.stable}});
    return boost::json::object{
        {"rule", boost::json::object{{"power_fraction", rule.power_fraction},
                                     {"temperature_c", rule.temperature_c},
                                     {"window_s", to_seconds(rule.window)},
                                     {"max_wait_s", to_seconds(rule.max_wait)}}},
        {"stable", v.stable},
        {"gave_up", v.gave_up},
        {"waited_s", v.waited_s},
        {"warmup_runs", runs},
        {"why_not", v.stable ? boost::json::value(nullptr) : boost::json::value(v.why)},
        {"sources", std::move(sources)}};
}

} // namespace pacer::telemetry

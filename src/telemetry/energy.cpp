// Energy and power of a window: the formulas of docs/telemetry.md.

#include <pacer/core/stats.hpp>
#include <pacer/telemetry/energy.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace pacer::telemetry {

namespace {

// No GPU draws 20 kW: a counter that "wrapped" by more than that much energy in an interval
// (at least a second) restarted instead (a driver reload, an exporter restart).
constexpr double plausible_power_w = 20'000;

struct point {
    double t;
    double v;
};

// v(t) on the polyline through `p` (ascending t), flat beyond its ends.
double at(const std::vector<point>& p, double t) {
    if (t <= p.front().t)
        return p.front().v;
    if (t >= p.back().t)
        return p.back().v;
    const auto hi =
        std::upper_bound(p.begin(), p.end(), t, [](double x, const point& q) { return x < q.t; });
    const auto lo = hi - 1;
    if (hi->t == lo->t)
        return hi->v;
    return lo->v + (hi->v - lo->v) * (t - lo->t) / (hi->t - lo->t);
}

// ∫ v dt over [t0, t1] by trapezoids on the polyline (its samples inside, the edges
// interpolated).
double integrate(const std::vector<point>& p, double t0, double t1) {
    double sum = 0;
    double prev_t = t0, prev_v = at(p, t0);
    for (const auto& q : p) {
        if (q.t <= t0)
            continue;
        if (q.t >= t1)
            break;
        sum += (q.v + prev_v) / 2 * (q.t - prev_t);
        prev_t = q.t;
        prev_v = q.v;
    }
    const double end_v = at(p, t1);
    sum += (end_v + prev_v) / 2 * (t1 - prev_t);
    return sum;
}

std::optional<double> opt_max(const std::vector<double>& v) {
    if (v.empty())
        return std::nullopt;
    return *std::max_element(v.begin(), v.end());
}

boost::json::value json_of(const std::optional<double>& v) {
    return v && std::isfinite(*v) ? boost::json::value(*v) : boost::json::value(nullptr);
}

boost::json::value json_of(double v) {
    return std::isfinite(v) ? boost::json::value(v) : boost::json::value(nullptr);
}

boost::json::value ratio(const std::optional<double>& num, const std::optional<double>& den) {
    if (!num || !den || !(*den > 0))
        return nullptr;
    return *num / *den;
}

boost::json::value ratio(double num, const std::optional<double>& den) {
    if (!std::isfinite(num) || !den || !(*den > 0))
        return nullptr;
    return num / *den;
}

} // namespace

source_window summarize_window(std::span<const sample> given, double t0, double t1) {
    source_window w;
    std::vector<const sample*> s;
    for (const auto& x : given)
        if (x.error.empty())
            s.push_back(&x);
    std::stable_sort(s.begin(), s.end(), [](const sample* a, const sample* b) {
        return a->monotonic_s < b->monotonic_s;
    });
    if (!given.empty())
        w.source = given.front().source;
    if (s.empty() || !(t1 > t0))
        return w;
    w.covered_s =
        std::max(0.0, std::min(t1, s.back()->monotonic_s) - std::max(t0, s.front()->monotonic_s));

    std::vector<point> power;
    for (const auto* x : s)
        if (x->power_w && std::isfinite(*x->power_w))
            power.push_back({x->monotonic_s, *x->power_w});

    // The counter made continuous (mJ from the first reading): wraps added back, resets
    // bridged by the interval's integrated power.
    std::vector<point> energy;
    const sample* prev = nullptr;
    double cumulative_mj = 0;
    for (const auto* x : s) {
        if (!x->energy_mj)
            continue;
        if (prev) {
            const std::uint64_t a = *prev->energy_mj, b = *x->energy_mj;
            const double dt = x->monotonic_s - prev->monotonic_s;
            if (b >= a) {
                cumulative_mj += static_cast<double>(b - a);
            } else {
                const std::uint64_t wrapped = b - a; // modulo 2^64: past the top and on from 0
                if (static_cast<double>(wrapped) <= plausible_power_w * std::max(dt, 1.0) * 1e3) {
                    ++w.counter_wraps;
                    cumulative_mj += static_cast<double>(wrapped);
                } else {
                    ++w.counter_resets;
                    cumulative_mj += power.size() >= 2
                                         ? integrate(power, prev->monotonic_s, x->monotonic_s) * 1e3
                                         : static_cast<double>(b);
                }
            }
        }
        energy.push_back({x->monotonic_s, cumulative_mj});
        prev = x;
    }

    if (energy.size() >= 2) {
        w.energy_j = (at(energy, t1) - at(energy, t0)) / 1e3;
        w.energy_method = "counter";
    } else if (!power.empty()) {
        w.energy_j = integrate(power, t0, t1);
        w.energy_method = "power_integration";
    }
    if (w.energy_j)
        w.mean_power_w = *w.energy_j / (t1 - t0);

    std::vector<double> peak, util, mem, temp;
    for (const auto* x : s) {
        if (x->monotonic_s < t0 || x->monotonic_s > t1)
            continue;
        ++w.samples;
        if (x->power_w && std::isfinite(*x->power_w))
            peak.push_back(*x->power_w);
        if (x->utilization_pct && std::isfinite(*x->utilization_pct))
            util.push_back(*x->utilization_pct);
        if (x->memory_used_bytes && std::isfinite(*x->memory_used_bytes))
            mem.push_back(*x->memory_used_bytes);
        if (x->temperature_c && std::isfinite(*x->temperature_c))
            temp.push_back(*x->temperature_c);
    }
    if (peak.empty() && !power.empty()) // no sample inside: the power at the edges
        peak = {at(power, t0), at(power, t1)};
    w.peak_power_w = opt_max(peak);
    w.utilization_p50 = percentile(util, 0.5);
    w.utilization_max = opt_max(util);
    w.memory_used_p50 = percentile(mem, 0.5);
    w.memory_used_max = opt_max(mem);
    w.temperature_max_c = opt_max(temp);
    return w;
}

namespace {

// The samples of each source, in the order the sources first appear.
std::vector<std::pair<std::string, std::vector<sample>>>
by_source(const std::vector<sample>& samples) {
    std::vector<std::pair<std::string, std::vector<sample>>> out;
    std::map<std::string, std::size_t> where;
    for (const auto& s : samples) {
        auto [it, added] = where.emplace(s.source, out.size());
        if (added)
            out.emplace_back(s.source, std::vector<sample>{});
        out[it->second].second.push_back(s);
    }
    return out;
}

// A source's failed reads, the last one's reason and the most GPUs an exporter reported.
struct failures {
    std::size_t failed = 0;
    std::string last_error;
    std::size_t gpus = 0;
};

failures read_failures(const std::vector<sample>& list) {
    failures f;
    for (const auto& s : list) {
        f.gpus = std::max(f.gpus, s.gpus);
        if (s.error.empty())
            continue;
        ++f.failed;
        f.last_error = s.error;
    }
    return f;
}

} // namespace

idle_baseline measure_idle(const std::vector<sample>& samples, double t0, double t1) {
    idle_baseline b;
    b.start_s = t0;
    b.end_s = t1;
    for (const auto& [source, list] : by_source(samples)) {
        const auto w = summarize_window(list, t0, t1);
        if (w.mean_power_w)
            b.power_w.emplace_back(source, *w.mean_power_w);
    }
    return b;
}

boost::json::object window_json(const std::vector<sample>& samples, double t0, double t1,
                                const window_denominators& d, const idle_baseline* idle) {
    const double span = t1 - t0;
    const auto groups = by_source(samples);
    // The total is over the local GPUs when NVML is read (the server's endpoint may be the same
    // GPUs seen by DCGM: never both), else over the server's.
    bool any_nvml = false;
    for (const auto& g : groups)
        any_nvml = any_nvml || g.first.starts_with("nvml:");
    boost::json::array sources;
    std::optional<double> total_energy = 0.0, peak_sum = 0.0, idle_power = 0.0;
    std::vector<double> util, mem;
    std::size_t counted = 0;
    std::string unread; // why a source of the total had no sample at all
    for (const auto& [source, list] : groups) {
        const auto w = summarize_window(list, t0, t1);
        const auto f = read_failures(list);
        std::optional<double> idle_w;
        if (idle)
            for (const auto& [s, p] : idle->power_w)
                if (s == source)
                    idle_w = p;
        boost::json::object o{
            {"source", source},
            {"samples", w.samples},
            {"covered_s", w.covered_s},
            {"energy_j", json_of(w.energy_j)},
            {"energy_method", w.energy_method.empty() ? boost::json::value(nullptr)
                                                      : boost::json::value(w.energy_method)},
            {"mean_power_w", json_of(w.mean_power_w)},
            {"peak_power_w", json_of(w.peak_power_w)},
            {"utilization_pct",
             {{"p50", json_of(w.utilization_p50)}, {"max", json_of(w.utilization_max)}}},
            {"memory_used_bytes",
             {{"p50", json_of(w.memory_used_p50)}, {"max", json_of(w.memory_used_max)}}},
            {"temperature_max_c", json_of(w.temperature_max_c)},
            {"counter_wraps", w.counter_wraps},
            {"counter_resets", w.counter_resets},
            {"idle_power_w", json_of(idle_w)},
            {"failed_reads", f.failed},
            {"last_error", f.last_error.empty() ? boost::json::value(nullptr)
                                                : boost::json::value(f.last_error)}};
        if (f.gpus > 0)
            o["gpus"] = f.gpus;
        sources.push_back(std::move(o));
        const bool in_total = any_nvml ? source.starts_with("nvml:") : source == "server";
        if (!in_total)
            continue;
        if (f.failed < list.size())
            counted += std::max<std::size_t>(f.gpus, 1); // an exporter reports its GPUs
        else if (unread.empty()) // never read: its GPUs are not counted, the total is null
            unread = fmt::format("no sample could be read ({})", f.last_error);
        total_energy =
            total_energy && w.energy_j ? std::optional(*total_energy + *w.energy_j) : std::nullopt;
        peak_sum =
            peak_sum && w.peak_power_w ? std::optional(*peak_sum + *w.peak_power_w) : std::nullopt;
        idle_power = idle_power && idle_w ? std::optional(*idle_power + *idle_w) : std::nullopt;
        for (const auto& x : list) {
            if (!x.error.empty() || x.monotonic_s < t0 || x.monotonic_s > t1)
                continue;
            if (x.utilization_pct && std::isfinite(*x.utilization_pct))
                util.push_back(*x.utilization_pct);
            if (x.memory_used_bytes && std::isfinite(*x.memory_used_bytes))
                mem.push_back(*x.memory_used_bytes);
        }
    }
    if (counted == 0)
        total_energy = peak_sum = idle_power = std::nullopt;
    if (!idle)
        idle_power = std::nullopt;
    // Unknown is NaN in these three (json_of writes null): built as std::optional, GCC 12 at
    // -O3 warned -Wmaybe-uninitialized on them (a false positive).
    const double unknown = std::numeric_limits<double>::quiet_NaN();
    const double mean_power = total_energy && span > 0 ? *total_energy / span : unknown;
    const double idle_energy = idle_power ? *idle_power * span : unknown;
    const double above_idle = total_energy ? *total_energy - idle_energy : unknown;

    boost::json::object o;
    o["window"] = {{"start_s", t0}, {"end_s", t1}, {"duration_s", span}};
    o["energy_from"] = counted == 0 ? boost::json::value(nullptr)
                       : any_nvml   ? boost::json::value("nvml")
                                    : boost::json::value("server_metrics");
    o["gpus"] = counted;
    o["error"] = unread.empty() ? boost::json::value(nullptr) : boost::json::value(unread);
    o["energy_j"] = json_of(total_energy);
    o["mean_power_w"] = json_of(mean_power);
    o["peak_power_w"] = json_of(peak_sum);
    o["peak_power_definition"] =
        "the sum over the GPUs of each GPU's highest sampled power in the window";
    o["utilization_pct"] = {{"p50", json_of(percentile(util, 0.5))},
                            {"max", json_of(opt_max(util))}};
    o["memory_used_bytes"] = {{"p50", json_of(percentile(mem, 0.5))},
                              {"max", json_of(opt_max(mem))}};
    if (idle)
        o["idle_baseline"] = {{"start_s", idle->start_s},
                              {"end_s", idle->end_s},
                              {"duration_s", idle->end_s - idle->start_s},
                              {"power_w", json_of(idle_power)},
                              {"energy_in_window_j", json_of(idle_energy)}};
    else
        o["idle_baseline"] = nullptr;
    o["energy_above_idle_j"] = json_of(above_idle);
    o["input_audio_s"] = json_of(d.input_audio_s);
    o["output_audio_s"] = json_of(d.output_audio_s);
    o["requests"] = json_of(d.requests);
    o["j_per_input_audio_s"] = ratio(total_energy, d.input_audio_s);
    o["j_per_output_audio_s"] = ratio(total_energy, d.output_audio_s);
    o["j_per_request"] = ratio(total_energy, d.requests);
    o["j_per_input_audio_s_above_idle"] = ratio(above_idle, d.input_audio_s);
    o["sources"] = std::move(sources);
    return o;
}

} // namespace pacer::telemetry

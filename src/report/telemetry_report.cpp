// Telemetry in `pacer export` and report.html (docs/telemetry.md): the samples of
// telemetry.jsonl as a table and as power and utilisation over time, and the energy of each
// window the summary measured (a run; each run of a serve level, its warm-ups, the sweep).

#include <pacer/report/svg.hpp>
#include <pacer/report/tables.hpp>

#include <fmt/format.h>

#include "html_parts.hpp"
#include <algorithm>
#include <cmath>
#include <map>

namespace pacer::report::detail {

namespace json = boost::json;

namespace {

// A window of the summary's `telemetry`: the idle baseline, a run, a run of a serve level
// (or a warm-up), the whole sweep.
struct window {
    std::string kind; ///< idle_baseline, run, level, warmup, sweep
    std::optional<std::int64_t> level, repeat;
    double start_s = 0, end_s = 0;
    const json::object* telemetry = nullptr; ///< nullptr for the idle baseline
};

std::optional<window> window_of(const json::object& telemetry, std::string kind) {
    const auto start = number_at(telemetry, {"window", "start_s"});
    const auto end = number_at(telemetry, {"window", "end_s"});
    if (!start || !end)
        return std::nullopt;
    return window{std::move(kind), {}, {}, *start, *end, &telemetry};
}

std::optional<std::int64_t> count_at(const json::object& o, const char* key) {
    const auto v = number_at(o, {key});
    return v ? std::optional<std::int64_t>(static_cast<std::int64_t>(*v)) : std::nullopt;
}

// Every window of the summary, the idle baseline first; a serve folder's runs in order, then
// its sweep.
std::vector<window> windows_of(const result_folder& f) {
    std::vector<window> out;
    const auto* top = f.summary.if_contains("telemetry");
    const json::object* t = top ? top->if_object() : nullptr;
    if (t) {
        const auto b0 = number_at(*t, {"idle_baseline", "start_s"});
        const auto b1 = number_at(*t, {"idle_baseline", "end_s"});
        if (b0 && b1)
            out.push_back({"idle_baseline", {}, {}, *b0, *b1, nullptr});
    }
    if (f.kind == folder_kind::serve) {
        if (const auto* runs = f.summary.if_contains("runs"); runs && runs->is_array())
            for (const auto& r : runs->as_array()) {
                const auto* o = r.if_object();
                const auto* rt = o ? o->if_contains("telemetry") : nullptr;
                if (!rt || !rt->is_object())
                    continue;
                const auto* warm = o->if_contains("warmup");
                auto w = window_of(rt->as_object(),
                                   warm && warm->is_bool() && warm->as_bool() ? "warmup" : "level");
                if (!w)
                    continue;
                w->level = count_at(*o, "concurrency");
                w->repeat = count_at(*o, "repeat");
                out.push_back(std::move(*w));
            }
        if (t)
            if (auto w = window_of(*t, "sweep"))
                out.push_back(std::move(*w));
    } else if (t) {
        if (auto w = window_of(*t, "run"))
            out.push_back(std::move(*w));
    }
    return out;
}

// The window a sample taken at `t` belongs to: the baseline, a run or a run of a level
// (never the sweep's: a sample of a settle pause between two runs belongs to none).
const window* window_at(const std::vector<window>& ws, double t) {
    for (const auto& w : ws)
        if (w.kind != "sweep" && t >= w.start_s && t <= w.end_s)
            return &w;
    return nullptr;
}

cell opt(std::optional<double> v) {
    return v ? cell(*v) : cell();
}
cell opt(std::optional<std::int64_t> v) {
    return v ? cell(*v) : cell();
}

// The energy table writes every figure as a number (a count read as one too), and no flag.
cell json_at(const json::object& o, std::initializer_list<const char*> path) {
    const cell c = json_cell(o, path);
    if (c.kind == cell::type::count)
        return static_cast<double>(c.count);
    return c.kind == cell::type::flag ? cell() : c;
}

table samples_table(const result_folder& f, const std::vector<window>& ws) {
    const bool serve = f.kind == folder_kind::serve;
    table t;
    t.name = "telemetry";
    t.columns = {"source", "monotonic_s", "realtime_s", "window"};
    if (serve)
        t.columns.insert(t.columns.end(), {"level", "repeat"});
    t.columns.insert(t.columns.end(),
                     {"energy_mj", "power_w", "utilization_pct", "memory_utilization_pct",
                      "memory_used_bytes", "memory_total_bytes", "sm_clock_mhz", "temperature_c",
                      "error"});
    t.rows.reserve(f.telemetry.size());
    for (const auto& s : f.telemetry) {
        const window* w = window_at(ws, s.monotonic_s);
        std::vector<cell> r{cell(s.source), cell(s.monotonic_s), cell(s.realtime_s),
                            w ? cell(w->kind) : cell()};
        if (serve) {
            r.push_back(w ? opt(w->level) : cell());
            r.push_back(w ? opt(w->repeat) : cell());
        }
        for (const auto& v :
             {s.energy_mj, s.power_w, s.utilization_pct, s.memory_utilization_pct,
              s.memory_used_bytes, s.memory_total_bytes, s.sm_clock_mhz, s.temperature_c})
            r.push_back(opt(v));
        r.push_back(s.error.empty() ? cell() : cell(s.error));
        t.rows.push_back(std::move(r));
    }
    return t;
}

// One row per measured window (the idle baseline has its own columns in each).
table energy_table(const std::vector<window>& ws) {
    table t;
    t.name = "energy";
    t.columns = {"window",
                 "level",
                 "repeat",
                 "start_s",
                 "end_s",
                 "duration_s",
                 "energy_from",
                 "energy_j",
                 "mean_power_w",
                 "peak_power_w",
                 "idle_power_w",
                 "energy_above_idle_j",
                 "input_audio_s",
                 "output_audio_s",
                 "requests",
                 "j_per_input_audio_s",
                 "j_per_output_audio_s",
                 "j_per_request",
                 "utilization_p50_pct",
                 "utilization_max_pct",
                 "memory_used_max_bytes"};
    for (const auto& w : ws) {
        if (!w.telemetry)
            continue;
        const auto& o = *w.telemetry;
        std::vector<cell> r{cell(w.kind),
                            opt(w.level),
                            opt(w.repeat),
                            cell(w.start_s),
                            cell(w.end_s),
                            cell(w.end_s - w.start_s),
                            json_at(o, {"energy_from"})};
        for (const char* k : {"energy_j", "mean_power_w", "peak_power_w"})
            r.push_back(json_at(o, {k}));
        r.push_back(json_at(o, {"idle_baseline", "power_w"}));
        for (const char* k : {"energy_above_idle_j", "input_audio_s", "output_audio_s", "requests",
                              "j_per_input_audio_s", "j_per_output_audio_s", "j_per_request"})
            r.push_back(json_at(o, {k}));
        r.push_back(json_at(o, {"utilization_pct", "p50"}));
        r.push_back(json_at(o, {"utilization_pct", "max"}));
        r.push_back(json_at(o, {"memory_used_bytes", "max"}));
        t.rows.push_back(std::move(r));
    }
    return t;
}

// The origin of the packet plots' time axis (the first append of any session, on the
// folder's common axis), else the first sample's; and a sample's time on that axis.
struct time_axis {
    double origin = 0, offset = 0; // offset: the common axis minus pacer's clock
    std::string label;

    double at(double monotonic_s) const { return monotonic_s + offset - origin; }
};

time_axis axis_of(const result_folder& f) {
    time_axis a;
    a.offset = f.parts.empty() ? 0.0 : f.parts.front().realtime_offset_s;
    if (f.kind == folder_kind::http)
        if (const auto start = number_at(f.summary, {"telemetry", "window", "start_s"})) {
            a.origin = *start + a.offset; // the schedule's origin, as the request plots
            a.label = "time since the schedule's origin (s)";
            return a;
        }
    std::optional<double> first;
    for (const auto& s : f.sessions)
        if (s.stats.first_start_s)
            first = std::min(first.value_or(*s.stats.first_start_s), *s.stats.first_start_s);
    if (first) {
        a.origin = *first;
        a.label = "time since the first append (s)";
    } else {
        a.origin = f.telemetry.front().monotonic_s + a.offset;
        a.label = "time since the first sample (s)";
    }
    return a;
}

// One line per source of `field`, each the mean of its samples in at most `max_points`
// intervals of equal width (an hour at 100 ms is 36,000 samples a source).
std::vector<series> lines_of(const result_folder& f, const time_axis& a,
                             std::optional<double> telemetry_reading::*field, double& x_lo,
                             double& x_hi, double& y_hi, const char* unit_text) {
    std::map<std::string, std::vector<std::pair<double, double>>> by_source;
    for (const auto& s : f.telemetry)
        if (const auto& v = s.*field; v && std::isfinite(*v))
            by_source[s.source].emplace_back(a.at(s.monotonic_s), *v);
    constexpr std::size_t max_points = 400;
    std::vector<series> out;
    for (auto& [source, points] : by_source) {
        std::sort(points.begin(), points.end());
        series line;
        line.name = source;
        line.colour = out.size();
        line.markers = true; // each point says its time and value on hover
        const double lo = points.front().first, hi = points.back().first;
        const double width = (hi - lo) / static_cast<double>(max_points);
        for (std::size_t i = 0; i < points.size();) {
            std::size_t j = i;
            double sum_x = 0, sum_y = 0;
            const double end = width > 0 && points.size() > max_points
                                   ? lo + std::floor((points[i].first - lo) / width + 1) * width
                                   : points[i].first;
            for (; j < points.size() && (j == i || points[j].first < end); ++j) {
                sum_x += points[j].first;
                sum_y += points[j].second;
            }
            const double n = static_cast<double>(j - i);
            line.points.emplace_back(sum_x / n, sum_y / n);
            line.point_titles.push_back(fmt::format(
                "{}: {} s, {} {}{}", source, format_number(sum_x / n), format_number(sum_y / n),
                unit_text, j - i > 1 ? fmt::format(" (mean of {})", j - i) : std::string()));
            y_hi = std::max(y_hi, sum_y / n);
            i = j;
        }
        x_lo = std::min(x_lo, lo);
        x_hi = std::max(x_hi, hi);
        out.push_back(std::move(line));
    }
    return out;
}

std::string window_name(const window& w) {
    if (w.kind == "level" || w.kind == "warmup")
        return fmt::format("{} {} (repeat {})", w.kind == "level" ? "level" : "warm-up",
                           w.level.value_or(0), w.repeat.value_or(1));
    return w.kind == "idle_baseline" ? "idle baseline" : w.kind;
}

} // namespace

std::string telemetry_sections(const result_folder& f) {
    if (f.telemetry.empty())
        return "";
    const auto a = axis_of(f);
    const auto ws = windows_of(f);
    // The windows' edges, on both plots, and their figures, in the numbers' table.
    std::vector<ref_line> edges;
    std::string windows_table =
        "<table><tr><th>window</th><th>from (s)</th><th>to (s)</th><th>energy (J)</th><th>mean "
        "power (W)</th><th>peak power (W)</th><th>J per session-second of input</th><th>J per "
        "request</th></tr>\n";
    for (const auto& w : ws) {
        if (w.kind != "sweep") {
            edges.push_back({a.at(w.start_s), window_name(w) + " starts", true, false});
            if (w.kind != "level" && w.kind != "warmup")
                edges.push_back({a.at(w.end_s), window_name(w) + " ends", true, false});
        }
        const auto fig = [&](const char* key) {
            return w.telemetry ? number_at(*w.telemetry, {key}) : std::nullopt;
        };
        windows_table += fmt::format(
            "<tr><td>{}</td>{}{}{}{}{}{}{}</tr>\n", escape(window_name(w)),
            num_cell(a.at(w.start_s), 1), num_cell(a.at(w.end_s), 1), num_cell(fig("energy_j"), 1),
            num_cell(w.telemetry
                         ? fig("mean_power_w")
                         : (f.summary.contains("telemetry")
                                ? number_at(f.summary, {"telemetry", "idle_baseline", "power_w"})
                                : std::nullopt),
                     1),
            num_cell(fig("peak_power_w"), 1), num_cell(fig("j_per_input_audio_s"), 1),
            num_cell(fig("j_per_request"), 1));
    }
    windows_table += "</table>\n";
    const std::vector<figure> figures = present_in(
        f.summary,
        {{"energy (J)", {"telemetry", "energy_j"}, unit::count},
         {"energy from", {"telemetry", "energy_from"}, unit::text},
         {"mean power (W)", {"telemetry", "mean_power_w"}, unit::count},
         {"peak power (W)", {"telemetry", "peak_power_w"}, unit::count},
         {"idle power (W)", {"telemetry", "idle_baseline", "power_w"}, unit::count},
         {"energy above idle (J)", {"telemetry", "energy_above_idle_j"}, unit::count},
         {"J per session-second of input", {"telemetry", "j_per_input_audio_s"}, unit::count},
         {"J per second of output audio", {"telemetry", "j_per_output_audio_s"}, unit::count},
         {"J per successful request", {"telemetry", "j_per_request"}, unit::count},
         {"energy per session-second at the capacity level (J)",
          {"capacity", "energy_j_per_session_second"},
          unit::count}});

    std::string out;
    double x_lo = 0, x_hi = 0.08, p_hi = 1, u_hi = 100;
    const std::string pid = "plot-power", ptitle = "GPU power over time";
    xy_plot power;
    power.id = pid;
    power.title = ptitle;
    power.lines = lines_of(f, a, &telemetry_reading::power_w, x_lo, x_hi, p_hi, "W");
    const std::string uid = "plot-utilization", utitle = "GPU utilisation over time";
    xy_plot util;
    util.id = uid;
    util.title = utitle;
    util.lines = lines_of(f, a, &telemetry_reading::utilization_pct, x_lo, x_hi, u_hi, "%");
    for (auto* p : {&power, &util}) {
        p->x = linear_axis(a.label, x_lo, x_hi);
        p->refs = edges;
    }
    power.y = linear_axis("power (W)", 0, p_hi * 1.1);
    util.y = linear_axis("utilisation (%)", 0, u_hi);
    const std::size_t samples = f.telemetry.size();
    out += section(
        "power", ptitle,
        fmt::format("Power of each source (telemetry.jsonl, {} samples) on the time axis of the "
                    "pacing plots; grey lines mark the windows the energy is measured over "
                    "(docs/telemetry.md).",
                    samples),
        power.lines.empty() ? no_data(pid, ptitle, "no sample has a power reading") : render(power),
        figure_table(f.summary, figures) + windows_table, true); // the energy, shown under it
    out += section(
        "utilization", utitle,
        "The share of time each GPU was busy (NVML's utilisation; a server's "
        "DCGM_FI_DEV_GPU_UTIL), on the same axis.",
        util.lines.empty() ? no_data(uid, utitle, "no sample has a utilisation reading")
                           : render(util),
        figure_table(
            f.summary,
            present_in(
                f.summary,
                {{"utilisation p50 (%)", {"telemetry", "utilization_pct", "p50"}, unit::count},
                 {"utilisation max (%)", {"telemetry", "utilization_pct", "max"}, unit::count},
                 {"memory used max", {"telemetry", "memory_used_bytes", "max"}, unit::bytes}})));
    return out;
}

std::vector<table> telemetry_tables(const result_folder& f) {
    const auto ws = windows_of(f);
    const bool measured =
        std::any_of(ws.begin(), ws.end(), [](const window& w) { return w.telemetry != nullptr; });
    if (f.telemetry.empty() && !measured)
        return {};
    return {samples_table(f, ws), energy_table(ws)};
}

} // namespace pacer::report::detail

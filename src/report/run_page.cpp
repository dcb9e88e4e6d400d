// The pages of a run (closed loop, open loop, a merged run, a recording's pacing): the deviation
// distribution, the send times, lateness and lag over time, the loop lag, the open loop's
// arrivals and latency. Declared in html_parts.hpp.
#include <pacer/core/json_pointer.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/metrics/outcome.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/metrics/slo.hpp>
#include <pacer/report/html_report.hpp>
#include <pacer/report/svg.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include "html_parts.hpp"
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace pacer::report::detail {

namespace json = boost::json;

namespace {

// Every session's packets, in the order of f.sessions: from memory when the folder kept them,
// else read again one session at a time (read_result_folder with a visitor).
void for_each_session_packets(const result_folder& f,
                              const std::function<void(std::size_t, const session_record&)>& fn) {
    if (f.packets_kept) {
        for (std::size_t k = 0; k < f.sessions.size(); ++k)
            fn(k, f.sessions[k]);
        return;
    }
    std::size_t k = 0;
    (void)read_result_folder(f.dir, [&](const result_folder&, const session_record& s) {
        if (k < f.sessions.size())
            fn(k, s);
        ++k;
    });
}

// Seconds to add to an offset from the open-loop run's clock (the dispatcher's origin) to put
// it on the packet plots' axis (seconds since the first append); nullopt when unknown.
std::optional<double> arrivals_shift(const result_folder& f) {
    const auto sp = packet_span(f);
    if (f.parts.empty() || !f.parts.front().clock_monotonic_s)
        return std::nullopt;
    const double start = *f.parts.front().clock_monotonic_s + f.parts.front().realtime_offset_s;
    return sp.any ? start - sp.t0 : 0.0;
}

// The time axis every over-time plot of one run's page shares (issue 33: the plots must line
// up): seconds since the first append, covering the packets, the loop lag (whose monitors
// start before the first append) and an open loop's arrivals.
struct time_frame {
    double lo = 0, hi = 0.08;
};

time_frame page_time_frame(const result_folder& f) {
    const auto sp = packet_span(f);
    time_frame t;
    if (sp.any)
        t.hi = std::max(sp.t1 - sp.t0, 0.08);
    for (const auto& part : f.parts) {
        const auto* o = part.summary.if_contains("loop_lag_over_time");
        if (!o || !o->is_object())
            continue;
        const auto start = number_at(o->as_object(), {"start_s"});
        const auto step = number_at(o->as_object(), {"interval_s"});
        const auto* max_s = o->as_object().if_contains("max_s");
        if (!start || !step || *step <= 0 || !max_s || !max_s->is_array() ||
            max_s->as_array().empty())
            continue;
        const double origin = *start + part.realtime_offset_s - (sp.any ? sp.t0 : *start);
        t.lo = std::min(t.lo, origin);
        t.hi = std::max(t.hi, origin + *step * static_cast<double>(max_s->as_array().size()));
    }
    if (f.kind == folder_kind::open_loop)
        if (const auto shift = arrivals_shift(f)) {
            for (double o : f.schedule_offsets_s) {
                t.lo = std::min(t.lo, o + *shift);
                t.hi = std::max(t.hi, o + *shift);
            }
            for (const auto& s : f.sessions)
                if (s.session_start_s && s.stats.count > 0) {
                    const double x =
                        *s.session_start_s - *f.parts.front().clock_monotonic_s + *shift;
                    t.lo = std::min(t.lo, x);
                    t.hi = std::max(t.hi, x);
                }
        }
    return t;
}

const char* const time_label = "time since the first append (s)";

// Cumulative offered and achieved arrivals, and arrivals per second.
std::string arrivals_section(const std::vector<const result_folder*>& folders,
                             const std::vector<std::string>& names) {
    const std::string id = "plot-arrivals", title = "Offered and achieved arrivals";
    xy_plot p;
    p.id = id;
    p.title = title;
    double hi = 0, n_hi = 1;
    std::string table;
    // One run: on its page's shared axis (seconds since the first append), so the
    // arrivals line up with the packet plots above. A comparison keeps each run's clock.
    const std::optional<double> shift =
        folders.size() == 1 ? arrivals_shift(*folders.front()) : std::nullopt;
    const double dx = shift.value_or(0);
    double lo = 0;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        const auto& f = *folders[i];
        series off;
        off.name = (names[i].empty() ? "" : names[i]) + "offered (schedule)";
        off.step = true;
        off.dashed = true;
        off.colour = 2 * i;
        off.points.emplace_back(dx, 0);
        lo = std::min(lo, dx);
        for (std::size_t k = 0; k < f.schedule_offsets_s.size(); ++k)
            off.points.emplace_back(f.schedule_offsets_s[k] + dx, static_cast<double>(k + 1));
        std::vector<double> achieved;
        std::optional<double> origin;
        if (!f.parts.empty())
            origin = f.parts.front().clock_monotonic_s;
        for (const auto& s : f.sessions)
            if (s.session_start_s && origin && s.stats.count > 0)
                achieved.push_back(*s.session_start_s - *origin);
        std::sort(achieved.begin(), achieved.end());
        series ach;
        ach.name = (names[i].empty() ? "" : names[i]) + "achieved (first append)";
        ach.step = true;
        ach.colour = 2 * i + 1;
        ach.points.emplace_back(dx, 0);
        for (std::size_t k = 0; k < achieved.size(); ++k)
            ach.points.emplace_back(achieved[k] + dx, static_cast<double>(k + 1));
        hi = std::max({hi, max_of(f.schedule_offsets_s), max_of(achieved)});
        n_hi = std::max({n_hi, static_cast<double>(f.schedule_offsets_s.size()),
                         static_cast<double>(achieved.size())});
        // The table: arrivals per second of the schedule and of the run.
        const double w =
            bin_width(std::max(hi, 1.0), 30) < 1 ? 1.0 : bin_width(std::max(hi, 1.0), 30);
        std::map<long, std::pair<int, int>> per;
        for (double t : f.schedule_offsets_s)
            ++per[static_cast<long>(t / w)].first;
        for (double t : achieved)
            ++per[static_cast<long>(std::max(0.0, t) / w)].second;
        if (!names[i].empty())
            table += "<p>" + escape(names[i]) + "</p>";
        table += fmt::format("<table><tr><th>from (s)</th><th>offered</th><th>achieved</th>"
                             "</tr>\n");
        for (const auto& [b, c] : per)
            table += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                                 "class=\"num\">{}</td></tr>\n",
                                 format_number(static_cast<double>(b) * w), c.first, c.second);
        table += "</table>\n";
        table += figure_table(
            f.summary, {{"scheduled", {"open_loop", "requests", "scheduled"}, unit::count},
                        {"dispatched", {"open_loop", "requests", "dispatched"}, unit::count},
                        {"completed", {"open_loop", "requests", "completed"}, unit::count},
                        {"dropped", {"open_loop", "requests", "dropped"}, unit::count},
                        {"rate (per s)", {"open_loop", "schedule", "rate"}, unit::count},
                        {"arrival process", {"open_loop", "schedule", "arrival"}, unit::text}});
        p.lines.push_back(std::move(off));
        p.lines.push_back(std::move(ach));
    }
    if (shift) {
        const auto frame = page_time_frame(*folders.front());
        p.x = linear_axis(time_label, frame.lo, frame.hi);
    } else {
        p.x = linear_axis("seconds since the run started", lo, std::max(hi, 0.1));
    }
    p.y = linear_axis("arrivals so far", 0, n_hi);
    stage_ends(folders.front()->summary, p, dx);
    return section("arrivals", title,
                   "Cumulative arrivals: offered by the seeded schedule, and achieved — the "
                   "session's first append on the run's clock (connect and negotiation "
                   "included; the run's clock is read just before the dispatcher starts). A "
                   "gap that widens means the client or the cap held arrivals back.",
                   render(p), table);
}

// The dispatch lag against the schedule rule's bounds.
std::string dispatch_lag_section(const std::vector<const result_folder*>& folders,
                                 const std::vector<std::string>& names) {
    const std::string id = "plot-dispatch-lag", title = "Dispatch lag";
    bar_chart c;
    c.id = id;
    c.title = title;
    c.unit = "ms";
    c.categories = {"p50", "p90", "p99", "p99.9", "max"};
    double hi = 0;
    std::string table;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        std::vector<std::optional<double>> v;
        for (const auto& k : c.categories) {
            auto x = number_at(folders[i]->summary, {"open_loop", "dispatch_lag_s", k});
            if (x)
                hi = std::max(hi, *x *= 1e3);
            v.push_back(x);
        }
        c.values.emplace_back(names[i].empty() ? "dispatch lag" : names[i], std::move(v));
        if (!names[i].empty())
            table += "<p>" + escape(names[i]) + "</p>";
        table += dist_table(folders[i]->summary, {"open_loop", "dispatch_lag_s"},
                            {"n", "p50", "p90", "p99", "p99.9", "max"}, "dispatch lag");
        table += figure_table(folders[i]->summary,
                              {{"schedule kept", {"open_loop", "schedule_kept"}, unit::flag},
                               {"threshold p99",
                                {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_p99"},
                                unit::seconds},
                               {"threshold max",
                                {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_max"},
                                unit::seconds},
                               {"deadline missed", {"open_loop", "deadline_missed"}, unit::count}});
    }
    const auto& s0 = folders.front()->summary;
    const auto p99 = number_at(s0, {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_p99"});
    const auto mx = number_at(s0, {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_max"});
    c.y = linear_axis("dispatch lag (ms)", 0, std::max({hi, 0.001, p99 ? *p99 * 1e3 : 0.0}));
    if (p99)
        c.refs.push_back(
            {*p99 * 1e3, fmt::format("p99 bound {} ms", format_number(*p99 * 1e3)), false, true});
    if (mx && *mx * 1e3 <= c.y.hi)
        c.refs.push_back(
            {*mx * 1e3, fmt::format("max bound {} ms", format_number(*mx * 1e3)), false, true});
    return section("dispatch-lag", title,
                   "Dispatched − scheduled (minus any cap delay): the load generator's own "
                   "lateness. The schedule is kept when p99 and max stay under their bounds.",
                   render(c), table);
}

// Latency from the schedule beside latency from dispatch.
std::string latency_section(const std::vector<const result_folder*>& folders,
                            const std::vector<std::string>& names) {
    const std::string id = "plot-latency", title = "Latency anchored to the schedule";
    bar_chart c;
    c.id = id;
    c.title = title;
    c.unit = "ms";
    c.categories = {"p50", "p75", "p95", "p99", "max"};
    double hi = 0;
    std::string table;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        for (const auto& [key, label] :
             {std::pair<const char*, const char*>{"latency_s", "from schedule"},
              {"uncorrected_latency_s", "uncorrected (from dispatch)"}}) {
            std::vector<std::optional<double>> v;
            for (const auto& k : c.categories) {
                auto x = number_at(folders[i]->summary, {"open_loop", key, k});
                if (x)
                    hi = std::max(hi, *x *= 1e3);
                v.push_back(x);
            }
            c.values.emplace_back(names[i] + label, std::move(v));
            if (!names[i].empty())
                table += "<p>" + escape(names[i]) + "</p>";
            table += dist_table(folders[i]->summary, {"open_loop", key},
                                {"n", "p50", "p75", "p95", "p99", "max", "mean"}, label);
        }
    }
    c.y = linear_axis("session latency (ms)", 0, std::max(hi, 0.001));
    return section("latency", title,
                   "Completion − scheduled time (no coordinated omission) beside completion − "
                   "dispatch time, which hides every wait before dispatch. A session's latency "
                   "is its whole length: connect, stream, drain, close.",
                   render(c), table);
}

// The concurrency cap: whether it bound, its delays and drops.
std::string cap_section(const std::vector<const result_folder*>& folders,
                        const std::vector<std::string>& names) {
    std::string table;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        const auto& s = folders[i]->summary;
        if (!names[i].empty())
            table += "<p>" + escape(names[i]) + "</p>";
        table += cap_figures(s);
    }
    return "<section id=\"cap\"><h2>Concurrency cap</h2>\n<p>A cap gates dispatch but never "
           "moves the schedule; when it binds, its delay is counted here (and in the latency), "
           "not in the dispatch lag.</p>\n" +
           table + "</section>\n";
}

// The packets of a run cut into time intervals, in one pass over them: per interval the worst
// |deviation|, the packets and the late ones; and the heat strip's cells, one row per session
// with packets (or per group of `per_row` sessions when there are many).
struct time_bins {
    time_span sp;
    double span = 0, w = 0;
    std::size_t bins = 0, cols = 0, per_row = 1;
    std::vector<double> worst;
    std::vector<std::size_t> late, count;
    std::vector<const session_record*> ss;
    std::vector<std::vector<std::optional<double>>> cells;
};

time_bins bin_packets(const result_folder& f, time_span sp) {
    time_bins t;
    t.sp = sp;
    t.span = std::max(sp.t1 - sp.t0, 0.08);
    t.w = bin_width(t.span, 100);
    t.bins = static_cast<std::size_t>(std::floor(t.span / t.w)) + 1;
    t.worst.assign(t.bins, -1);
    t.late.assign(t.bins, 0);
    t.count.assign(t.bins, 0);
    const auto bin_of = [&](double x) {
        return std::min(t.bins - 1, static_cast<std::size_t>(std::max(0.0, (x - sp.t0) / t.w)));
    };
    std::vector<std::size_t> row_of(f.sessions.size(), 0);
    for (const auto& s : f.sessions)
        if (s.stats.count > 0)
            t.ss.push_back(&s);
    const std::size_t max_rows = 100;
    t.cols = std::min<std::size_t>(t.bins, 100);
    t.per_row = std::max<std::size_t>((t.ss.size() + max_rows - 1) / max_rows, 1);
    const std::size_t rows = (t.ss.size() + t.per_row - 1) / t.per_row;
    for (std::size_t k = 0, n = 0; k < f.sessions.size(); ++k)
        if (f.sessions[k].stats.count > 0)
            row_of[k] = n++ / t.per_row;
    t.cells.assign(rows, std::vector<std::optional<double>>(t.cols));
    for_each_session_packets(f, [&](std::size_t k, const session_record& s) {
        if (f.sessions[k].stats.count == 0)
            return;
        auto& row = t.cells[row_of[k]];
        for (const auto& p : s.packets) {
            const double x = aligned(f, s, p.start_s);
            const auto b = bin_of(x);
            const double a = std::abs(p.deviation_s);
            t.worst[b] = std::max(t.worst[b], a);
            ++t.count[b];
            t.late[b] += a > late_s ? 1 : 0;
            const auto c =
                std::min(t.cols - 1, static_cast<std::size_t>(std::max(
                                         0.0, (x - sp.t0) / t.span * static_cast<double>(t.cols))));
            row[c] = std::max(row[c].value_or(0.0), a);
        }
    });
    return t;
}

const std::string deviation_over_time_id = "plot-deviation-over-time",
                  deviation_over_time_title = "Worst deviation and late packets over time",
                  late_over_time_id = "plot-late-over-time",
                  late_over_time_title = "Late packets over time", heat_id = "plot-heat-strip",
                  heat_title = "Per-session deviation heat strip";

// The worst |deviation| per interval (log scale) with red dots where packets were late, and the
// late packets per interval as bars: both on the page's time axis.
std::string deviation_and_late_over_time(const result_folder& f, const time_bins& t) {
    const std::string &id1 = deviation_over_time_id, &t1 = deviation_over_time_title;
    const std::string &id2 = late_over_time_id, &t2 = late_over_time_title;
    const double w = t.w;
    xy_plot p;
    p.id = id1;
    p.title = t1;
    series line;
    line.name = "max |deviation| per interval";
    line.markers = true;
    double hi = 100;
    std::string table = "<table><tr><th>from (s)</th><th>to (s)</th><th>packets</th><th>late</th>"
                        "<th>max |deviation| (ms)</th></tr>\n";
    bar_series lb;
    lb.name = "late packets";
    lb.colour = 5;
    std::size_t late_max = 0;
    for (std::size_t b = 0; b < t.bins; ++b) {
        const double from = static_cast<double>(b) * w, to = from + w;
        if (t.count[b] == 0)
            continue;
        const double ms = std::max(t.worst[b] * 1e3, 1e-3);
        hi = std::max(hi, ms * 1.5);
        line.points.emplace_back(from + w / 2, ms);
        line.point_titles.push_back(
            fmt::format("{}–{} s: max |deviation| {} ms, {} late of {}", format_number(from),
                        format_number(to), format_number(t.worst[b] * 1e3), t.late[b], t.count[b]));
        if (t.late[b] > 0)
            p.markers.push_back({from + w / 2, ms, false,
                                 fmt::format("{}–{} s: {} late packets", format_number(from),
                                             format_number(to), t.late[b])});
        lb.bars.push_back({from, to, static_cast<double>(t.late[b]),
                           fmt::format("{}–{} s: {} late of {} packets", format_number(from),
                                       format_number(to), t.late[b], t.count[b])});
        late_max = std::max(late_max, t.late[b]);
        table += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                             "class=\"num\">{}</td><td class=\"num\">{}</td>{}</tr>\n",
                             format_number(from), format_number(to), t.count[b], t.late[b],
                             num_cell(t.worst[b], 1e3));
    }
    table += "</table>\n";
    p.lines.push_back(std::move(line));
    const auto frame = page_time_frame(f);
    p.x = linear_axis(time_label, frame.lo, frame.hi);
    p.y = log_axis("max |deviation| (ms, log)", 1e-3, hi);
    p.refs.push_back({late_s * 1e3, "late: 80 ms", false, true});
    std::string out = section(
        "over-time", t1,
        fmt::format("The worst |deviation| of all packets started in each {} s "
                    "interval; red dots mark intervals with late packets. (The loop "
                    "lag of the session contexts over time is further down.)",
                    format_number(w)),
        render(p),
        table + figure_table(f.summary,
                             {{"late packets", {"pacing", "packets", "late"}, unit::count}}));
    xy_plot lp;
    lp.id = id2;
    lp.title = t2;
    lp.bars.push_back(std::move(lb));
    lp.x = linear_axis(time_label, frame.lo, frame.hi);
    lp.y = linear_axis("late packets per interval", 0,
                       static_cast<double>(std::max<std::size_t>(late_max, 1)));
    out += section(
        "late", t2,
        fmt::format("Packets more than 80 ms from their deadline, per {} s interval.",
                    format_number(w)),
        late_max == 0 ? no_data(id2, t2, "no late packets: every packet was within 80 ms")
                      : render(lp),
        figure_table(f.summary, {{"late packets", {"pacing", "packets", "late"}, unit::count},
                                 {"sessions with a late packet",
                                  {"pacing", "sessions", "with_late_packet"},
                                  unit::count}}));
    return out;
}

// The heat strip: one row per session (or per group of sessions when there are many), one
// column per interval, coloured by the largest |deviation| there.
std::string heat_strip_section(const result_folder& f, time_bins& t) {
    const std::string &id3 = heat_id, &t3 = heat_title;
    heat_strip h;
    h.id = id3;
    h.title = t3;
    h.x0 = 0;
    h.x1 = t.span;
    h.x_label = "time since the first append (s)";
    h.unit_label = "ms";
    h.threshold = late_s;
    std::string htable = "<table><tr><th>session</th><th>packets</th><th>late</th>"
                         "<th>max |deviation| (ms)</th></tr>\n";
    const bool parts = f.kind == folder_kind::merged;
    auto name = [&](const session_record& s) {
        if (f.kind == folder_kind::recording)
            return fmt::format("{}/{}", s.sample, s.variant);
        return parts ? fmt::format("part {} session {}", s.part, s.index)
                     : fmt::format("session {}", s.index);
    };
    std::function<std::string(const session_record&, const session_record&)> group_name =
        [&](const session_record& first, const session_record& last) {
            return parts && first.part != last.part
                       ? fmt::format("parts {}–{}", first.part, last.part)
                       : fmt::format("{}sessions {}–{}",
                                     parts ? fmt::format("part {} ", first.part) : "", first.index,
                                     last.index);
        };
    if (f.kind == folder_kind::recording)
        group_name = [&](const session_record& first, const session_record& last) {
            return fmt::format("{}/{} … {}/{}", first.sample, first.variant, last.sample,
                               last.variant);
        };
    const auto& ss = t.ss;
    for (std::size_t r = 0; r * t.per_row < ss.size(); ++r) {
        const std::size_t a = r * t.per_row;
        const std::size_t b = std::min(ss.size(), a + t.per_row);
        h.row_labels.push_back(b - a == 1 ? name(*ss[a]) : group_name(*ss[a], *ss[b - 1]));
        h.cells.push_back(std::move(t.cells[r]));
    }
    for (const auto* s : ss)
        htable += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}"
                              "</tr>\n",
                              escape(name(*s)), s->stats.count, s->stats.late,
                              num_cell(s->stats.max_abs_deviation_s.value_or(0), 1e3));
    htable += "</table>\n";
    return section(
        "heat", t3,
        t.per_row > 1 ? fmt::format("One row per {} sessions (the worst of them), one column per "
                                    "time interval; colour: the largest |deviation| there, log "
                                    "scale; red: late.",
                                    t.per_row)
                      : std::string("One row per session, one column per time interval; colour: "
                                    "the largest |deviation| there, log scale; red: late."),
        h.row_labels.empty() ? no_data(id3, t3, "no packet was sent") : render(h), htable);
}

} // namespace

// ------------------------------------------------------------------------------ run plots

std::string deviation_cdf_section(const std::vector<const result_folder*>& folders,
                                  const std::vector<std::string>& names) {
    const std::string id = "plot-deviation-cdf", title = "Pacing deviation distribution";
    xy_plot p;
    p.id = id;
    p.title = title;
    double hi = 100;
    std::size_t c = 0;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        const auto& f = *folders[i];
        if (f.kind == folder_kind::serve) {
            // One line per level (its sessions' packets, repeats pooled).
            std::vector<std::uint32_t> levels;
            for (const auto& s : f.sessions)
                if (s.level && std::find(levels.begin(), levels.end(), *s.level) == levels.end())
                    levels.push_back(*s.level);
            for (auto l : levels) {
                const auto v = abs_deviations(f, l);
                hi = std::max(hi, max_of(v) * 1e3 * 1.5);
                p.lines.push_back(cdf_series(names[i] + fmt::format("c{}", l), v, 1e3, 1e-3, c++));
            }
        } else {
            const auto v = abs_deviations(f);
            hi = std::max(hi, max_of(v) * 1e3 * 1.5);
            p.lines.push_back(
                cdf_series(names[i].empty() ? "all packets" : names[i], v, 1e3, 1e-3, c++));
        }
    }
    p.x = log_axis("|deviation from the 80 ms grid| (ms, log)", 1e-3, hi);
    p.y = axis{"fraction of packets ≤ x", 0, 1, false};
    p.refs.push_back({late_s * 1e3, "late: 80 ms", true, true});
    std::string table;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        const auto& s = folders[i]->summary;
        if (folders[i]->kind == folder_kind::serve) {
            table +=
                "<p class=\"note\">" + escape(names[i]) +
                ": a sweep's summary records send lateness, not this deviation; per level, from "
                "the receipts:</p>"
                "<table><tr><th>level</th><th>packets</th><th>|deviation| max (ms)</th>"
                "<th>late</th></tr>";
            // Exact: the sums of the sessions' folded counts.
            std::map<std::uint32_t, packet_stats> per;
            for (const auto& se : folders[i]->sessions) {
                auto& st = per[se.level.value_or(0)];
                st.count += se.stats.count;
                st.late += se.stats.late;
                if (se.stats.max_abs_deviation_s)
                    st.max_abs_deviation_s =
                        std::max(st.max_abs_deviation_s.value_or(0), *se.stats.max_abs_deviation_s);
            }
            for (const auto& [l, st] : per)
                table += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td>{}<td "
                                     "class=\"num\">{}</td></tr>",
                                     l, st.count, num_cell(st.max_abs_deviation_s.value_or(0), 1e3),
                                     st.late);
            table += "</table>\n";
        } else {
            if (!names[i].empty())
                table += "<p>" + escape(names[i]) + "</p>";
            table += dist_table(s, {"pacing", "pacing_abs_deviation_s"},
                                {"n", "p50", "p90", "p99", "p99.9", "max"}, "|pacing deviation|");
        }
    }
    const bool empty = std::all_of(p.lines.begin(), p.lines.end(),
                                   [](const series& s) { return s.points.empty(); });
    return section("deviation", title,
                   "How far each append started from its deadline on its session's 80 ms grid "
                   "(|start − (t0 + N × 80 ms)|), every packet, on a log axis. A packet beyond the "
                   "red 80 ms line is late; one late packet makes the run pacing-unqualified.",
                   empty ? no_data(id, title, "no packet was sent") : render(p), table);
}

std::string send_time_section(const std::vector<const result_folder*>& folders,
                              const std::vector<std::string>& names) {
    const std::string id = "plot-send-time", title = "WebSocket send time";
    xy_plot p;
    p.id = id;
    p.title = title;
    double lo = 1e-3, hi = 10;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        const auto& v = folders[i]->send_time;
        hi = std::max(hi, max_of(v) * 1e3 * 1.5);
        p.lines.push_back(cdf_series(names[i].empty() ? "appends" : names[i], v, 1e3, lo, i));
    }
    p.x = log_axis("completed − start of each append (ms, log)", lo, hi);
    p.y = axis{"fraction of appends ≤ x", 0, 1, false};
    p.refs.push_back({late_s * 1e3, "stall: 80 ms", true, true});
    std::string table;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        if (!names[i].empty())
            table += "<p>" + escape(names[i]) + "</p>";
        if (lookup(folders[i]->summary, {"pacing", "ws_send_time_s"})) {
            table += dist_table(folders[i]->summary, {"pacing", "ws_send_time_s"},
                                {"n", "p50", "p90", "p99", "p99.9", "max"}, "send time");
            table += figure_table(folders[i]->summary, {{"send stalls (> 80 ms)",
                                                         {"pacing", "send_stalls", "stalled_sends"},
                                                         unit::count}});
        } else {
            // A sweep's summary has no send-time figures: computed here from the receipts.
            const auto& v = folders[i]->send_time;
            std::size_t stalls = 0;
            for (const auto& se : folders[i]->sessions)
                stalls += se.stats.slow_sends;
            table += "<p class=\"note\">Computed from the receipts (the summary has no send-time "
                     "figures; p50, p90 and p99 from a log histogram, within 1/2,048 of the exact "
                     "percentile; the count, max and stalls exact):</p><table><tr><th>appends</th>"
                     "<th>p50 (ms)</th><th>p90 (ms)</th><th>p99 (ms)</th><th>max (ms)</th>"
                     "<th>over 80 ms</th></tr>\n<tr>";
            table += fmt::format("<td class=\"num\">{}</td>", v.count());
            for (double q : {0.5, 0.9, 0.99, 1.0})
                table += num_cell(v.quantile(q).value_or(0), 1e3);
            table += fmt::format("<td class=\"num\">{}</td></tr></table>\n", stalls);
        }
    }
    const bool empty = std::all_of(p.lines.begin(), p.lines.end(),
                                   [](const series& s) { return s.points.empty(); });
    return section("send-time", title,
                   "How long each append's WebSocket write took (from the send receipts). A write "
                   "over 80 ms is a send stall: the server's TCP window was full.",
                   empty ? no_data(id, title, "no send receipts in this folder") : render(p),
                   table);
}

// Worst deviation and late packets per time bin, and the per-session heat strip.
std::string over_time_sections(const result_folder& f) {
    const auto sp = packet_span(f);
    if (!sp.any) {
        const std::string why = "no packet was sent";
        return section("over-time", deviation_over_time_title, "",
                       no_data(deviation_over_time_id, deviation_over_time_title, why), "") +
               section("late", late_over_time_title, "",
                       no_data(late_over_time_id, late_over_time_title, why), "") +
               section("heat", heat_title, "", no_data(heat_id, heat_title, why), "");
    }
    auto bins = bin_packets(f, sp);
    return deviation_and_late_over_time(f, bins) + heat_strip_section(f, bins);
}

std::string loop_lag_section(const std::vector<const result_folder*>& folders,
                             const std::vector<std::string>& names) {
    const std::string id = "plot-loop-lag", title = "Loop lag of the session contexts";
    bar_chart c;
    c.id = id;
    c.title = title;
    c.unit = "ms";
    double hi = 0;
    std::vector<std::string> keys;
    for (const char* k : {"p50", "p90", "p99", "p99.9", "max", "worst_part_p99"})
        for (const auto* f : folders)
            if (number_at(f->summary, {"pacing", "loop_lag_s", k}) &&
                std::find(keys.begin(), keys.end(), k) == keys.end())
                keys.emplace_back(k);
    c.categories = keys;
    std::string table;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        std::vector<std::optional<double>> vals;
        for (const auto& k : keys) {
            auto v = number_at(folders[i]->summary, {"pacing", "loop_lag_s", k});
            if (v) {
                *v *= 1e3;
                hi = std::max(hi, *v);
            }
            vals.push_back(v);
        }
        c.values.emplace_back(names[i].empty() ? "loop lag" : names[i], std::move(vals));
        if (!names[i].empty())
            table += "<p>" + escape(names[i]) + "</p>";
        table +=
            dist_table(folders[i]->summary, {"pacing", "loop_lag_s"},
                       {"n", "p50", "p90", "p99", "p99.9", "max", "worst_part_p99"}, "loop lag");
        table += figure_table(
            folders[i]->summary,
            {{"loop lags over 80 ms", {"pacing", "loop_lag_s", "over_80ms"}, unit::count}});
    }
    c.y = linear_axis("loop lag (ms)", 0, std::max(hi, 1.0));
    if (hi * 1.2 > 80)
        c.y = linear_axis("loop lag (ms)", 0, std::max(hi, 80.0));
    c.refs.push_back({80, "80 ms", false, true});
    return section("loop-lag", title,
                   "How late the 10 ms ticker of every session context woke up, over the whole "
                   "run: a context that stalls delays every session on it.",
                   keys.empty() ? no_data(id, title, "no loop lag recorded") : render(c), table);
}

// The largest loop lag of each second (summary "loop_lag_over_time", one line per part), on
// the time axis of the packet plots.
std::string loop_lag_over_time_section(const result_folder& f) {
    const std::string id = "plot-loop-lag-over-time", title = "Loop lag over time";
    const auto sp = packet_span(f);
    xy_plot p;
    p.id = id;
    p.title = title;
    double x_lo = 0, x_hi = sp.any ? std::max(sp.t1 - sp.t0, 0.08) : 0.08, hi = 1;
    std::string table = "<table><tr><th>part</th><th>from (s)</th><th>to (s)</th><th>max loop "
                        "lag (ms)</th></tr>\n";
    bool any = false;
    for (std::size_t k = 0; k < f.parts.size(); ++k) {
        const auto* o = f.parts[k].summary.if_contains("loop_lag_over_time");
        if (!o || !o->is_object())
            continue;
        const auto start = number_at(o->as_object(), {"start_s"});
        const auto step = number_at(o->as_object(), {"interval_s"});
        const auto* max_s = o->as_object().if_contains("max_s");
        if (!start || !step || *step <= 0 || !max_s || !max_s->is_array())
            continue;
        // On the packet plots' axis: seconds since the first append (of any part).
        const double origin = *start + f.parts[k].realtime_offset_s - (sp.any ? sp.t0 : *start);
        series line;
        line.name = f.parts.size() > 1 ? fmt::format("part {}", k) : "max loop lag per second";
        line.colour = k;
        line.markers = true;
        const auto& arr = max_s->as_array();
        for (std::size_t i = 0; i < arr.size(); ++i) {
            if (!arr[i].is_number())
                continue;
            const double v = arr[i].to_number<double>();
            const double from = origin + static_cast<double>(i) * *step, to = from + *step;
            line.points.emplace_back(from + *step / 2, v * 1e3);
            line.point_titles.push_back(
                fmt::format("{}{}–{} s: max loop lag {} ms",
                            f.parts.size() > 1 ? fmt::format("part {}: ", k) : std::string(),
                            format_number(from), format_number(to), format_number(v * 1e3)));
            if (v > late_s)
                p.markers.push_back({from + *step / 2, v * 1e3, false, line.point_titles.back()});
            x_lo = std::min(x_lo, from);
            x_hi = std::max(x_hi, to);
            hi = std::max(hi, v * 1e3);
            table += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                                 "class=\"num\">{}</td>{}</tr>\n",
                                 k, format_number(from), format_number(to), num_cell(v, 1e3));
        }
        any = any || !line.points.empty();
        p.lines.push_back(std::move(line));
    }
    table += "</table>\n";
    if (!any)
        return section("loop-lag-over-time", title, "",
                       no_data(id, title,
                               "this folder has no loop lag over time (written before pacer "
                               "recorded it)"),
                       "");
    const auto frame = page_time_frame(f);
    p.x = linear_axis(time_label, std::min(x_lo, frame.lo), std::max(x_hi, frame.hi));
    p.y = linear_axis("max loop lag (ms)", 0, hi * 1.2 > 80 ? std::max(hi, 80.0) : hi);
    if (hi * 1.2 > 80)
        p.refs.push_back({late_s * 1e3, "80 ms", false, true});
    return section("loop-lag-over-time", title,
                   "The largest lag of the session contexts' 10 ms tickers in each second (red "
                   "dots: over 80 ms). A peak that lines up with late packets above is the "
                   "client stalling, not the server. The monitors start before the first "
                   "append, so the line may begin left of 0.",
                   render(p), table);
}

// Cumulative offered (schedule) and achieved (first append) arrivals.
std::string open_loop_sections(const std::vector<const result_folder*>& folders,
                               const std::vector<std::string>& names) {
    std::string out = arrivals_section(folders, names);
    if (folders.size() == 1)
        out += stages_section(folders.front()->summary);
    out += dispatch_lag_section(folders, names);
    out += latency_section(folders, names);
    out += cap_section(folders, names);
    return out;
}

} // namespace pacer::report::detail

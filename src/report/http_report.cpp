// report.html of a `pacer http` folder (requests.jsonl and summary.json) and of a
// `pacer http --find-capacity` folder (capacity.json and its probes). The tables print the
// summary's own numbers (data-key/data-value, as every report does); the plots are drawn from
// requests.jsonl, one point per request.

#include <pacer/report/html_report.hpp>
#include <pacer/report/svg.hpp>

#include <fmt/format.h>

#include "html_parts.hpp"
#include <algorithm>
#include <cmath>
#include <map>

namespace pacer::report::detail {

namespace json = boost::json;

namespace {

std::vector<std::string> key(std::initializer_list<const char*> parts) {
    return {parts.begin(), parts.end()};
}

// The summary's number at `path`, else nullopt.
std::optional<double> at(const json::object& s, std::initializer_list<const char*> path) {
    return number_at(s, key(path));
}

std::string table_note(const std::string& text) {
    return "<p class=\"note\">" + escape(text) + "</p>\n";
}

// ------------------------------------------------------------------------- http run page

std::string verdicts(const json::object& s) {
    const auto* kept = lookup(s, {"schedule_kept"});
    const bool ok = kept && kept->is_bool() && kept->as_bool();
    std::string h = fmt::format(
        "<p><span class=\"verdict {}\">{}</span></p>\n", ok ? "good" : "bad",
        ok ? "SCHEDULE KEPT: the client dispatched every arrival on time (dispatch lag within "
             "bounds)"
           : "SCHEDULE NOT KEPT: the client fell behind; the latencies include its lateness");
    const auto failed = at(s, {"failed"}).value_or(0);
    h += fmt::format("<p><span class=\"verdict {}\">{}</span></p>\n", failed > 0 ? "bad" : "good",
                     failed > 0 ? fmt::format("{} request(s) failed (errors by kind below)",
                                              format_number(failed))
                                : std::string("no request failed"));
    return h;
}

std::vector<figure> http_figures(const json::object& s) {
    std::vector<figure> f;
    for (const char* k : {"scheduled", "completed", "failed", "dropped"})
        f.push_back({std::string("requests ") + k, {k}, unit::count});
    f.push_back({"duration (s, origin to last completion)", {"duration"}, unit::count});
    f.push_back({"request throughput (per s)", {"request_throughput"}, unit::count});
    f.push_back({"output throughput (tokens per s)", {"output_throughput"}, unit::count});
    f.push_back({"total token throughput (per s)", {"total_token_throughput"}, unit::count});
    f.push_back({"total input tokens", {"total_input_tokens"}, unit::count});
    f.push_back({"total output tokens", {"total_output_tokens"}, unit::count});
    f.push_back({"request goodput (per s)", {"request_goodput"}, unit::count});
    f.push_back({"requests meeting every SLO", {"goodput_requests"}, unit::count});
    for (const char* m : {"ttft", "tpot", "itl", "e2el"})
        for (const char* st : {"mean", "median", "p99"}) {
            const std::string k = fmt::format("{}_{}_ms", st, m);
            f.push_back({fmt::format("{} {} (from the schedule)", m, st), {k}, unit::millis});
            f.push_back({fmt::format("{} {} (uncorrected, from dispatch)", m, st),
                         {"uncorrected", k},
                         unit::millis});
        }
    f.push_back({"dispatch lag p99", {"open_loop", "dispatch_lag_s", "p99"}, unit::seconds});
    f.push_back({"dispatch lag max", {"open_loop", "dispatch_lag_s", "max"}, unit::seconds});
    f.push_back({"schedule kept", {"schedule_kept"}, unit::flag});
    f.push_back({"cap binding", {"open_loop", "cap", "binding"}, unit::flag});
    f.push_back({"connections opened", {"connections", "opened"}, unit::count});
    f.push_back({"connections reused", {"connections", "reused"}, unit::count});
    f.push_back({"interrupted", {"interrupted"}, unit::flag});
    return present_in(s, std::move(f));
}

// Seconds of a time bin table: width for at most 30 rows, at least 1 s.
double table_bin(double span) {
    return std::max(1.0, bin_width(std::max(span, 1.0), 30));
}

series cumulative(std::string name, std::vector<double> t, std::size_t colour, bool dashed) {
    std::sort(t.begin(), t.end());
    series s;
    s.name = std::move(name);
    s.step = true;
    s.dashed = dashed;
    s.colour = colour;
    s.points.emplace_back(0, 0);
    for (std::size_t k = 0; k < t.size(); ++k)
        s.points.emplace_back(t[k], static_cast<double>(k + 1));
    return s;
}

std::string arrivals_section(const result_folder& f) {
    const std::string id = "plot-arrivals", title = "Offered and achieved arrivals";
    std::vector<double> offered, dispatched, completed;
    for (const auto& r : f.requests) {
        offered.push_back(r.scheduled_s);
        if (r.dispatched_s)
            dispatched.push_back(*r.dispatched_s);
        if (r.completed_s)
            completed.push_back(*r.completed_s);
    }
    const double hi = std::max({max_of(offered, 0), max_of(dispatched, 0), max_of(completed, 0)});
    xy_plot p;
    p.id = id;
    p.title = title;
    p.lines.push_back(cumulative("offered (schedule)", offered, 0, true));
    p.lines.push_back(cumulative("dispatched", dispatched, 1, false));
    p.lines.push_back(cumulative("completed", completed, 2, false));
    p.x = linear_axis("seconds since the schedule's origin", 0, std::max(hi, 0.1));
    p.y = linear_axis("requests so far", 0,
                      static_cast<double>(std::max<std::size_t>(offered.size(), 1)));
    stage_ends(f.summary, p);
    // The table: per interval, what was offered, dispatched, completed and failed.
    const double w = table_bin(hi);
    struct counts {
        int offered = 0, dispatched = 0, completed = 0, failed = 0;
    };
    std::map<long, counts> per;
    for (const auto& r : f.requests) {
        ++per[static_cast<long>(std::max(0.0, r.scheduled_s) / w)].offered;
        if (r.dispatched_s)
            ++per[static_cast<long>(std::max(0.0, *r.dispatched_s) / w)].dispatched;
        if (r.completed_s) {
            auto& c = per[static_cast<long>(std::max(0.0, *r.completed_s) / w)];
            ++(r.error.empty() ? c.completed : c.failed);
        }
    }
    std::string table = "<table><tr><th>from (s)</th><th>to (s)</th><th>offered</th>"
                        "<th>dispatched</th><th>completed</th><th>failed</th></tr>\n";
    for (const auto& [b, c] : per)
        table += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                             "class=\"num\">{}</td><td class=\"num\">{}</td><td "
                             "class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                             format_number(static_cast<double>(b) * w),
                             format_number(static_cast<double>(b + 1) * w), c.offered, c.dispatched,
                             c.completed, c.failed);
    table += "</table>\n";
    table += figure_table(
        f.summary, {{"scheduled", {"open_loop", "requests", "scheduled"}, unit::count},
                    {"dispatched", {"open_loop", "requests", "dispatched"}, unit::count},
                    {"completed", {"open_loop", "requests", "completed"}, unit::count},
                    {"dropped", {"open_loop", "requests", "dropped"}, unit::count},
                    {"not dispatched", {"open_loop", "requests", "not_dispatched"}, unit::count},
                    {"rate (per s)", {"schedule", "rate"}, unit::count},
                    {"arrival process", {"schedule", "arrival"}, unit::text},
                    {"seed", {"schedule", "seed"}, unit::count}});
    return section(
        "arrivals", title,
        "Cumulative requests over time: offered by the seeded schedule (dashed), "
        "dispatched (handed to a connection) and completed (ended, with or without "
        "error). Dispatched following offered closely means the client kept the "
        "schedule; a gap means it fell behind or the cap held arrivals.",
        f.requests.empty() ? no_data(id, title, "no request in requests.jsonl") : render(p), table);
}

std::string dispatch_lag_section(const result_folder& f) {
    const std::string id = "plot-dispatch-lag", title = "Dispatch lag";
    std::vector<double> lag;
    for (const auto& r : f.requests)
        if (r.dispatched_s)
            lag.push_back(std::max(0.0, *r.dispatched_s - r.scheduled_s));
    xy_plot p;
    p.id = id;
    p.title = title;
    p.lines.push_back(cdf_series("dispatched − scheduled", lag, 1e3, 1e-3, 0));
    const auto p99 = at(f.summary, {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_p99"});
    const auto mx = at(f.summary, {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_max"});
    double hi = std::max(max_of(lag, 0) * 1e3 * 1.5, 1.0);
    if (p99) {
        p.refs.push_back(
            {*p99 * 1e3, fmt::format("p99 bound {} ms", format_number(*p99 * 1e3)), true, true});
        hi = std::max(hi, *p99 * 1e3 * 1.5);
    }
    if (mx) {
        p.refs.push_back(
            {*mx * 1e3, fmt::format("max bound {} ms", format_number(*mx * 1e3)), true, true});
        hi = std::max(hi, *mx * 1e3 * 1.5);
    }
    p.x = log_axis("dispatched − scheduled (ms, log)", 1e-3, hi);
    p.y = axis{"fraction of dispatched requests ≤ x", 0, 1, false};
    std::vector<figure> figs;
    for (const char* k : {"n", "p50", "p90", "p99", "p99.9", "max", "mean"})
        figs.push_back({std::string("dispatch lag ") + k,
                        {"open_loop", "dispatch_lag_s", k},
                        std::string(k) == "n" ? unit::count : unit::seconds});
    figs.push_back({"schedule kept", {"open_loop", "schedule_kept"}, unit::flag});
    figs.push_back({"threshold p99",
                    {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_p99"},
                    unit::seconds});
    figs.push_back({"threshold max",
                    {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_max"},
                    unit::seconds});
    figs.push_back({"deadline missed", {"open_loop", "deadline_missed"}, unit::count});
    return section(
        "dispatch-lag", title,
        "How late the client handed each request to a connection: dispatched − scheduled, every "
        "dispatched request, log axis. The schedule is kept when the summary's p99 and max stay "
        "under the dashed bounds. The summary's figures leave out the time a binding cap held an "
        "arrival (that wait is the server's, and is in the latency); the plot, drawn from "
        "requests.jsonl, includes it.",
        lag.empty() ? no_data(id, title, "no request was dispatched") : render(p),
        figure_table(f.summary, figs));
}

// The summary's mean/median/std/p99 of one metric, from the schedule and from dispatch.
std::string metric_table(const json::object& s, const char* m, bool anchored) {
    std::vector<figure> figs;
    for (const char* st : {"mean", "median", "std", "p99"}) {
        const std::string k = fmt::format("{}_{}_ms", st, m);
        figs.push_back({fmt::format("{} {}{}", m, st, anchored ? " (from the schedule)" : ""),
                        {k},
                        unit::millis});
        if (anchored)
            figs.push_back({fmt::format("{} {} (uncorrected, from dispatch)", m, st),
                            {"uncorrected", k},
                            unit::millis});
    }
    return figure_table(s, figs);
}

std::optional<double> slo_ms(const json::object& s, const char* name) {
    return number_at(s, {"goodput_slo", std::string(name) + "_ms"});
}

// One CDF plot of per-request values (ms): each series (name, values, dashed).
struct cdf_input {
    std::string name;
    std::vector<double> values;
    bool dashed = false;
};

std::string cdf_plot(const std::string& id, const std::string& title, const std::string& xlabel,
                     std::vector<cdf_input> inputs, std::optional<double> slo,
                     const std::string& slo_name) {
    xy_plot p;
    p.id = id;
    p.title = title;
    double lo = 1e18, hi = 0;
    bool any = false;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        for (double v : inputs[i].values)
            if (v > 0) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
                any = true;
            }
    }
    if (!any)
        return no_data(id, title, "no completed request has this figure");
    if (slo)
        hi = std::max(hi, *slo);
    const double floor_v = std::max(lo, 1e-3);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        auto s = cdf_series(inputs[i].name, std::move(inputs[i].values), 1, floor_v, i);
        s.dashed = inputs[i].dashed;
        p.lines.push_back(std::move(s));
    }
    if (slo)
        p.refs.push_back(
            {*slo, fmt::format("SLO {} ≤ {} ms", slo_name, format_number(*slo)), true, true});
    p.x = log_axis(xlabel, floor_v, hi * 1.2);
    p.y = axis{"fraction of requests ≤ x", 0, 1, false};
    return render(p);
}

std::string latency_sections(const result_folder& f) {
    std::vector<double> ttft, ttft_u, e2el, e2el_u, tpot, itl;
    for (const auto& r : f.requests) {
        if (!r.error.empty() || !r.completed_s)
            continue; // only requests that ended without error enter the latencies
        if (r.ttft_ms)
            ttft.push_back(*r.ttft_ms);
        if (r.ttft_uncorrected_ms)
            ttft_u.push_back(*r.ttft_uncorrected_ms);
        if (r.e2el_ms)
            e2el.push_back(*r.e2el_ms);
        if (r.e2el_uncorrected_ms)
            e2el_u.push_back(*r.e2el_uncorrected_ms);
        if (r.tpot_ms)
            tpot.push_back(*r.tpot_ms);
        for (std::size_t i = 1; i < r.token_times_s.size(); ++i)
            itl.push_back((r.token_times_s[i] - r.token_times_s[i - 1]) * 1e3);
    }
    const auto& s = f.summary;
    std::string out;
    out += section("ttft", "Time to first token",
                   "First token − scheduled time (solid: no coordinated omission) beside first "
                   "token − dispatch time (dashed: the uncorrected view of vLLM's benchmark and "
                   "closed-loop tools, which hides every wait before dispatch), every request "
                   "that ended without error, log axis. The dashed red line is the --goodput "
                   "SLO.",
                   cdf_plot("plot-ttft", "Time to first token", "TTFT (ms, log)",
                            {{"from the schedule", ttft, false},
                             {"uncorrected (from dispatch)", ttft_u, true}},
                            slo_ms(s, "ttft"), "ttft"),
                   metric_table(s, "ttft", true));
    out += section("e2el", "End-to-end latency",
                   "Completion − scheduled time (solid) beside completion − dispatch time "
                   "(dashed), every request that ended without error.",
                   cdf_plot("plot-e2el", "End-to-end latency", "E2EL (ms, log)",
                            {{"from the schedule", e2el, false},
                             {"uncorrected (from dispatch)", e2el_u, true}},
                            slo_ms(s, "e2el"), "e2el"),
                   metric_table(s, "e2el", true));
    out += section("tpot-itl", "Time per output token and inter-token latency",
                   "TPOT: (completion − first token) / (output tokens − 1) per request of 2 or "
                   "more tokens; ITL: every gap between consecutive token chunks. Neither "
                   "depends on the anchor.",
                   cdf_plot("plot-tpot-itl", "TPOT and ITL", "ms (log)",
                            {{"TPOT (per request)", tpot, false}, {"ITL (every gap)", itl, true}},
                            slo_ms(s, "tpot"), "tpot"),
                   metric_table(s, "tpot", true) + metric_table(s, "itl", true));
    return out;
}

std::string goodput_section(const result_folder& f) {
    const std::string id = "plot-goodput", title = "Goodput against the SLOs";
    const auto& s = f.summary;
    if (!s.contains("goodput_slo"))
        return section("goodput", title,
                       "This run was given no --goodput SLOs (e.g. --goodput ttft:500,tpot:50).",
                       no_data(id, title, "no --goodput SLO given"), "");
    const auto ttft = slo_ms(s, "ttft"), tpot = slo_ms(s, "tpot"), e2el = slo_ms(s, "e2el");
    // Per SLO, the share of the scheduled requests that met it (a failed, dropped or
    // undispatched request meets none); "every SLO" is what goodput counts.
    std::size_t n = f.requests.size(), m_ttft = 0, m_tpot = 0, m_e2el = 0, m_all = 0;
    for (const auto& r : f.requests) {
        if (!r.error.empty() || !r.completed_s || r.dropped)
            continue;
        const bool a = !ttft || (r.ttft_ms && *r.ttft_ms <= *ttft);
        const bool b = !tpot || !r.tpot_ms || *r.tpot_ms <= *tpot;
        const bool c = !e2el || (r.e2el_ms && *r.e2el_ms <= *e2el);
        m_ttft += a;
        m_tpot += b;
        m_e2el += c;
        m_all += a && b && c;
    }
    bar_chart c;
    c.id = id;
    c.title = title;
    c.unit = "%";
    std::vector<std::optional<double>> values;
    std::string rows;
    const auto share = [&](std::size_t k) {
        return n ? 100.0 * static_cast<double>(k) / static_cast<double>(n) : 0.0;
    };
    const auto add = [&](const std::string& name, std::optional<double> bound, std::size_t k) {
        c.categories.push_back(name);
        values.push_back(share(k));
        rows += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                            "<td class=\"num\">{}</td></tr>\n",
                            escape(name), bound ? format_number(*bound) + " ms" : "–", k,
                            format_number(share(k)));
    };
    if (ttft)
        add("TTFT", ttft, m_ttft);
    if (tpot)
        add("TPOT", tpot, m_tpot);
    if (e2el)
        add("E2EL", e2el, m_e2el);
    add("every SLO", std::nullopt, m_all);
    c.values.emplace_back("requests meeting the SLO", std::move(values));
    c.y = linear_axis("share of scheduled requests (%)", 0, 100);
    const std::string table =
        figure_table(s, {{"SLO ttft", {"goodput_slo", "ttft_ms"}, unit::millis},
                         {"SLO tpot", {"goodput_slo", "tpot_ms"}, unit::millis},
                         {"SLO e2el", {"goodput_slo", "e2el_ms"}, unit::millis},
                         {"requests meeting every SLO", {"goodput_requests"}, unit::count},
                         {"request goodput (per s)", {"request_goodput"}, unit::count},
                         {"requests scheduled", {"scheduled"}, unit::count}}) +
        table_note("Per SLO, from requests.jsonl (a failed or dropped request meets none):") +
        "<table><tr><th>SLO</th><th>bound</th><th>requests meeting it</th><th>share (%)</th>"
        "</tr>\n" +
        rows + "</table>\n";
    return section("goodput", title,
                   "The share of the scheduled requests that met each --goodput SLO (TTFT and "
                   "E2EL from the schedule) and all of them at once, which is what goodput "
                   "counts.",
                   render(c), table);
}

std::string cap_section(const json::object& s) {
    return "<section id=\"cap\"><h2>Concurrency cap</h2>\n<p>--max-concurrency gates dispatch "
           "but never moves the schedule; when it binds, its delay counts in the latency (from "
           "the schedule), not in the dispatch lag.</p>\n" +
           cap_figures(s) + "</section>\n";
}

std::string errors_section(const result_folder& f) {
    const std::string id = "plot-errors", title = "Errors by kind";
    const auto& s = f.summary;
    bar_chart c;
    c.id = id;
    c.title = title;
    std::vector<std::optional<double>> values;
    std::vector<figure> figs;
    double hi = 0;
    if (const auto* e = s.if_contains("errors"); e && e->is_object())
        for (const auto& [k, v] : e->as_object()) {
            c.categories.emplace_back(k);
            const double n = v.is_number() ? v.to_number<double>() : 0;
            values.push_back(n);
            hi = std::max(hi, n);
            figs.push_back({std::string(k), {"errors", std::string(k)}, unit::count});
        }
    c.values.emplace_back("requests", std::move(values));
    c.y = linear_axis("requests", 0, std::max(hi, 1.0));
    // Every distinct message with its kind and count.
    std::map<std::pair<std::string, std::string>, std::size_t> messages;
    for (const auto& r : f.requests)
        if (!r.error.empty())
            ++messages[{r.error, r.error_message}];
    std::string table = figure_table(s, figs);
    if (!messages.empty()) {
        table += "<table><tr><th>kind</th><th>message</th><th>requests</th></tr>\n";
        for (const auto& [km, n] : messages)
            table += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>\n",
                                 escape(km.first), escape(km.second), n);
        table += "</table>\n";
    }
    return section(
        "errors", title,
        "Failed requests by kind (connect, http_status, timeout, disconnect, "
        "malformed_sse, server_error); each distinct message is in the table.",
        c.categories.empty() ? no_data(id, title, "the summary has no errors") : render(c), table);
}

std::string http_settings_table(const json::object& s) {
    std::string h = "<table><tr><th>setting</th><th>value</th></tr>\n";
    for (const char* group : {"schedule", "connections"})
        if (const auto* o = s.if_contains(group); o && o->is_object())
            for (const auto& [k, v] : o->as_object())
                h += row({std::string(group) + "." + std::string(k), text_of(v)});
    return h + "</table>\n";
}

std::string http_page(const result_folder& f) {
    std::string body = fmt::format("<h1>pacer report: {}</h1>\n<p>{} · {} requests</p>\n",
                                   escape(f.dir.string()), to_string(f.kind), f.requests.size());
    body += verdicts(f.summary);
    body += "<section id=\"figures\"><h2>Summary figures</h2>\n" +
            figure_table(f.summary, http_figures(f.summary)) + "</section>\n";
    body += arrivals_section(f);
    body += stages_section(f.summary);
    body += dispatch_lag_section(f);
    body += latency_sections(f);
    body += goodput_section(f);
    body += cap_section(f.summary);
    body += telemetry_sections(f); // power and utilisation, when the run sampled them
    body += errors_section(f);
    auto env = environment(f, "");
    // The schedule and the connections, after the configuration.
    env.insert(env.rfind("</section>"), http_settings_table(f.summary));
    body += env;
    body += notes(f, "");
    return page("pacer report: " + f.dir.string(), body);
}

// --------------------------------------------------------------------- capacity search page

// The capacity page's title, its verdict and the figures of capacity.json.
std::string capacity_head(const result_folder& f) {
    const auto& s = f.summary;
    const auto cap = at(s, {"capacity_rps"});
    std::string body = fmt::format("<h1>pacer report: {}</h1>\n<p>{} · {} probes</p>\n",
                                   escape(f.dir.string()), to_string(f.kind), f.parts.size());
    const auto* limited = lookup(s, {"client_limited"});
    const bool client = limited && limited->is_bool() && limited->as_bool();
    body += fmt::format(
        "<p><span class=\"verdict {}\">{}</span></p>\n", cap && !client ? "good" : "bad",
        cap ? fmt::format("CAPACITY {} requests/s{}", format_number(*cap),
                          client ? " (a lower bound: a probe did not keep its schedule)" : "")
            : std::string("no probed rate met the SLOs"));
    return body + "<section id=\"figures\"><h2>Capacity</h2>\n" +
           figure_table(
               s, {{"capacity (requests/s)", {"capacity_rps"}, unit::count},
                   {"first failing rate (requests/s)", {"first_failing_rps"}, unit::count},
                   {"SLOs (--goodput)", {"criterion", "goodput"}, unit::text},
                   {"share that must meet them", {"criterion", "goodput_fraction"}, unit::ratio},
                   {"client limited", {"client_limited"}, unit::flag},
                   {"interrupted", {"interrupted"}, unit::flag}}) +
           "</section>\n";
}

// The summary.json of probe `idx`'s folder (nullptr: none read).
const json::object* probe_summary(const result_folder& f, const std::string& idx) {
    const auto* folder = lookup(f.summary, {"probes", idx, "folder"});
    const json::object* ps = nullptr;
    for (const auto& part : f.parts)
        if (folder && part.dir.filename() == text_of(*folder))
            ps = &part.summary;
    return ps;
}

std::string capacity_page(const result_folder& f) {
    const auto& s = f.summary;
    const auto cap = at(s, {"capacity_rps"});
    std::string body = capacity_head(f);

    // One row per probe: capacity.json's verdict, the probe's own latencies.
    const auto* probes = s.if_contains("probes");
    const std::size_t n = probes && probes->is_array() ? probes->as_array().size() : 0;
    std::string table = "<table class=\"probes\"><tr><th>probe</th><th>rate (per s)</th>"
                        "<th>passed</th><th>schedule kept</th><th>goodput fraction</th>"
                        "<th>failed</th><th>TTFT p99</th><th>E2EL p99</th><th>folder</th></tr>\n";
    xy_plot good, lat;
    good.id = "plot-capacity-goodput";
    good.title = "Goodput fraction against the rate";
    lat.id = "plot-capacity-latency";
    lat.title = "TTFT and E2EL p99 against the rate";
    series gline, tline, eline;
    gline.name = "goodput fraction";
    tline.name = "TTFT p99";
    eline.name = "E2EL p99";
    tline.colour = 1;
    eline.colour = 2;
    double rmax = 0, lmax = 0;
    std::vector<std::pair<double, std::size_t>> order;
    for (std::size_t i = 0; i < n; ++i) {
        const std::string idx = fmt::format("[{}]", i);
        const auto p = [&](const char* k) { return std::vector<std::string>{"probes", idx, k}; };
        const auto rate = number_at(s, p("rate"));
        const auto frac = number_at(s, p("goodput_fraction"));
        const auto* passed = lookup(s, p("passed"));
        const bool ok = passed && passed->is_bool() && passed->as_bool();
        const auto* folder = lookup(s, p("folder"));
        const std::string folder_name = folder ? text_of(*folder) : "";
        const json::object* ps = probe_summary(f, idx);
        const auto ttft = ps ? number_at(*ps, {"p99_ttft_ms"}) : std::nullopt;
        const auto e2el = ps ? number_at(*ps, {"p99_e2el_ms"}) : std::nullopt;
        table += fmt::format("<tr><td class=\"num\">{}</td>{}{}{}{}{}{}{}<td>{}</td></tr>\n", i + 1,
                             figure_cell(s, p("rate"), unit::count, ""),
                             figure_cell(s, p("passed"), unit::flag, ""),
                             figure_cell(s, p("schedule_kept"), unit::flag, ""),
                             figure_cell(s, p("goodput_fraction"), unit::ratio, ""),
                             figure_cell(s, p("failed"), unit::count, ""), num_cell(ttft, 1),
                             num_cell(e2el, 1), escape(folder_name));
        if (!rate)
            continue;
        rmax = std::max(rmax, *rate);
        order.emplace_back(*rate, i);
        const std::string verdict = ok ? "passed" : "failed";
        if (frac)
            good.markers.push_back(
                {*rate, *frac, ok,
                 fmt::format("probe {}: {} requests/s, goodput fraction {} ({})", i + 1,
                             format_number(*rate), format_number(*frac), verdict)});
        if (ttft) {
            lat.markers.push_back(
                {*rate, *ttft, ok,
                 fmt::format("probe {}: {} requests/s, TTFT p99 {} ms ({})", i + 1,
                             format_number(*rate), format_number(*ttft), verdict)});
            lmax = std::max(lmax, *ttft);
        }
        if (e2el)
            lmax = std::max(lmax, *e2el);
    }
    table += "</table>\n";
    std::sort(order.begin(), order.end());
    for (const auto& [rate, i] : order) {
        const std::string idx = fmt::format("[{}]", i);
        if (const auto frac = number_at(s, {"probes", idx, "goodput_fraction"}))
            gline.points.emplace_back(rate, *frac);
        const json::object* ps = probe_summary(f, idx);
        if (!ps)
            continue;
        if (const auto v = number_at(*ps, {"p99_ttft_ms"}))
            tline.points.emplace_back(rate, *v);
        if (const auto v = number_at(*ps, {"p99_e2el_ms"}))
            eline.points.emplace_back(rate, *v);
    }
    good.lines.push_back(std::move(gline));
    lat.lines.push_back(std::move(tline));
    lat.lines.push_back(std::move(eline));
    good.x = linear_axis("offered rate (requests/s)", 0, std::max(rmax, 1.0));
    lat.x = good.x;
    good.y = axis{"share of requests meeting every SLO", 0, 1, false};
    lat.y = linear_axis("p99 (ms)", 0, std::max(lmax, 1.0));
    if (const auto need = at(s, {"criterion", "goodput_fraction"}))
        good.refs.push_back({*need, fmt::format("needed: {}", format_number(*need)), false, true});
    if (cap) {
        good.refs.push_back({*cap, fmt::format("capacity {}/s", format_number(*cap)), true, false});
        lat.refs.push_back({*cap, fmt::format("capacity {}/s", format_number(*cap)), true, false});
    }
    body += section("probes", "Probes",
                    "Each probe is a whole pacer http run at one rate, in its own folder (with "
                    "its own report.html). A probe passes when it kept its schedule and enough of "
                    "its requests met every SLO; green: passed, red: failed; dashed grey: the "
                    "capacity found.",
                    order.empty() ? no_data(good.id, good.title, "no probe in capacity.json")
                                  : render(good),
                    table, true); // the probes' table, shown under the plot
    body += section("probe-latency", "Latency against the rate",
                    "The p99 TTFT and E2EL (from the schedule) of each probe's summary.",
                    lmax > 0 ? render(lat)
                             : no_data(lat.id, lat.title, "no probe summary could be read"),
                    table_note("The numbers are those of the Probes table above."));
    body += environment(f, "");
    body += notes(f, "");
    return page("pacer report: " + f.dir.string(), body);
}

} // namespace

std::string render_http_report(const result_folder& f) {
    return f.kind == folder_kind::http_capacity ? capacity_page(f) : http_page(f);
}

} // namespace pacer::report::detail

// report.html: the verdict at the top of every page, the errors section and the page of each
// folder kind, assembled from the parts (html_parts.hpp) and the pages (run_page.cpp,
// serve_page.cpp, recording_page.cpp, http_report.cpp); and the comparison of two folders.
#include <pacer/core/json_pointer.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/metrics/slo.hpp>
#include <pacer/report/error_kind.hpp>
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

namespace pacer::report {

namespace json = boost::json;

namespace {

using namespace detail;

// ------------------------------------------------------------- reachability and errors

// "cannot connect to URL: REASON" when no session of a run (a merged run: of any part)
// reached the server; nullopt when one did.
std::optional<std::string> run_unreachable(const result_folder& f) {
    const auto of = [](const json::object& s) -> std::optional<std::string> {
        const auto* why = lookup(s, {"server", "unreachable"});
        if (!why || !why->is_string())
            return std::nullopt;
        const auto* url = lookup(s, {"config", "url"});
        if (!url)
            url = s.if_contains("url"); // the pooled summary of --processes
        return fmt::format("cannot connect to {}: {}",
                           url && url->is_string() ? std::string(url->as_string()) : "the server",
                           std::string(why->as_string()));
    };
    if (f.kind != folder_kind::merged)
        return of(f.summary);
    // Pooled: unreachable only when every part was.
    std::optional<std::string> why;
    for (const auto& p : f.parts) {
        auto w = of(p.summary);
        if (!w)
            return std::nullopt;
        why = why ? why : w;
    }
    return why;
}

// Every error message of the folder with how many sessions had it: a run's (each part's when
// merged) `pacing.errors`, every run of a sweep (warm-ups too), a recording's variants.
std::vector<std::pair<std::string, double>> error_messages(const result_folder& f) {
    std::map<std::string, double> counts;
    const auto add = [&](const json::value* errors) {
        if (!errors || !errors->is_array())
            return;
        for (const auto& e : errors->as_array())
            if (const auto* o = e.if_object();
                o && o->contains("message") && o->at("message").is_string())
                counts[std::string(o->at("message").as_string())] +=
                    number_at(*o, {"sessions"}).value_or(1);
    };
    if (f.kind == folder_kind::serve) {
        if (const auto* runs = f.summary.if_contains("runs"); runs && runs->is_array())
            for (const auto& r : runs->as_array())
                if (const auto* o = r.if_object())
                    add(o->if_contains("errors"));
    } else if (f.kind == folder_kind::recording) {
        for (const auto& se : f.sessions)
            if (const auto* e = se.variant_entry.if_contains("errors"); e && e->is_array()) {
                std::set<std::string> seen; // a variant once per message
                for (const auto& m : e->as_array())
                    if (m.is_string() && seen.insert(std::string(m.as_string())).second)
                        counts[std::string(m.as_string())] += 1;
            }
    } else if (f.kind == folder_kind::merged) {
        for (const auto& p : f.parts)
            add(lookup(p.summary, {"pacing", "errors"}));
    } else {
        add(lookup(f.summary, {"pacing", "errors"}));
    }
    std::vector<std::pair<std::string, double>> out(counts.begin(), counts.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
}

struct error_group {
    std::string kind;
    double sessions = 0;
    std::string example; ///< its most frequent message
};

// The errors by kind (report::error_kind), most frequent first, each with one example. A
// run's `server.errors_by_kind` (sessions counted once per kind, with rejections and
// incomplete sessions) gives the counts where it exists.
std::vector<error_group> error_groups(const result_folder& f) {
    std::vector<error_group> out;
    const auto group = [&](const std::string& kind) -> error_group& {
        for (auto& g : out)
            if (g.kind == kind)
                return g;
        return out.emplace_back(error_group{kind, 0, ""});
    };
    const auto messages = error_messages(f);
    for (const auto& [m, n] : messages) {
        auto& g = group(error_kind(m));
        g.sessions += n;
        if (g.example.empty())
            g.example = m;
    }
    std::vector<const json::object*> summaries;
    if (f.kind == folder_kind::run || f.kind == folder_kind::open_loop)
        summaries.push_back(&f.summary);
    else if (f.kind == folder_kind::merged)
        for (const auto& p : f.parts)
            summaries.push_back(&p.summary);
    std::map<std::string, double> by_kind;
    for (const auto* s : summaries)
        if (const auto* kinds = lookup(*s, {"server", "errors_by_kind"});
            kinds && kinds->is_array())
            for (const auto& k : kinds->as_array())
                if (const auto* o = k.if_object();
                    o && o->contains("kind") && o->at("kind").is_string())
                    by_kind[std::string(o->at("kind").as_string())] +=
                        number_at(*o, {"sessions"}).value_or(0);
    for (const auto& [kind, n] : by_kind) {
        auto& g = group(kind);
        g.sessions = n;
        if (g.example.empty()) // said by the runner, not in the messages: the kind says it
            g.example = kind == "admission rejected"
                            ? "admission rejected: HTTP 503, retries exhausted"
                            : kind;
    }
    std::stable_sort(out.begin(), out.end(), [](const error_group& a, const error_group& b) {
        return a.sessions > b.sessions;
    });
    return out;
}

std::string errors_section(const result_folder& f, const std::string& side = "") {
    const auto groups = error_groups(f);
    std::string h = fmt::format("<section id=\"errors{}\"><h2>{}Errors by kind</h2>\n",
                                side.empty() ? "" : "-" + side, side.empty() ? "" : side + ": ");
    if (groups.empty())
        return h + "<p class=\"note\">No session reported an error.</p></section>\n";
    h += fmt::format("<p>What the sessions' errors say, grouped by kind: how many "
                     "{} had one, and one message of each kind.</p>\n<table id=\"errors-table"
                     "{}\"><tr><th>kind</th><th>sessions</th><th>example</th></tr>\n",
                     f.kind == folder_kind::recording ? "variants" : "sessions",
                     side.empty() ? "" : "-" + side);
    for (const auto& g : groups)
        h += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                         escape(g.kind), format_number(g.sessions), escape(g.example));
    return h + "</table></section>\n";
}

// Sessions of a run (closed loop, open loop, merged) that the server did not see through:
// requested − complete, less the arrivals an open loop's cap dropped (never sent).
struct session_shortfall {
    double requested = 0, complete = 0, rejected = 0, failed = 0;
};

session_shortfall shortfall(const json::object& s) {
    session_shortfall r;
    r.requested = number_at(s, {"pacing", "sessions", "requested"}).value_or(0);
    r.complete = number_at(s, {"pacing", "sessions", "complete"}).value_or(0);
    r.rejected = number_at(s, {"pacing", "sessions", "rejected"}).value_or(0);
    const double dropped = number_at(s, {"open_loop", "requests", "dropped"}).value_or(0) +
                           number_at(s, {"open_loop", "requests", "not_dispatched"}).value_or(0);
    r.failed = std::max(0.0, r.requested - r.complete - dropped);
    return r;
}

std::string span(const char* cls, const std::string& text) {
    return fmt::format("<span class=\"verdict {}\">{}</span>", cls, escape(text));
}

// The one-line verdict of a folder, as a coloured span (two lines when the server failed
// sessions: that first, in red, then the client's pacing verdict, which is then never green).
std::string verdict_span(const result_folder& f) {
    if (f.kind == folder_kind::recording) {
        const auto* q = lookup(f.summary, {"load", "pacing", "pacing_qualified"});
        const bool ok = q && q->is_bool() && q->as_bool();
        return fmt::format("<span class=\"verdict {}\">{}</span>", ok ? "good" : "bad",
                           ok ? "PACING QUALIFIED: no packet more than 80 ms from its deadline"
                              : "PACING UNQUALIFIED (or not recorded): some packet was more "
                                "than 80 ms late");
    }
    if (f.kind == folder_kind::serve) {
        const auto points = level_points(f.summary);
        const auto unreachable = unreachable_levels(f.summary);
        const bool none_measured =
            std::all_of(points.begin(), points.end(),
                        [](const level_point& p) { return p.unreachable; }) &&
            (!points.empty() || !unreachable.empty());
        if (none_measured) {
            // Nothing was measured: neither the client nor the server has a verdict.
            std::string why;
            if (!unreachable.empty())
                why = unreachable.begin()->second;
            else if (const auto* runs = f.summary.if_contains("runs"); runs && runs->is_array())
                for (const auto& r : runs->as_array())
                    if (const auto* u =
                            r.is_object() ? r.as_object().if_contains("unreachable") : nullptr;
                        u && u->is_string() && why.empty())
                        why = std::string(u->as_string());
            return span("bad", "SERVER UNREACHABLE: " + why + ". Nothing was measured.");
        }
        // The answer first (a capacity search), then the client timing over the levels that
        // were measured.
        const bool ok = std::all_of(points.begin(), points.end(),
                                    [](const level_point& p) { return p.unreachable || p.valid; });
        const auto answer = capacity_headline(f.summary);
        std::string h = answer.empty() ? std::string() : span("neutral", answer) + "</p>\n<p>";
        h += span(ok ? "good" : "bad",
                  ok ? "every measured level valid: the client kept its schedule"
                     : "some level NOT VALID: the client missed its schedule there");
        const auto first = std::find_if(points.begin(), points.end(),
                                        [](const level_point& p) { return p.unreachable; });
        if (first != points.end())
            h += "</p>\n<p>" + span("bad", fmt::format("SERVER UNREACHABLE from level {} on: {}. "
                                                       "Nothing was measured there.",
                                                       format_number(first->concurrency),
                                                       unreachable.at(first->concurrency)));
        return h;
    }
    if (const auto why = run_unreachable(f))
        return span("bad", "SERVER UNREACHABLE: " + *why +
                               ". Nothing was measured: no session reached the server, no "
                               "packet was sent.");
    const auto* q = f.summary.if_contains("pacing_qualified");
    const bool ok = q && q->is_bool() && q->as_bool();
    const auto lost = shortfall(f.summary);
    std::string h;
    if (lost.failed > 0)
        h = span("bad", fmt::format("SESSIONS FAILED: {} of {} session{} did not complete "
                                    "({} rejected by the server, {} ended without completing); "
                                    "see Errors by kind",
                                    format_number(lost.failed), format_number(lost.requested),
                                    lost.requested == 1 ? "" : "s", format_number(lost.rejected),
                                    format_number(lost.failed - lost.rejected))) +
            "</p>\n<p>";
    return h + span(lost.failed > 0 ? "neutral"
                    : ok            ? "good"
                                    : "bad",
                    ok ? "PACING QUALIFIED: no packet more than 80 ms from its deadline"
                       : "PACING UNQUALIFIED: some packet was more than 80 ms late");
}

bool run_family(folder_kind k) {
    return k != folder_kind::serve;
}

} // namespace

std::string render_report(const result_folder& f) {
    if (f.kind == folder_kind::http || f.kind == folder_kind::http_capacity)
        return detail::render_http_report(f);
    const std::vector<const result_folder*> one = {&f};
    const std::vector<std::string> no_name = {""};
    std::string body =
        fmt::format("<h1>pacer report: {}</h1>\n<p>{} · {} sessions · {} packets</p>\n",
                    escape(f.dir.string()), to_string(f.kind), f.sessions.size(), f.packet_count());
    body += "<p>" + verdict_span(f) + "</p>\n";
    if (run_family(f.kind) && f.kind != folder_kind::recording && run_unreachable(f)) {
        // Nothing was measured: no figure, no plot, only what the sessions said.
        body += errors_section(f);
        body += environment(f);
        body += notes(f);
        return page("pacer report: " + f.dir.string(), body);
    }
    if (f.kind == folder_kind::serve) {
        body += serve_sections(one, no_name);
        body += deviation_cdf_section(one, no_name);
        body += send_time_section(one, no_name);
    } else if (f.kind == folder_kind::recording) {
        body += recording_sections(f);
        body += deviation_cdf_section(one, no_name);
        body += over_time_sections(f);
        body += send_time_section(one, no_name);
    } else {
        body += "<section id=\"figures\"><h2>Summary figures</h2>\n" +
                figure_table(f.summary, run_figures(f.summary)) + "</section>\n";
        body += conversation_section(one, no_name);
        body += deviation_cdf_section(one, no_name);
        body += over_time_sections(f);
        body += loop_lag_section(one, no_name);
        body += loop_lag_over_time_section(f);
        body += send_time_section(one, no_name);
        if (f.kind == folder_kind::open_loop)
            body += open_loop_sections(one, no_name);
    }
    body += detail::telemetry_sections(f); // power and utilisation, when the run sampled them
    body += errors_section(f);
    body += environment(f);
    body += notes(f);
    return page("pacer report: " + f.dir.string(), body);
}

std::string render_comparison(const result_folder& a, const result_folder& b) {
    for (const auto* f : {&a, &b})
        if (f->kind == folder_kind::http || f->kind == folder_kind::http_capacity)
            throw folder_error(fmt::format(
                "{} is a pacer http {}: pacer report does not compare http runs yet (make one "
                "report per folder)",
                f->dir.string(), f->kind == folder_kind::http ? "run" : "capacity search"));
    for (const auto* f : {&a, &b})
        if (f->kind == folder_kind::recording)
            throw folder_error(fmt::format("{} is a recording: pacer report compares two runs or "
                                           "two serve sweeps, not recordings",
                                           f->dir.string()));
    if (run_family(a.kind) != run_family(b.kind))
        throw folder_error(fmt::format("cannot compare a {} ({}) with a {} ({}): give two runs or "
                                       "two serve sweeps",
                                       to_string(a.kind), a.dir.string(), to_string(b.kind),
                                       b.dir.string()));
    const std::vector<const result_folder*> both = {&a, &b};
    const std::vector<std::string> names = {"A ", "B "};
    std::string body = fmt::format(
        "<h1>pacer report: A against B</h1>\n<table><tr><th></th><th>folder</th><th>kind</th>"
        "<th>sessions</th><th>packets</th></tr>\n<tr><th>A</th><td>{}</td><td>{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n<tr><th>B</th><td>{}</td><td>{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr></table>\n",
        escape(a.dir.string()), to_string(a.kind), a.sessions.size(), a.packet_count(),
        escape(b.dir.string()), to_string(b.kind), b.sessions.size(), b.packet_count());
    body += "<p>A: " + verdict_span(a) + "</p>\n<p>B: " + verdict_span(b) + "</p>\n";
    if (a.kind == folder_kind::serve) {
        body += serve_sections(both, names);
    } else {
        // Every figure either summary has, A and B side by side.
        auto figs = run_figures(a.summary);
        for (auto& f : run_figures(b.summary))
            if (std::none_of(figs.begin(), figs.end(),
                             [&](const figure& x) { return x.path == f.path; }))
                figs.push_back(std::move(f));
        std::string t = "<table class=\"figures\"><tr><th>figure</th><th>A</th><th>B</th>"
                        "<th>B − A</th></tr>\n";
        for (const auto& f : figs) {
            const auto va = number_at(a.summary, f.path), vb = number_at(b.summary, f.path);
            std::string delta = "<td class=\"num\">–</td>";
            if (va && vb &&
                (f.u == unit::seconds || f.u == unit::count || f.u == unit::cores ||
                 f.u == unit::ratio))
                delta = fmt::format("<td class=\"num\">{}{}</td>",
                                    format_number((*vb - *va) * (f.u == unit::seconds ? 1e3 : 1)),
                                    f.u == unit::seconds ? " ms" : "");
            t += fmt::format("<tr><th>{}</th>{}{}{}</tr>\n", escape(f.label),
                             figure_cell(a.summary, f.path, f.u, "A:"),
                             figure_cell(b.summary, f.path, f.u, "B:"), delta);
        }
        body += "<section id=\"figures\"><h2>Summary figures</h2>\n" + t + "</table></section>\n";
        body += conversation_section(both, names);
        body += deviation_cdf_section(both, names);
        body += loop_lag_section(both, names);
        body += send_time_section(both, names);
        if (a.kind == folder_kind::open_loop && b.kind == folder_kind::open_loop)
            body += open_loop_sections(both, names);
    }
    if (a.kind == folder_kind::serve) {
        body += deviation_cdf_section(both, names);
        body += send_time_section(both, names);
    }
    body += errors_section(a, "A") + errors_section(b, "B");
    body += environment(a, "A") + notes(a, "A");
    body += environment(b, "B") + notes(b, "B");
    return page("pacer report: " + a.dir.string() + " against " + b.dir.string(), body);
}

} // namespace pacer::report

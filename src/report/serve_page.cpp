// The page of a `pacer serve` sweep: every level's figures against concurrency with the SLO
// bounds, the level table and the capacity line. Declared in html_parts.hpp.
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

// ----------------------------------------------------------------------------- serve plots

// The SLO bounds given to the sweep (name → bound), from the first level that checked them.
std::map<std::string, double> slo_bounds(const json::object& s) {
    std::map<std::string, double> out;
    if (const auto* levels = s.if_contains("levels"); levels && levels->is_array())
        for (const auto& l : levels->as_array())
            if (const auto* checks =
                    l.is_object() ? lookup(l.as_object(), {"slo", "checks"}) : nullptr;
                checks && checks->is_array()) {
                for (const auto& c : checks->as_array())
                    if (const auto* o = c.if_object()) {
                        const auto* n = o->if_contains("name");
                        const auto b = number_at(*o, {"bound"});
                        if (n && n->is_string() && b)
                            out[std::string(n->as_string())] = *b;
                    }
                break;
            }
    return out;
}

std::optional<double> slo_value(const json::object* aggregate, const std::string& name) {
    if (!aggregate)
        return std::nullopt;
    return metrics::slo_figure(metrics::slo_check{name, 0, false}, *aggregate);
}

std::string verdict_text(const level_point& p) {
    return std::string(p.valid ? "valid" : "NOT VALID (the client missed its schedule)") +
           (p.slo_met ? ", SLO met" : ", SLO missed");
}

struct level_metric {
    const char* slo; ///< the SLO name whose figure (and bound) this is
    const char* label;
    /// Where the figure is in a level's aggregate, for one no SLO definition reads (empty:
    /// the SLO's own figure).
    std::vector<std::string> path = {};
};

std::optional<double> metric_value(const json::object* aggregate, const level_metric& m) {
    if (m.path.empty())
        return slo_value(aggregate, m.slo);
    return aggregate ? number_at(*aggregate, m.path) : std::nullopt;
}

std::string level_plot(const std::string& id, const std::string& title, const std::string& ylabel,
                       std::initializer_list<level_metric> metrics_, double scale,
                       const std::vector<const result_folder*>& folders,
                       const std::vector<std::string>& names) {
    xy_plot p;
    p.id = id;
    p.title = title;
    double cmin = 1e18, cmax = 0, hi = 0;
    std::vector<double> slos;
    std::size_t colour = 0;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        const auto pts = level_points(folders[i]->summary);
        for (const auto& m : metrics_) {
            series s;
            s.name = names[i] + m.label;
            s.colour = colour++;
            // The line joins the levels in level order, through the mean of a level's runs
            // (a confirmation or verification runs a level again); every run is a point.
            std::map<double, std::pair<double, int>> by_level;
            for (const auto& lp : pts) {
                const auto v = metric_value(lp.aggregate, m);
                if (!v)
                    continue;
                auto& [sum, runs] = by_level[lp.concurrency];
                sum += *v * scale;
                ++runs;
                hi = std::max(hi, *v * scale);
                cmin = std::min(cmin, lp.concurrency);
                cmax = std::max(cmax, lp.concurrency);
                p.markers.push_back({lp.concurrency, *v * scale, lp.valid && lp.slo_met,
                                     fmt::format("{}{} at {} sessions{}: {}{} ({})", names[i],
                                                 m.label, format_number(lp.concurrency),
                                                 lp.try_label, format_number(*v * scale),
                                                 scale == 1e3 ? " ms" : "", verdict_text(lp))});
            }
            for (const auto& [c, sr] : by_level)
                s.points.emplace_back(c, sr.first / sr.second);
            p.lines.push_back(std::move(s));
        }
        const auto bounds = slo_bounds(folders[i]->summary);
        for (const auto& m : metrics_)
            if (const auto b = bounds.find(m.slo); b != bounds.end()) {
                p.refs.push_back({b->second * scale,
                                  fmt::format("{}SLO {} ≤ {}", names[i], m.slo,
                                              format_number(b->second * scale)),
                                  false, true});
                slos.push_back(b->second * scale);
            }
        if (const auto cap = number_at(folders[i]->summary, {"capacity", "sessions"}))
            p.refs.push_back(
                {*cap, fmt::format("{}capacity {}", names[i], format_number(*cap)), true, false});
    }
    if (cmax <= 0)
        return no_data(id, title, "no level has this figure");
    // The data set the scale: an SLO line far above the data (more than twice its largest
    // value) would flatten it, so it is named "above the scale" instead of drawn.
    for (const double slo : slos)
        if (hi <= 0 || slo <= 2 * hi)
            hi = std::max(hi, slo);
    p.x = cmax / std::max(cmin, 1.0) >= 8
              ? log_axis("concurrent sessions (log)", std::max(cmin, 1.0), cmax)
              : linear_axis("concurrent sessions", 0, cmax);
    p.x.powers_of_two = p.x.log;
    p.y = linear_axis(ylabel, 0, hi > 0 ? hi : (scale == 1e3 ? 1.0 : 0.01));
    return render(p);
}

// An SLO's value or bound as people read it: times in ms, rates as plain decimals.
std::string slo_number(const std::string& name, double v) {
    const bool rate =
        name == "success-rate" || name == "unit-miss-rate" || name == "underrun-ratio";
    return rate ? format_number(v) : format_number(v * 1e3) + " ms";
}

std::string level_table(const json::object& s, const std::string& prefix) {
    std::string h = "<table class=\"levels\"><tr><th>level</th><th>client timing</th><th>SLO</th>"
                    "<th>attempted</th><th>successful</th><th>rejected</th><th>TTFA p50</th>"
                    "<th>TTFA p95</th><th>underrun ratio</th><th>unit miss rate</th>"
                    "<th>gap excess p99</th><th>loop lag p99</th></tr>\n";
    for (const auto& lp : level_points(s)) {
        const std::string i = fmt::format("[{}]", lp.entry);
        std::string missed;
        if (const auto* checks = lookup(s, {"levels", i, "slo", "checks"});
            checks && checks->is_array())
            for (const auto& c : checks->as_array())
                if (const auto* o = c.if_object();
                    o && o->contains("met") && o->at("met").is_bool() && !o->at("met").as_bool())
                    missed += (missed.empty() ? "" : ", ") + slo_check_text(*o);
        if (lp.unreachable) {
            h += fmt::format("<tr><td class=\"num\">{}{}</td><td class=\"verdict bad\" "
                             "colspan=\"11\">server unreachable: nothing measured</td></tr>\n",
                             format_number(lp.concurrency), lp.try_label);
            continue;
        }
        h += fmt::format(
            "<tr><td class=\"num\">{}{}</td><td class=\"verdict {}\">{}</td><td>{}</td>",
            format_number(lp.concurrency), lp.try_label, lp.valid ? "good" : "bad",
            lp.valid ? "valid" : "NOT VALID",
            lookup(s, {"levels", i, "slo"}) ? (lp.slo_met ? "met" : escape("missed: " + missed))
                                            : "–");
        const std::vector<std::string> a = {"levels", i, "aggregate"};
        auto with = [&](std::initializer_list<const char*> more) {
            auto p = a;
            for (const char* m : more)
                p.emplace_back(m);
            return p;
        };
        h += figure_cell(s, with({"attempted_sessions"}), unit::count, prefix);
        h += figure_cell(s, with({"successful_sessions"}), unit::count, prefix);
        h += figure_cell(s, with({"rejected_sessions"}), unit::count, prefix);
        h += figure_cell(s, with({"ttfa_s", "p50"}), unit::seconds, prefix);
        h += figure_cell(s, with({"ttfa_s", "p95"}), unit::seconds, prefix);
        h += figure_cell(s, with({"underrun_ratio"}), unit::ratio, prefix);
        h += figure_cell(s, with({"units", "unit_miss_rate"}), unit::ratio, prefix);
        h += figure_cell(s, with({"output_gap_excess_s", "p99"}), unit::seconds, prefix);
        h += figure_cell(s, {"levels", i, "loop_lag_p99_s"}, unit::seconds, prefix);
        h += "</tr>\n";
    }
    return h + "</table>\n";
}

// ------------------------------------------------------------ how the server held up

// The verdict of capacity.recovery as a coloured line: recovered after every overload (or none
// overloaded it) is good, a server that stayed degraded is bad, an unwatched recovery neutral.
std::string recovery_verdict_line(const json::object& r) {
    const auto* v = r.if_contains("verdict");
    if (!v || !v->is_string())
        return {};
    const std::string text(v->as_string());
    const char* tone =
        text.starts_with("the server recovered") || text.starts_with("no level overloaded") ? "good"
        : text.starts_with("the server stayed degraded")                                    ? "bad"
                                                         : "neutral";
    return fmt::format("<p><span class=\"verdict {}\" data-key=\"capacity.recovery.verdict\">{}"
                       "</span></p>\n",
                       tone, escape(text));
}

// One row per overload (a missed level): the recovery that followed it.
std::string overload_table(const json::object& s, std::size_t n) {
    std::string h = "<table class=\"overloads\"><tr><th>overload (missed level)</th><th>run "
                    "folder</th><th>recovered</th><th>recovery time</th><th>canaries</th><th>last "
                    "canary</th><th>canary limit</th><th>pending units</th></tr>\n";
    for (std::size_t i = 0; i < n; ++i) {
        const std::vector<std::string> o = {"capacity", "recovery", "overloads",
                                            fmt::format("[{}]", i)};
        const auto at = [&](std::initializer_list<const char*> more) {
            auto p = o;
            for (const char* m : more)
                p.emplace_back(m);
            return p;
        };
        h += "<tr>" + figure_cell(s, at({"level"}), unit::count) +
             figure_cell(s, at({"folder"}), unit::text);
        if (const auto* after = lookup(s, at({"recovery"})); !after || after->is_null()) {
            h += "<td colspan=\"6\">not watched (--recovery none)</td></tr>\n";
            continue;
        }
        h += figure_cell(s, at({"recovery", "recovered"}), unit::flag) +
             figure_cell(s, at({"recovery", "waited_s"}), unit::long_seconds) +
             figure_cell(s, at({"recovery", "looks"}), unit::count) +
             figure_cell(s, at({"recovery", "canary_s"}), unit::seconds) +
             figure_cell(s, at({"recovery", "canary_limit_s"}), unit::seconds) +
             figure_cell(s, at({"recovery", "pending"}), unit::count) + "</tr>\n";
    }
    return h + "</table>\n";
}

// The runs behind the answer: every run of the capacity level and of the first failing level
// (search, confirmation, verification), each with its folder, verdicts and the server's state.
std::string supporting_runs(const json::object& s) {
    const auto cap = number_at(s, {"capacity", "sessions"});
    const auto failing = number_at(s, {"capacity", "first_failing_level"});
    std::string rows;
    for (const auto& lp : level_points(s)) {
        if (lp.concurrency != cap && lp.concurrency != failing)
            continue;
        const std::vector<std::string> e = {"levels", fmt::format("[{}]", lp.entry)};
        const auto at = [&](const char* k) {
            auto p = e;
            p.emplace_back(k);
            return p;
        };
        const auto* recovered = lookup(s, at("server_recovered"));
        rows += fmt::format(
            "<tr><td class=\"num\">{}{}</td>{}<td class=\"verdict {}\">{}</td><td "
            "class=\"verdict {}\">{}</td><td>{}</td></tr>\n",
            format_number(lp.concurrency), escape(lp.try_label),
            figure_cell(s, at("folder"), unit::text), lp.valid ? "good" : "bad",
            lp.valid ? "valid" : "NOT VALID", lp.slo_met ? "good" : "bad",
            lp.slo_met ? "met" : "missed",
            recovered && recovered->is_bool() ? (recovered->as_bool() ? "yes" : "no") : "–");
    }
    if (rows.empty())
        return {};
    return "<p>The runs behind the answer: every run of the capacity level and of the first "
           "failing level.</p>\n<table class=\"support\"><tr><th>level</th><th>run "
           "folder</th><th>client timing</th><th>SLO</th><th>server recovered before "
           "it</th></tr>\n" +
           rows + "</table>\n";
}

// capacity.recovery (docs/serving.md, "Overload and recovery"): the verdict, what the search
// waited for, and each overload with the recovery that followed it.
std::string recovery_block(const json::object& s) {
    const auto* r = lookup(s, {"capacity", "recovery"});
    if (!r || !r->is_object())
        return {};
    const auto& o = r->as_object();
    std::string checks;
    if (const auto* c = o.if_contains("checks"); c && c->is_array())
        for (const auto& x : c->as_array())
            if (x.is_string())
                checks += (checks.empty() ? "" : " and ") + std::string(x.as_string());
    const auto baseline = number_at(o, {"baseline_s"});
    const auto limit = number_at(o, {"canary_limit_s"});
    const auto max = number_at(o, {"max_s"});
    std::string how =
        checks.empty()
            ? "The search did not wait for the server to recover (--recovery none)."
            : fmt::format("Before every run the search waited for the server to recover "
                          "(checks: {}{}; at most {} s).",
                          checks,
                          baseline && limit ? fmt::format(", baseline {} ms, limit {} ms",
                                                          format_number(*baseline * 1e3),
                                                          format_number(*limit * 1e3))
                                            : "",
                          max ? format_number(*max) : "?");
    const auto* list = o.if_contains("overloads");
    const std::size_t n = list && list->is_array() ? list->as_array().size() : 0;
    return "<h3>How the server held up</h3>\n" + recovery_verdict_line(o) + "<p class=\"note\">" +
           escape(how) + "</p>\n" + (n > 0 ? overload_table(s, n) : std::string());
}

std::string capacity_line(const json::object& s) {
    const auto* cap = s.if_contains("capacity");
    if (!cap || !cap->is_object())
        return {};
    const auto& c = cap->as_object();
    const auto* lim = c.if_contains("limited_by");
    const std::string why = lim && lim->is_string() ? std::string(lim->as_string()) : "";
    std::string h = "<table class=\"figures\"><tr><th>figure</th><th>value</th></tr>\n";
    h += "<tr><th>capacity (sessions)</th>" +
         figure_cell(s, {"capacity", "sessions"}, unit::count) + "</tr>\n";
    h += "<tr><th>limited by</th>" + figure_cell(s, {"capacity", "limited_by"}, unit::text) +
         "</tr>\n";
    h += "<tr><th>first failing level</th>" +
         figure_cell(s, {"capacity", "first_failing_level"}, unit::count) + "</tr>\n";
    h += "<tr><th>SLO</th>" + figure_cell(s, {"capacity", "slo"}, unit::text) + "</tr>\n";
    if (c.contains("boundary_held"))
        h += "<tr><th>boundary held on verification</th>" +
             figure_cell(s, {"capacity", "boundary_held"}, unit::flag) + "</tr>\n";
    h += "</table>\n";
    const auto* held = c.if_contains("boundary_held");
    if (held && held->is_bool() && !held->as_bool())
        h += "<p class=\"verdict bad\">The boundary did not hold when it was run again: the "
             "capacity level or the first failing level gave another answer on verification "
             "(a noisy server or host), so publish it with that caveat.</p>\n";
    // What the search itself says (verification moved the answer, a level was re-run, …).
    if (const auto* notes = c.if_contains("notes"); notes && notes->is_array()) {
        std::string items;
        for (const auto& n : notes->as_array())
            if (n.is_string())
                items += "<li>" + escape(std::string(n.as_string())) + "</li>\n";
        if (!items.empty())
            h += "<ul class=\"capacity-notes\">\n" + items + "</ul>\n";
    }
    if (why == "client")
        h += "<p class=\"verdict bad\">The client could not keep its schedule beyond this level: "
             "the capacity is only a lower bound.</p>\n";
    else if (why == "max-level")
        h += "<p class=\"note\">Every probed level met the SLOs: the capacity is at least the "
             "largest level probed.</p>\n";
    return h + supporting_runs(s) + recovery_block(s);
}

// The levels' per-turn figures (a multi-turn --scenario): one row per run of a level.
std::string turn_level_table(const json::object& s, const std::string& prefix, const char* lead,
                             const char* lead_label) {
    std::string h = fmt::format(
        "<table class=\"turn-levels\"><tr><th>level</th><th>turns</th><th>answered</th>"
        "<th>interrupted</th><th>unsolicited replies</th><th>{0} p50</th><th>{0} p95</th>"
        "<th>after speech_stopped p95</th><th>reply duration p50</th><th>interruption latency "
        "p50</th><th>interruption latency p95</th><th>underruns</th><th>turn SLOs</th></tr>\n",
        escape(lead_label));
    for (const auto& lp : level_points(s)) {
        const std::string i = fmt::format("[{}]", lp.entry);
        const auto at = [&](std::initializer_list<const char*> more) {
            std::vector<std::string> p = {"levels", i, "aggregate", "turns", "all"};
            for (const char* m : more)
                p.emplace_back(m);
            return p;
        };
        if (!lookup(s, at({})))
            continue;
        h += fmt::format("<tr><td class=\"num\">{}{}</td>", format_number(lp.concurrency),
                         lp.try_label);
        for (const char* k : {"turns", "answered", "interrupted", "unsolicited_responses"})
            h += figure_cell(s, at({k}), unit::count, prefix);
        h += figure_cell(s, at({lead, "p50"}), unit::seconds, prefix);
        h += figure_cell(s, at({lead, "p95"}), unit::seconds, prefix);
        h += figure_cell(s, at({"ttfa_from_speech_stopped_s", "p95"}), unit::seconds, prefix);
        h += figure_cell(s, at({"response_duration_s", "p50"}), unit::seconds, prefix);
        h += figure_cell(s, at({"interrupt_latency_s", "p50"}), unit::seconds, prefix);
        h += figure_cell(s, at({"interrupt_latency_s", "p95"}), unit::seconds, prefix);
        h += figure_cell(s, at({"underruns"}), unit::count, prefix);
        // The per-turn SLOs with their values beside their bounds.
        std::string slos;
        if (const auto* checks = lookup(s, {"levels", i, "slo", "checks"});
            checks && checks->is_array())
            for (const auto& c : checks->as_array()) {
                const auto* o = c.if_object();
                const auto* n = o ? o->if_contains("name") : nullptr;
                if (n && n->is_string() &&
                    (n->as_string().starts_with("turn-") ||
                     n->as_string() == "interrupt-latency-p95"))
                    slos += (slos.empty() ? "" : "; ") + slo_check_text(*o);
            }
        h += "<td>" + (slos.empty() ? std::string("–") : escape(slos)) + "</td></tr>\n";
    }
    return h + "</table>\n";
}

// The conversation section of a sweep with a multi-turn --scenario; "" without.
std::string serve_conversation(const std::vector<const result_folder*>& folders,
                               const std::vector<std::string>& names) {
    bool any = false, voice = false, interrupted = false;
    for (const auto* f : folders)
        for (const auto& lp : level_points(f->summary))
            if (const auto* t = lp.aggregate ? lookup(*lp.aggregate, {"turns", "all"}) : nullptr;
                t && t->is_object()) {
                any = true;
                const auto* v = t->as_object().if_contains("ttfa_from_voice_end_s");
                voice = voice || (v && v->is_object()); // null: no voiced turn answered
                interrupted =
                    interrupted || number_at(t->as_object(), {"interrupted"}).value_or(0) > 0;
            }
    if (!any)
        return {};
    const char* lead = voice ? "ttfa_from_voice_end_s" : "ttfa_from_speech_end_s";
    const char* label = voice ? "voice-to-voice" : "first audio after the turn's input ended";
    std::string tables;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        if (!names[i].empty())
            tables += "<h3>" + escape(names[i]) + "</h3>\n";
        tables += turn_level_table(folders[i]->summary,
                                   folders.size() > 1 ? names[i].substr(0, 1) + ":" : "", lead,
                                   voice ? "voice-to-voice" : "after the input's end");
    }
    const std::vector<std::string> p50 = {"turns", "all", lead, "p50"},
                                   p95 = {"turns", "all", lead, "p95"};
    std::string out = section(
        "conversation", "Conversation: latency per turn against concurrency",
        std::string(voice ? "Voice-to-voice latency: from the end of the user's voice in each "
                            "turn to the first audio of the reply it caused"
                          : "First audio of each turn's reply after the end of the turn's input "
                            "(these summaries have no voice-to-voice figure)") +
            ", p50 and p95 over every turn of a level; dashed red: the turn SLO's bound. The "
            "table gives each level's turns, the replies no turn asked for, reply durations, "
            "interruption latency and the turn SLOs' values beside their bounds.",
        level_plot("plot-turn-v2v", std::string(label) + " against concurrency",
                   std::string(label) + " (ms)",
                   {{voice ? "turn-v2v-p50" : "turn-ttfa-p50",
                     voice ? "voice-to-voice p50" : "after the input's end p50", p50},
                    {voice ? "turn-v2v-p95" : "turn-ttfa-p95",
                     voice ? "voice-to-voice p95" : "after the input's end p95", p95}},
                   1e3, folders, names),
        tables, true);
    if (interrupted)
        out += section(
            "interruption", "Interruption latency against concurrency",
            "From the barge-in's first packet to the interrupted reply's last audio, p50 and p95 "
            "over the level's interrupted turns.",
            level_plot("plot-interrupt-latency", "Interruption latency against concurrency",
                       "interruption latency (ms)",
                       {{"interrupt-latency-p50",
                         "interruption latency p50",
                         {"turns", "all", "interrupt_latency_s", "p50"}},
                        {"interrupt-latency-p95", "interruption latency p95"}},
                       1e3, folders, names),
            "<p class=\"note\">The numbers are those of the Conversation table above.</p>");
    return out;
}

} // namespace

std::string slo_check_text(const json::object& check) {
    const auto* n = check.if_contains("name");
    const std::string name = n && n->is_string() ? std::string(n->as_string()) : "?";
    const auto value = number_at(check, {"value"});
    const auto bound = number_at(check, {"bound"});
    const auto* least = check.if_contains("at_least");
    const bool at_least = least && least->is_bool() && least->as_bool();
    return fmt::format("{} {} (bound {} {})", name,
                       value ? slo_number(name, *value) : std::string("not measured"),
                       at_least ? "≥" : "≤", bound ? slo_number(name, *bound) : "?");
}

std::string capacity_headline(const json::object& s) {
    const auto sessions = number_at(s, {"capacity", "sessions"});
    if (!sessions)
        return {};
    const auto* lim = lookup(s, {"capacity", "limited_by"});
    std::string why = lim && lim->is_string() ? std::string(lim->as_string()) : "";
    const auto failing = number_at(s, {"capacity", "first_failing_level"});
    if (why == "slo" && failing) {
        // The SLOs the first failing level missed, by name.
        std::set<std::string> missed;
        for (const auto& lp : level_points(s)) {
            if (lp.concurrency != *failing)
                continue;
            if (!lp.valid)
                missed.insert("client timing");
            if (const auto* checks =
                    lookup(s, {"levels", fmt::format("[{}]", lp.entry), "slo", "checks"});
                checks && checks->is_array())
                for (const auto& c : checks->as_array())
                    if (const auto* o = c.if_object();
                        o && o->contains("met") && o->at("met").is_bool() &&
                        !o->at("met").as_bool() && o->at("name").is_string())
                        missed.insert(std::string(o->at("name").as_string()));
        }
        std::string names;
        for (const auto& m : missed)
            names += (names.empty() ? "" : ", ") + m;
        why = fmt::format("{} at {} sessions", names.empty() ? "the SLOs" : names,
                          format_number(*failing));
    } else if (why == "max-level") {
        why = "nothing: every probed level met the SLOs";
    } else if (why == "client") {
        why = "the client (a lower bound)";
    }
    const auto* held = lookup(s, {"capacity", "boundary_held"});
    return fmt::format("capacity {}{} session{}, limited by {}{}", format_number(*sessions),
                       why.starts_with("nothing") ? " or more" : "", *sessions == 1 ? "" : "s", why,
                       held && held->is_bool()
                           ? (held->as_bool() ? ", boundary held" : ", boundary NOT held")
                           : "");
}

// The sweep's runs (warm-ups apart) that reached no server: level → why ("cannot connect to
// URL: connection refused"), as each run's summary says.
std::map<double, std::string> unreachable_levels(const json::object& s) {
    std::map<double, std::string> out;
    const auto* runs = s.if_contains("runs");
    if (!runs || !runs->is_array())
        return out;
    for (const auto& r : runs->as_array()) {
        const auto* o = r.if_object();
        const auto* why = o ? o->if_contains("unreachable") : nullptr;
        const auto* warmup = o ? o->if_contains("warmup") : nullptr;
        const auto c = o ? number_at(*o, {"concurrency"}) : std::nullopt;
        if (why && why->is_string() && c && !(warmup && warmup->is_bool() && warmup->as_bool()))
            out.emplace(*c, std::string(why->as_string()));
    }
    return out;
}

std::vector<level_point> level_points(const json::object& s) {
    std::vector<level_point> out;
    const auto* levels = s.if_contains("levels");
    if (!levels || !levels->is_array())
        return out;
    const auto unreachable = unreachable_levels(s);
    for (std::size_t i = 0; i < levels->as_array().size(); ++i) {
        const auto* l = levels->as_array()[i].if_object();
        if (!l)
            continue;
        level_point p;
        p.entry = i;
        p.concurrency = number_at(*l, {"concurrency"}).value_or(0);
        if (const auto* v = l->if_contains("client_timing_valid"); v && v->is_bool())
            p.valid = v->as_bool();
        if (const auto* v = lookup(*l, {"slo", "met"}); v && v->is_bool())
            p.slo_met = v->as_bool();
        if (const auto* v = l->if_contains("second_try"); v && v->is_bool())
            p.second_try = v->as_bool();
        const auto* kind = l->if_contains("try");
        const auto attempt = number_at(*l, {"attempt"});
        if (kind && kind->is_string() && kind->as_string() != "search")
            p.try_label = fmt::format(" ({} {})", std::string_view(kind->as_string()),
                                      format_number(attempt.value_or(1)));
        else if (p.second_try)
            p.try_label = " (again)";
        if (const auto* a = l->if_contains("aggregate"))
            p.aggregate = a->if_object();
        if (unreachable.count(p.concurrency)) {
            p.unreachable = true;
            p.aggregate = nullptr;
        }
        out.push_back(p);
    }
    std::stable_sort(out.begin(), out.end(), [](const level_point& a, const level_point& b) {
        return a.concurrency < b.concurrency;
    });
    return out;
}

std::string serve_sections(const std::vector<const result_folder*>& folders,
                           const std::vector<std::string>& names) {
    std::string out;
    std::string tables;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        if (!names[i].empty())
            tables += "<h3>" + escape(names[i]) + "</h3>\n";
        tables += capacity_line(folders[i]->summary);
        tables +=
            level_table(folders[i]->summary, folders.size() > 1 ? names[i].substr(0, 1) + ":" : "");
    }
    out += "<section id=\"levels\"><h2>Levels</h2>\n<p>Per level (repeats pooled): whether the "
           "client kept its schedule (a level that is not valid measures pacer, not the server), "
           "the SLO verdict and the serving figures.</p>\n" +
           tables + "</section>\n";
    const std::string table_note =
        "<p class=\"note\">The numbers are those of the Levels table above.</p>";
    out += section("ttfa", "Time to first audio against concurrency",
                   "TTFA p50 and p95 over every attempted session of a level; dashed red: the "
                   "SLO bounds; dashed grey: the capacity found. Green dots: valid level meeting "
                   "its SLOs; red: not valid or SLO missed.",
                   level_plot("plot-ttfa", "TTFA against concurrency", "TTFA (ms)",
                              {{"ttfa-p50", "TTFA p50"}, {"ttfa-p95", "TTFA p95"}}, 1e3, folders,
                              names),
                   table_note);
    out +=
        section("underrun", "Underrun ratio against concurrency",
                "Playback underrun time / input time over every attempted session.",
                level_plot("plot-underrun", "Underrun ratio against concurrency", "underrun ratio",
                           {{"underrun-ratio", "underrun ratio"}}, 1, folders, names),
                table_note);
    out +=
        section("unit-miss", "Unit miss rate against concurrency",
                "Missed / expected output units (per-unit profiles; 0 when every unit came).",
                level_plot("plot-unit-miss", "Unit miss rate against concurrency", "unit miss rate",
                           {{"unit-miss-rate", "unit miss rate"}}, 1, folders, names),
                table_note);
    out += section("gaps", "Output gaps against concurrency",
                   "p99 of the output gap beyond the previous audio packet's duration.",
                   level_plot("plot-gap-excess", "Output gap excess against concurrency",
                              "gap excess p99 (ms)", {{"gap-excess-p99", "gap excess p99"}}, 1e3,
                              folders, names),
                   table_note);
    out += serve_conversation(folders, names);
    return out;
}

} // namespace pacer::report::detail

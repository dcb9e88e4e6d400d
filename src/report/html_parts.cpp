// report.html's shared parts: figures printed from the summary (data-key, data-value), the
// page's scaffolding (sections, rows, the environment, the notes), the per-packet derivations
// and the open loop's stages, declared in html_parts.hpp for every page kind.
#include "html_parts.hpp"

#include <pacer/core/json_pointer.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/metrics/outcome.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/metrics/slo.hpp>
#include <pacer/report/html_report.hpp>
#include <pacer/report/svg.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace pacer::report {

namespace json = boost::json;

// The page's scaffolding (figures, cells, sections, environment), shared with the pages and
// http_report.cpp through html_parts.hpp.
namespace detail {

// ---------------------------------------------------------------- figures from the summary

// `path` as a JSON Pointer: keys escaped, an array item "[i]" as its index.
const json::value* lookup(const json::object& root, const std::vector<std::string>& path) {
    std::string pointer;
    for (const auto& k : path)
        pointer += '/' + (!k.empty() && k.front() == '[' ? std::to_string(std::stoul(k.substr(1)))
                                                         : pointer_token(k));
    return find_pointer(root, pointer);
}

std::optional<double> number_at(const json::object& root, const std::vector<std::string>& path) {
    const auto* v = lookup(root, path);
    return v && v->is_number() ? std::optional<double>(v->to_number<double>()) : std::nullopt;
}

std::string key_of(const std::vector<std::string>& path) {
    std::string k;
    for (const auto& p : path)
        k += (k.empty() || p.front() == '[' ? "" : ".") + p;
    return k;
}

std::string display(const json::value& v, unit u) {
    if (v.is_null())
        return "–";
    if (v.is_bool())
        return v.as_bool() ? "yes" : "no";
    if (v.is_string())
        return std::string(v.as_string());
    if (!v.is_number())
        return json::serialize(v);
    const double d = v.to_number<double>();
    switch (u) {
    case unit::seconds:
        return format_number(d * 1e3) + " ms";
    case unit::bytes:
        return format_number(d / 1048576.0) + " MiB";
    case unit::cores:
        return format_number(d) + " cores";
    case unit::millis:
        return format_number(d) + " ms";
    case unit::long_seconds:
        return format_number(d) + " s";
    default:
        return format_number(d);
    }
}

// The summary's number as written: JSON's shortest round-trip form.
std::string raw(const json::value& v) {
    if (v.is_double())
        return fmt::format("{}", v.as_double());
    if (v.is_string())
        return std::string(v.as_string());
    return json::serialize(v);
}

// One cell whose text and data attributes come from the summary (absent → "–").
std::string figure_cell(const json::object& root, const std::vector<std::string>& path, unit u,
                        const std::string& prefix) {
    const auto* v = lookup(root, path);
    if (!v)
        return fmt::format("<td class=\"num\" data-key=\"{}{}\">–</td>", escape(prefix),
                           escape(key_of(path)));
    return fmt::format("<td class=\"num\" data-key=\"{}{}\" data-value=\"{}\">{}</td>",
                       escape(prefix), escape(key_of(path)), escape(raw(*v)),
                       escape(display(*v, u)));
}

std::vector<figure> distribution(const std::string& label, std::vector<std::string> base,
                                 std::initializer_list<const char*> keys) {
    std::vector<figure> out;
    for (const char* k : keys) {
        auto p = base;
        p.emplace_back(k);
        out.push_back({label + " " + k, std::move(p), unit::seconds});
    }
    return out;
}

void append(std::vector<figure>& to, std::vector<figure> more) {
    for (auto& f : more)
        to.push_back(std::move(f));
}

// `with_late_packet` → `with late packet`.
std::string spaced(std::string key) {
    std::replace(key.begin(), key.end(), '_', ' ');
    return key;
}

// The run figures (closed loop, open loop, merged) that exist in this summary.
std::vector<figure> run_figures(const json::object& s) {
    std::vector<figure> f;
    for (const char* k :
         {"requested", "admitted", "rejected", "complete", "incomplete", "with_late_packet"})
        f.push_back({"sessions " + spaced(k), {"pacing", "sessions", k}, unit::count});
    for (const char* k : {"expected", "sent", "late"})
        f.push_back({std::string("packets ") + k, {"pacing", "packets", k}, unit::count});
    f.push_back({"late packets after a send stall (the server's)",
                 {"pacing", "packets", "late_after_send_stall"},
                 unit::count});
    f.push_back(
        {"late packets from the client", {"pacing", "packets", "late_from_client"}, unit::count});
    f.push_back({"pacing qualified", {"pacing_qualified"}, unit::flag});
    append(f, distribution("|pacing deviation|", {"pacing", "pacing_abs_deviation_s"},
                           {"p50", "p90", "p99", "p99.9", "max"}));
    append(f, distribution("pacing deviation (signed)", {"pacing", "pacing_deviation_s"},
                           {"p50", "p99", "max", "mean"}));
    append(f, distribution("WebSocket send time", {"pacing", "ws_send_time_s"},
                           {"p50", "p90", "p99", "p99.9", "max"}));
    append(f, distribution("loop lag", {"pacing", "loop_lag_s"},
                           {"p50", "p90", "p99", "p99.9", "max", "worst_part_p99"}));
    f.push_back({"loop lags over 80 ms", {"pacing", "loop_lag_s", "over_80ms"}, unit::count});
    // A conversation's reply latency is per turn (the Conversation section): from the stream's
    // start it only times the first turn's reply, after the whole first turn.
    append(f, distribution(s.contains("turns") ? "first audio from the stream start (turn 0's "
                                                 "reply, not a turn latency)"
                                               : "time to first audio",
                           {"pacing", "time_to_first_audio_s"}, {"p50", "p95", "max"}));
    f.push_back({"trace channel waits", {"pacing", "trace_channel", "waits"}, unit::count});
    f.push_back({"trace channel wait", {"pacing", "trace_channel", "wait_s"}, unit::seconds});
    f.push_back({"send stalls (> 80 ms)", {"pacing", "send_stalls", "stalled_sends"}, unit::count});
    f.push_back({"longest write", {"pacing", "send_stalls", "longest_write_s"}, unit::seconds});
    f.push_back({"peak overlapping input streams",
                 {"pacing", "peak_overlapping_input_streams"},
                 unit::count});
    if (s.contains("open_loop")) {
        for (const char* k :
             {"scheduled", "dispatched", "completed", "failed", "dropped", "not_dispatched"})
            f.push_back({"requests " + spaced(k), {"open_loop", "requests", k}, unit::count});
        append(f, distribution("latency (from schedule)", {"open_loop", "latency_s"},
                               {"p50", "p75", "p95", "p99", "max"}));
        append(f, distribution("uncorrected latency (from dispatch)",
                               {"open_loop", "uncorrected_latency_s"},
                               {"p50", "p75", "p95", "p99", "max"}));
        append(f, distribution("dispatch lag", {"open_loop", "dispatch_lag_s"},
                               {"p50", "p90", "p99", "p99.9", "max"}));
        f.push_back({"deadline missed", {"open_loop", "deadline_missed"}, unit::count});
        f.push_back({"schedule kept", {"open_loop", "schedule_kept"}, unit::flag});
        f.push_back({"cap max concurrency", {"open_loop", "cap", "max_concurrency"}, unit::count});
        f.push_back({"cap policy", {"open_loop", "cap", "policy"}, unit::text});
        f.push_back({"cap binding", {"open_loop", "cap", "binding"}, unit::flag});
        f.push_back({"cap delayed arrivals", {"open_loop", "cap", "delayed"}, unit::count});
        append(f,
               distribution("cap delay", {"open_loop", "cap", "delay_s"}, {"p50", "p99", "max"}));
        f.push_back({"cap dropped arrivals", {"open_loop", "cap", "dropped"}, unit::count});
        f.push_back({"peak in flight", {"open_loop", "cap", "peak_in_flight"}, unit::count});
    }
    f.push_back({"client CPU", {"resources", "client_cpu_cores"}, unit::cores});
    f.push_back({"built-in mock CPU", {"resources", "mock_cpu_cores"}, unit::cores});
    f.push_back({"peak RSS", {"resources", "peak_rss_bytes"}, unit::bytes});
    f.push_back({"processes", {"processes"}, unit::count});
    return present_in(s, std::move(f));
}

std::vector<figure> present_in(const json::object& s, std::vector<figure> figs) {
    std::vector<figure> present;
    for (auto& x : figs)
        if (lookup(s, x.path))
            present.push_back(std::move(x));
    return present;
}

std::string figure_table(const json::object& s, const std::vector<figure>& figs) {
    std::string h = "<table class=\"figures\"><tr><th>figure</th><th>value</th></tr>\n";
    for (const auto& f : figs)
        h += fmt::format("<tr><th>{}</th>{}</tr>\n", escape(f.label), figure_cell(s, f.path, f.u));
    return h + "</table>\n";
}

// ------------------------------------------------------------------------ page scaffolding

const char* style = R"(<style>
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1.5em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}th,td{border:1px solid #ddd;padding:2px 8px;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#f6f6f6;font-weight:600}
.verdict{font-weight:700;padding:.3em .6em;border-radius:4px;display:inline-block}td.verdict{display:table-cell;border-radius:0}
.good{background:#dff3e4;color:#14532d}.bad{background:#fde2e1;color:#8b0000}.neutral{background:#eee;color:#333}
svg.plot{max-width:100%;height:auto;display:block;margin:.4em 0}
details{margin:.3em 0 1em}summary{cursor:pointer;color:#0b5394}.note{color:#555}
code{overflow-wrap:anywhere}table.env{table-layout:fixed;width:100%}table.env td{overflow-wrap:anywhere}
table.env th:first-child{width:14em}section{overflow-x:auto}
</style>)";

std::string page(const std::string& title, const std::string& body) {
    return fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<title>{}</title>\n{}\n</head><body>\n{}\n<p class=\"note\">Written by "
        "pacer report: one file, no network access, no script.</p>\n</body></html>\n",
        escape(title), style, body);
}

std::string section(const std::string& id, const std::string& title, const std::string& text,
                    const std::string& plot, const std::string& table, bool open) {
    return fmt::format("<section id=\"{}\"><h2>{}</h2>\n<p>{}</p>\n{}<details{}><summary>numbers "
                       "of this figure</summary>\n{}</details></section>\n",
                       escape(id), escape(title), text, plot, open ? " open" : "", table);
}

std::string row(std::initializer_list<std::string> cells) {
    std::string r = "<tr>";
    for (const auto& c : cells)
        r += "<td>" + escape(c) + "</td>";
    return r + "</tr>\n";
}

std::string num_cell(std::optional<double> v, double scale) {
    return v ? fmt::format("<td class=\"num\">{}</td>", escape(format_number(*v * scale)))
             : std::string("<td class=\"num\">–</td>");
}

// A scalar or an array of scalars as people write it (doubles in shortest form, not 8E1).
std::string text_of(const json::value& v) {
    if (v.is_string())
        return std::string(v.as_string());
    if (v.is_double())
        return fmt::format("{}", v.as_double());
    if (const auto* a = v.if_array()) {
        std::string s = "[";
        for (const auto& e : *a)
            s += (s.size() > 1 ? ", " : "") + text_of(e);
        return s + "]";
    }
    return json::serialize(v);
}

// Flattened key → text of an object, for the environment tables.
void flatten(const json::value& v, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out, int depth = 0) {
    if (const auto* o = v.if_object()) {
        for (const auto& [k, x] : *o)
            flatten(x, prefix.empty() ? std::string(k) : prefix + "." + std::string(k), out,
                    depth + 1);
        return;
    }
    if (const auto* a = v.if_array()) {
        if (std::any_of(a->begin(), a->end(),
                        [](const json::value& e) { return e.is_structured(); }))
            if (depth > 1 || a->size() > 16)
                return; // per-level or per-part detail lives in its own table
    }
    out.emplace_back(prefix, text_of(v));
}

std::string environment(const result_folder& f, const std::string& side) {
    std::string h = fmt::format("<section id=\"environment{}\"><h2>{}Environment and command "
                                "line</h2>\n",
                                side.empty() ? "" : "-" + side, side.empty() ? "" : side + ": ");
    const auto* cl = f.summary.if_contains("command_line");
    if (cl && cl->is_array()) {
        std::string line;
        for (const auto& a : cl->as_array())
            line += (line.empty() ? "" : " ") + (a.is_string() ? std::string(a.as_string()) : "");
        h += "<p>Command line: <code>" + escape(line) + "</code></p>\n";
    } else if (cl && cl->is_string()) {
        h += "<p>Command line: <code>" + escape(std::string(cl->as_string())) + "</code></p>\n";
    } else {
        h += "<p class=\"note\">The command line is not recorded in this summary.json; the "
             "configuration it produced is below.</p>\n";
    }
    h += "<table class=\"env\"><tr><th>setting</th><th>value</th></tr>\n";
    std::vector<std::pair<std::string, std::string>> kv;
    for (const char* k : {"command", "host", "url", "config", "clock", "provenance", "resources",
                          "mock", "shard", "trace", "pooling", "processes", "sessions_per_process",
                          "start_at_monotonic_s", "interrupted"})
        if (const auto* v = f.summary.if_contains(k))
            flatten(*v, k, kv);
    for (const auto& [k, v] : kv)
        h += row({k, v});
    h += "</table>\n";
    if (f.parts.size() > 1 || f.kind == folder_kind::merged) {
        h += "<table><tr><th>part</th><th>folder</th><th>host</th></tr>\n";
        for (std::size_t i = 0; i < f.parts.size(); ++i) {
            const auto* host = f.parts[i].summary.if_contains("host");
            h += row({std::to_string(i), f.parts[i].dir.string(),
                      host && host->is_string() ? std::string(host->as_string()) : ""});
        }
        h += "</table>\n";
    }
    return h + "</section>\n";
}

std::string notes(const result_folder& f, const std::string& side) {
    std::vector<std::string> all;
    if (const auto* i = f.summary.if_contains("interrupted"); i && i->is_bool() && i->as_bool())
        all.emplace_back("The run was interrupted: its figures cover what ran until then.");
    for (const auto& n : f.notes)
        all.push_back(n);
    if (all.empty())
        return {};
    std::string h = fmt::format("<section id=\"notes{}\"><h2>{}Notes</h2><ul>\n",
                                side.empty() ? "" : "-" + side, side.empty() ? "" : side + ": ");
    for (const auto& n : all)
        h += "<li>" + escape(n) + "</li>\n";
    return h + "</ul></section>\n";
}

// ------------------------------------------------------------------- per-packet derivations

// The first and last append start of every session (folded as read), on the common axis.
time_span packet_span(const result_folder& f) {
    time_span sp;
    for (const auto& s : f.sessions) {
        if (!s.stats.first_start_s || !s.stats.last_start_s)
            continue;
        if (!sp.any) {
            sp.t0 = *s.stats.first_start_s;
            sp.t1 = *s.stats.last_start_s;
            sp.any = true;
        }
        sp.t0 = std::min(sp.t0, *s.stats.first_start_s);
        sp.t1 = std::max(sp.t1, *s.stats.last_start_s);
    }
    return sp;
}

double bin_width(double span, std::size_t max_bins) {
    for (double w : {0.08, 0.16, 0.4, 0.8, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0,
                     600.0, 1800.0, 3600.0})
        if (span / w <= static_cast<double>(max_bins))
            return w;
    return span / static_cast<double>(max_bins);
}

// Downsampled empirical CDF of non-negative values: (value x scale, fraction ≤ value).
series cdf_series(std::string name, std::vector<double> v, double scale, double floor_v,
                  std::size_t colour) {
    series s;
    s.name = std::move(name);
    s.colour = colour;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    if (n == 0)
        return s;
    const std::size_t m = std::min<std::size_t>(n, 400);
    for (std::size_t k = 0; k < m; ++k) {
        const std::size_t i = m == 1 ? n - 1 : k * (n - 1) / (m - 1);
        s.points.emplace_back(std::max(v[i] * scale, floor_v),
                              static_cast<double>(i + 1) / static_cast<double>(n));
    }
    return s;
}

// The same from a histogram of the values: 400 points at most, each the histogram's estimate of an
// order statistic (within 1/2,048 of it).
series cdf_series(std::string name, const log_histogram& h, double scale, double floor_v,
                  std::size_t colour) {
    series s;
    s.name = std::move(name);
    s.colour = colour;
    const auto n = static_cast<std::size_t>(h.count());
    if (n == 0)
        return s;
    const std::size_t m = std::min<std::size_t>(n, 400);
    for (std::size_t k = 0; k < m; ++k) {
        const std::size_t i = m == 1 ? n - 1 : k * (n - 1) / (m - 1);
        const double f = n == 1 ? 1.0 : static_cast<double>(i) / static_cast<double>(n - 1);
        s.points.emplace_back(std::max(h.quantile(f).value_or(0) * scale, floor_v),
                              static_cast<double>(i + 1) / static_cast<double>(n));
    }
    return s;
}

// Every packet's |deviation| (of one serve level, or of all).
log_histogram abs_deviations(const result_folder& f, std::optional<std::uint32_t> level) {
    if (level) {
        const auto it = f.abs_deviation_by_level.find(*level);
        return it == f.abs_deviation_by_level.end() ? log_histogram{} : it->second;
    }
    log_histogram all;
    for (const auto& [l, h] : f.abs_deviation_by_level)
        all.merge(h);
    return all;
}

double max_of(const log_histogram& h, double fallback) {
    return h.max().value_or(fallback);
}

double max_of(const std::vector<double>& v, double fallback) {
    return v.empty() ? fallback : *std::max_element(v.begin(), v.end());
}

std::string no_data(const std::string& id, const std::string& title, const std::string& why) {
    return fmt::format("<svg id=\"{}\" class=\"plot\" viewBox=\"0 0 800 60\" width=\"800\" "
                       "height=\"60\" role=\"img\"><title>{}</title><text x=\"20\" y=\"35\" "
                       "font-size=\"13\">{}</text></svg>\n",
                       escape(id), escape(title), escape(why));
}

// The summary's percentiles of one distribution, as a figures table.
std::string dist_table(const json::object& s, const std::vector<std::string>& base,
                       std::initializer_list<const char*> keys, const std::string& label) {
    std::vector<figure> figs;
    for (const char* k : keys) {
        auto p = base;
        p.emplace_back(k);
        if (lookup(s, p))
            figs.push_back(
                {label + " " + k, p, std::string(k) == "n" ? unit::count : unit::seconds});
    }
    return figure_table(s, figs);
}

std::string cap_figures(const json::object& s) {
    const auto* binding = lookup(s, {"open_loop", "cap", "binding"});
    return std::string("<p><span class=\"verdict ") +
           (binding && binding->is_bool() && binding->as_bool() ? "bad\">the cap bound"
                                                                : "good\">the cap never bound") +
           "</span></p>\n" +
           figure_table(
               s,
               {{"max concurrency (0: none)", {"open_loop", "cap", "max_concurrency"}, unit::count},
                {"policy", {"open_loop", "cap", "policy"}, unit::text},
                {"binding", {"open_loop", "cap", "binding"}, unit::flag},
                {"delayed arrivals", {"open_loop", "cap", "delayed"}, unit::count},
                {"cap delay p50", {"open_loop", "cap", "delay_s", "p50"}, unit::seconds},
                {"cap delay p99", {"open_loop", "cap", "delay_s", "p99"}, unit::seconds},
                {"cap delay max", {"open_loop", "cap", "delay_s", "max"}, unit::seconds},
                {"dropped arrivals", {"open_loop", "cap", "dropped"}, unit::count},
                {"peak in flight", {"open_loop", "cap", "peak_in_flight"}, unit::count}});
}

void stage_ends(const json::object& summary, xy_plot& p, double shift) {
    const auto* v = lookup(summary, {"open_loop", "stages"});
    if (!v || !v->is_array())
        return;
    const auto& rows = v->as_array();
    for (std::size_t i = 0; i + 1 < rows.size(); ++i)
        if (const auto to =
                number_at(summary, {"open_loop", "stages", fmt::format("[{}]", i), "to_s"}))
            p.refs.push_back({*to + shift, fmt::format("stage {} ends", i + 1), true, false});
}

std::string stages_section(const json::object& summary) {
    const auto* v = lookup(summary, {"open_loop", "stages"});
    if (!v || !v->is_array() || v->as_array().empty())
        return "";
    const auto& rows = v->as_array();
    const std::string id = "plot-stages", title = "Offered and achieved rate per stage";
    bar_chart c;
    c.id = id;
    c.title = title;
    c.unit = "/s";
    std::vector<std::optional<double>> target, offered, achieved;
    double hi = 0;
    std::string table = "<table id=\"stages-table\"><tr><th>stage</th><th>from (s)</th>"
                        "<th>to (s)</th><th>target (/s)</th><th>offered</th><th>offered (/s)</th>"
                        "<th>achieved</th><th>achieved (/s)</th><th>completed</th><th>failed</th>"
                        "<th>latency p50</th><th>latency p99</th></tr>\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::vector<std::string> base = {"open_loop", "stages", fmt::format("[{}]", i)};
        const auto at = [&](const char* k) {
            auto p = base;
            p.emplace_back(k);
            return p;
        };
        const auto text = lookup(summary, at("stage"));
        c.categories.push_back(fmt::format("{}: {}", i + 1, text ? text_of(*text) : ""));
        for (auto& [vec, key] :
             {std::pair{&target, "target_per_s"}, std::pair{&offered, "offered_per_s"},
              std::pair{&achieved, "achieved_per_s"}}) {
            const auto x = number_at(summary, at(key));
            vec->push_back(x);
            hi = std::max(hi, x.value_or(0));
        }
        table += "<tr>" + figure_cell(summary, at("stage"), unit::text, "") +
                 figure_cell(summary, at("from_s"), unit::count, "") +
                 figure_cell(summary, at("to_s"), unit::count, "") +
                 figure_cell(summary, at("target_per_s"), unit::count, "") +
                 figure_cell(summary, at("offered"), unit::count, "") +
                 figure_cell(summary, at("offered_per_s"), unit::count, "") +
                 figure_cell(summary, at("achieved"), unit::count, "") +
                 figure_cell(summary, at("achieved_per_s"), unit::count, "") +
                 figure_cell(summary, at("completed"), unit::count, "") +
                 figure_cell(summary, at("failed"), unit::count, "") +
                 figure_cell(summary, {"open_loop", "stages", base[2], "latency_s", "p50"},
                             unit::seconds, "") +
                 figure_cell(summary, {"open_loop", "stages", base[2], "latency_s", "p99"},
                             unit::seconds, "") +
                 "</tr>\n";
    }
    table += "</table>\n";
    c.values.emplace_back("target (the stage's mean rate)", std::move(target));
    c.values.emplace_back("offered (scheduled in the stage)", std::move(offered));
    c.values.emplace_back("achieved (dispatched in the stage)", std::move(achieved));
    c.y = linear_axis("arrivals per second", 0, std::max(hi, 1.0));
    return section("stages", title,
                   "Each stage of --stages: its target rate, the rate the seeded schedule "
                   "offered in it (arrivals whose scheduled time falls in the stage, per second), "
                   "and the rate achieved (arrivals dispatched within the stage's window, per "
                   "second). Achieved below offered means the client or the cap held the "
                   "stage's arrivals back; latency is from each arrival's scheduled time.",
                   render(c), table);
}

} // namespace detail

} // namespace pacer::report

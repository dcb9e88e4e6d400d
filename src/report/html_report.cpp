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

// The page's scaffolding (figures, cells, sections, environment), shared with http_report.cpp
// through html_parts.hpp.
namespace detail {

// A packet further than this from its deadline is late (one packet period, 80 ms).
constexpr double late_s = metrics::pacing_tolerance_s;

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
                        const std::string& prefix = "") {
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
    append(f, distribution("time to first audio", {"pacing", "time_to_first_audio_s"},
                           {"p50", "p95", "max"}));
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
.verdict{font-weight:700;padding:.3em .6em;border-radius:4px;display:inline-block}
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
                    const std::string& plot, const std::string& table) {
    return fmt::format("<section id=\"{}\"><h2>{}</h2>\n<p>{}</p>\n{}<details><summary>numbers "
                       "of this figure</summary>\n{}</details></section>\n",
                       escape(id), escape(title), text, plot, table);
}

std::string row(std::initializer_list<std::string> cells) {
    std::string r = "<tr>";
    for (const auto& c : cells)
        r += "<td>" + escape(c) + "</td>";
    return r + "</tr>\n";
}

std::string num_cell(std::optional<double> v, double scale = 1) {
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

std::string environment(const result_folder& f, const std::string& side = "") {
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

std::string notes(const result_folder& f, const std::string& side = "") {
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

struct time_span {
    double t0 = 0, t1 = 0;
    bool any = false;
};

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
log_histogram abs_deviations(const result_folder& f,
                             std::optional<std::uint32_t> level = std::nullopt) {
    if (level) {
        const auto it = f.abs_deviation_by_level.find(*level);
        return it == f.abs_deviation_by_level.end() ? log_histogram{} : it->second;
    }
    log_histogram all;
    for (const auto& [l, h] : f.abs_deviation_by_level)
        all.merge(h);
    return all;
}

double max_of(const log_histogram& h, double fallback = 0) {
    return h.max().value_or(fallback);
}

double max_of(const std::vector<double>& v, double fallback = 0) {
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

namespace {

using namespace detail;

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

// Worst deviation and late packets per time bin, and the per-session heat strip.
std::string over_time_sections(const result_folder& f) {
    const auto sp = packet_span(f);
    std::string out;
    const std::string id1 = "plot-deviation-over-time",
                      t1 = "Worst deviation and late packets over time";
    const std::string id2 = "plot-late-over-time", t2 = "Late packets over time";
    const std::string id3 = "plot-heat-strip", t3 = "Per-session deviation heat strip";
    if (!sp.any) {
        out += section("over-time", t1, "", no_data(id1, t1, "no packet was sent"), "");
        out += section("late", t2, "", no_data(id2, t2, "no packet was sent"), "");
        out += section("heat", t3, "", no_data(id3, t3, "no packet was sent"), "");
        return out;
    }
    const double span = std::max(sp.t1 - sp.t0, 0.08);
    const double w = bin_width(span, 100);
    const auto bins = static_cast<std::size_t>(std::floor(span / w)) + 1;
    std::vector<double> worst(bins, -1);
    std::vector<std::size_t> late(bins, 0), count(bins, 0);
    auto bin_of = [&](double t) {
        return std::min(bins - 1, static_cast<std::size_t>(std::max(0.0, (t - sp.t0) / w)));
    };
    // The heat strip's rows: one per session with packets (or per group of sessions when
    // there are many), and its columns.
    std::vector<const session_record*> ss;
    std::vector<std::size_t> row_of(f.sessions.size(), 0);
    for (const auto& s : f.sessions)
        if (s.stats.count > 0)
            ss.push_back(&s);
    const std::size_t max_rows = 100, cols = std::min<std::size_t>(bins, 100);
    const std::size_t per_row = (ss.size() + max_rows - 1) / std::max<std::size_t>(max_rows, 1);
    const std::size_t rows =
        (ss.size() + std::max<std::size_t>(per_row, 1) - 1) / std::max<std::size_t>(per_row, 1);
    for (std::size_t k = 0, n = 0; k < f.sessions.size(); ++k)
        if (f.sessions[k].stats.count > 0)
            row_of[k] = n++ / std::max<std::size_t>(per_row, 1);
    std::vector<std::vector<std::optional<double>>> cells(rows,
                                                          std::vector<std::optional<double>>(cols));
    // One pass over the packets, one session at a time: both plots' bins are fixed above.
    for_each_session_packets(f, [&](std::size_t k, const session_record& s) {
        if (f.sessions[k].stats.count == 0)
            return;
        auto& row = cells[row_of[k]];
        for (const auto& p : s.packets) {
            const double t = aligned(f, s, p.start_s);
            const auto b = bin_of(t);
            const double a = std::abs(p.deviation_s);
            worst[b] = std::max(worst[b], a);
            ++count[b];
            late[b] += a > late_s ? 1 : 0;
            const auto c =
                std::min(cols - 1, static_cast<std::size_t>(std::max(
                                       0.0, (t - sp.t0) / span * static_cast<double>(cols))));
            row[c] = std::max(row[c].value_or(0.0), a);
        }
    });
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
    for (std::size_t b = 0; b < bins; ++b) {
        const double from = static_cast<double>(b) * w, to = from + w;
        if (count[b] == 0)
            continue;
        const double ms = std::max(worst[b] * 1e3, 1e-3);
        hi = std::max(hi, ms * 1.5);
        line.points.emplace_back(from + w / 2, ms);
        line.point_titles.push_back(fmt::format("{}–{} s: max |deviation| {} ms, {} late of {}",
                                                format_number(from), format_number(to),
                                                format_number(worst[b] * 1e3), late[b], count[b]));
        if (late[b] > 0)
            p.markers.push_back({from + w / 2, ms, false,
                                 fmt::format("{}–{} s: {} late packets", format_number(from),
                                             format_number(to), late[b])});
        lb.bars.push_back({from, to, static_cast<double>(late[b]),
                           fmt::format("{}–{} s: {} late of {} packets", format_number(from),
                                       format_number(to), late[b], count[b])});
        late_max = std::max(late_max, late[b]);
        table += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                             "class=\"num\">{}</td><td class=\"num\">{}</td>{}</tr>\n",
                             format_number(from), format_number(to), count[b], late[b],
                             num_cell(worst[b], 1e3));
    }
    table += "</table>\n";
    p.lines.push_back(std::move(line));
    const auto frame = page_time_frame(f);
    p.x = linear_axis(time_label, frame.lo, frame.hi);
    p.y = log_axis("max |deviation| (ms, log)", 1e-3, hi);
    p.refs.push_back({late_s * 1e3, "late: 80 ms", false, true});
    out += section(
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

    // Heat strip: one row per session (or per group of sessions when there are many).
    heat_strip h;
    h.id = id3;
    h.title = t3;
    h.x0 = 0;
    h.x1 = span;
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
    for (std::size_t r = 0; r * std::max<std::size_t>(per_row, 1) < ss.size(); ++r) {
        const std::size_t a = r * std::max<std::size_t>(per_row, 1);
        const std::size_t b = std::min(ss.size(), a + std::max<std::size_t>(per_row, 1));
        h.row_labels.push_back(b - a == 1 ? name(*ss[a]) : group_name(*ss[a], *ss[b - 1]));
        h.cells.push_back(std::move(cells[r]));
    }
    for (const auto* s : ss)
        htable += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}"
                              "</tr>\n",
                              escape(name(*s)), s->stats.count, s->stats.late,
                              num_cell(s->stats.max_abs_deviation_s.value_or(0), 1e3));
    htable += "</table>\n";
    out += section(
        "heat", t3,
        per_row > 1 ? fmt::format("One row per {} sessions (the worst of them), one column per "
                                  "time interval; colour: the largest |deviation| there, log "
                                  "scale; red: late.",
                                  per_row)
                    : std::string("One row per session, one column per time interval; colour: "
                                  "the largest |deviation| there, log scale; red: late."),
        h.row_labels.empty() ? no_data(id3, t3, "no packet was sent") : render(h), htable);
    return out;
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
    std::string out;
    {
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
        out += section("arrivals", title,
                       "Cumulative arrivals: offered by the seeded schedule, and achieved — the "
                       "session's first append on the run's clock (connect and negotiation "
                       "included; the run's clock is read just before the dispatcher starts). A "
                       "gap that widens means the client or the cap held arrivals back.",
                       render(p), table);
    }
    if (folders.size() == 1)
        out += stages_section(folders.front()->summary);
    {
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
            table +=
                figure_table(folders[i]->summary,
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
        const auto p99 =
            number_at(s0, {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_p99"});
        const auto mx =
            number_at(s0, {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_max"});
        c.y = linear_axis("dispatch lag (ms)", 0, std::max({hi, 0.001, p99 ? *p99 * 1e3 : 0.0}));
        if (p99)
            c.refs.push_back({*p99 * 1e3, fmt::format("p99 bound {} ms", format_number(*p99 * 1e3)),
                              false, true});
        if (mx && *mx * 1e3 <= c.y.hi)
            c.refs.push_back(
                {*mx * 1e3, fmt::format("max bound {} ms", format_number(*mx * 1e3)), false, true});
        out += section("dispatch-lag", title,
                       "Dispatched − scheduled (minus any cap delay): the load generator's own "
                       "lateness. The schedule is kept when p99 and max stay under their bounds.",
                       render(c), table);
    }
    {
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
        out += section("latency", title,
                       "Completion − scheduled time (no coordinated omission) beside completion − "
                       "dispatch time, which hides every wait before dispatch. A session's latency "
                       "is its whole length: connect, stream, drain, close.",
                       render(c), table);
    }
    {
        std::string table;
        for (std::size_t i = 0; i < folders.size(); ++i) {
            const auto& s = folders[i]->summary;
            const auto* binding = lookup(s, {"open_loop", "cap", "binding"});
            if (!names[i].empty())
                table += "<p>" + escape(names[i]) + "</p>";
            table += std::string("<p><span class=\"verdict ") +
                     (binding && binding->is_bool() && binding->as_bool()
                          ? "bad\">the cap bound"
                          : "good\">the cap never bound") +
                     "</span></p>\n";
            table += figure_table(
                s, {{"max concurrency (0: none)",
                     {"open_loop", "cap", "max_concurrency"},
                     unit::count},
                    {"policy", {"open_loop", "cap", "policy"}, unit::text},
                    {"binding", {"open_loop", "cap", "binding"}, unit::flag},
                    {"delayed arrivals", {"open_loop", "cap", "delayed"}, unit::count},
                    {"cap delay p50", {"open_loop", "cap", "delay_s", "p50"}, unit::seconds},
                    {"cap delay p99", {"open_loop", "cap", "delay_s", "p99"}, unit::seconds},
                    {"cap delay max", {"open_loop", "cap", "delay_s", "max"}, unit::seconds},
                    {"dropped arrivals", {"open_loop", "cap", "dropped"}, unit::count},
                    {"peak in flight", {"open_loop", "cap", "peak_in_flight"}, unit::count}});
        }
        out += "<section id=\"cap\"><h2>Concurrency cap</h2>\n<p>A cap gates dispatch but never "
               "moves the schedule; when it binds, its delay is counted here (and in the latency), "
               "not in the dispatch lag.</p>\n" +
               table + "</section>\n";
    }
    return out;
}

// ----------------------------------------------------------------------------- serve plots

struct level_point {
    std::size_t entry = 0; ///< index into summary.levels
    double concurrency = 0;
    bool valid = true, slo_met = true, second_try = false;
    std::string try_label; ///< " (confirm 1)", " (verify 2)", " (again)" or empty
    /// No session of the level reached the server: nothing was measured there (no client
    /// verdict, no serving figure; `aggregate` is null).
    bool unreachable = false;
    const json::object* aggregate = nullptr;
};

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
    const char* slo; ///< the SLO name whose figure this is
    const char* label;
};

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
            for (const auto& lp : pts) {
                const auto v = slo_value(lp.aggregate, m.slo);
                if (!v)
                    continue;
                s.points.emplace_back(lp.concurrency, *v * scale);
                hi = std::max(hi, *v * scale);
                cmin = std::min(cmin, lp.concurrency);
                cmax = std::max(cmax, lp.concurrency);
                p.markers.push_back({lp.concurrency, *v * scale, lp.valid && lp.slo_met,
                                     fmt::format("{}{} at {} sessions{}: {}{} ({})", names[i],
                                                 m.label, format_number(lp.concurrency),
                                                 lp.try_label, format_number(*v * scale),
                                                 scale == 1e3 ? " ms" : "", verdict_text(lp))});
            }
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
                    missed +=
                        (missed.empty() ? "" : ", ") +
                        std::string(o->at("name").is_string() ? o->at("name").as_string() : "");
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
    h += "</table>\n";
    if (why == "client")
        h += "<p class=\"verdict bad\">The client could not keep its schedule beyond this level: "
             "the capacity is only a lower bound.</p>\n";
    else if (why == "max-level")
        h += "<p class=\"note\">Every probed level met the SLOs: the capacity is at least the "
             "largest level probed.</p>\n";
    return h;
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
    return out;
}

// ---------------------------------------------------------------------------- recording

std::string recording_sections(const result_folder& f) {
    const auto& s = f.summary;
    std::string out;
    // Status counts, as run.json's summary has them.
    std::vector<figure> counts = {
        {"samples selected", {"summary", "samples_selected"}, unit::count},
        {"variants selected", {"summary", "variants_selected"}, unit::count},
        {"pairs qualified (every variant passed)", {"summary", "pairs_qualified"}, unit::count}};
    for (const char* st : {"pass", "fail", "not_exercised", "invalid", "error", "pending"})
        counts.push_back({std::string("variants ") + st, {"summary", "variants", st}, unit::count});
    std::string sub;
    if (const auto* per = lookup(s, {"summary", "per_subset"}); per && per->is_object()) {
        sub = "<table><tr><th>subset</th><th>counts</th></tr>\n";
        for (const auto& [k, v] : per->as_object()) {
            // "pass 4, fail 1": the statuses the subset has, in run.json's order.
            std::string c;
            if (const auto* o = v.if_object())
                for (const auto& [st, n] : *o)
                    if (!(n.is_number() && n.to_number<double>() == 0))
                        c += (c.empty() ? "" : ", ") + std::string(st) + " " + text_of(n);
            sub += row({std::string(k), c.empty() ? text_of(v) : c});
        }
        sub += "</table>\n";
    }
    out += fmt::format(
        "<section id=\"statuses\"><h2>Variant statuses</h2>\n<p>The recording is <b>{}</b>. "
        "Every variant ends pass, fail, not_exercised, invalid or error; pending is not "
        "recorded yet.</p>\n{}{}</section>\n",
        escape(lookup(s, {"status"}) ? text_of(*lookup(s, {"status"})) : std::string("?")),
        figure_table(s, counts), sub);
    // The load the recorder was under.
    std::vector<figure> load;
    for (const char* k : {"concurrency", "batches", "sessions"})
        load.push_back({spaced(k), {"load", k}, unit::count});
    load.push_back({"recording wall time", {"load", "recording_wall_s"}, unit::seconds});
    load.push_back({"client loop max lag", {"load", "client_loop", "max_lag_s"}, unit::seconds});
    load.push_back(
        {"client loop lags over 80 ms", {"load", "client_loop", "over_80ms"}, unit::count});
    load.push_back({"client loop samples", {"load", "client_loop", "samples"}, unit::count});
    for (const char* k : {"admitted", "rejected", "complete"})
        load.push_back({std::string("sessions ") + k, {"load", "pacing", k}, unit::count});
    for (const char* k : {"packets_sent", "late_packets", "sessions_with_late_packet"})
        load.push_back({spaced(k), {"load", "pacing", k}, unit::count});
    for (const char* k : {"p50", "p95", "p99", "max"})
        load.push_back({std::string("pacing deviation (signed) ") + k,
                        {"load", "pacing", "deviation_s", k},
                        unit::seconds});
    load.push_back(
        {"max |pacing deviation|", {"load", "pacing", "max_abs_deviation_s"}, unit::seconds});
    load.push_back({"pacing qualified", {"load", "pacing", "pacing_qualified"}, unit::flag});
    for (const char* k : {"p50", "p90", "max"})
        load.push_back(
            {std::string("initial delay ") + k, {"load", "initial_delay_s", k}, unit::seconds});
    load.push_back({"recorder CPU", {"load", "cpu", "recorder_cores"}, unit::cores});
    load.push_back({"worker CPU", {"load", "cpu", "worker_cores"}, unit::cores});
    out = "<section id=\"figures\"><h2>Load and pacing figures</h2>\n" +
          figure_table(s, present_in(s, std::move(load))) + "</section>\n" + out;
    // One row per variant.
    std::string t = "<table id=\"variants\"><tr><th>sample</th><th>subset</th><th>variant</th>"
                    "<th>status</th><th>protocol verdict</th><th>qualified</th><th>packets</th>"
                    "<th>late packets</th><th>max |deviation| (ms)</th><th>TTFA (s)</th>"
                    "<th>output duration (s)</th></tr>\n";
    for (const auto& se : f.sessions) {
        const std::size_t late = se.stats.late;
        const std::optional<double> m = se.stats.max_abs_deviation_s;
        const auto jt = [](const json::object& o, const char* k) {
            const auto* v = o.if_contains(k);
            return v && !v->is_null() ? text_of(*v) : std::string("–");
        };
        const auto jn = [](const json::object& o, const char* k) {
            const auto* v = o.if_contains(k);
            return v && v->is_number() ? std::optional<double>(v->to_number<double>())
                                       : std::nullopt;
        };
        const std::string status = jt(se.variant_entry, "status");
        t += fmt::format("<tr class=\"status-{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                         "<td>{}</td><td>{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td>{}{}{}</tr>\n",
                         escape(status), escape(se.sample), escape(se.subset), escape(se.variant),
                         escape(status), escape(jt(se.variant_entry, "protocol_verdict")),
                         escape(jt(se.variant_entry, "qualified")), se.stats.count, late,
                         num_cell(m, 1e3), num_cell(jn(se.serving, "ttfa_s")),
                         num_cell(jn(se.serving, "output_duration_s")));
    }
    t += "</table>\n";
    out += "<section id=\"variants-section\"><h2>Variants</h2>\n<p>One row per variant: its "
           "status and oracle verdict from run.json, its packets from its send receipts, TTFA "
           "and output duration from its report.json.</p>\n" +
           t + "</section>\n";
    return out;
}

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
        // Client timing over the levels that were measured.
        const bool ok = std::all_of(points.begin(), points.end(),
                                    [](const level_point& p) { return p.unreachable || p.valid; });
        std::string h = span(ok ? "good" : "bad",
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

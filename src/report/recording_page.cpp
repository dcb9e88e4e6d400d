// The page of a `pacer record` folder: the variants' statuses and what the recording
// measured. Declared in html_parts.hpp.
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

namespace {} // namespace

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

} // namespace pacer::report::detail

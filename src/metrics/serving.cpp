#include <pacer/core/base64.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/metrics/serving.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include "internal.hpp"
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

namespace pacer::metrics {

namespace json = boost::json;

namespace detail {

std::optional<double> number(const json::value* v) {
    if (!v)
        return std::nullopt;
    if (v->is_double()) {
        const double d = v->get_double();
        return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
    }
    if (v->is_int64())
        return static_cast<double>(v->get_int64());
    if (v->is_uint64())
        return static_cast<double>(v->get_uint64());
    return std::nullopt;
}

std::optional<double> number(const json::object& o, std::string_view key) {
    return number(o.if_contains(key));
}

std::string_view string_field(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

// The walks over a trace act on received events; a client `error` line on the way is an error
// of the session. Returns whether `l` is a received event.
bool received_event(const trace_line& l, std::vector<std::string>& errors) {
    if (l.direction == "error") {
        const auto msg = string_field(l.event, "message");
        errors.emplace_back(msg.empty() ? "client error" : msg);
        return false;
    }
    return l.direction == "receive";
}

const json::object* object_field(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_object() ? &v->get_object() : nullptr;
}

json::value optional_json(const std::optional<double>& v) {
    return v ? json::value(*v) : json::value(nullptr);
}

json::array string_array(std::span<const std::string> items) {
    json::array a;
    for (const auto& s : items)
        a.emplace_back(s);
    return a;
}

void underrun_tally::add(const underrun_result& u) {
    with_underrun += u.count > 0;
    sum.count += u.count;
    sum.total_s += u.total_s;
    sum.worst_s = std::max(sum.worst_s, u.worst_s);
}

void underrun_tally::write(json::object& o, std::string_view prefix, double denominator,
                           bool present) const {
    auto put = [&](std::string_view name, json::value v) {
        o[fmt::format("{}underrun_{}", prefix, name)] = present ? std::move(v) : nullptr;
    };
    put("sessions", with_underrun);
    put("count", sum.count);
    put("total_s", sum.total_s);
    put("worst_s", sum.worst_s);
    put("ratio", denominator > 0 ? json::value(sum.total_s / denominator) : nullptr);
}

} // namespace detail

using namespace detail;

namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) {
    return b == 0 ? 0 : (a + b - 1) / b;
}

// Whole input bytes of D seconds (D comes from a byte count, so this is exact).
std::size_t input_bytes_of(double seconds) {
    return static_cast<std::size_t>(std::llround(std::max(0.0, seconds) * input_bytes_per_s));
}

// Decoded bytes of all traced appends.
std::size_t traced_input_bytes(std::span<const trace_line> trace) {
    std::size_t bytes = 0;
    for (const auto& l : trace)
        if (l.direction == "send" && string_field(l.event, "type") == "input_audio_buffer.append")
            if (auto n = pcm16_bytes(string_field(l.event, "audio")))
                bytes += *n;
    return bytes;
}

json::value underrun_json(const std::optional<underrun_result>& u, std::string_view field) {
    if (!u)
        return nullptr;
    if (field == "count")
        return u->count;
    if (field == "total")
        return u->total_s;
    return u->worst_s;
}

} // namespace

double detail::resolve_input_duration(std::span<const trace_line> trace, const session_params& c) {
    if (c.input_duration_s)
        return *c.input_duration_s;
    return static_cast<double>(traced_input_bytes(trace)) / input_bytes_per_s;
}

json::object distribution_json(std::vector<double> values) {
    auto o = to_json(summarize(values, protocol_fractions));
    o.erase("mean");
    return o;
}

json::object histogram_distribution_json(const log_histogram& values) {
    auto o = to_json(values.summarize(protocol_fractions));
    o.erase("mean");
    return o;
}

std::optional<std::size_t> pcm16_bytes(std::string_view text) {
    const auto decoded = base64_decode(text);
    if (!decoded || decoded->empty() || decoded->size() % 2 != 0)
        return std::nullopt;
    return decoded->size();
}

underrun_result playback_underruns(std::span<const audio_packet> packets, double end_s,
                                   double reserve_s) {
    underrun_result r;
    if (packets.empty())
        return r;
    double buffer = 0;
    double prev = packets.front().arrival_s + reserve_s;
    auto step = [&](double arrival, double duration) {
        if (arrival > prev) {
            const double deficit = std::max(0.0, arrival - prev - buffer);
            if (deficit > playback_epsilon_s) {
                ++r.count;
                r.total_s += deficit;
                r.worst_s = std::max(r.worst_s, deficit);
            }
            buffer = std::max(0.0, buffer - (arrival - prev));
            prev = arrival;
        }
        buffer += duration;
    };
    for (const auto& p : packets) {
        if (p.arrival_s > end_s)
            return r;
        step(p.arrival_s, p.duration_s);
    }
    step(end_s, 0.0);
    return r;
}

send_timing send_lateness(const send_receipts& receipts) {
    send_timing t;
    for (const auto& a : receipts.appends) {
        const auto scheduled = a.scheduled(); // C1/C2 receipts have no schedule
        if (!scheduled)
            continue;
        const double late = std::max(0.0, a.start_s - *scheduled);
        t.lateness_s.push_back(late);
        t.late += late > late_send_threshold_s;
    }
    if (!t.lateness_s.empty())
        t.late_send_rate = static_cast<double>(t.late) / static_cast<double>(t.lateness_s.size());
    return t;
}

pacing_deviation_result pacing_deviation(std::span<const trace_line> trace) {
    pacing_deviation_result r;
    std::optional<double> origin;
    for (const auto& l : trace) {
        if (l.direction != "send" || string_field(l.event, "type") != "input_audio_buffer.append")
            continue;
        double media_s = 0;
        if (const auto* sg = object_field(l.event, "sglang"))
            media_s = number(*sg, "t_start_ms").value_or(0.0) / 1000.0;
        if (!origin)
            origin = l.time_s;
        const double dev = (l.time_s - *origin) - media_s;
        if (!r.worst || std::abs(dev) > r.max_abs_deviation_s) {
            r.max_abs_deviation_s = std::abs(dev);
            r.worst = r.deviations_s.size();
            r.worst_line = l.line;
        }
        r.deviations_s.push_back(dev);
    }
    r.within_tolerance = r.worst.has_value() && r.max_abs_deviation_s <= pacing_tolerance_s;
    if (r.worst && !r.within_tolerance)
        r.error =
            fmt::format("input pacing deviation {} s at append {} (trace line {}) exceeds {}s",
                        r.max_abs_deviation_s, *r.worst, r.worst_line, pacing_tolerance_s);
    return r;
}

session_metrics compute_session_metrics(std::span<const trace_line> trace,
                                        const send_receipts& receipts,
                                        const protocol::profile& profile,
                                        const session_params& context) {
    session_metrics m;
    m.continuous = profile.continuous;
    const double D = resolve_input_duration(trace, context);
    m.input_duration_s = D;
    const double rate = profile.output_sample_rate;

    std::set<std::string, std::less<>> types;
    std::vector<audio_packet> packets;
    for (const auto& l : trace) {
        if (!received_event(l, m.errors))
            continue;
        const auto type = string_field(l.event, "type");
        types.emplace(type);
        if (type == "error") {
            const auto* e = l.event.if_contains("error");
            m.errors.push_back(e ? "server error: " + json::serialize(*e) : "server error");
        } else if (type == "response.done") {
            const auto* resp = object_field(l.event, "response");
            if (!resp || string_field(*resp, "status") != "completed")
                m.errors.push_back(
                    fmt::format("response did not complete: {}",
                                resp ? json::serialize(*resp) : std::string("null")));
        } else if (type == "session.closed") {
            const auto* reason = l.event.if_contains("reason");
            if (reason && !reason->is_null() &&
                !(reason->is_string() && reason->get_string() == "client_closed"))
                m.errors.push_back(
                    fmt::format("unexpected session close: {}", json::serialize(*reason)));
        } else if (type == "response.output_audio.delta") {
            const auto bytes = pcm16_bytes(string_field(l.event, "delta"));
            if (!bytes) {
                m.errors.push_back(fmt::format(
                    "invalid output audio: trace line {}: not base64 PCM16 of whole nonempty "
                    "samples",
                    l.line));
                continue;
            }
            m.output_samples += *bytes / 2;
            packets.push_back({l.time_s, static_cast<double>(*bytes) / (2.0 * rate)});
        }
    }
    m.appends_sent = receipts.appends.size();
    m.expected_appends = ceil_div(input_bytes_of(D), input_packet_bytes);
    if (m.appends_sent != m.expected_appends)
        m.errors.push_back(
            fmt::format("sent {}/{} input frames", m.appends_sent, m.expected_appends));
    if (!types.contains("sglang.input_audio.drained"))
        m.errors.emplace_back("input did not drain");
    if (!types.contains("session.closed"))
        m.errors.emplace_back("session did not close");
    if (!packets.empty() && !types.contains("response.done"))
        m.errors.emplace_back("output response did not complete");
    if (packets.empty() && profile.continuous)
        m.errors.emplace_back("no output audio");
    if (!receipts.session_start_s)
        m.errors.emplace_back("session did not start");

    m.sends = send_lateness(receipts);
    m.output_duration_s = static_cast<double>(m.output_samples) / rate;
    if (!profile.continuous)
        return m;

    const auto& start = receipts.session_start_s;
    if (!packets.empty() && start)
        m.ttfa_s = packets.front().arrival_s - *start;
    double ideal = packets.empty() ? 0.0 : packets.front().arrival_s;
    for (std::size_t i = 0; i < packets.size(); ++i) {
        if (i + 1 < packets.size()) {
            const double gap = packets[i + 1].arrival_s - packets[i].arrival_s;
            m.gaps_s.push_back(gap);
            m.gap_excess_s.push_back(std::max(0.0, gap - packets[i].duration_s));
        }
        m.drift_s.push_back(packets[i].arrival_s - ideal);
        ideal += packets[i].duration_s;
    }
    if (!m.drift_s.empty()) {
        m.final_drift_s = m.drift_s.back();
        m.required_playout_buffer_s =
            std::max(0.0, *std::max_element(m.drift_s.begin(), m.drift_s.end()));
    }
    if (D > 0)
        m.coverage = m.output_duration_s / D;
    if (!packets.empty() && start && packets.front().arrival_s < *start + D)
        m.underrun = playback_underruns(packets, *start + D + context.startup_reserve_s,
                                        context.startup_reserve_s);
    else
        m.underrun = underrun_result{1, D, D};
    if (D > 0)
        m.underrun_ratio = m.underrun->total_s / D;
    return m;
}

json::object session_metrics::to_json() const {
    json::object o;
    o["success"] = success();
    o["errors"] = string_array(errors);
    o["input_duration_s"] = input_duration_s;
    o["appends_sent"] = appends_sent;
    o["expected_appends"] = expected_appends;
    o["send_lateness_s"] = distribution_json(sends.lateness_s);
    o["late_send_threshold_s"] = late_send_threshold_s;
    o["late_send_count"] = sends.late;
    o["late_send_rate"] = optional_json(sends.late_send_rate);
    o["output_samples"] = output_samples;
    o["output_duration_s"] = output_duration_s;
    o["ttfa_s"] = optional_json(ttfa_s);
    if (continuous) {
        o["output_gap_s"] = distribution_json(gaps_s);
        o["output_gap_excess_s"] = distribution_json(gap_excess_s);
        o["output_drift_s"] = distribution_json(drift_s);
    } else {
        o["output_gap_s"] = nullptr;
        o["output_gap_excess_s"] = nullptr;
        o["output_drift_s"] = nullptr;
    }
    o["final_output_drift_s"] = optional_json(final_drift_s);
    o["required_playout_buffer_s"] = optional_json(required_playout_buffer_s);
    o["output_coverage"] = optional_json(coverage);
    o["underrun_count"] = underrun_json(underrun, "count");
    o["underrun_total_s"] = underrun_json(underrun, "total");
    o["underrun_worst_s"] = underrun_json(underrun, "worst");
    o["underrun_ratio"] = optional_json(underrun_ratio);
    return o;
}

json::object aggregate_sessions(std::span<const session_metrics> sessions) {
    std::vector<double> ttfa, lateness, gaps, excess, drift, final_drift, coverage;
    std::size_t successful = 0, sent = 0, late = 0;
    underrun_tally underruns;
    double input_total = 0;
    for (const auto& s : sessions) {
        successful += s.success();
        if (s.ttfa_s)
            ttfa.push_back(*s.ttfa_s);
        lateness.insert(lateness.end(), s.sends.lateness_s.begin(), s.sends.lateness_s.end());
        sent += s.sends.lateness_s.size();
        late += s.sends.late;
        gaps.insert(gaps.end(), s.gaps_s.begin(), s.gaps_s.end());
        excess.insert(excess.end(), s.gap_excess_s.begin(), s.gap_excess_s.end());
        drift.insert(drift.end(), s.drift_s.begin(), s.drift_s.end());
        if (s.final_drift_s)
            final_drift.push_back(*s.final_drift_s);
        if (s.coverage)
            coverage.push_back(*s.coverage);
        if (s.underrun) {
            underruns.add(*s.underrun);
            input_total += s.input_duration_s;
        }
    }
    json::object o;
    o["attempted_sessions"] = sessions.size();
    o["successful_sessions"] = successful;
    o["ttfa_s"] = distribution_json(std::move(ttfa));
    o["send_lateness_s"] = distribution_json(std::move(lateness));
    o["late_send_threshold_s"] = late_send_threshold_s;
    o["late_send_count"] = late;
    o["late_send_rate"] =
        sent ? json::value(static_cast<double>(late) / static_cast<double>(sent)) : nullptr;
    o["output_gap_s"] = distribution_json(std::move(gaps));
    o["output_gap_excess_s"] = distribution_json(std::move(excess));
    o["output_drift_s"] = distribution_json(std::move(drift));
    o["final_output_drift_s"] = distribution_json(std::move(final_drift));
    o["output_coverage"] = distribution_json(std::move(coverage));
    underruns.write(o, "", input_total);
    return o;
}

namespace {

// What one walk over a unit profile's trace finds.
struct unit_walk {
    struct response_state {
        std::size_t start_unit = 0;
        std::vector<audio_packet> packets;
    };
    std::map<std::string, response_state, std::less<>> responses;
    std::vector<std::string> order;            // the responses, as created
    std::vector<std::pair<double, bool>> done; // each unit.done: (receipt, spoke)
    bool drained = false, closed = false;
    std::optional<double> end_of_input_s; // the send start of sglang.input_audio.end
};

// Walks the trace: units, responses and their audio; the output duration and the errors the
// events carry go into `m`.
unit_walk walk_unit_trace(std::span<const trace_line> trace, double rate, unit_metrics& m) {
    unit_walk w;
    bool pending_audio = false, pending_text = false;
    for (const auto& l : trace) {
        if (l.direction == "send" && !w.end_of_input_s &&
            string_field(l.event, "type") == "sglang.input_audio.end")
            w.end_of_input_s = l.time_s;
        if (!received_event(l, m.errors))
            continue;
        const auto type = string_field(l.event, "type");
        if (type == "response.created") {
            if (const auto* r = object_field(l.event, "response")) {
                const std::string id(string_field(*r, "id"));
                if (w.responses.try_emplace(id, unit_walk::response_state{w.done.size(), {}})
                        .second)
                    w.order.push_back(id);
            }
        } else if (type == "response.output_audio.delta") {
            pending_audio = true;
            const auto bytes = pcm16_bytes(string_field(l.event, "delta"));
            if (!bytes) {
                m.errors.push_back(fmt::format("invalid output audio: trace line {}", l.line));
                continue;
            }
            m.output_duration_s += static_cast<double>(*bytes) / (2.0 * rate);
            auto it = w.responses.find(string_field(l.event, "response_id"));
            if (it != w.responses.end())
                it->second.packets.push_back(
                    {l.time_s, static_cast<double>(*bytes) / (2.0 * rate)});
        } else if (type == "response.output_audio_transcript.delta" ||
                   type == "response.output_text.delta") {
            pending_text = true;
        } else if (type == "sglang.unit.done") {
            w.done.emplace_back(l.time_s, pending_audio || pending_text);
            pending_audio = pending_text = false;
        } else if (type == "response.done") {
            const auto* r = object_field(l.event, "response");
            if (!r || string_field(*r, "status") != "completed")
                m.errors.push_back(fmt::format("response did not complete: {}",
                                               r ? json::serialize(*r) : std::string("null")));
        } else if (type == "error") {
            const auto* e = l.event.if_contains("error");
            m.errors.push_back(e ? "server error: " + json::serialize(*e) : "server error");
        } else if (type == "sglang.input_audio.drained") {
            w.drained = true;
        } else if (type == "session.closed") {
            w.closed = true;
        }
    }
    return w;
}

// When unit k's input was all sent: the completion of the append holding its last sample,
// ceil((k+1) * unit_ms / 80) - 1, clamped.
std::optional<double> unit_ready(std::span<const trace::append_receipt> appends, int unit_ms,
                                 std::size_t k) {
    if (appends.empty())
        return std::nullopt;
    const std::size_t idx =
        std::min(ceil_div((k + 1) * static_cast<std::size_t>(unit_ms), 80) - 1, appends.size() - 1);
    return appends[idx].completed_s;
}

// Each completed unit's lag (speak or listen), the tail unit's, and the misses.
void unit_lags(unit_metrics& m, const unit_walk& w, std::span<const trace::append_receipt> appends,
               int unit_ms) {
    const auto& done = w.done;
    // The tail unit (the input's last) is timed from the end of input when the server
    // completed it after pacer sent `sglang.input_audio.end`: a server may hold it until the
    // end of input is signalled (tail_policy "pad": it cannot know no more audio follows), and
    // the end is sent up to one packet after the last append (docs/protocol.md §2.4). Timed
    // from the grid, a prompt server's tail unit lagged a whole packet, and every session
    // missed one unit at any load (docs/serving.md, "The tail unit").
    const std::size_t tail = m.expected_units > 0 ? m.expected_units - 1 : 0;
    // (A unit past the tail, which a server may add for its padding, is timed the same way; it
    // is the count mismatch's error, not a second miss.)
    auto reference = [&](std::size_t k) -> std::optional<double> {
        auto r = unit_ready(appends, unit_ms, k);
        const bool after_end = w.end_of_input_s && done[k].first > *w.end_of_input_s;
        if (r && k >= tail && after_end)
            r = std::max(*r, *w.end_of_input_s);
        if (r && k == tail)
            m.tail_unit_reference = after_end ? "end_of_input" : "grid";
        return r;
    };
    std::size_t over = 0;
    for (std::size_t k = 0; k < done.size(); ++k) {
        const auto r = reference(k);
        if (!r)
            break;
        const double lag = done[k].first - *r;
        (done[k].second ? m.speak_lag_s : m.listen_lag_s).push_back(lag);
        if (k == tail && m.expected_units > 0)
            m.tail_unit_lag_s = lag;
        over += lag > m.unit_s;
    }
    m.missed_units =
        over + (m.expected_units > m.completed_units ? m.expected_units - m.completed_units : 0);
    if (m.expected_units > 0)
        m.unit_miss_rate =
            static_cast<double>(m.missed_units) / static_cast<double>(m.expected_units);
}

} // namespace

unit_metrics compute_unit_metrics(std::span<const trace_line> trace, const send_receipts& receipts,
                                  const protocol::profile& profile, const session_params& context) {
    unit_metrics m;
    m.unit_s = profile.unit_ms / 1000.0;
    const double D = resolve_input_duration(trace, context);
    const std::size_t input_bytes = input_bytes_of(D);
    m.expected_units = ceil_div(input_bytes, static_cast<std::size_t>(profile.unit_ms) * 32);
    const double rate = profile.output_sample_rate;

    const unit_walk w = walk_unit_trace(trace, rate, m);
    const auto& done = w.done;
    m.completed_units = done.size();
    const auto& appends = receipts.appends;
    const std::size_t expected_appends = ceil_div(input_bytes, input_packet_bytes);
    if (appends.size() != expected_appends)
        m.errors.push_back(
            fmt::format("sent {}/{} input frames", appends.size(), expected_appends));
    if (!w.drained)
        m.errors.emplace_back("input did not drain");
    if (!w.closed)
        m.errors.emplace_back("session did not close");
    if (m.completed_units != m.expected_units)
        m.errors.push_back(
            fmt::format("completed {}/{} units", m.completed_units, m.expected_units));

    unit_lags(m, w, appends, profile.unit_ms);
    underrun_tally underruns;
    for (const auto& id : w.order) {
        const auto& r = w.responses.at(id);
        if (r.packets.empty())
            continue;
        if (const auto rd = unit_ready(appends, profile.unit_ms, r.start_unit))
            m.reply_lag_s.push_back(r.packets.front().arrival_s - *rd);
        underruns.add(
            playback_underruns(r.packets, r.packets.back().arrival_s, context.startup_reserve_s));
    }
    m.underrun = underruns.sum;
    if (m.output_duration_s > 0)
        m.underrun_ratio = m.underrun.total_s / m.output_duration_s;
    if (!done.empty() && !appends.empty() && done.back().first > appends.front().start_s)
        m.units_per_s =
            static_cast<double>(done.size()) / (done.back().first - appends.front().start_s);
    return m;
}

json::object unit_metrics::to_json() const {
    json::object o;
    o["success"] = errors.empty();
    o["errors"] = string_array(errors);
    o["unit_s"] = unit_s;
    o["expected_units"] = expected_units;
    o["completed_units"] = completed_units;
    o["missed_units"] = missed_units;
    o["unit_miss_rate"] = optional_json(unit_miss_rate);
    o["speak_unit_lag_s"] = distribution_json(speak_lag_s);
    o["listen_unit_lag_s"] = distribution_json(listen_lag_s);
    o["response_audio_lag_s"] = distribution_json(reply_lag_s);
    o["tail_unit_lag_s"] = optional_json(tail_unit_lag_s);
    o["tail_unit_reference"] =
        tail_unit_reference ? json::value(*tail_unit_reference) : json::value(nullptr);
    o["output_duration_s"] = output_duration_s;
    o["underrun_count"] = underrun.count;
    o["underrun_total_s"] = underrun.total_s;
    o["underrun_worst_s"] = underrun.worst_s;
    o["underrun_ratio"] = optional_json(underrun_ratio);
    o["units_per_s"] = optional_json(units_per_s);
    return o;
}

} // namespace pacer::metrics

#include <pacer/core/stats.hpp>
#include <pacer/metrics/level.hpp>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include "internal.hpp"
#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <map>
#include <set>

namespace pacer::metrics {

namespace json = boost::json;
using namespace detail;

namespace {

// Appends the errors of `more` that `into` does not hold yet. The 4.2 and 4.3 walks report the
// same protocol failures (frames sent, drain, close, server errors); the session names each once.
void merge_errors(std::vector<std::string>& into, std::span<const std::string> more) {
    const auto known = static_cast<std::ptrdiff_t>(into.size()); // `into` may reallocate
    for (const auto& e : more)
        if (std::find(into.begin(), into.begin() + known, e) == into.begin() + known)
            into.push_back(e);
}

void append_values(std::vector<double>& to, std::span<const double> from) {
    to.insert(to.end(), from.begin(), from.end());
}

// k of "unit_<k>" (decimal digits only, as S-W's `unit_(\d+)`), or nullopt.
std::optional<std::size_t> unit_index(std::string_view id) {
    constexpr std::string_view prefix = "unit_";
    if (!id.starts_with(prefix))
        return std::nullopt;
    id.remove_prefix(prefix.size());
    std::size_t k = 0;
    const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), k);
    if (id.empty() || ec != std::errc{} || end != id.data() + id.size())
        return std::nullopt;
    return k;
}

// A media time in ms as an integer count of 0.001 ms: S-W rounds both sides to 3 decimals
// before comparing, which this does without comparing doubles for equality.
std::int64_t media_key(double ms) {
    return std::llround(ms * 1000.0);
}

// Per-response samples pooled over responses: one session's, or a level's admitted sessions'.
struct response_samples {
    std::vector<double> ttfa, gap_excess, max_drift, buffer;

    void add(std::span<const response_metrics> responses) {
        for (const auto& r : responses) {
            if (r.ttfa_s)
                ttfa.push_back(*r.ttfa_s);
            append_values(gap_excess, r.gap_excess_s);
            if (r.max_drift_s)
                max_drift.push_back(*r.max_drift_s);
            if (r.required_playout_buffer_s)
                buffer.push_back(*r.required_playout_buffer_s);
        }
    }
    void write(json::object& o) && {
        o["response_ttfa_s"] = distribution_json(std::move(ttfa));
        o["response_gap_excess_s"] = distribution_json(std::move(gap_excess));
        o["response_max_drift_s"] = distribution_json(std::move(max_drift));
        o["response_required_playout_buffer_s"] = distribution_json(std::move(buffer));
    }
};

// Timeline samples pooled over sessions.
struct timeline_samples {
    std::vector<double> unit_lag, schedule_lag, send_lag;

    void add(const timeline_metrics& t) {
        append_values(unit_lag, t.unit_lag_s);
        append_values(schedule_lag, t.media_schedule_lag_s);
        append_values(send_lag, t.media_send_lag_s);
    }
    void write(json::object& o) && {
        o["unit_lag_s"] = distribution_json(std::move(unit_lag));
        o["media_schedule_lag_s"] = distribution_json(std::move(schedule_lag));
        o["media_send_lag_s"] = distribution_json(std::move(send_lag));
    }
};

// 4.2's "unreadable session" (also S-W's empty metrics of a rejected one): the metrics of a
// session that sent and received nothing, i.e. coverage 0 and underrun 1/D/D/1.0 when the
// profile is continuous, every unit missed; `why` replaces the walks' errors.
void assign_empty_metrics(level_session& s, const protocol::profile& profile,
                          const session_params& context, std::vector<std::string> why) {
    s.session = compute_session_metrics({}, send_receipts{}, profile, context);
    s.units = compute_unit_metrics({}, send_receipts{}, profile, context);
    if (profile.continuous) {
        // Also when D is 0, where the walk has no ratio to compute.
        s.session.coverage = 0.0;
        s.session.underrun_ratio = 1.0;
    }
    s.session.errors = why;
    s.units.errors = std::move(why);
}

json::object aggregate_units(std::span<const level_session> sessions,
                             const protocol::profile& profile) {
    std::size_t expected = 0, completed = 0, speak = 0, missed = 0, responses = 0;
    underrun_tally underruns;
    double output = 0, total_rate = 0;
    std::vector<double> rates, lag, listen_lag, speak_lag, reply_lag, tail_lag;
    for (const auto& s : sessions) {
        const auto& u = s.units;
        if (u.tail_unit_lag_s)
            tail_lag.push_back(*u.tail_unit_lag_s);
        expected += u.expected_units;
        completed += u.completed_units;
        speak += u.speak_lag_s.size();
        missed += u.missed_units;
        responses += static_cast<std::size_t>(
            std::count_if(s.responses.begin(), s.responses.end(),
                          [](const auto& r) { return r.audio_packets > 0; }));
        if (u.units_per_s) {
            rates.push_back(*u.units_per_s);
            total_rate += *u.units_per_s;
        }
        append_values(lag, u.speak_lag_s);
        append_values(lag, u.listen_lag_s);
        append_values(listen_lag, u.listen_lag_s);
        append_values(speak_lag, u.speak_lag_s);
        append_values(reply_lag, u.reply_lag_s);
        output += u.output_duration_s;
        underruns.add(u.underrun);
    }
    json::object o;
    o["unit_s"] = profile.unit_ms / 1000.0;
    o["expected_units"] = expected;
    o["completed_units"] = completed;
    o["speak_units"] = speak;
    o["missed_units"] = missed;
    o["unit_miss_rate"] =
        expected ? json::value(static_cast<double>(missed) / static_cast<double>(expected))
                 : json::value(nullptr);
    o["session_units_per_s"] = distribution_json(std::move(rates));
    o["total_units_per_s"] = total_rate;
    o["unit_lag_s"] = distribution_json(std::move(lag));
    o["listen_unit_lag_s"] = distribution_json(std::move(listen_lag));
    o["speak_unit_lag_s"] = distribution_json(std::move(speak_lag));
    o["response_audio_lag_s"] = distribution_json(std::move(reply_lag));
    o["tail_unit_lag_s"] = distribution_json(std::move(tail_lag));
    o["responses"] = responses;
    o["output_duration_s"] = output;
    underruns.write(o, "", output);
    return o;
}

} // namespace

std::string_view to_string(session_status s) {
    // In the order of the enumerators.
    constexpr std::string_view names[] = {"succeeded", "failed", "rejected"};
    return names[static_cast<std::size_t>(s)];
}

admission classify_admission(std::span<const trace_line> trace, const send_receipts& receipts) {
    admission a;
    a.admitted = receipts.admitted.value_or(false);
    bool exhausted_503 = false;
    for (const auto& l : trace) {
        if (l.direction == "receive")
            a.admitted = true;
        if (l.direction != "admission")
            continue;
        const auto type = string_field(l.event, "type");
        a.admitted = a.admitted || type == "connection_admitted";
        a.denials += type == "connection_denied";
        const auto* exhausted = l.event.if_contains("exhausted");
        exhausted_503 = exhausted_503 || (number(l.event, "http_status") == 503.0 && exhausted &&
                                          exhausted->is_bool() && exhausted->get_bool());
    }
    a.rejected = !a.admitted && exhausted_503;
    return a;
}

std::vector<response_metrics> compute_response_metrics(std::span<const trace_line> trace,
                                                       const protocol::profile& profile) {
    std::vector<response_metrics> out;
    std::vector<std::vector<audio_packet>> packets; // parallel to `out`
    std::map<std::string, std::size_t, std::less<>> by_id;
    // The index of response `id`, in order of first mention.
    auto response = [&](std::string_view id) {
        auto it = by_id.find(id);
        if (it == by_id.end()) {
            it = by_id.emplace(std::string(id), out.size()).first;
            out.emplace_back().id = std::string(id);
            packets.emplace_back();
        }
        return it->second;
    };
    const double rate = profile.output_sample_rate;
    for (const auto& l : trace) {
        if (l.direction != "receive")
            continue;
        const auto type = string_field(l.event, "type");
        if (type == "response.created" || type == "response.done") {
            const auto* r = object_field(l.event, "response");
            const auto id = r ? string_field(*r, "id") : std::string_view();
            if (id.empty())
                continue;
            auto& m = out[response(id)];
            if (type == "response.created") {
                if (!m.created_s)
                    m.created_s = l.time_s;
            } else if (const auto* status = r->if_contains("status");
                       status && status->is_string()) {
                m.status = std::string(status->get_string());
            }
        } else if (type == "response.output_audio.delta") {
            // Invalid audio is the session walk's error; it is no packet of any response.
            const auto id = string_field(l.event, "response_id");
            const auto bytes = pcm16_bytes(string_field(l.event, "delta"));
            if (!id.empty() && bytes)
                packets[response(id)].push_back(
                    {l.time_s, static_cast<double>(*bytes) / (2.0 * rate)});
        }
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
        auto& m = out[i];
        const auto& p = packets[i];
        m.audio_packets = p.size();
        if (p.empty())
            continue;
        if (m.created_s)
            m.ttfa_s = p.front().arrival_s - *m.created_s;
        double ideal = p.front().arrival_s;
        double max_drift = 0; // the first packet's drift is 0 by definition
        for (std::size_t j = 0; j < p.size(); ++j) {
            if (j + 1 < p.size())
                m.gap_excess_s.push_back(
                    std::max(0.0, p[j + 1].arrival_s - p[j].arrival_s - p[j].duration_s));
            max_drift = std::max(max_drift, p[j].arrival_s - ideal);
            ideal += p[j].duration_s;
            m.output_duration_s += p[j].duration_s;
        }
        m.max_drift_s = max_drift;
        m.required_playout_buffer_s = std::max(0.0, max_drift);
    }
    return out;
}

timeline_metrics compute_timeline_metrics(std::span<const trace_line> trace,
                                          const send_receipts& receipts,
                                          const protocol::profile& profile,
                                          const session_params& context) {
    // Units that end within the input are timed; the rest end at EOS padding.
    const double u = profile.unit_ms / 1000.0;
    const auto full_units = static_cast<std::size_t>(
        std::floor((resolve_input_duration(trace, context) + playback_epsilon_s) / u));
    timeline_metrics m;
    // Appends by media time; a repeated seq keeps its last append, as S-W's dict does.
    std::map<std::int64_t, const trace::append_receipt*> append_at;
    for (const auto& a : receipts.appends)
        append_at[media_key(static_cast<double>(a.seq) * static_cast<double>(input_packet_bytes) /
                            input_bytes_per_s * 1000.0)] = &a;
    const auto& start = receipts.session_start_s;
    std::set<std::size_t> timed_units;
    std::set<std::int64_t> seen_media;
    for (const auto& l : trace) {
        if (l.direction != "receive")
            continue;
        const auto type = string_field(l.event, "type");
        if (type == "sglang.unit.done") {
            const auto* id = l.event.if_contains("unit_id");
            const auto k = id && id->is_string() ? unit_index(id->get_string()) : std::nullopt;
            if (!k)
                m.errors.push_back(fmt::format("invalid completed unit id: {}",
                                               !id               ? std::string("null")
                                               : id->is_string() ? std::string(id->get_string())
                                                                 : json::serialize(*id)));
            else if (*k >= full_units)
                m.excluded_terminal_units.push_back(*k);
            else if (start && timed_units.insert(*k).second)
                m.unit_lag_s.push_back(l.time_s - (*start + static_cast<double>(*k + 1) * u));
        } else if (type == "response.output_audio.delta") {
            if (!pcm16_bytes(string_field(l.event, "delta")))
                continue;
            const auto* sg = object_field(l.event, "sglang");
            const auto* media_time = sg ? object_field(*sg, "media_time") : nullptr;
            const auto t_ms = media_time ? number(*media_time, "t_start_ms") : std::nullopt;
            if (!t_ms)
                continue;
            const auto key = media_key(*t_ms);
            const auto it = append_at.find(key);
            if (it == append_at.end() || !seen_media.insert(key).second)
                continue;
            const auto& a = *it->second;
            if (const auto scheduled = a.scheduled()) // C1/C2 receipts have no schedule
                m.media_schedule_lag_s.push_back(l.time_s - *scheduled);
            m.media_send_lag_s.push_back(l.time_s - a.start_s);
        }
    }
    return m;
}

json::object response_metrics::to_json() const {
    json::object o;
    o["response_id"] = id;
    o["status"] = status ? json::value(*status) : json::value(nullptr);
    o["created_s"] = optional_json(created_s);
    o["ttfa_s"] = optional_json(ttfa_s);
    o["audio_packets"] = audio_packets;
    o["output_duration_s"] = output_duration_s;
    json::array excess;
    for (double v : gap_excess_s)
        excess.emplace_back(v);
    o["gap_excess_values_s"] = std::move(excess);
    o["max_drift_s"] = optional_json(max_drift_s);
    o["required_playout_buffer_s"] = optional_json(required_playout_buffer_s);
    return o;
}

json::object timeline_metrics::to_json() const {
    json::object o;
    timeline_samples samples;
    samples.add(*this);
    std::move(samples).write(o);
    json::array excluded;
    for (auto k : excluded_terminal_units)
        excluded.emplace_back(fmt::format("unit_{}", k));
    o["excluded_terminal_units"] = std::move(excluded);
    o["errors"] = string_array(errors);
    return o;
}

namespace detail {

session_files read_session_files(std::optional<std::string_view> trace_jsonl,
                                 std::optional<std::string_view> receipts_json,
                                 std::vector<std::string>& errors) {
    session_files f;
    if (trace_jsonl) {
        f.trace = parse_trace(*trace_jsonl);
        errors.insert(errors.end(), f.trace.errors.begin(), f.trace.errors.end());
    } else {
        errors.emplace_back("missing trace.jsonl");
    }
    if (!receipts_json) {
        errors.emplace_back("missing input-send-receipts.json");
    } else {
        try {
            f.receipts = trace::parse_receipts(*receipts_json, trace::receipt_rules::any_client);
        } catch (const std::exception& e) {
            errors.push_back(fmt::format("input-send-receipts.json: {}", e.what()));
        }
    }
    return f;
}

} // namespace detail

level_session evaluate_session(std::uint32_t index, std::optional<std::string_view> trace_jsonl,
                               std::optional<std::string_view> receipts_json,
                               const protocol::profile& profile, const session_params& context,
                               std::span<const std::string> extra_errors) {
    level_session s;
    s.index = index;
    auto files = detail::read_session_files(trace_jsonl, receipts_json, s.artifact_errors);
    const parsed_trace& trace = files.trace;
    const send_receipts& receipts = files.receipts;
    // Admission reads whatever could be read: an admitted session whose files are damaged is
    // a failure of the server's load, not a rejection.
    s.admitted = classify_admission(trace.lines, receipts);
    session_params ctx = context;
    ctx.input_duration_s = resolve_input_duration(trace.lines, context);

    if (s.admitted.rejected) {
        assign_empty_metrics(s, profile, ctx, {"admission rejected: HTTP 503, retries exhausted"});
    } else if (!s.artifact_errors.empty()) {
        std::vector<std::string> why;
        for (const auto& e : s.artifact_errors)
            why.push_back("unreadable session artifacts: " + e);
        assign_empty_metrics(s, profile, ctx, std::move(why));
    } else {
        s.session = compute_session_metrics(trace.lines, receipts, profile, ctx);
        s.units = compute_unit_metrics(trace.lines, receipts, profile, ctx);
        s.responses = compute_response_metrics(trace.lines, profile);
        s.timeline = compute_timeline_metrics(trace.lines, receipts, profile, ctx);
        s.send_lateness_p99_s = percentile(s.session.sends.lateness_s, 0.99);
    }
    // A client task's failure belongs to the 4.2 and the 4.3 view alike (M and S-J append it).
    merge_errors(s.session.errors, extra_errors);
    merge_errors(s.units.errors, extra_errors);

    s.errors = s.session.errors;
    if (!profile.continuous)
        merge_errors(s.errors, s.units.errors);
    merge_errors(s.errors, s.timeline.errors);
    if (s.admitted.rejected)
        s.status = session_status::rejected;
    else
        s.status = s.errors.empty() ? session_status::succeeded : session_status::failed;
    return s;
}

json::object level_session::to_json() const {
    json::object o;
    o["index"] = index;
    o["status"] = to_string(status);
    o["success"] = success();
    o["admitted"] = admitted.admitted;
    o["rejected"] = admitted.rejected;
    o["admission_denials"] = admitted.denials;
    o["errors"] = string_array(errors);
    o["artifact_errors"] = string_array(artifact_errors);
    o["send_lateness_p99_s"] = optional_json(send_lateness_p99_s);
    // The 4.2 fields; its own `success` and `errors` give way to the session's above.
    for (auto& field : session.to_json())
        o.emplace(field.key(), std::move(field.value()));
    response_samples samples;
    samples.add(responses);
    std::move(samples).write(o);
    o["units"] = units.to_json();
    json::array rs;
    for (const auto& r : responses)
        rs.emplace_back(r.to_json());
    o["responses"] = std::move(rs);
    o["timeline"] = timeline.to_json();
    return o;
}

json::object aggregate_level(std::span<const level_session> sessions,
                             const protocol::profile& profile) {
    std::vector<session_metrics> all;
    all.reserve(sessions.size());
    for (const auto& s : sessions)
        all.push_back(s.session);
    // 4.2 (S-J): every attempted session, rejected and unreadable ones included.
    json::object o = aggregate_sessions(all);

    std::size_t admitted = 0, rejected = 0, successful = 0;
    std::size_t playout = 0;
    underrun_tally playout_underruns;
    double playout_input = 0;
    std::vector<double> admitted_coverage, required_buffer;
    response_samples responses;
    timeline_samples timeline;
    for (const auto& s : sessions) {
        rejected += s.status == session_status::rejected;
        if (s.session.required_playout_buffer_s)
            required_buffer.push_back(*s.session.required_playout_buffer_s);
        if (!s.admitted.admitted)
            continue;
        ++admitted;
        successful += s.success();
        if (s.session.coverage)
            admitted_coverage.push_back(*s.session.coverage);
        if (const auto& u = s.session.underrun) { // continuous profiles only
            ++playout;
            playout_underruns.add(*u);
            playout_input += s.session.input_duration_s;
        }
        responses.add(s.responses);
        timeline.add(s.timeline);
    }
    o["admitted_sessions"] = admitted;
    o["rejected_sessions"] = rejected;
    o["successful_admitted_sessions"] = successful;
    o["successful_sessions"] = successful;
    json::value session_ttfa = o.at("ttfa_s"); // S-W's alias; a copy, as inserting may rehash
    o["session_ttfa_s"] = std::move(session_ttfa);
    o["required_playout_buffer_s"] = distribution_json(std::move(required_buffer));
    o["admitted_output_coverage"] = distribution_json(std::move(admitted_coverage));
    o["playout_sessions"] = playout;
    playout_underruns.write(o, "playout_", playout_input, playout > 0);
    std::move(responses).write(o);
    std::move(timeline).write(o);
    o["units"] = aggregate_units(sessions, profile);
    return o;
}

} // namespace pacer::metrics

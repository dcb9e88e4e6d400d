#include <pacer/core/stats.hpp>
#include <pacer/metrics/realtime_level.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include "internal.hpp"
#include <algorithm>
#include <cmath>
#include <map>

namespace pacer::metrics {

namespace json = boost::json;
using namespace detail;
using protocol::realtime_event;
using protocol::realtime_protocol;
using protocol::realtime_turns;

namespace {

std::optional<double> minus(std::optional<double> a, std::optional<double> b) {
    return a && b ? std::optional<double>(*a - *b) : std::nullopt;
}

// Input bytes and 80 ms packets of D seconds of 16 kHz PCM16 (D comes from a byte count).
std::size_t input_bytes(double d) {
    return static_cast<std::size_t>(std::llround(std::max(0.0, d) * input_bytes_per_s));
}
// (vllm-omni appends in chunks of `chunk_s`, a multiple of 10 ms: 320 bytes each.)
std::size_t input_packets(double d, double chunk_s) {
    const auto chunk = static_cast<std::size_t>(std::llround(chunk_s * 100)) * 320;
    return (input_bytes(d) + chunk - 1) / chunk;
}

} // namespace

realtime_output realtime_output_audio(std::span<const trace_line> trace, double sample_rate,
                                      double reserve_s) {
    realtime_output out;
    std::map<std::string, std::vector<audio_packet>> by_response;
    std::vector<std::string> order;
    for (const auto& l : trace) {
        if (l.direction != "receive")
            continue;
        if (protocol::classify_realtime_event(string_field(l.event, "type")) !=
            realtime_event::audio_delta)
            continue;
        const auto bytes = pcm16_bytes(string_field(l.event, "delta"));
        if (!bytes) {
            out.errors.push_back(fmt::format("invalid output audio: trace line {}: not base64 "
                                             "PCM16 of whole nonempty samples",
                                             l.line));
            continue;
        }
        ++out.audio_deltas;
        const double d = static_cast<double>(*bytes) / (2.0 * sample_rate);
        out.output_duration_s += d;
        std::string id(string_field(l.event, "response_id"));
        auto [it, fresh] = by_response.try_emplace(id);
        if (fresh)
            order.push_back(id);
        it->second.push_back({l.time_s, d});
    }
    out.responses = order.size();
    for (const auto& id : order) {
        const auto& packets = by_response.at(id);
        for (std::size_t i = 0; i + 1 < packets.size(); ++i) {
            const double gap = packets[i + 1].arrival_s - packets[i].arrival_s;
            out.gaps_s.push_back(gap);
            out.gap_excess_s.push_back(std::max(0.0, gap - packets[i].duration_s));
        }
        const auto u = playback_underruns(packets, packets.back().arrival_s, reserve_s);
        out.underrun.count += u.count;
        out.underrun.total_s += u.total_s;
        out.underrun.worst_s = std::max(out.underrun.worst_s, u.worst_s);
    }
    if (out.output_duration_s > 0)
        out.underrun_ratio = out.underrun.total_s / out.output_duration_s;
    return out;
}

json::object realtime_figures::to_json() const {
    json::object o;
    o["anchor_s"] = optional_json(anchor_s);
    o["utterance_end_s"] = optional_json(utterance_end_s);
    o["first_audio_from_utterance_end_s"] = optional_json(first_audio_from_utterance_end_s);
    o["first_audio_from_anchor_s"] = optional_json(first_audio_from_anchor_s);
    o["first_transcript_from_utterance_end_s"] =
        optional_json(first_transcript_from_utterance_end_s);
    o["first_transcript_from_anchor_s"] = optional_json(first_transcript_from_anchor_s);
    o["final_transcript_from_utterance_end_s"] =
        optional_json(final_transcript_from_utterance_end_s);
    o["real_time_factor"] = optional_json(real_time_factor);
    o["transcript_deltas"] = transcript_deltas;
    o["audio_deltas"] = output.audio_deltas;
    o["responses_with_audio"] = output.responses;
    o["output_duration_s"] = output.output_duration_s;
    o["output_gap_s"] = distribution_json(output.gaps_s);
    o["output_gap_excess_s"] = distribution_json(output.gap_excess_s);
    o["underrun_count"] = output.underrun.count;
    o["underrun_total_s"] = output.underrun.total_s;
    o["underrun_worst_s"] = output.underrun.worst_s;
    o["underrun_ratio"] = optional_json(output.underrun_ratio);
    return o;
}

json::object realtime_level_session::to_json() const {
    json::object o;
    o["index"] = base.index;
    o["status"] = to_string(base.status);
    o["success"] = base.success();
    o["admitted"] = base.admitted.admitted;
    o["rejected"] = base.admitted.rejected;
    o["admission_denials"] = base.admitted.denials;
    o["errors"] = string_array(base.errors);
    o["artifact_errors"] = string_array(base.artifact_errors);
    o["send_lateness_p99_s"] = optional_json(base.send_lateness_p99_s);
    o["input_duration_s"] = base.session.input_duration_s;
    o["appends_sent"] = base.session.appends_sent;
    o["expected_appends"] = base.session.expected_appends;
    o["send_lateness_s"] = distribution_json(base.session.sends.lateness_s);
    o["late_send_count"] = base.session.sends.late;
    o["realtime"] = figures.to_json();
    return o;
}

std::vector<std::string> realtime_protocol_checks(const realtime_context& c) {
    std::vector<std::string> checks{
        "admitted (no 503 exhaustion) and the session's files readable",
        "session.created received",
    };
    if (c.protocol == realtime_protocol::openai)
        checks.emplace_back("session.updated received (the session.update acknowledged)");
    checks.emplace_back("every append of the input sent");
    checks.emplace_back("no server error event and no client error line");
    if (c.protocol == realtime_protocol::openai) {
        checks.emplace_back("every output audio delta is base64 PCM16 of whole samples");
        if (c.turns == realtime_turns::manual)
            checks.emplace_back("response.done after the input's commit");
    } else {
        checks.emplace_back("transcription.done after the final commit");
    }
    return checks;
}

namespace {

// What one walk over a session's trace finds: the protocol's events, in order.
struct realtime_walk {
    bool created = false, updated = false, transcription_done = false;
    bool response_done_after_input = false;
    std::optional<double> commit_s, speech_stopped_s, first_audio_s, first_transcript_s,
        final_transcript_s, last_output_s;
    std::size_t transcript_deltas = 0;
    std::vector<std::string> server_errors; // in trace order
    std::vector<std::string> client_errors;
};

// The input's commit, from a sent line: vllm's first commit (final:false) starts generation;
// the input's end is the final.
bool is_input_commit(const trace_line& l, realtime_protocol protocol) {
    if (string_field(l.event, "type") != "input_audio_buffer.commit")
        return false;
    const auto* fin = l.event.if_contains("final");
    return protocol != realtime_protocol::vllm || (fin && fin->is_bool() && fin->get_bool());
}

// One received event into the walk.
void walk_received(realtime_walk& w, const trace_line& l) {
    switch (protocol::classify_realtime_event(string_field(l.event, "type"))) {
    case realtime_event::session_created:
        w.created = true;
        break;
    case realtime_event::session_updated:
        w.updated = true;
        break;
    case realtime_event::speech_stopped:
        if (!w.speech_stopped_s)
            w.speech_stopped_s = l.time_s;
        break;
    case realtime_event::audio_delta:
        if (!w.first_audio_s)
            w.first_audio_s = l.time_s;
        w.last_output_s = l.time_s;
        break;
    case realtime_event::transcript_delta:
    case realtime_event::transcription_delta:
        ++w.transcript_deltas;
        if (!w.first_transcript_s)
            w.first_transcript_s = l.time_s;
        w.last_output_s = l.time_s;
        break;
    case realtime_event::response_done:
        if (w.commit_s)
            w.response_done_after_input = true;
        w.last_output_s = l.time_s;
        break;
    case realtime_event::transcription_done:
        w.transcription_done = true;
        if (!w.final_transcript_s)
            w.final_transcript_s = l.time_s;
        w.last_output_s = l.time_s;
        break;
    case realtime_event::error: {
        const auto* err = l.event.if_contains("error");
        w.server_errors.push_back(err ? "server error: " + json::serialize(*err) : "server error");
        break;
    }
    default:
        break;
    }
}

realtime_walk walk_realtime_trace(std::span<const trace_line> lines, realtime_protocol protocol) {
    realtime_walk w;
    for (const auto& l : lines) {
        if (l.direction == "send") {
            if (!w.commit_s && is_input_commit(l, protocol))
                w.commit_s = l.time_s;
            continue;
        }
        if (received_event(l, w.client_errors))
            walk_received(w, l);
    }
    return w;
}

// What an admitted, readable session lacks, in the order the checks are listed.
std::vector<std::string> missing_events(const realtime_walk& w, const session_metrics& m,
                                        const send_receipts& receipts, const realtime_context& c) {
    std::vector<std::string> errors;
    if (!w.created)
        errors.emplace_back("no session.created");
    if (c.protocol == realtime_protocol::openai && !w.updated)
        errors.emplace_back("no session.updated: the session.update was not acknowledged");
    if (m.appends_sent != m.expected_appends)
        errors.push_back(
            fmt::format("sent {}/{} input frames", m.appends_sent, m.expected_appends));
    if (!receipts.session_start_s)
        errors.emplace_back("session did not start");
    if (c.protocol == realtime_protocol::vllm && !w.transcription_done)
        errors.emplace_back("no transcription.done after the final commit");
    if (c.protocol == realtime_protocol::openai && c.turns == realtime_turns::manual &&
        !w.response_done_after_input)
        errors.emplace_back("no response.done after the input's commit");
    return errors;
}

// The end of the input: its commit; with server VAD, where no event marks it, the later of
// anchor + D and the last append's start plus its own length (docs/protocol.md §2.4).
std::optional<double> input_end_s(const realtime_walk& w, const send_receipts& receipts,
                                  std::optional<double> anchor_s, const realtime_context& c) {
    if (w.commit_s || !anchor_s || receipts.appends.empty() ||
        c.protocol != realtime_protocol::openai || c.turns != realtime_turns::server_vad)
        return w.commit_s;
    const std::size_t n = receipts.appends.size();
    const double last = static_cast<double>(input_bytes(c.input_duration_s) -
                                            std::min(input_bytes(c.input_duration_s),
                                                     (n - 1) * input_packet_bytes)) /
                        input_bytes_per_s;
    return std::max(*anchor_s + c.input_duration_s, receipts.appends.back().start_s + last);
}

// The figures' latencies, from the walk and the receipts.
void realtime_latencies(realtime_figures& f, const realtime_walk& w, const send_receipts& receipts,
                        const realtime_context& c) {
    f.anchor_s = receipts.session_start_s;
    const std::optional<double> input_end = input_end_s(w, receipts, f.anchor_s, c);
    f.utterance_end_s = c.protocol == realtime_protocol::openai &&
                                c.turns == realtime_turns::server_vad && w.speech_stopped_s
                            ? w.speech_stopped_s
                            : input_end;
    f.first_audio_from_utterance_end_s = minus(w.first_audio_s, f.utterance_end_s);
    f.first_audio_from_anchor_s = minus(w.first_audio_s, f.anchor_s);
    f.first_transcript_from_utterance_end_s = minus(w.first_transcript_s, f.utterance_end_s);
    f.first_transcript_from_anchor_s = minus(w.first_transcript_s, f.anchor_s);
    f.final_transcript_from_utterance_end_s = minus(w.final_transcript_s, f.utterance_end_s);
    if (w.last_output_s && f.anchor_s && c.input_duration_s > 0)
        f.real_time_factor = (*w.last_output_s - *f.anchor_s) / c.input_duration_s;
}

} // namespace

realtime_level_session evaluate_realtime_session(std::uint32_t index,
                                                 std::optional<std::string_view> trace_jsonl,
                                                 std::optional<std::string_view> receipts_json,
                                                 const realtime_context& c,
                                                 std::span<const std::string> extra_errors) {
    realtime_level_session out;
    auto& s = out.base;
    auto& f = out.figures;
    s.index = index;
    auto files = detail::read_session_files(trace_jsonl, receipts_json, s.artifact_errors);
    const parsed_trace& trace = files.trace;
    const send_receipts& receipts = files.receipts;
    s.admitted = classify_admission(trace.lines, receipts);
    auto& m = s.session;
    m.input_duration_s = c.input_duration_s;
    m.expected_appends = input_packets(c.input_duration_s, c.chunk_s);
    m.appends_sent = receipts.appends.size();
    m.sends = send_lateness(receipts);
    s.send_lateness_p99_s = percentile(m.sends.lateness_s, 0.99);
    auto& errors = m.errors;
    auto add_error = [&](std::string e) {
        if (std::find(errors.begin(), errors.end(), e) == errors.end())
            errors.push_back(std::move(e));
    };
    if (s.admitted.rejected)
        add_error("admission rejected: HTTP 503, retries exhausted");
    for (const auto& e : s.artifact_errors)
        add_error("unreadable session artifacts: " + e);

    realtime_walk walk = walk_realtime_trace(trace.lines, c.protocol);
    f.transcript_deltas = walk.transcript_deltas;
    for (auto& e : walk.server_errors)
        add_error(std::move(e));
    for (auto& e : walk.client_errors)
        add_error(std::move(e));
    for (const auto& e : extra_errors)
        add_error(e);
    const bool readable = !s.admitted.rejected && s.artifact_errors.empty();
    if (readable && s.admitted.admitted)
        for (auto& e : missing_events(walk, m, receipts, c))
            add_error(std::move(e));

    realtime_latencies(f, walk, receipts, c);
    f.output = realtime_output_audio(trace.lines, c.output_sample_rate, c.startup_reserve_s);
    for (const auto& e : f.output.errors)
        add_error(e);

    // The 4.2-style view the table and the SLOs read.
    m.ttfa_s = f.first_audio_from_anchor_s;
    m.gaps_s = f.output.gaps_s;
    m.gap_excess_s = f.output.gap_excess_s;
    m.output_duration_s = f.output.output_duration_s;
    if (f.output.audio_deltas > 0)
        m.underrun = f.output.underrun;
    m.underrun_ratio = f.output.underrun_ratio;
    s.errors = errors;
    s.status = s.admitted.rejected ? session_status::rejected
               : s.errors.empty()  ? session_status::succeeded
                                   : session_status::failed;
    return out;
}

json::object aggregate_realtime_level(std::span<const realtime_level_session> sessions) {
    json::object o;
    std::size_t admitted = 0, rejected = 0, successful = 0;
    std::vector<double> lateness, ttfa, gaps, excess, audio_eou, audio_anchor, text_eou,
        text_anchor, final_eou, rtf;
    underrun_result underrun;
    std::size_t with_underrun = 0;
    double output = 0;
    auto add = [](std::vector<double>& to, const std::optional<double>& v) {
        if (v)
            to.push_back(*v);
    };
    for (const auto& x : sessions) {
        const auto& s = x.base;
        rejected += s.status == session_status::rejected;
        if (!s.admitted.admitted)
            continue;
        ++admitted;
        successful += s.success();
        lateness.insert(lateness.end(), s.session.sends.lateness_s.begin(),
                        s.session.sends.lateness_s.end());
        const auto& f = x.figures;
        add(ttfa, f.first_audio_from_anchor_s);
        gaps.insert(gaps.end(), f.output.gaps_s.begin(), f.output.gaps_s.end());
        excess.insert(excess.end(), f.output.gap_excess_s.begin(), f.output.gap_excess_s.end());
        underrun.count += f.output.underrun.count;
        underrun.total_s += f.output.underrun.total_s;
        underrun.worst_s = std::max(underrun.worst_s, f.output.underrun.worst_s);
        with_underrun += f.output.underrun.count > 0;
        output += f.output.output_duration_s;
        add(audio_eou, f.first_audio_from_utterance_end_s);
        add(audio_anchor, f.first_audio_from_anchor_s);
        add(text_eou, f.first_transcript_from_utterance_end_s);
        add(text_anchor, f.first_transcript_from_anchor_s);
        add(final_eou, f.final_transcript_from_utterance_end_s);
        add(rtf, f.real_time_factor);
    }
    o["attempted_sessions"] = sessions.size();
    o["admitted_sessions"] = admitted;
    o["rejected_sessions"] = rejected;
    o["successful_sessions"] = successful;
    o["send_lateness_s"] = distribution_json(std::move(lateness));
    o["ttfa_s"] = distribution_json(std::move(ttfa));
    o["output_gap_s"] = distribution_json(std::move(gaps));
    o["output_gap_excess_s"] = distribution_json(std::move(excess));
    o["output_duration_s"] = output;
    o["underrun_sessions"] = with_underrun;
    o["underrun_count"] = underrun.count;
    o["underrun_total_s"] = underrun.total_s;
    o["underrun_worst_s"] = underrun.worst_s;
    o["underrun_ratio"] =
        output > 0 ? json::value(underrun.total_s / output) : json::value(nullptr);
    o["realtime"] = json::object{
        {"first_audio_from_utterance_end_s", distribution_json(std::move(audio_eou))},
        {"first_audio_from_anchor_s", distribution_json(std::move(audio_anchor))},
        {"first_transcript_from_utterance_end_s", distribution_json(std::move(text_eou))},
        {"first_transcript_from_anchor_s", distribution_json(std::move(text_anchor))},
        {"final_transcript_from_utterance_end_s", distribution_json(std::move(final_eou))},
        {"real_time_factor", distribution_json(std::move(rtf))}};
    return o;
}

} // namespace pacer::metrics

// The native mock's realtime protocols (native_mock_options::realtime): vllm-realtime's
// transcription, and openai-realtime's responses, server VAD, cancellation and truncation.

#include <pacer/core/base64.hpp>

#include "native_session.hpp"
#include <algorithm>
#include <cmath>

namespace pacer::server::detail {

// openai-realtime and vllm-realtime (see native_mock_options::realtime).
void native_session::on_realtime(std::string_view type, const protocol::event_scanner& scanner,
                                 std::string_view frame, time_point now) {
    if (*options_.realtime == protocol::realtime_protocol::vllm_omni) {
        on_omni(type, scanner, frame, now);
        return;
    }
    if (*options_.realtime == protocol::realtime_protocol::openai) {
        on_openai(type, scanner, frame, now);
        return;
    }
    if (type == "input_audio_buffer.append") {
        ++shard_.appends;
        input_bytes_ += scanner.audio_decoded_size();
        while ((units_done_ + 1) * protocol::packet_bytes <= input_bytes_) {
            const auto [note, due] = compute(now);
            auto& job = queue(due);
            event(job.frames, R"("type":"transcription.delta","delta":"w{} ")", units_done_);
            transcript_ += fmt::format("w{} ", units_done_);
            job.units.push_back(note);
            ++units_done_;
            count_unit();
        }
    } else if (type == "input_audio_buffer.commit") {
        protocol::frame_parser parser; // commits are rare: a DOM is affordable here
        if (parser.parse(frame) != nullptr)
            return;
        const auto* f = parser.object().if_contains("final");
        if (f && f->is_bool() && f->get_bool())
            event(queue(now + unit_delay()).frames,
                  R"("type":"transcription.done","text":"{}","usage":{{}})", transcript_);
    }
}

void native_session::on_openai(std::string_view type, const protocol::event_scanner& scanner,
                               std::string_view frame, time_point now) {
    if (type == "session.update") {
        protocol::frame_parser parser; // rare: a DOM
        if (parser.parse(frame) == nullptr)
            configure_turns(parser.object());
        const std::string detection =
            vad_ ? fmt::format(R"({{"type":"server_vad","silence_duration_ms":{}}})",
                               vad_silence_ms_)
                 : std::string("null");
        event(immediate_,
              R"("type":"session.updated","session":{{"id":"{}","object":)"
              R"("realtime.session","type":"realtime","model":"pacer-native-mock",)"
              R"("output_modalities":["audio"],"audio":{{"input":{{"format":{{"type":)"
              R"("audio/pcm","rate":24000}},"turn_detection":{}}},"output":{{"format":)"
              R"({{"type":"audio/pcm","rate":24000}}}}}}}})",
              session_id_, detection);
    } else if (type == "input_audio_buffer.append") {
        ++shard_.appends;
        input_bytes_ += scanner.audio_decoded_size();
        while ((units_done_ + 1) * protocol::openai_packet_bytes <= input_bytes_) {
            ++units_done_;
            count_unit();
        }
        if (vad_)
            listen(frame, now);
    } else if (type == "input_audio_buffer.commit") {
        committed(immediate_);
    } else if (type == "response.create") {
        start_response(now);
    } else if (type == "response.cancel") {
        if (!cancel_response(now, "client_cancelled")) {
            // As the API answers a cancel with nothing to cancel.
            const auto id = scanner.event_id();
            event(immediate_,
                  R"("type":"error","error":{{"type":"invalid_request_error","code":)"
                  R"("response_cancel_not_active","message":"Cancellation failed: no )"
                  R"(active response found","param":null,"event_id":{}}})",
                  id.empty() ? std::string("null") : fmt::format(R"("{}")", id));
        }
    } else if (type == "conversation.item.truncate") {
        protocol::frame_parser parser;
        if (parser.parse(frame) != nullptr)
            return;
        const auto& o = parser.object();
        const auto* item = o.if_contains("item_id");
        const auto* end = o.if_contains("audio_end_ms");
        ++shard_.truncates;
        event(immediate_,
              R"("type":"conversation.item.truncated","item_id":"{}","content_index":0,)"
              R"("audio_end_ms":{})",
              item && item->is_string() ? std::string_view(item->get_string()) : "",
              end && end->is_number() ? end->to_number<std::uint64_t>() : 0);
    }
}

// session.update's turn detection: GA `session.audio.input.turn_detection`, or the beta's
// `session.turn_detection`. Absent: unchanged (server VAD, as OpenAI's default); null:
// manual turns; an object: server VAD, with its `silence_duration_ms` if it has one.
void native_session::configure_turns(const boost::json::object& update) {
    const auto* session = update.if_contains("session");
    if (session == nullptr || !session->is_object())
        return;
    const boost::json::value* td = session->get_object().if_contains("turn_detection");
    if (const auto* audio = session->get_object().if_contains("audio"); audio && audio->is_object())
        if (const auto* in = audio->get_object().if_contains("input"); in && in->is_object())
            if (const auto* t = in->get_object().if_contains("turn_detection"))
                td = t;
    if (td == nullptr)
        return;
    vad_ = td->is_object();
    if (vad_)
        if (const auto* ms = td->get_object().if_contains("silence_duration_ms");
            ms && ms->is_number())
            vad_silence_ms_ = ms->to_number<std::uint64_t>();
    detector_.reset();
}

// Server VAD on an append's PCM: speech_started (cancelling a response under way) and
// speech_stopped, then the commit and a response, as OpenAI's server VAD does.
void native_session::listen(std::string_view frame, time_point now) {
    protocol::frame_parser parser;
    if (parser.parse(frame) != nullptr)
        return;
    const auto* audio = parser.object().if_contains("audio");
    if (audio == nullptr || !audio->is_string())
        return;
    const auto pcm = base64_decode(audio->get_string());
    if (!pcm)
        return;
    if (!detector_)
        detector_.emplace(detail::speech_detector_options{
            options_.vad_threshold_dbfs, vad_silence_ms_, protocol::openai_sample_rate});
    vad_events_.clear();
    detector_->feed(*pcm, vad_events_);
    // A window is judged once it has played out, 80 ms after its packet began to arrive,
    // as a server listening in real time does (the client's turn ends there too).
    using kind = detail::speech_detector::event::kind;
    const time_point decided = now + std::chrono::milliseconds(detail::speech_detector::window_ms);
    for (const auto& e : vad_events_) {
        std::string frames;
        if (e.what == kind::started) {
            ++shard_.speech_started;
            event(frames,
                  R"("type":"input_audio_buffer.speech_started","audio_start_ms":{},)"
                  R"("item_id":"item_input_{}")",
                  e.audio_ms, commits_);
            if (cancel_response(decided, "turn_detected", &frames))
                ++shard_.vad_cancels;
            else
                queue(decided).frames = std::move(frames);
        } else {
            ++shard_.speech_stopped;
            event(frames,
                  R"("type":"input_audio_buffer.speech_stopped","audio_end_ms":{},)"
                  R"("item_id":"item_input_{}")",
                  e.audio_ms, commits_);
            committed(frames);
            queue(decided).frames = std::move(frames);
            start_response(decided);
        }
    }
}

// input_audio_buffer.committed: the user item the commit makes, after the previous one.
void native_session::committed(std::string& out) {
    const std::string previous =
        commits_ == 0 ? "null" : fmt::format(R"("item_input_{}")", commits_ - 1);
    event(out,
          R"("type":"input_audio_buffer.committed","previous_item_id":{},)"
          R"("item_id":"item_input_{}")",
          previous, commits_);
    ++commits_;
}

// A response of `reply` audio: response.created and the first delta after the capacity
// model's latency, the next deltas 80 ms apart (behind any response still queued), then
// output_audio.done and response.done completed with the last.
void native_session::start_response(time_point now) {
    const std::uint64_t r = replies_++;
    const auto step = std::chrono::milliseconds(80);
    const auto deltas = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::ceil(options_.reply.count() / 80.0)));
    time_point first{};
    for (std::uint64_t k = 0; k < deltas; ++k) {
        auto& job = queue(k == 0 ? now + unit_delay() + penalty(now, unit_delay())
                                 : first + step * static_cast<std::int64_t>(k));
        if (k == 0)
            first = job.due;
        job.response = r + 1;
        if (k == 0)
            response_created(job.frames, fmt::format("response_{}", r));
        event(job.frames,
              R"("type":"response.output_audio.delta","response_id":"response_{}",)"
              R"("item_id":"item_{}","output_index":0,"content_index":0,"delta":"{}")",
              r, r, audio_.base64(protocol::openai_packet_bytes / 2, 0));
        event(job.frames,
              R"("type":"response.output_audio_transcript.delta","response_id":)"
              R"("response_{}","item_id":"item_{}","delta":"w{} ")",
              r, r, k);
        if (k + 1 == deltas) {
            job.completes = true;
            event(job.frames,
                  R"("type":"response.output_audio.done","response_id":"response_{}",)"
                  R"("item_id":"item_{}","output_index":0,"content_index":0)",
                  r, r);
            event(job.frames,
                  R"("type":"response.done","response":{{"id":"response_{}","object":)"
                  R"("realtime.response","status":"completed","output":[{{"id":"item_{}",)"
                  R"("object":"realtime.item","type":"message","role":"assistant"}}],)"
                  R"("usage":{{}}}})",
                  r, r);
        }
    }
}

// Cancels the responses under way: nothing of theirs due after now + the reaction time
// leaves, and each gets response.done cancelled then, behind `lead` (frames due at `now`,
// left alone when nothing is under way). False when none is under way (every
// response.done already written).
bool native_session::cancel_response(time_point now, std::string_view reason, std::string* lead) {
    const time_point cutoff = now + std::chrono::duration_cast<duration>(options_.cancel_reaction);
    bool active = false;
    std::vector<std::uint64_t> cut;
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->response == 0) {
            ++it;
            continue;
        }
        active = true;
        if (it->due <= cutoff) {
            ++it;
            continue;
        }
        if (std::find(cut.begin(), cut.end(), it->response) == cut.end())
            cut.push_back(it->response);
        it = pending_.erase(it);
    }
    if (!active)
        return false;
    if (lead != nullptr)
        queue(now).frames = std::move(*lead);
    for (const auto r : cut) {
        event(queue(cutoff).frames,
              R"("type":"response.done","response":{{"id":"response_{}","object":)"
              R"("realtime.response","status":"cancelled","status_details":{{"type":)"
              R"("cancelled","reason":"{}"}},"output":[],"usage":{{}}}})",
              r - 1, reason);
        ++shard_.cancelled;
        ++shard_.window.responses_cancelled;
    }
    return active;
}

} // namespace pacer::server::detail

// The native mock's vllm-omni replies (native_session.hpp): the session object, responses
// (response.created, response.speak, audio and transcript deltas with the cumulative
// `metadata.audio_duration_ms`, response.done), listen decisions, cancellation and errors.

#include "native_session.hpp"
#include <algorithm>
#include <cmath>

namespace pacer::server::detail {

namespace {

constexpr std::uint64_t output_rate = 24000; // Hz of the PCM16 the mock speaks

} // namespace

// session.created / session.updated: the session object of vLLM-Omni's realtime projection,
// with MiniCPM-o 4.5's capabilities (1,000 ms units, barge-in; no resume in the mock).
void native_session::omni_session(std::string& out, std::vector<std::uint32_t>& slots,
                                  std::string_view type) {
    const std::string detection =
        vad_ ? fmt::format(R"({{"type":"server_vad","silence_duration_ms":{}}})", vad_silence_ms_)
             : std::string("null");
    omni_event(out, slots,
               R"("type":"{}","attachment_generation":1,"session":{{"object":)"
               R"("realtime.session","type":"realtime","id":"{}","model":{},"state":"open",)"
               R"("turn_state":"idle","epoch":{},"turn_id":{},"modalities":["audio","text"],)"
               R"("output_modalities":["audio","text"],"input_audio_format":"pcm16",)"
               R"("output_audio_format":"pcm16","audio":{{"input":{{"format":{{"type":)"
               R"("audio/pcm","rate":16000}},"sample_rate_hz":16000}},"output":{{"format":)"
               R"({{"type":"audio/pcm","rate":{}}},"sample_rate_hz":{}}}}},"turn_detection":{},)"
               R"("overlap_policy":"{}","playback_commit_policy":"{}","capabilities":{{)"
               R"("implementation_level":"model_native_duplex","supports_input_append":true,)"
               R"("supports_barge_in":true,"supports_session_resume":false,)"
               R"("supports_session_lease":true,"supports_multi_session":true,)"
               R"("supports_audio_truncate":true,"chunk_period_ms":1000,"input_modes":)"
               R"(["append_audio_chunk"]}}}})",
               type, session_id_, omni_model_, omni_epoch_, commits_, output_rate, output_rate,
               detection, vad_ ? "barge_in_on_speech" : "listen_only",
               omni_ack_only_ ? "ack_only" : "commit_all_on_done");
}

// A commit answered: every `listen_every`th with response.listen (the model keeps listening),
// the others with a response.
void native_session::omni_answer(time_point now) {
    ++omni_answered_;
    if (options_.listen_every != 0 && omni_answered_ % options_.listen_every == 0) {
        ++shard_.listens;
        omni_job(queue(std::max(now + unit_delay(), omni_unit_due_)),
                 R"("type":"response.listen","session_id":"{}","epoch":{},"response":{{)"
                 R"("object":"realtime.response","status":"listening","metadata":{{"reason":)"
                 R"("model_listen"}}}})",
                 session_id_, omni_epoch_);
        return;
    }
    omni_start(now);
}

// The `playback` ledger object of a response: generated and sent as planned, played and
// committed as acknowledged.
void native_session::omni_playback(std::string& out, std::uint64_t generated, std::uint64_t played,
                                   std::uint64_t committed) {
    fmt::format_to(std::back_inserter(out),
                   R"({{"generated_ms":{},"sent_ms":{},"played_ms":{},"committed_ms":{}}})",
                   generated, generated, played, committed);
}

// A response of `reply` audio after the capacity model's latency (behind whatever is queued):
// response.created and response.speak with the first delta, the next deltas paced in real time
// by their length, each an audio delta (24 kHz PCM16, metadata.audio_duration_ms cumulative)
// and its transcript delta; the last with the .done events and response.done completed.
void native_session::omni_start(time_point now) {
    const std::uint64_t r = replies_++;
    const auto total = static_cast<std::uint64_t>(options_.reply.count());
    const auto step_ms =
        std::max<std::uint64_t>(1, static_cast<std::uint64_t>(options_.reply_delta.count()));
    const std::uint64_t deltas = std::max<std::uint64_t>(1, (total + step_ms - 1) / step_ms);
    const std::string_view audio =
        options_.beta_audio_names ? "response.audio" : "response.output_audio";
    const std::string_view text = options_.beta_audio_names ? "response.audio_transcript"
                                                            : "response.output_audio_transcript";
    time_point first{};
    std::uint64_t sent = 0;
    for (std::uint64_t k = 0; k < deltas; ++k) {
        auto& job =
            queue(k == 0 ? std::max(now + unit_delay() + penalty(now, unit_delay()), omni_unit_due_)
                         : first + std::chrono::milliseconds(static_cast<std::int64_t>(sent)));
        const std::uint64_t ms = std::min(step_ms, total - sent);
        if (k == 0) {
            first = job.due;
            omni_job(job,
                     R"("type":"response.created","response_id":"resp_{}","response":{{"id":)"
                     R"("resp_{}","object":"realtime.response","status":"in_progress",)"
                     R"("status_details":null,"output":[],"modalities":["audio","text"]}})",
                     r, r);
            omni_job(job,
                     R"("type":"response.speak","response_id":"resp_{}","item_id":"item_resp_{}",)"
                     R"("output_index":0,"content_index":0,"metadata":{{"session_id":"{}",)"
                     R"("epoch":{},"model_speak":true}})",
                     r, r, session_id_, omni_epoch_);
        }
        job.response = r + 1;
        sent += ms;
        omni_job(job,
                 R"("type":"{}.delta","response_id":"resp_{}","item_id":"item_resp_{}",)"
                 R"("output_index":0,"content_index":0,"delta":"{}","format":"pcm16",)"
                 R"("sample_rate_hz":{},"metadata":{{"session_id":"{}","epoch":{},)"
                 R"("model_speak":true,"end_of_turn":{},"audio_duration_ms":{}}})",
                 audio, r, r, audio_.base64(ms * output_rate / 1000, 0), output_rate, session_id_,
                 omni_epoch_, k + 1 == deltas, sent);
        omni_job(job,
                 R"("type":"{}.delta","response_id":"resp_{}","item_id":"item_resp_{}",)"
                 R"("output_index":0,"content_index":0,"delta":"w{} ")",
                 text, r, r, k);
        if (k + 1 < deltas)
            continue;
        job.completes = true;
        omni_job(job,
                 R"("type":"{}.done","response_id":"resp_{}","item_id":"item_resp_{}",)"
                 R"("output_index":0,"content_index":0)",
                 audio, r, r);
        omni_job(job,
                 R"("type":"{}.done","response_id":"resp_{}","item_id":"item_resp_{}",)"
                 R"("output_index":0,"content_index":0,"transcript":"{} words")",
                 text, r, r, deltas);
        std::string playback;
        omni_playback(playback, total, 0, 0);
        omni_job(job,
                 R"("type":"response.done","response_id":"resp_{}","response":{{"id":)"
                 R"("resp_{}","object":"realtime.response","status":"completed",)"
                 R"("status_details":null,"output":[{{"id":"item_resp_{}","object":)"
                 R"("realtime.item","type":"message","role":"assistant","status":)"
                 R"("completed"}}],"metadata":{{"type":"response.done","session_id":"{}",)"
                 R"("response_id":"resp_{}","epoch":{},"playback":{}}}}})",
                 r, r, r, session_id_, r, omni_epoch_, playback);
        omni_responses_.push_back(
            omni_response{total, deltas, job.due, omni_answered_, 0, 0, false, false});
    }
}

// Cancels the response being generated: nothing of it due after now + the reaction time
// leaves; then (after output_audio_buffer.cleared when `cleared`) response.done cancelled
// with `reason`. Its audio becomes what was sent, it keeps nothing busy, and the epoch
// advances. The response's number, or nullopt when none is being generated.
std::optional<std::uint64_t> native_session::omni_cancel(time_point now, std::string_view reason,
                                                         bool cleared) {
    if (omni_responses_.empty() || omni_responses_.back().released)
        return std::nullopt;
    const std::uint64_t r = omni_responses_.size() - 1;
    const time_point cutoff = now + std::chrono::duration_cast<duration>(options_.cancel_reaction);
    std::uint64_t erased = 0;
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->response == r + 1 && it->due > cutoff) {
            it = pending_.erase(it);
            ++erased;
        } else {
            ++it;
        }
    }
    auto& resp = omni_responses_.back();
    if (erased == 0)
        return std::nullopt; // its response.done is out (or leaves before the cutoff)
    const auto step_ms =
        std::max<std::uint64_t>(1, static_cast<std::uint64_t>(options_.reply_delta.count()));
    resp.audio_ms = std::min(resp.audio_ms, (resp.deltas - erased) * step_ms);
    resp.released = true;
    ++omni_epoch_;
    auto& job = queue(cutoff);
    resp.done_due = job.due;
    if (cleared)
        omni_job(job, R"("type":"output_audio_buffer.cleared","response_id":"resp_{}")", r);
    omni_job(job,
             R"("type":"response.done","response_id":"resp_{}","response":{{"id":"resp_{}",)"
             R"("object":"realtime.response","status":"cancelled","status_details":{{"type":)"
             R"("cancelled","reason":"{}"}},"output":[],"metadata":{{"type":"response.done",)"
             R"("session_id":"{}","response_id":"resp_{}","epoch":{}}}}})",
             r, r, reason, session_id_, r, omni_epoch_);
    ++shard_.cancelled;
    ++shard_.window.responses_cancelled;
    return r;
}

// An `error` in the Realtime shape: the error's class, vLLM-Omni's code, the message, the
// client event's id (null without one) and the parameter at fault (null without one).
void native_session::omni_error(std::string_view code, std::string_view message,
                                std::string_view event_id, std::string_view param,
                                std::string_view type) {
    auto quoted = [](std::string_view s) {
        return s.empty() ? std::string("null") : fmt::format(R"("{}")", s);
    };
    omni_now(R"("type":"error","error":{{"type":"{}","code":"{}","message":"{}",)"
             R"("event_id":{},"param":{}}})",
             type, code, message, quoted(event_id), quoted(param));
}

} // namespace pacer::server::detail

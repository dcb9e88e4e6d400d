// The native mock's vllm-omni protocol (vLLM-Omni's full-duplex `/v1/realtime?duplex=1`,
// docs/native-mock.md "vllm-omni"): the session's opening, its input in 1,000 ms units, server
// VAD, commits and their deferral, the playback ledger, barge-in and the close. The responses
// and the events they are made of are omni_replies.cpp's.

#include <pacer/core/base64.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include "native_session.hpp"
#include <algorithm>
#include <charconv>

namespace pacer::server::detail {

namespace {

// MiniCPM-o's model unit: the first closes once 1,030 ms of input arrived, each next one
// 1,000 ms later.
constexpr std::uint64_t first_unit_ms = 1030, unit_period_ms = 1000;

constexpr std::string_view ref_audio_prefix = "data:audio/wav;base64,";

const boost::json::value* member(const boost::json::object& o, std::string_view key) {
    return o.if_contains(key);
}

std::optional<std::string_view> string_member(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || !v->is_string())
        return std::nullopt;
    return std::string_view(v->get_string());
}

std::optional<std::uint64_t> ms_member(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || !v->is_number())
        return std::nullopt;
    const double ms = v->to_number<double>();
    if (!(ms >= 0 && ms < 1e15))
        return std::nullopt;
    return static_cast<std::uint64_t>(ms);
}

} // namespace

// On accept: over capacity, the real server's error and the close; otherwise the query's
// `model` and `autostart` (0: the client's session.update opens the session), `resume` (the
// mock keeps no detached sessions: expired) and `duplex=0` (no turn-based handler here).
void native_session::omni_open(const session_start& start) {
    vad_ = false; // turn_detection null: the MiniCPM-o preset's default
    if (start.over_capacity) {
        completed_ = true; // never a session of the mock's
        ++shard_.capacity_errors;
        omni_error(
            "resource_exhausted",
            fmt::format("duplex_session_capacity_exhausted: limit={}", options_.max_sessions), {},
            {}, "rate_limit_error");
        queue(clock::now()).after = then::close;
        return;
    }
    if (auto model = transport::query_parameter(start.target, "model"); model && !model->empty())
        omni_model_ = boost::json::serialize(boost::json::string(*model));
    const auto duplex = transport::query_parameter(start.target, "duplex");
    if (duplex && (*duplex == "0" || *duplex == "false" || *duplex == "off")) {
        omni_now(R"("type":"error","error":"Realtime API is not available","code":)"
                 R"("realtime_unavailable")");
        queue(clock::now()).after = then::close;
        return;
    }
    if (transport::query_parameter(start.target, "resume")) {
        omni_now(R"("type":"error","error":"Unknown or expired duplex session","code":)"
                 R"("session_resume_expired")");
        queue(clock::now()).after = then::close;
        return;
    }
    const auto autostart = transport::query_parameter(start.target, "autostart");
    if (autostart && *autostart == "0")
        return; // the first frame opens it
    omni_created_ = true;
    omni_session(immediate_, immediate_slots_, "session.created");
    omni_session(immediate_, immediate_slots_, "session.updated");
}

void native_session::on_omni(std::string_view type, const protocol::event_scanner& scanner,
                             std::string_view frame, time_point now) {
    const auto id = scanner.event_id();
    if (!omni_created_ && type != "session.update") {
        // autostart=0: the session does not exist until session.update (or session.resume).
        if (type == "session.resume")
            omni_now(R"("type":"error","error":"Unknown or expired duplex session","code":)"
                     R"("session_resume_expired")");
        else
            omni_now(R"("type":"error","error":"the first event must be session.update or )"
                     R"(session.resume","code":"bad_event")");
        queue(now).after = then::close;
        stop_reading_ = true;
        return;
    }
    if (type == "input_audio_buffer.append")
        omni_append(scanner, frame, now);
    else if (type == "playback.ack" || type == "audio.playback_ack")
        omni_ack(frame, id);
    else if (type == "session.event_ack")
        ++shard_.event_acks;
    else if (type == "session.heartbeat") {
        ++shard_.heartbeats;
        omni_now(R"("type":"session.heartbeat_ack","session_id":"{}")", session_id_);
    } else if (type == "input_audio_buffer.commit" || type == "input.commit")
        omni_commit(frame, id, now);
    else if (type == "response.create") {
        if (omni_answered_ + omni_deferred_ >= commits_)
            omni_error("response_create_without_input",
                       "response.create requires committed audio input", id);
        else if (omni_generating(now) || omni_unplayed())
            ++omni_deferred_;
        else
            omni_answer(now);
    } else if (type == "output_audio_buffer.clear")
        omni_clear(now);
    else if (type == "response.cancel") {
        if (!omni_cancel(now, "client_cancelled", false))
            omni_error("response_not_active", "no active response to cancel", id);
        omni_release(now);
    } else if (type == "input_audio_buffer.clear") {
        omni_uncommitted_ = 0;
        omni_now(R"("type":"input_audio_buffer.cleared")");
    } else if (type == "session.update")
        omni_update(frame, id);
    else if (type == "session.close" || type == "close_session" || type == "close")
        omni_close();
}

// session.update: the first opens the session (autostart=0), later ones reconfigure it. The
// mock reads `model`, `turn_detection`, `playback_commit_policy` and `ref_audio`.
void native_session::omni_update(std::string_view frame, std::string_view event_id) {
    protocol::frame_parser parser;
    const boost::json::object* session = nullptr;
    if (parser.parse(frame) == nullptr)
        if (const auto* s = member(parser.object(), "session"); s && s->is_object())
            session = &s->get_object();
    const boost::json::object empty;
    const auto& o = session ? *session : empty;
    const auto ref = string_member(o, "ref_audio");
    std::string_view refused, why;
    if (ref && !(ref->starts_with(ref_audio_prefix) && ref->size() > ref_audio_prefix.size())) {
        refused = "unsupported_ref_audio_path";
        why = "ref_audio must be a data:audio/wav;base64 URL";
    } else if (options_.require_ref_audio && !ref && !omni_ref_audio_) {
        refused = "ref_audio_required";
        why = "Native duplex audio output requires ref_audio";
    }
    if (!refused.empty()) {
        omni_error(refused, why, event_id, "ref_audio");
        if (!omni_created_) { // the handshake failed: no session
            queue(clock::now()).after = then::close;
            stop_reading_ = true;
        }
        return;
    }
    omni_ref_audio_ = omni_ref_audio_ || ref.has_value();
    if (auto model = string_member(o, "model"); model && !model->empty())
        omni_model_ = boost::json::serialize(boost::json::string(*model));
    if (auto policy = string_member(o, "playback_commit_policy"))
        omni_ack_only_ = *policy == "ack_only";
    if (session != nullptr)
        configure_turns(parser.object());
    if (!omni_created_) {
        omni_created_ = true;
        omni_session(immediate_, immediate_slots_, "session.created");
    }
    omni_session(immediate_, immediate_slots_, "session.updated");
}

// An append of PCM16 at 16 kHz, any size: units close at 1,030 ms and every 1,000 ms after,
// each through the capacity model like the other protocols' (no frames answer it: the model
// listens), and server VAD reads the PCM when it is on.
void native_session::omni_append(const protocol::event_scanner& scanner, std::string_view frame,
                                 time_point now) {
    ++shard_.appends;
    const auto bytes = scanner.audio_decoded_size();
    input_bytes_ += bytes;
    omni_uncommitted_ += bytes;
    while (input_bytes_ >= (first_unit_ms + unit_period_ms * units_done_) * input_bytes_per_ms) {
        // No frames answer a unit: its modelled lag is recorded at once, and a reply cannot
        // leave before the unit it follows is done. (A job in the queue would wait behind the
        // paced reply audio, and whatever follows would wait behind it.)
        const auto [note, due] = compute(now);
        output_job unit{due, {}, {note}, then::nothing, 0, false, {}};
        record(unit, due);
        omni_unit_due_ = std::max(omni_unit_due_, due);
        ++units_done_;
        count_unit();
    }
    if (vad_ || options_.model_turns)
        omni_vad(frame, now);
}

// Server VAD on an append's PCM: speech over a response cancels it (overlap.decision, reason
// turn_detected); the end of speech commits the turn, as a commit does.
void native_session::omni_vad(std::string_view frame, time_point now) {
    protocol::frame_parser parser;
    if (parser.parse(frame) != nullptr)
        return;
    const auto audio = string_member(parser.object(), "audio");
    if (!audio)
        return;
    const auto pcm = base64_decode(*audio);
    if (!pcm)
        return;
    if (!detector_)
        detector_.emplace(detail::speech_detector_options{
            options_.vad_threshold_dbfs, vad_silence_ms_, protocol::input_sample_rate});
    vad_events_.clear();
    detector_->feed(*pcm, vad_events_);
    using kind = detail::speech_detector::event::kind;
    const bool model = !vad_; // --model-turns: the model decides, and says nothing of speech
    for (const auto& e : vad_events_) {
        if (model) {
            if (e.what == kind::stopped) {
                omni_uncommitted_ = 0;
                omni_turn(now, omni_deferred_ > 0 || omni_generating(now) || omni_unplayed());
            }
            continue;
        }
        if (e.what == kind::started) {
            ++shard_.speech_started;
            omni_now(R"("type":"input_audio_buffer.speech_started","audio_start_ms":{},)"
                     R"("item_id":"item_input_{}")",
                     e.audio_ms, commits_);
            if (omni_generating(now) || omni_unplayed()) {
                omni_now(R"("type":"overlap.decision","session_id":"{}","epoch":{},"policy":)"
                         R"("barge_in_on_speech","action":"barge_in","reason":"turn_detected")",
                         session_id_, omni_epoch_);
                if (omni_cancel(now, "turn_detected", true))
                    ++shard_.vad_cancels;
                omni_release(now);
            }
        } else {
            ++shard_.speech_stopped;
            omni_now(R"("type":"input_audio_buffer.speech_stopped","audio_end_ms":{},)"
                     R"("item_id":"item_input_{}")",
                     e.audio_ms, commits_);
            omni_commit({}, {}, now);
        }
    }
}

// A commit (the client's, or server VAD's at the end of speech; `frame` empty then): the user
// item, then a response, or a listen decision, or, while the session is busy, the deferral
// (`response_create_deferred`) until it is free.
void native_session::omni_commit(std::string_view frame, std::string_view event_id,
                                 time_point now) {
    bool create = true, silence = false;
    if (!frame.empty()) {
        protocol::frame_parser parser;
        if (parser.parse(frame) == nullptr) {
            const auto& o = parser.object();
            const auto* rc = member(o, "response_create");
            create = !(rc && rc->is_bool() && !rc->get_bool());
            const auto* speech = member(o, "is_speech");
            silence = speech && speech->is_bool() && !speech->get_bool();
        }
    }
    if (silence) { // a silence declaration: the model keeps listening
        ++shard_.listens;
        omni_now(R"("type":"response.listen","session_id":"{}","epoch":{},"response":{{"object":)"
                 R"("realtime.response","status":"listening","metadata":{{"reason":)"
                 R"("silence_commit"}}}})",
                 session_id_, omni_epoch_);
        return;
    }
    if (omni_uncommitted_ == 0) {
        omni_error("input_audio_buffer_empty",
                   "input_audio_buffer.commit requires a non-empty input audio buffer.", event_id);
        return;
    }
    omni_uncommitted_ = 0;
    const std::uint64_t c = commits_++;
    create = create && !(options_.model_turns && !vad_); // the model has decided already
    const bool busy = create && (omni_deferred_ > 0 || omni_generating(now) || omni_unplayed());
    const std::string previous = c == 0 ? "null" : fmt::format(R"("item_input_{}")", c - 1);
    omni_now(R"("type":"input_audio_buffer.committed","previous_item_id":{},"item_id":)"
             R"("item_input_{}","event":{{"type":"input.committed","session_id":"{}",)"
             R"("turn_id":{},"epoch":{},"response_create_deferred":{}}})",
             previous, c, session_id_, c + 1, omni_epoch_, busy);
    if (create)
        omni_turn(now, busy);
}

// A turn to answer: at once, or, while the session is busy, deferred (counted) until it is
// free.
void native_session::omni_turn(time_point now, bool busy) {
    if (!busy) {
        omni_answer(now);
        return;
    }
    ++shard_.deferred_commits;
    ++shard_.window.deferred_commits;
    if (omni_deferred_ == 0 && !omni_unplayed())
        omni_answer(now); // behind the response still generating: queued after its done
    else
        ++omni_deferred_;
}

// playback.ack: the cumulative position the client has played of a response (the ledger of
// vLLM-Omni's playback_ledger.py, as far as the mock keeps one), answered by
// playback.acknowledged, or by the error the real server gives.
void native_session::omni_ack(std::string_view frame, std::string_view event_id) {
    protocol::frame_parser parser;
    if (parser.parse(frame) != nullptr)
        return;
    const auto& o = parser.object();
    const auto played =
        ms_member(o, "played_ms") ? ms_member(o, "played_ms") : ms_member(o, "audio_ms");
    if (!played) {
        omni_error("bad_event", "playback.ack requires played_ms", event_id);
        return;
    }
    const std::uint64_t committed = ms_member(o, "committed_ms").value_or(*played);
    auto response = string_member(o, "response_id").value_or("");
    auto item = string_member(o, "item_id").value_or("");
    std::string implied;
    if (response.empty() && item.starts_with("item_"))
        response = item.substr(5);
    if (response.empty() && item.empty() && !omni_responses_.empty()) {
        implied = fmt::format("resp_{}", omni_responses_.size() - 1);
        response = implied;
    }
    const std::string expected = fmt::format("item_{}", response);
    auto refuse = [&](std::string_view code, std::string_view why, std::uint64_t& count) {
        ++count;
        ++shard_.window.playback_ack_errors;
        omni_error(code, why, event_id);
    };
    if (!item.empty() && item != expected)
        return refuse("playback_item_mismatch",
                      "playback.ack item_id must match item_<response_id>.", shard_.ack_mismatch);
    std::uint64_t r = 0;
    const bool known =
        response.starts_with("resp_") &&
        std::from_chars(response.data() + 5, response.data() + response.size(), r).ptr ==
            response.data() + response.size() &&
        response.size() > 5 && r < omni_responses_.size();
    if (!known)
        return refuse("playback_item_not_found",
                      fmt::format("No assistant response item is registered for {}.", response),
                      shard_.ack_not_found);
    auto& resp = omni_responses_[r];
    if (!resp.acked && omni_answered_ > resp.answered)
        return refuse("playback_ack_too_late",
                      "playback.ack arrived after a later user input was committed.",
                      shard_.ack_too_late);
    resp.acked = true;
    resp.played_ms = std::max(resp.played_ms, *played);
    resp.committed_ms = std::max(resp.committed_ms, committed);
    ++shard_.playback_acks;
    ++shard_.window.playback_acks;
    std::string playback;
    omni_playback(playback, resp.audio_ms, resp.played_ms, resp.committed_ms);
    const auto* truncate = member(o, "truncate");
    omni_now(R"("type":"playback.acknowledged","event":{{"type":"playback.acknowledged",)"
             R"("session_id":"{}","epoch":{},"item_id":"{}","played_ms":{},"committed_ms":{},)"
             R"("truncate":{},"playback":{},"history_committed":{}}})",
             session_id_, omni_epoch_, expected, *played, committed,
             truncate && truncate->is_bool() && truncate->get_bool(), playback,
             resp.played_ms >= resp.audio_ms);
    omni_release(clock::now());
}

// output_audio_buffer.clear: the response under way is cancelled (output_audio_buffer.cleared,
// then response.done cancelled); one fully sent is only cleared. Either way its unplayed audio
// no longer keeps the session busy.
void native_session::omni_clear(time_point now) {
    if (!omni_cancel(now, "barge_in", true)) {
        std::string id = "null";
        if (!omni_responses_.empty()) {
            auto& last = omni_responses_.back();
            if (!last.released) {
                last.released = true;
                ++omni_epoch_;
            }
            id = fmt::format(R"("resp_{}")", omni_responses_.size() - 1);
        }
        omni_now(R"("type":"output_audio_buffer.cleared","response_id":{})", id);
    }
    omni_release(now);
}

// session.close: session.closed (client_close) is the last event; what was still due is not
// sent.
void native_session::omni_close() {
    pending_.clear();
    auto& job = queue(clock::now());
    omni_job(job,
             R"("type":"session.closed","session_id":"{}","epoch":{},"reason":"client_close",)"
             R"("event":{{"type":"session.closed","reason":"client_close"}})",
             session_id_, omni_epoch_);
    job.after = then::close;
    stop_reading_ = true;
    if (!completed_) {
        completed_ = true;
        mock_.host->session_completed();
    }
}

// Whether a response is still being generated at `now` (its response.done not yet due).
bool native_session::omni_generating(time_point now) const {
    return !omni_responses_.empty() && !omni_responses_.back().released &&
           now < omni_responses_.back().done_due;
}

// Under ack_only: whether a response's audio was sent (or is being) but not acknowledged as
// played to its end.
bool native_session::omni_unplayed() const {
    if (!omni_ack_only_)
        return false;
    for (const auto& r : omni_responses_)
        if (!r.released && r.played_ms < r.audio_ms)
            return true;
    return false;
}

// The next deferred commit is answered once nothing keeps the session busy (a response still
// generating only delays it: the new one queues behind).
void native_session::omni_release(time_point now) {
    if (omni_deferred_ > 0 && !omni_unplayed()) {
        --omni_deferred_;
        omni_answer(now);
    }
}

} // namespace pacer::server::detail

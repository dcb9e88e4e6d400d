#include <pacer/protocol/realtime_events.hpp>
#include <pacer/protocol/realtime_session.hpp>

#include <algorithm>
#include <utility>

namespace pacer::protocol {

namespace {

// The phases an abort (an error event, a failed send, another protocol) closes at once: those
// that wait on the server, the gate or the grid. (`Phase` is the machine's own.)
template <class Phase>
bool closes_on_abort(Phase p) {
    return p == Phase::created || p == Phase::updated || p == Phase::gate ||
           p == Phase::streaming || p == Phase::end_of_input || p == Phase::awaiting;
}

} // namespace

realtime_event classify_realtime_event(std::string_view type) {
    using e = realtime_event;
    if (type == "session.created" || type == "transcription_session.created")
        return e::session_created;
    if (type == "session.updated" || type == "transcription_session.updated")
        return e::session_updated;
    if (type == "input_audio_buffer.speech_stopped")
        return e::speech_stopped;
    if (type == "response.output_audio.delta" || type == "response.audio.delta")
        return e::audio_delta;
    if (type == "response.output_audio_transcript.delta" ||
        type == "response.audio_transcript.delta" || type == "response.output_text.delta" ||
        type == "response.text.delta")
        return e::transcript_delta;
    if (type == "response.done")
        return e::response_done;
    if (type == "transcription.delta" ||
        type == "conversation.item.input_audio_transcription.delta")
        return e::transcription_delta;
    if (type == "transcription.done" ||
        type == "conversation.item.input_audio_transcription.completed")
        return e::transcription_done;
    if (type == "rate_limits.updated")
        return e::rate_limits_updated;
    if (type == "error")
        return e::error;
    return e::other;
}

realtime_session::realtime_session(realtime_session_options o) : o_(std::move(o)) {
    if (o_.turn_plan.empty())
        o_.turn_plan.push_back({o_.pcm_bytes, {}, {}});
    expected_ = 0;
    for (std::size_t j = 0; j < o_.turn_plan.size(); ++j) {
        expected_ += schedule::packet_count(o_.turn_plan[j].bytes);
        if (o_.pause_packets && j + 1 < o_.turn_plan.size())
            expected_ += static_cast<std::size_t>(
                (o_.turn_plan[j].pause + schedule::packet_period - duration(1)) /
                schedule::packet_period);
    }
}

void realtime_session::on_event(realtime_event e, time_point now) {
    seen_[static_cast<std::size_t>(e)] = true;
    last_event_at_ = now;
    switch (e) {
    case realtime_event::error:
        aborted_ = true;
        break;
    case realtime_event::speech_stopped:
        if (!speech_stopped_at_ || multi_turn())
            speech_stopped_at_ = now; // multi-turn: the last turn's is the utterance's end
        ++speech_stops_;
        break;
    case realtime_event::audio_delta:
        if (!first_audio_at_)
            first_audio_at_ = now;
        if (grid_)
            grid_->assistant_audio(now);
        break;
    case realtime_event::transcript_delta:
    case realtime_event::transcription_delta:
        if (!first_transcript_at_)
            first_transcript_at_ = now;
        break;
    case realtime_event::response_done:
        ++responses_done_;
        // Multi-turn: the last turn's response, not an earlier one still ending. Manual
        // turns count the responses asked for; server VAD needs the last turn's
        // speech_stopped first (without it, the quiet period ends the session).
        if (input_end_at_ && (!multi_turn() || (o_.turns == realtime_turns::manual
                                                    ? responses_done_ >= responses_asked_
                                                    : speech_stops_ >= o_.turn_plan.size())))
            done_after_input_ = true;
        break;
    case realtime_event::transcription_done:
        if (!final_transcript_at_)
            final_transcript_at_ = now;
        break;
    default:
        break;
    }
}

std::optional<std::string> realtime_session::check_opening(std::string_view type,
                                                           const opening_shape& s) {
    auto wrong = opening_.on_event(type, s);
    if (wrong)
        aborted_ = wrong_protocol_ = true;
    return wrong;
}

void realtime_session::append_sent(time_point start) {
    grid_->sent(start);
    last_append_start_ = start;
    if (interrupt_pending_)
        phase_ = phase::interrupt;
}

realtime_action realtime_session::next(time_point now) {
    using k = realtime_action::kind;
    for (;;) {
        if (receiver_ended_ && phase_ != phase::closed)
            phase_ = phase::closed;
        if (aborted_ && closes_on_abort(phase_))
            phase_ = phase::close;
        switch (phase_) {
        case phase::created:
            if (!has_seen(realtime_event::session_created))
                return {k::wait_event};
            phase_ = phase::updated;
            return {k::send_update};
        case phase::updated:
            // vLLM answers session.update with nothing on success: it goes straight on.
            if (o_.protocol == realtime_protocol::openai &&
                !has_seen(realtime_event::session_updated))
                return {k::wait_event};
            phase_ = o_.gate ? phase::join : phase::stagger;
            if (o_.protocol == realtime_protocol::vllm)
                return {k::send_start};
            continue;
        case phase::join:
            phase_ = phase::gate;
            return {k::join_gate};
        case phase::gate:
            if (!gate_start_)
                return {k::wait_event};
            o_.origin = *gate_start_ + o_.start_offset;
            phase_ = phase::stagger;
            continue;
        case phase::stagger:
            if (!o_.origin)
                if (const auto at = stagger_.until(now))
                    return {k::wait_until, 0, *at};
            grid_.emplace(o_.turn_plan, o_.pause_packets, o_.origin);
            phase_ = phase::streaming;
            continue;
        case phase::streaming: {
            const auto a = grid_->next(now);
            using g = schedule::turn_action::kind;
            if (a.what == g::done) {
                expected_ = grid_->sent_count(); // final now (a barge-in shortens a pause)
                phase_ = phase::end_of_input;
                continue;
            }
            if (a.what == g::wait)
                return {k::wait_until, a.seq, a.scheduled};
            if (a.what == g::turn_end) {
                // (The last turn's commit is the end of input's, below.)
                if (o_.protocol == realtime_protocol::openai &&
                    o_.turns == realtime_turns::manual && a.turn + 1 < turns())
                    phase_ = phase::turn_commit;
                return {k::turn_end, 0, a.scheduled, a.turn};
            }
            // A barge-in over openai-realtime: the interrupt goes right after its packet.
            interrupt_pending_ = a.barge_in && o_.protocol == realtime_protocol::openai;
            interrupt_turn_ = a.turn;
            return {k::send_append, a.seq, a.scheduled, a.turn, a.packet, a.silence, a.barge_in};
        }
        case phase::end_of_input: {
            if (expected_ == 0) {
                phase_ = phase::close;
                continue;
            }
            const auto eos_at = grid_->end_of_turn_at(grid_->turns() - 1);
            if (now < eos_at)
                return {k::wait_until, 0, eos_at};
            input_end_at_ = now;
            if (o_.protocol == realtime_protocol::openai &&
                o_.turns == realtime_turns::server_vad) {
                phase_ = phase::awaiting;
                continue;
            }
            phase_ = o_.protocol == realtime_protocol::openai ? phase::response : phase::awaiting;
            return {k::send_commit};
        }
        case phase::response:
            phase_ = phase::awaiting;
            ++responses_asked_;
            return {k::send_response};
        case phase::turn_commit:
            phase_ = phase::turn_response;
            return {k::send_commit};
        case phase::turn_response:
            phase_ = phase::streaming;
            ++responses_asked_;
            return {k::send_response};
        case phase::interrupt:
            interrupt_pending_ = false;
            phase_ = phase::streaming;
            return {k::send_interrupt, 0, now, interrupt_turn_};
        case phase::awaiting: {
            // vllm: transcription.done; openai: the last response.done (done_after_input_).
            const bool vllm = o_.protocol == realtime_protocol::vllm;
            if (vllm ? has_seen(realtime_event::transcription_done) : done_after_input_) {
                finished_ = true;
                phase_ = phase::close;
                continue;
            }
            if (vllm || o_.turns == realtime_turns::manual)
                return {k::wait_event};
            const time_point quiet_from =
                std::max(*input_end_at_, last_event_at_.value_or(*input_end_at_));
            // Until the quiet period ends, or an event (the last response.done ends the
            // session at once; any other restarts the period).
            if (now < quiet_from + o_.quiet)
                return {k::wait_event, 0, quiet_from + o_.quiet};
            finished_ = true;
            phase_ = phase::close;
            continue;
        }
        case phase::close:
            phase_ = phase::closed;
            return {k::close};
        case phase::closed:
            return {k::done};
        }
    }
}

std::optional<time_point> realtime_session::utterance_end() const {
    if (o_.protocol == realtime_protocol::openai && o_.turns == realtime_turns::server_vad &&
        speech_stopped_at_)
        return speech_stopped_at_;
    return input_end_at_;
}

std::size_t realtime_session::sample_rate() const {
    return wire_sample_rate(o_.protocol);
}

} // namespace pacer::protocol

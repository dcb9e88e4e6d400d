#include <pacer/protocol/omni_session.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <utility>

namespace pacer::protocol {

namespace {

namespace json = boost::json;

// The number after `"key":` in `frame`, found by the key: an audio delta is not parsed whole
// (its base64 holds no quote, so a quoted key is a key).
std::optional<double> number_after(std::string_view frame, std::string_view key) {
    std::string quoted;
    quoted.reserve(key.size() + 2);
    quoted.append(1, '"').append(key).append(1, '"');
    auto at = frame.find(quoted);
    if (at == std::string_view::npos)
        return std::nullopt;
    at += quoted.size();
    while (at < frame.size() && (frame[at] == ' ' || frame[at] == ':' || frame[at] == '\t'))
        ++at;
    double v = 0;
    const auto [end, ec] = std::from_chars(frame.data() + at, frame.data() + frame.size(), v);
    if (ec != std::errc{} || end == frame.data() + at)
        return std::nullopt;
    return v;
}

const json::value* member(const json::value* v, std::string_view key) {
    if (v == nullptr || !v->is_object())
        return nullptr;
    return v->get_object().if_contains(key);
}

std::string string_of(const json::value* v) {
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::chrono::milliseconds::rep whole_ms(duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

double ms_of(duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
}

} // namespace

omni_event_kind classify_omni_event(std::string_view type) {
    using k = omni_event_kind;
    struct name {
        std::string_view type;
        k kind;
    };
    static constexpr name names[] = {
        {"session.created", k::session_created},
        {"session.updated", k::session_updated},
        {"session.heartbeat_ack", k::heartbeat_ack},
        {"input_audio_buffer.speech_started", k::speech_started},
        {"input_audio_buffer.speech_stopped", k::speech_stopped},
        {"input_audio_buffer.committed", k::committed},
        {"response.created", k::response_created},
        {"response.speak", k::speak},
        {"response.listen", k::listen},
        {"response.output_audio.delta", k::audio_delta},
        {"response.audio.delta", k::audio_delta},
        {"response.output_audio_transcript.delta", k::transcript_delta},
        {"response.audio_transcript.delta", k::transcript_delta},
        {"response.output_text.delta", k::transcript_delta},
        {"response.text.delta", k::transcript_delta},
        {"response.done", k::response_done},
        {"output_audio_buffer.cleared", k::output_cleared},
        {"playback.acknowledged", k::playback_acknowledged},
        {"session.closed", k::session_closed},
        {"error", k::error},
    };
    for (const auto& n : names)
        if (n.type == type)
            return n.kind;
    return k::other;
}

bool is_playback_ack_error(std::string_view code) {
    return code == "playback_item_mismatch" || code == "playback_item_not_found" ||
           code == "playback_ack_too_late";
}

omni_event read_omni_event(std::string_view type, std::string_view frame,
                           std::string_view response_id, std::size_t audio_bytes) {
    omni_event e;
    e.kind = classify_omni_event(type);
    if (const auto seq = number_after(frame, "server_event_seq"))
        e.seq = static_cast<std::int64_t>(*seq);
    e.response_id = std::string(response_id);
    if (e.kind == omni_event_kind::audio_delta) {
        e.audio = std::chrono::duration_cast<duration>(
            std::chrono::nanoseconds(static_cast<std::int64_t>(audio_bytes / 2) * 1'000'000'000LL /
                                     static_cast<std::int64_t>(omni_output_rate)));
        e.audio_duration_ms = number_after(frame, "audio_duration_ms");
        return e;
    }
    if (e.kind == omni_event_kind::other || e.kind == omni_event_kind::transcript_delta)
        return e;
    boost::system::error_code ec;
    const auto doc = json::parse(frame, ec);
    if (ec || !doc.is_object())
        return e;
    const auto* response = member(&doc, "response");
    if (e.response_id.empty())
        e.response_id = string_of(member(response, "id"));
    switch (e.kind) {
    case omni_event_kind::committed:
        if (const auto* d = member(member(&doc, "event"), "response_create_deferred"))
            e.deferred = d->is_bool() && d->get_bool();
        break;
    case omni_event_kind::response_done:
        e.status = string_of(member(response, "status"));
        e.reason = string_of(member(member(response, "status_details"), "reason"));
        break;
    case omni_event_kind::listen:
        e.reason = string_of(member(member(response, "metadata"), "reason"));
        break;
    case omni_event_kind::error: {
        // The Realtime shape (`error.code`), or the flat handshake shape (`code`).
        const auto* err = member(&doc, "error");
        e.code = string_of(member(err, "code"));
        if (e.code.empty())
            e.code = string_of(member(&doc, "code"));
        break;
    }
    default:
        break;
    }
    return e;
}

omni_session::omni_session(omni_session_options o) : o_(std::move(o)) {
    if (o_.turn_plan.empty())
        o_.turn_plan.push_back({o_.pcm_bytes, {}, {}});
    const std::size_t chunk = schedule::turn_grid::chunk_bytes(o_.chunk);
    for (std::size_t j = 0; j < o_.turn_plan.size(); ++j) {
        expected_ += (o_.turn_plan[j].bytes + chunk - 1) / chunk;
        if (o_.pause_packets && j + 1 < o_.turn_plan.size())
            expected_ += static_cast<std::size_t>((o_.turn_plan[j].pause + o_.chunk - duration(1)) /
                                                  o_.chunk);
    }
}

std::optional<std::string> omni_session::check_opening(std::string_view type,
                                                       const opening_shape& s) {
    auto wrong = opening_.on_event(type, s);
    if (wrong)
        aborted_ = true;
    return wrong;
}

omni_session::playing* omni_session::find(std::string_view id) {
    for (auto& p : player_)
        if (p.id == id)
            return &p;
    return nullptr;
}

omni_session::playing& omni_session::response(std::string_view id) {
    if (auto* p = find(id))
        return *p;
    player_.push_back({});
    player_.back().id = std::string(id);
    return player_.back();
}

void omni_session::on_event(const omni_event& e, time_point now) {
    using k = omni_event_kind;
    last_event_at_ = now;
    if (e.seq && *e.seq > seq_seen_)
        seq_seen_ = *e.seq;
    switch (e.kind) {
    case k::session_created:
        created_seen_ = true;
        if (!next_heartbeat_)
            next_heartbeat_ = now + o_.heartbeat;
        break;
    case k::session_updated:
        updated_seen_ = true;
        break;
    case k::committed:
        if (e.deferred) {
            ++counts_.deferred;
            last_deferral_ = "response_create_deferred";
        }
        break;
    case k::response_created:
        ++counts_.responses;
        active_.push_back(e.response_id);
        answers_ = std::min(answers_ + 1, counts_.commits);
        break;
    case k::listen:
        ++counts_.listens;
        if (e.response_id.empty()) // else it ends a precreated response (its done follows)
            answers_ = std::min(answers_ + 1, counts_.commits);
        break;
    case k::audio_delta:
        on_audio(e, now);
        break;
    case k::transcript_delta:
        if (!first_transcript_at_)
            first_transcript_at_ = now;
        break;
    case k::response_done: {
        if (e.status == "cancelled")
            ++counts_.cancelled;
        else if (e.status == "completed")
            ++counts_.completed;
        std::erase(active_, e.response_id);
        if (auto* p = find(e.response_id))
            p->done = true;
        break;
    }
    case k::output_cleared:
        ++counts_.cleared;
        on_cleared(e.response_id, now);
        break;
    case k::playback_acknowledged:
        ++counts_.acknowledged;
        if (!ack_sent_at_.empty()) {
            counts_.ack_round_trip_s.push_back(to_seconds(now) - to_seconds(ack_sent_at_.front()));
            ack_sent_at_.pop_front();
        }
        break;
    case k::session_closed:
        closed_seen_ = true;
        break;
    case k::error:
        if (is_playback_ack_error(e.code)) {
            ++counts_.ack_errors; // tolerated: the ack was answered, with an error
            if (!ack_sent_at_.empty())
                ack_sent_at_.pop_front();
        } else {
            aborted_ = true;
        }
        break;
    default:
        break;
    }
}

void omni_session::on_audio(const omni_event& e, time_point now) {
    if (!first_audio_at_)
        first_audio_at_ = now;
    if (grid_)
        grid_->assistant_audio(now);
    counts_.audio_received_ms += ms_of(e.audio);
    auto& p = response(e.response_id);
    if (e.audio_duration_ms && *e.audio_duration_ms > p.server_ms) {
        counts_.server_audio_ms += *e.audio_duration_ms - p.server_ms;
        p.server_ms = *e.audio_duration_ms;
    }
    if (p.cleared) { // a flushed response's audio never reaches the speaker
        counts_.dropped_ms += ms_of(e.audio);
        return;
    }
    // Serialized: it plays from its arrival, or when what is queued before it has played.
    const time_point from = std::max(now, play_end_);
    p.segments.emplace_back(from, from + e.audio);
    p.received += e.audio;
    play_end_ = from + e.audio;
    if (p.acked_ms < 0 && p.next_ack == time_point{})
        p.next_ack = from + o_.ack_every;
}

void omni_session::on_cleared(std::string_view id, time_point now) {
    auto* p = find(id);
    if (p == nullptr)
        return;
    p->cleared = true;
    // The unplayed tail is dropped: what had not started goes, what was playing stops now.
    std::vector<std::pair<time_point, time_point>> kept;
    for (auto [from, to] : p->segments) {
        if (from >= now) {
            counts_.dropped_ms += ms_of(to - from);
            continue;
        }
        if (to > now) {
            counts_.dropped_ms += ms_of(to - now);
            to = now;
        }
        kept.emplace_back(from, to);
    }
    p->segments = std::move(kept);
    p->received = duration::zero();
    for (const auto& [from, to] : p->segments)
        p->received += to - from;
    time_point end = now;
    for (const auto& q : player_)
        for (const auto& s : q.segments)
            end = std::max(end, s.second);
    play_end_ = std::min(play_end_, end);
}

std::int64_t omni_session::played_ms(const playing& p, time_point now) {
    duration played{};
    for (const auto& [from, to] : p.segments)
        if (now > from)
            played += std::min(now, to) - from;
    return whole_ms(played);
}

void omni_session::append_sent(time_point start) {
    grid_->sent(start);
    if (interrupt_pending_)
        phase_ = phase::interrupt;
}

// The sends that keep the session alive and honest, whatever the phase: the cumulative event
// ack, the heartbeat, and the listener's playback acks (at least every `ack_every` while a
// response plays; once exactly at its end).
std::optional<omni_action> omni_session::housekeeping(time_point now) {
    using k = omni_action::kind;
    if (seq_seen_ > seq_acked_) {
        seq_acked_ = seq_seen_;
        ++counts_.event_acks;
        omni_action a{k::send_event_ack};
        a.event_seq = seq_acked_;
        return a;
    }
    if (next_heartbeat_ && now >= *next_heartbeat_) {
        while (*next_heartbeat_ <= now) // absolute: a late wake never shifts the next one
            *next_heartbeat_ += o_.heartbeat;
        ++counts_.heartbeats;
        return omni_action{k::send_heartbeat};
    }
    if (o_.ack)
        for (auto& p : player_) {
            if (p.final_acked || p.segments.empty())
                continue;
            const auto end = p.segments.back().second;
            const std::int64_t played = played_ms(p, now);
            if (p.done && now >= end) {
                p.final_acked = true; // the exact total, once
                const auto total = whole_ms(p.received);
                if (total == p.acked_ms)
                    continue;
                p.acked_ms = total;
            } else if (now >= p.next_ack && played > p.acked_ms) {
                while (p.next_ack <= now)
                    p.next_ack += o_.ack_every;
                p.acked_ms = played;
            } else {
                continue;
            }
            ++counts_.playback_acks;
            omni_action a{k::send_playback_ack};
            a.response_id = p.id;
            a.played_ms = p.acked_ms;
            return a;
        }
    // The responses the player is done with leave it (the oldest first).
    while (!player_.empty() && player_.front().done &&
           (o_.ack ? player_.front().final_acked || player_.front().segments.empty()
                   : player_.front().segments.empty() ||
                         now >= player_.front().segments.back().second))
        player_.pop_front();
    return std::nullopt;
}

// When housekeeping next has something to send, or the player next changes (time_point::max()
// when only an event can bring something).
time_point omni_session::housekeeping_due(time_point now) const {
    time_point due = next_heartbeat_.value_or(time_point::max());
    for (const auto& p : player_) {
        if (p.final_acked || p.segments.empty())
            continue;
        const auto end = p.segments.back().second;
        if (!o_.ack) { // only the end of its playback matters (the session's end waits for it)
            if (end > now)
                due = std::min(due, end);
            continue;
        }
        if (p.next_ack < end) // still playing then: the next periodic ack (never a busy wake)
            due = std::min(due, std::max(p.next_ack, now + std::chrono::milliseconds(1)));
        if (p.done)
            due = std::min(due, end);
    }
    return due;
}

bool omni_session::player_idle(time_point now) const {
    for (const auto& p : player_) {
        if (!p.done)
            return false;
        if (!p.segments.empty() && (o_.ack ? !p.final_acked : now < p.segments.back().second))
            return false;
    }
    return true;
}

omni_action omni_session::wait(time_point at, time_point now) const {
    omni_action a{omni_action::kind::wait_event};
    a.at = std::min(at, housekeeping_due(now));
    if (a.at == time_point::max())
        a.at = time_point{};
    return a;
}

// After the input: done once every reply is over, played and acknowledged (manual: every
// commit answered); server VAD and the model's own turns also wait out a quiet period. A
// server that stops answering (a deferred commit under ack_only) ends the session after the
// quiet period: the server's stall, reported by `stall()`. Nullopt: the session closes now.
std::optional<omni_action> omni_session::await_replies(time_point now) {
    const bool idle = !response_active() && player_idle(now);
    const time_point quiet_from =
        std::max({*input_end_at_, last_event_at_.value_or(*input_end_at_), play_end_});
    const bool quiet = now >= quiet_from + o_.quiet;
    const bool manual = o_.turns == omni_turns::manual;
    // With manual turns a slow reply is waited for (the session's timeout bounds it); once
    // the server has deferred a commit, a quiet period ends it.
    const bool stalled = quiet && now >= play_end_ && (!manual || counts_.deferred > 0);
    if ((idle && (manual ? unanswered() == 0 : quiet)) || stalled) {
        finished_ = true;
        phase_ = phase::closing;
        return std::nullopt;
    }
    // (Manual turns before any deferral: only an event moves it on.)
    return wait(manual && counts_.deferred == 0 ? time_point::max() : quiet_from + o_.quiet, now);
}

omni_action omni_session::next(time_point now) {
    using k = omni_action::kind;
    for (;;) {
        if (receiver_ended_)
            phase_ = phase::closed;
        if (aborted_ && phase_ != phase::close && phase_ != phase::closed)
            phase_ = phase::close;
        const bool live = phase_ != phase::created && phase_ != phase::closing_wait &&
                          phase_ != phase::close && phase_ != phase::closed;
        if (live)
            if (auto h = housekeeping(now))
                return *h;
        switch (phase_) {
        case phase::created: // vllm-omni waits for session.update first (autostart=0)
            phase_ = phase::opening;
            return {k::send_update};
        case phase::opening:
            if (!created_seen_ || !updated_seen_)
                return wait(time_point::max(), now);
            phase_ = o_.gate ? phase::join : phase::stagger;
            continue;
        case phase::join:
            phase_ = phase::gate;
            return {k::join_gate};
        case phase::gate:
            if (!gate_start_)
                return wait(time_point::max(), now);
            o_.origin = *gate_start_ + o_.start_offset;
            phase_ = phase::stagger;
            continue;
        case phase::stagger:
            if (!o_.origin)
                if (const auto at = stagger_.until(now))
                    return wait(*at, now);
            grid_.emplace(o_.turn_plan, o_.pause_packets, o_.origin, o_.chunk);
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
                return wait(a.scheduled, now);
            if (a.what == g::turn_end) {
                if (o_.turns == omni_turns::manual && a.turn + 1 < grid_->turns())
                    phase_ = phase::turn_commit;
                return {k::turn_end, 0, a.scheduled, a.turn};
            }
            interrupt_pending_ = a.barge_in && o_.turns != omni_turns::server_vad;
            interrupt_turn_ = a.turn;
            return {k::send_append, a.seq, a.scheduled, a.turn, a.packet, a.silence, a.barge_in};
        }
        case phase::turn_commit:
            phase_ = phase::streaming;
            ++counts_.commits;
            return {k::send_commit};
        case phase::interrupt:
            interrupt_pending_ = false;
            phase_ = phase::streaming;
            // Only a reply still active or playing is cleared (server VAD cancels on its own).
            if (response_active() || !player_idle(now))
                return {k::send_interrupt, 0, now, interrupt_turn_};
            continue;
        case phase::end_of_input: {
            if (expected_ == 0) {
                phase_ = phase::closing;
                continue;
            }
            const auto eos_at = grid_->end_of_turn_at(grid_->turns() - 1);
            if (now < eos_at)
                return wait(eos_at, now);
            input_end_at_ = now;
            phase_ = phase::awaiting;
            if (o_.turns == omni_turns::manual) {
                ++counts_.commits;
                return {k::send_commit};
            }
            continue;
        }
        case phase::awaiting:
            if (auto a = await_replies(now))
                return *a;
            continue;
        case phase::closing:
            phase_ = phase::closing_wait;
            close_sent_at_ = now;
            return {k::send_close};
        case phase::closing_wait:
            if (closed_seen_) { // the server closes the socket next
                phase_ = phase::closed;
                continue;
            }
            if (now >= *close_sent_at_ + o_.quiet) {
                phase_ = phase::close;
                continue;
            }
            return {k::wait_event, 0, *close_sent_at_ + o_.quiet};
        case phase::close:
            phase_ = phase::closed;
            return {k::close};
        case phase::closed:
            return {k::done};
        }
    }
}

std::string omni_session::stall() const {
    if (unanswered() == 0)
        return {};
    return last_deferral_.empty() ? std::string("no reply") : last_deferral_;
}

} // namespace pacer::protocol

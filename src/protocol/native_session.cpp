#include <pacer/protocol/native_session.hpp>

#include <utility>

namespace pacer::protocol {

native_session::native_session(native_session_options o) : o_(std::move(o)) {
    if (o_.turn_plan.empty())
        o_.turn_plan.push_back({o_.pcm_bytes, {}, {}});
    expected_ = planned_appends(o_.turn_plan, o_.pause_packets);
}

std::size_t native_session::planned_appends(const std::vector<schedule::turn_layout>& turns,
                                            bool pause_packets) {
    std::size_t n = 0;
    for (std::size_t j = 0; j < turns.size(); ++j) {
        n += schedule::packet_count(turns[j].bytes);
        if (pause_packets && j + 1 < turns.size())
            n += static_cast<std::size_t>((turns[j].pause + schedule::packet_period - duration(1)) /
                                          schedule::packet_period);
    }
    return n;
}

void native_session::on_event(server_event e, bool fatal) {
    seen_[static_cast<std::size_t>(e)] = true;
    if (e == server_event::unit_done)
        ++units_done_;
    if (e == server_event::error) {
        fatal_ = fatal_ || fatal;
        aborted_ = true;
    }
}

std::optional<std::string> native_session::check_opening(std::string_view type,
                                                         const opening_shape& s) {
    auto wrong = opening_.on_event(type, s);
    if (wrong)
        aborted_ = fatal_ = wrong_protocol_ = true;
    return wrong;
}

void native_session::append_sent(time_point start) {
    grid_->sent(start);
    if (grid_->sent_count() == 1)
        origin_ = lockstep() && o_.origin ? *o_.origin : *grid_->origin();
    last_append_start_ = start;
    if (lockstep()) {
        const std::size_t seq = grid_->sent_count() - 1;
        const std::size_t end = seq * packet_bytes + schedule::packet_size(o_.pcm_bytes, seq);
        if (end >= (unit_ + 1) * *o_.lockstep_unit_bytes)
            phase_ = phase::unit_wait;
    }
}

driver_action native_session::next(time_point now) {
    using k = driver_action::kind;
    for (;;) {
        switch (phase_) {
        case phase::created:
            if (has_seen(server_event::session_created)) {
                phase_ = phase::updated;
                return {k::send_update};
            }
            if (aborted_) {
                phase_ = phase::updated;
                continue;
            }
            return {k::wait_event};
        case phase::updated:
            if (has_seen(server_event::session_updated)) {
                if (o_.gate) {
                    phase_ = phase::gate;
                    return {k::join_gate};
                }
                phase_ = phase::stagger;
                continue;
            }
            if (aborted_) {
                phase_ = phase::close;
                continue;
            }
            return {k::wait_event};
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
            phase_ = phase::stream_start;
            continue;
        case phase::stream_start:
            if (lockstep() && o_.origin && !waited_origin_) {
                // Lockstep sends without sleeping, but not before the common start.
                waited_origin_ = true;
                if (now < *o_.origin)
                    return {k::wait_until, 0, *o_.origin};
            }
            grid_.emplace(o_.turn_plan, o_.pause_packets, lockstep() ? std::nullopt : o_.origin);
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
            if (a.what == g::wait && !lockstep())
                return {k::wait_until, a.seq, a.scheduled};
            if (aborted_) {
                phase_ = phase::end_of_input;
                continue;
            }
            if (a.what == g::turn_end)
                return {k::turn_end, 0, a.scheduled, a.turn};
            return {k::send_append, a.seq, a.scheduled, a.turn, a.packet, a.silence, a.barge_in};
        }
        case phase::unit_wait:
            if (units_done_ > unit_) {
                ++unit_;
                phase_ = phase::streaming;
                continue;
            }
            if (aborted_) {
                phase_ = phase::end_of_input;
                continue;
            }
            return {k::wait_event};
        case phase::end_of_input:
            if (aborted_ || grid_->turn() < grid_->turns() || expected_ == 0) {
                phase_ = phase::close;
                continue;
            }
            if (!lockstep()) {
                // Not before the grid's end, nor before the last packet has had its own
                // duration on the wire (§2.4). Lockstep sends it at once.
                const auto eos_at = grid_->end_of_turn_at(grid_->turns() - 1);
                if (now < eos_at)
                    return {k::wait_until, 0, eos_at};
            }
            phase_ = phase::end_sent;
            if (aborted_) {
                phase_ = phase::close;
                continue;
            }
            return {k::send_end};
        case phase::end_sent:
            if (has_seen(server_event::input_drained) || aborted_) {
                phase_ = phase::close;
                continue;
            }
            return {k::wait_event};
        case phase::close:
            phase_ = phase::closed;
            if (!fatal_ && !has_seen(server_event::session_closed))
                return {k::send_close};
            continue;
        case phase::closed:
            // Unbounded but for the session deadline: session.closed, or the receive
            // loop's end.
            if (has_seen(server_event::session_closed) || receiver_ended_ || wrong_protocol_)
                return {k::done};
            return {k::wait_event};
        }
    }
}

task_completion::action task_completion::next(time_point now, bool stopping) {
    using k = action::kind;
    if (receiver_at_ && driver_at_)
        return {k::done};
    if (stopping || (!receiver_at_ && !driver_at_))
        return {k::wait};
    const auto grace_end = (receiver_at_ ? *receiver_at_ : *driver_at_) + grace_;
    if (now < grace_end)
        return {k::wait, grace_end};
    stalled_ = receiver_at_.has_value();
    return {k::stop_other, time_point::max(), stalled_};
}

} // namespace pacer::protocol

#pragma once
// The native protocol's client logic (docs/protocol.md §1.5, §2) as sans-io state machines:
// events and the clock go in, actions come out. No socket, no timer, no coroutine: the
// session coroutine (src/session/duplex_session.cpp) moves the bytes and awaits the deadlines
// these machines name, and the unit tests drive them by hand with a manual clock.
//
// - `native_session`: what the driver does next (negotiate, join the start gate, stagger,
//   stream on the absolute 80 ms grid or in lockstep, end of input, drain, close).
// - `task_completion`: the completion rules of §1.5 step 4 for the receive loop and the
//   driver, in one place.

#include <pacer/core/clock.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/opening.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/schedule/stagger.hpp>
#include <pacer/schedule/turn_grid.hpp>

#include <bitset>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::protocol {

struct native_session_options {
    std::size_t pcm_bytes = 0; ///< the input's size (whole PCM16 samples, not empty)
    /// A common start for packet 0 (a start gate's, given up front); without it the grid is
    /// anchored to packet 0's actual send.
    std::optional<time_point> origin;
    /// Without an origin: the stagger's phase. Once negotiated, packet 0 goes at the first
    /// instant on `stagger_phase + m × 80 ms` (m ≥ 0), so that sessions given one phase start
    /// on the same instants (schedule/stagger.hpp). Nullopt: `start_delay` after
    /// `session.updated`.
    std::optional<time_point> stagger_phase;
    duration start_delay{};
    /// Join a start gate once negotiated; its common start + `start_offset` is the origin.
    bool gate = false;
    duration start_offset{};
    /// Lockstep: no grid; the packet that completes unit k waits for the k-th unit.done.
    std::optional<std::size_t> lockstep_unit_bytes;
    /// A multi-turn scenario (docs/scenarios.md): its turns on the one grid, and whether the
    /// pauses carry silence packets. Empty: one turn of `pcm_bytes` (today's session). The
    /// native protocol has one end of input per session (`sglang.input_audio.end`, §1.3), so a
    /// turn ends by its pause; the end goes once, after the last turn.
    std::vector<schedule::turn_layout> turn_plan;
    bool pause_packets = true;
};

/// The driver's next step.
struct driver_action {
    enum class kind {
        send_update, ///< send `session.update`
        turn_end,    ///< turn `turn`'s speech ended at `at` (multi-turn; nothing to send)
        join_gate,   ///< report ready to the start gate; `gate_started(t)` when it starts
        send_append, ///< send packet `seq`, reporting its send start with `append_sent(start)`
        send_end,    ///< send `sglang.input_audio.end`
        send_close,  ///< send `session.close`
        wait_event,  ///< wait for a server event (or the gate, or the receive loop's end)
        wait_until,  ///< wait until `at` (an absolute deadline), then ask again
        done,        ///< the driver has nothing left to do
    };
    kind what;
    std::size_t seq = 0;
    time_point at{}; ///< wait_until: the deadline; send_append: the packet's grid deadline
    /// send_append: the turn, its audio packet (`seq` in a one-turn session), or a pause's
    /// silence packet; the first packet of a turn that barges in. turn_end: the turn.
    std::size_t turn = 0;
    std::size_t packet = 0;
    bool silence = false;
    bool barge_in = false;
};

/// The driver of one native session, sans-io.
class native_session {
public:
    explicit native_session(native_session_options o);

    /// The appends of `turns` without a barge-in: every audio packet, and each pause's silence
    /// packets when they are sent (a barge-in shortens a pause: the count is then final only
    /// once the last turn has gone).
    static std::size_t planned_appends(const std::vector<schedule::turn_layout>& turns,
                                       bool pause_packets);

    // Inputs ---------------------------------------------------------------------------------

    /// A server event arrived (`fatal`: an `error` whose `sglang.fatal` is truthy).
    void on_event(server_event e, bool fatal = false);
    /// While `checks_opening()`: an event's type and shape, before `on_event`. When they are
    /// another protocol's (opening.hpp), the session is aborted as a fatal error would abort
    /// it (nothing more is sent, no `session.closed` awaited) and the error is returned: the
    /// event is then not given to `on_event`.
    bool checks_opening() const { return opening_.active(); }
    std::optional<std::string> check_opening(std::string_view type, const opening_shape& s);
    /// The receive loop has ended (any way): nothing more will arrive.
    void on_receiver_ended() { receiver_ended_ = true; }
    /// The start gate released the level at `start`.
    void gate_started(time_point start) { gate_start_ = start; }
    /// Packet `next seq` started going out at `start` (anchors the grid on packet 0).
    void append_sent(time_point start);
    /// The assistant's audio arrived at `at` (a barge-in counts from its first after a turn).
    void on_assistant_audio(time_point at) {
        if (grid_)
            grid_->assistant_audio(at);
    }
    /// A send failed: stop streaming. (Its error stops the whole session: the coroutine's
    /// concern, with `task_completion`.)
    void send_failed() { aborted_ = true; }

    // Output ---------------------------------------------------------------------------------

    /// What to do at `now`. A wait is returned again until its condition or deadline is met;
    /// `send_update`, `join_gate`, `send_end` and `send_close` are returned once (asking again
    /// gives the step after them); `send_append` stays the step until `append_sent`.
    driver_action next(time_point now);

    // State ----------------------------------------------------------------------------------

    bool has_seen(server_event e) const { return seen_[static_cast<std::size_t>(e)]; }
    /// The server ended the session (`session.closed`): a socket end after it is no failure.
    bool closed_by_server() const { return has_seen(server_event::session_closed); }
    /// The flow ran to its end: the input drained and the session closed.
    bool finished() const {
        return has_seen(server_event::input_drained) && has_seen(server_event::session_closed);
    }
    bool aborted() const { return aborted_; }
    bool fatal() const { return fatal_; }
    /// The server speaks another protocol (`check_opening`).
    bool wrong_protocol() const { return wrong_protocol_; }
    std::size_t expected_appends() const { return expected_; }
    std::size_t appends_sent() const { return grid_ ? grid_->sent_count() : 0; }
    bool lockstep() const { return o_.lockstep_unit_bytes.has_value(); }
    /// The grid's origin (packet 0's deadline), once packet 0 has gone.
    time_point origin() const { return origin_; }
    /// The origin the session was given or got from the gate (not the anchored one).
    std::optional<time_point> given_origin() const { return o_.origin; }
    std::size_t units_done() const { return units_done_; }
    /// The turns (one for a one-turn session) and the grid, once streaming has begun.
    std::size_t turns() const { return o_.turn_plan.size(); }
    const schedule::turn_grid* grid() const { return grid_ ? &*grid_ : nullptr; }

private:
    enum class phase {
        created,
        updated,
        gate,
        stagger,
        stream_start,
        streaming,
        unit_wait,
        end_of_input,
        end_sent,
        close,
        closed,
    };

    native_session_options o_;
    std::size_t expected_;
    phase phase_ = phase::created;
    std::bitset<server_event_count> seen_;
    bool aborted_ = false;
    bool fatal_ = false;
    bool receiver_ended_ = false;
    bool wrong_protocol_ = false;
    opening_check opening_{wire_protocol::native};
    bool waited_origin_ = false;
    std::size_t units_done_ = 0;
    std::size_t unit_ = 0;
    std::optional<time_point> gate_start_;
    schedule::stagger_wait stagger_{o_.stagger_phase, o_.start_delay};
    std::optional<schedule::turn_grid> grid_;
    time_point origin_{};
    time_point last_append_start_{};
};

/// The completion rules of §1.5 step 4 for the two tasks of a session (the receive loop and
/// the driver), in one place:
/// - a task that fails records the session's one error and stops the other at once (the
///   session is then `stopping`; nothing more is sent);
/// - the receive loop ends normally first: the driver gets `post_close`, else it is stopped
///   and the session records `driver stalled after the receive loop`;
/// - the driver ends first: the receive loop gets `post_close`, then is stopped silently;
/// - a stop from outside (deadline, interrupt) gives no grace.
class task_completion {
public:
    enum class task { receiver, driver };

    struct action {
        enum class kind {
            wait,       ///< wait for the other task (until `at` when it is a grace's end)
            stop_other, ///< stop the other task now (`driver_stalled`: record it)
            done,       ///< both tasks have ended
        };
        kind what;
        time_point at = time_point::max();
        bool driver_stalled = false;
    };

    explicit task_completion(duration grace = post_close) : grace_(grace) {}

    /// `t` ended at `now` (a task that failed has already stopped the other: `stopping`).
    void ended(task t, time_point now) { (t == task::receiver ? receiver_at_ : driver_at_) = now; }

    /// What to do at `now`; `stopping`: the session is already being stopped (a failure, the
    /// deadline, an interrupt, or an earlier `stop_other`).
    action next(time_point now, bool stopping);

    bool ended(task t) const {
        return (t == task::receiver ? receiver_at_ : driver_at_).has_value();
    }
    bool driver_stalled() const { return stalled_; }

private:
    duration grace_;
    std::optional<time_point> receiver_at_;
    std::optional<time_point> driver_at_;
    bool stalled_ = false;
};

} // namespace pacer::protocol

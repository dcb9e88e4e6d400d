#pragma once
// The stagger (docs/protocol.md §2.2): when packet 0 of a session without a common origin goes,
// as a sans-io step shared by the protocol machines (protocol/native_session.hpp,
// protocol/realtime_session.hpp). The grid itself is still anchored to packet 0's actual send.
//
// With a phase (`pacer run`: the run's shared origin + the session's offset), packet 0 goes at
// the first instant, once the session is ready, that lies on `phase + m × 80 ms` (m ≥ 0): the
// sessions given one phase start, and so wake, on the same instants however their negotiations
// were spread. Without one, packet 0 goes a fixed delay after the session became ready.

#include <pacer/core/clock.hpp>
#include <pacer/schedule/constants.hpp>

#include <optional>

namespace pacer::schedule {

/// The first instant at or after `ready` that lies on `phase + m × period` with m ≥ 0: `phase`
/// itself when `ready` is not after it.
inline time_point first_on_phase(time_point ready, time_point phase,
                                 duration period = packet_period) {
    if (ready <= phase)
        return phase;
    const auto ticks = period.count();
    const auto m = ((ready - phase).count() + ticks - 1) / ticks;
    return phase + period * m;
}

/// The stagger of one session: asked from the moment the session is ready to stream, it names
/// the deadline packet 0 waits for (fixed at the first ask), or nothing once it may go.
class stagger_wait {
public:
    stagger_wait(std::optional<time_point> phase, duration delay) : phase_(phase), delay_(delay) {}

    /// At `now`: the deadline to wait for, or nullopt when packet 0 may go now.
    std::optional<time_point> until(time_point now) {
        if (!until_)
            until_ = phase_ ? first_on_phase(now, *phase_) : now + delay_;
        if (now < *until_)
            return until_;
        return std::nullopt;
    }

private:
    std::optional<time_point> phase_;
    duration delay_;
    std::optional<time_point> until_;
};

} // namespace pacer::schedule

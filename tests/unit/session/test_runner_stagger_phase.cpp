// The stagger's phase (`pacer run`, docs/protocol.md §2.2): every session's phase is the run's
// one origin + its offset, and once negotiated packet 0 goes at the first instant of that
// phase (origin + offset + m x 80 ms) that is not past. Sessions of one slot then start on the
// same instant however their negotiations were spread. Driven with a manual clock.

#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/native_session.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/schedule/stagger.hpp>
#include <pacer/session/runner.hpp>

#include <gtest/gtest.h>

#include <chrono>

namespace {

using namespace std::chrono_literals;
using pacer::duration;
using pacer::time_point;
using pacer::protocol::native_session;
using pacer::protocol::native_session_options;
using pacer::protocol::realtime_event;
using pacer::protocol::realtime_session;
using pacer::protocol::realtime_session_options;
using pacer::protocol::server_event;
using pacer::schedule::first_on_phase;
using kind = pacer::protocol::driver_action::kind;

const time_point origin = time_point{} + 1000s; // the run's shared origin

native_session native_with_phase(time_point phase) {
    native_session_options o;
    o.pcm_bytes = 4 * pacer::protocol::packet_bytes;
    o.stagger_phase = phase;
    o.start_delay = phase - origin;
    return native_session(o);
}

// Negotiates at `ready`, then returns when packet 0 goes (asking as a driver does: at the
// deadline it was told to wait for). Its actual send is `start`.
time_point native_start(native_session& s, time_point ready) {
    s.on_event(server_event::session_created);
    EXPECT_EQ(s.next(ready).what, kind::send_update);
    s.on_event(server_event::session_updated);
    time_point now = ready;
    for (int i = 0; i < 3; ++i) {
        const auto a = s.next(now);
        if (a.what == kind::send_append) {
            EXPECT_EQ(a.seq, 0u);
            s.append_sent(now);
            return now;
        }
        EXPECT_EQ(a.what, kind::wait_until);
        EXPECT_GE(a.at, now);
        now = a.at;
    }
    ADD_FAILURE() << "packet 0 never went";
    return now;
}

time_point realtime_start(realtime_session& s, time_point ready) {
    s.on_event(realtime_event::session_created, ready);
    EXPECT_EQ(s.next(ready).what, pacer::protocol::realtime_action::kind::send_update);
    s.on_event(realtime_event::session_updated, ready);
    time_point now = ready;
    for (int i = 0; i < 3; ++i) {
        const auto a = s.next(now);
        if (a.what == pacer::protocol::realtime_action::kind::send_append) {
            s.append_sent(now);
            return now;
        }
        EXPECT_EQ(a.what, pacer::protocol::realtime_action::kind::wait_until);
        now = a.at;
    }
    ADD_FAILURE() << "packet 0 never went";
    return now;
}

TEST(StaggerPhase, FirstOnPhaseIsThePhaseOrItsFirstPeriodNotPast) {
    const auto phase = origin + 30ms;
    EXPECT_EQ(first_on_phase(origin, phase), phase) << "ready before the phase: the phase";
    EXPECT_EQ(first_on_phase(origin + 500ms, origin + 2s), origin + 2s)
        << "a stagger longer than the period still spreads the starts";
    EXPECT_EQ(first_on_phase(phase, phase), phase);
    EXPECT_EQ(first_on_phase(phase + 1ns, phase), phase + 80ms);
    EXPECT_EQ(first_on_phase(phase + 80ms, phase), phase + 80ms);
    EXPECT_EQ(first_on_phase(phase + 161ms, phase), phase + 240ms);
}

TEST(StaggerPhase, SessionsOfOneSlotReadyAtDifferentInstantsStartTogether) {
    // 8 sessions in 4 slots of 20 ms: sessions 2 and 3 share slot 1 (offset 20 ms).
    const auto offset = pacer::session::stagger_offset(2, 8, 80ms, 4);
    ASSERT_EQ(offset, pacer::session::stagger_offset(3, 8, 80ms, 4));
    auto a = native_with_phase(origin + offset);
    auto b = native_with_phase(origin + offset);
    // a negotiated 12 ms after the origin, b 41 ms later: both start at origin + 20 + 80 ms.
    const auto a_start = native_start(a, origin + 25ms);
    const auto b_start = native_start(b, origin + 66ms);
    EXPECT_EQ(a_start, b_start);
    EXPECT_EQ(a_start, origin + 100ms);
    // Each grid is still anchored to its own packet 0's actual send.
    EXPECT_EQ(a.origin(), a_start);
    EXPECT_FALSE(a.given_origin().has_value());
}

TEST(StaggerPhase, ASessionNeverStartsBeforeItIsReady) {
    const auto phase = origin + 10ms;
    for (const auto ready : {origin, origin + 10ms, origin + 10ms + 1ns, origin + 89ms,
                             origin + 90ms, origin + 1s + 3ms}) {
        auto s = native_with_phase(phase);
        const auto start = native_start(s, ready);
        EXPECT_GE(start, ready);
        EXPECT_LT(start, std::max(ready, phase) + 80ms) << "and within one period of it";
        EXPECT_EQ((start - phase) % duration(80ms), duration::zero()) << "on its phase";
    }
}

TEST(StaggerPhase, DifferentSlotsStartOnDifferentInstants) {
    // Two sessions ready at the same instant, in slots 0 and 2 of 4: 40 ms apart.
    const auto first = pacer::session::stagger_offset(0, 8, 80ms, 4);
    const auto third = pacer::session::stagger_offset(4, 8, 80ms, 4);
    ASSERT_NE(first, third);
    auto a = native_with_phase(origin + first);
    auto b = native_with_phase(origin + third);
    const auto ready = origin + 5ms;
    const auto a_start = native_start(a, ready);
    const auto b_start = native_start(b, ready);
    EXPECT_NE(a_start, b_start);
    EXPECT_EQ(a_start, origin + 80ms);
    EXPECT_EQ(b_start, origin + 40ms);
}

TEST(StaggerPhase, RealtimeSessionsOfOneSlotStartTogether) {
    realtime_session_options o;
    o.pcm_bytes = 2 * pacer::protocol::packet_bytes;
    o.stagger_phase = origin + 20ms;
    realtime_session a(o), b(o);
    const auto a_start = realtime_start(a, origin + 3ms);
    const auto b_start = realtime_start(b, origin + 61ms);
    EXPECT_EQ(a_start, origin + 20ms);
    EXPECT_EQ(b_start, origin + 100ms);
    // Not the same period here (b was ready after a's start), but the same phase.
    EXPECT_EQ((b_start - a_start) % duration(80ms), duration::zero());
    realtime_session c(o);
    EXPECT_EQ(realtime_start(c, origin + 70ms), b_start);
}

} // namespace

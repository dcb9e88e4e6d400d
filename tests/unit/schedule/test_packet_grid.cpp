// Unit tests of the sans-io packet grid (docs/protocol.md §2, a sans-io core): every test
// drives `basic_packet_grid` by hand with explicit time points. No io_context, no real time.

#include <pacer/schedule/packet_grid.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <ratio>
#include <type_traits>
#include <vector>

namespace {

using namespace std::chrono_literals;
using pacer::schedule::basic_packet_grid;
using pacer::schedule::end_of_input_at;
using pacer::schedule::pacing_action;
using pacer::schedule::packet_bytes;
using pacer::schedule::packet_count;
using pacer::schedule::packet_grid;
using pacer::schedule::packet_size;
using action = pacing_action::kind;

// An arbitrary, fixed point of pacer's clock: the tests never read the real time.
const pacer::time_point t_base = pacer::time_point{} + 1000s;

// A clock of another type than pacer's (not the tests' manual clock, unit/manual_timer.hpp,
// whose time points are pacer's): the grid must work with any clock's time points.
struct other_clock {
    using rep = std::int64_t;
    using period = std::nano;
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<other_clock>;
    static constexpr bool is_steady = true;
    static time_point now() noexcept { return now_; }
    static inline time_point now_{};
};
using other_time_point = other_clock::time_point;

// ---------------------------------------------------------------------------------------------
// Packetization (docs/protocol.md §2.1)

TEST(packet_grid, packet_count_is_the_ceiling_of_2560_byte_packets) {
    EXPECT_EQ(packet_bytes, 2560u);
    EXPECT_EQ(packet_count(0), 0u);
    EXPECT_EQ(packet_count(2), 1u);
    EXPECT_EQ(packet_count(2559), 1u);
    EXPECT_EQ(packet_count(2560), 1u);
    EXPECT_EQ(packet_count(2561), 2u);
    EXPECT_EQ(packet_count(5120), 2u);
    EXPECT_EQ(packet_count(5122), 3u);
    // 10 s of 16 kHz PCM16 is exactly 125 packets of 80 ms.
    EXPECT_EQ(packet_count(320000), 125u);
}

TEST(packet_grid, short_tail_is_never_padded) {
    // 2561 bytes: one full packet, then a tail of a single byte.
    EXPECT_EQ(packet_size(2561, 0), 2560u);
    EXPECT_EQ(packet_size(2561, 1), 1u);
    EXPECT_EQ(packet_size(2561, 2), 0u); // past the end
    // A whole-sample tail: 1.5 packets.
    EXPECT_EQ(packet_size(3840, 0), 2560u);
    EXPECT_EQ(packet_size(3840, 1), 1280u);
    // Aligned input: every packet is full, nothing is added.
    EXPECT_EQ(packet_size(5120, 1), 2560u);
    EXPECT_EQ(packet_size(5120, 2), 0u);
    // The sizes always add up to the input, whatever its length.
    for (std::size_t bytes : {0u, 2u, 2558u, 2560u, 2562u, 7680u, 12345u}) {
        std::size_t total = 0;
        for (std::size_t seq = 0; seq < packet_count(bytes); ++seq) {
            const std::size_t size = packet_size(bytes, seq);
            EXPECT_GT(size, 0u) << "bytes=" << bytes << " seq=" << seq;
            EXPECT_LE(size, packet_bytes);
            total += size;
        }
        EXPECT_EQ(total, bytes);
    }
}

TEST(packet_grid, input_duration_is_bytes_over_32000) {
    using pacer::schedule::input_duration;
    EXPECT_EQ(input_duration(2560), pacer::duration(80ms));
    EXPECT_EQ(input_duration(32000), pacer::duration(1s));
    EXPECT_EQ(input_duration(1), pacer::duration(31250ns));
    EXPECT_EQ(input_duration(2561), pacer::duration(80ms + 31250ns));
}

// ---------------------------------------------------------------------------------------------
// Origin and deadlines (docs/protocol.md §2.2, 2.3)

TEST(packet_grid, anchors_to_the_actual_send_of_packet_0) {
    packet_grid grid(3);
    EXPECT_FALSE(grid.origin().has_value());

    // Without an origin, packet 0 is sent at once.
    const auto asked_at = t_base;
    auto a = grid.next(asked_at);
    EXPECT_EQ(a.what, action::send);
    EXPECT_EQ(a.seq, 0u);

    // Its send actually starts 3 ms later: that instant, not the question's, is the origin.
    const auto started = asked_at + 3ms;
    grid.sent(started);
    ASSERT_TRUE(grid.origin().has_value());
    EXPECT_EQ(*grid.origin(), started);

    // Packet 1 is due 80 ms after packet 0's start.
    a = grid.next(started + 1ms);
    EXPECT_EQ(a.what, action::wait);
    EXPECT_EQ(a.seq, 1u);
    EXPECT_EQ(a.scheduled, started + 80ms);
}

TEST(packet_grid, deadlines_are_origin_plus_i_times_80ms_exactly) {
    const auto origin = t_base + 123456789ns;
    packet_grid grid(100000, origin);
    for (std::int64_t i = 0; i < 100000; ++i)
        ASSERT_EQ(grid.scheduled(static_cast<std::size_t>(i)), origin + i * 80ms) << "i=" << i;
    // The last one is still exact: no accumulated floating-point error.
    EXPECT_EQ(grid.scheduled(99999) - origin, pacer::duration(7999920ms));
}

TEST(packet_grid, on_time_sender_waits_for_each_deadline) {
    const auto origin = t_base;
    packet_grid grid(5, origin);
    auto now = origin - 20ms; // the gate is still 20 ms ahead
    std::vector<pacer::time_point> starts;
    while (true) {
        const auto a = grid.next(now);
        if (a.what == action::done)
            break;
        if (a.what == action::wait) {
            EXPECT_EQ(a.seq, grid.sent_count());
            EXPECT_GT(a.scheduled, now);
            now = a.scheduled; // the timer fires exactly at the deadline
            continue;
        }
        EXPECT_EQ(a.scheduled, origin + static_cast<std::int64_t>(a.seq) * 80ms);
        starts.push_back(now);
        grid.sent(now);
        now += 2ms; // sending takes a little time
    }
    ASSERT_EQ(starts.size(), 5u);
    for (std::size_t i = 0; i < starts.size(); ++i)
        EXPECT_EQ(starts[i], origin + static_cast<std::int64_t>(i) * 80ms);
    EXPECT_EQ(grid.sent_count(), 5u);
    EXPECT_EQ(*grid.origin(), origin); // a given origin is never moved
}

// ---------------------------------------------------------------------------------------------
// Catch-up (docs/protocol.md §2.3): overdue packets go at once, later deadlines do not move.

TEST(packet_grid, late_sender_catches_up_and_returns_to_the_grid) {
    const auto origin = t_base;
    packet_grid grid(10, origin);

    // Packets 0, 1 and 2 go on time.
    for (std::size_t i = 0; i < 3; ++i) {
        const auto due = origin + static_cast<std::int64_t>(i) * 80ms;
        const auto a = grid.next(due);
        ASSERT_EQ(a.what, action::send);
        ASSERT_EQ(a.seq, i);
        grid.sent(due);
    }

    // The sender stalls for 250 ms before packet 3 (due at +240 ms): it wakes at +490 ms.
    auto now = origin + 240ms + 250ms;

    // Packets 3, 4, 5 and 6 (due +240, +320, +400, +480) are overdue: each is a "send", at
    // once, carrying its original deadline, so its lateness can be measured.
    for (std::size_t i = 3; i <= 6; ++i) {
        const auto a = grid.next(now);
        ASSERT_EQ(a.what, action::send) << "seq " << i;
        EXPECT_EQ(a.seq, i);
        EXPECT_EQ(a.scheduled, origin + static_cast<std::int64_t>(i) * 80ms);
        grid.sent(now);
        now += 1ms; // back to back
    }

    // Back on the grid: packet 7 is due at +560 ms, exactly as if nothing had happened.
    auto a = grid.next(now);
    EXPECT_EQ(a.what, action::wait);
    EXPECT_EQ(a.seq, 7u);
    EXPECT_EQ(a.scheduled, origin + 560ms);

    for (std::size_t i = 7; i < 10; ++i) {
        const auto due = origin + static_cast<std::int64_t>(i) * 80ms;
        a = grid.next(due);
        ASSERT_EQ(a.what, action::send);
        EXPECT_EQ(a.seq, i);
        EXPECT_EQ(a.scheduled, due); // one delay never shifts a later deadline
        grid.sent(due);
    }
    EXPECT_EQ(grid.next(origin + 800ms).what, action::done);
}

TEST(packet_grid, start_gate_in_the_past_sends_overdue_packets_at_once) {
    // The reference test: a gate 0.25 s in the past, 8 packets. Packet 0 is >= 0.25 s late and
    // the last one is less than 50 ms late.
    const auto now0 = t_base;
    const auto gate = now0 - 250ms;
    packet_grid grid(8, gate);

    auto now = now0;
    std::vector<pacer::duration> lateness;
    while (true) {
        const auto a = grid.next(now);
        if (a.what == action::done)
            break;
        if (a.what == action::wait) {
            now = a.scheduled;
            continue;
        }
        EXPECT_EQ(a.scheduled, gate + static_cast<std::int64_t>(a.seq) * 80ms);
        lateness.push_back(now - a.scheduled);
        grid.sent(now);
        now += 1ms;
    }
    ASSERT_EQ(lateness.size(), 8u);
    EXPECT_GE(lateness.front(), pacer::duration(250ms));
    EXPECT_LT(lateness.back(), pacer::duration(50ms));
    // Packets 0..3 (due -250, -170, -90, -10 ms) were overdue; 4 (due +70 ms) waited.
    EXPECT_EQ(lateness[3], pacer::duration(10ms + 3ms));
    EXPECT_EQ(lateness[4], pacer::duration(0ms));
}

TEST(packet_grid, done_after_count) {
    packet_grid grid(2, t_base);
    EXPECT_EQ(grid.count(), 2u);
    grid.sent(t_base);
    grid.sent(t_base + 80ms);
    EXPECT_EQ(grid.sent_count(), 2u);
    const auto a = grid.next(t_base + 10s);
    EXPECT_EQ(a.what, action::done);
    // Asking again does not change the answer.
    EXPECT_EQ(grid.next(t_base + 20s).what, action::done);

    // An empty input is done before anything is sent.
    packet_grid empty(0);
    EXPECT_EQ(empty.next(t_base).what, action::done);
    EXPECT_FALSE(empty.origin().has_value());
}

// ---------------------------------------------------------------------------------------------
// End-of-input timing (docs/protocol.md §2.4)

TEST(packet_grid, end_of_input_on_time_is_the_grid_end) {
    // 10.5 packets: 26880 bytes = 840 ms. The tail (packet 10, 1280 bytes = 40 ms) starts on
    // time at +800 ms, so both terms agree on +840 ms.
    const auto origin = t_base;
    const std::size_t bytes = 10 * 2560 + 1280;
    EXPECT_EQ(end_of_input_at(origin, bytes, origin + 800ms, packet_size(bytes, 10)),
              origin + 840ms);
}

TEST(packet_grid, end_of_input_grid_branch) {
    // The last append started before its grid end minus its duration: the grid end wins.
    const auto origin = t_base;
    const std::size_t bytes = 10 * 2560 + 1280; // 840 ms
    EXPECT_EQ(end_of_input_at(origin, bytes, origin + 790ms, std::size_t{1280}), origin + 840ms);
    // 2561 bytes: the grid end is +80.03125 ms; a 1-byte tail sent at +50 ms ends much earlier.
    EXPECT_EQ(end_of_input_at(origin, std::size_t{2561}, origin + 50ms, std::size_t{1}),
              origin + 80ms + 31250ns);
}

TEST(packet_grid, end_of_input_late_last_append_branch) {
    const auto origin = t_base;
    const std::size_t bytes = 10 * 2560 + 1280; // 840 ms, a 40 ms tail
    // Catch-up pushed the tail to +900 ms: EOS is its start + its own 40 ms.
    EXPECT_EQ(end_of_input_at(origin, bytes, origin + 900ms, std::size_t{1280}), origin + 940ms);

    // A full last packet adds min(80 ms, its duration) = 80 ms.
    EXPECT_EQ(end_of_input_at(origin, std::size_t{5120}, origin + 1s, std::size_t{2560}),
              origin + 1s + 80ms);

    // A 1-byte tail sent late adds only its own 31.25 us, not 80 ms.
    EXPECT_EQ(end_of_input_at(origin, std::size_t{2561}, origin + 1s, std::size_t{1}),
              origin + 1s + 31250ns);
}

TEST(packet_grid, end_of_input_with_a_manual_time_point) {
    const other_time_point origin = other_time_point{} + 5s;
    EXPECT_EQ(end_of_input_at(origin, std::size_t{2560 * 3}, origin + 100ms, std::size_t{2560}),
              origin + 240ms);
    EXPECT_EQ(end_of_input_at(origin, std::size_t{2560 * 3}, origin + 300ms, std::size_t{2560}),
              origin + 380ms);
}

// ---------------------------------------------------------------------------------------------
// The Clock seam (the Clock seam): the grid is a template on its time point so that a
// session can be driven by a manual clock. Its actions must then speak that time point too.

template <class TimePoint>
void drive_grid_with(TimePoint origin) {
    using grid_type = basic_packet_grid<TimePoint>;
    using action_type = decltype(std::declval<const grid_type&>().next(origin));
    using scheduled_type = decltype(std::declval<action_type>().scheduled);
    // Whatever shape a fix gives the action, its `what` names send, wait and done.
    using kind = decltype(std::declval<action_type>().what);
    if constexpr (std::is_same_v<scheduled_type, TimePoint>) {
        // A stall of 250 ms before packet 3 of 6, with time advanced only by the test.
        TimePoint now = origin;
        grid_type grid(6, origin);
        std::vector<typename TimePoint::duration> lateness;
        while (true) {
            const auto a = grid.next(now);
            if (a.what == kind::done)
                break;
            if (a.what == kind::wait) {
                now = a.scheduled; // the (zero-wait) timer fires at the deadline
                continue;
            }
            if (a.seq == 3)
                now += 250ms;
            lateness.push_back(now - a.scheduled);
            grid.sent(now);
        }
        ASSERT_EQ(lateness.size(), 6u);
        EXPECT_EQ(lateness[3], std::chrono::nanoseconds(250ms));
        EXPECT_EQ(lateness[4], std::chrono::nanoseconds(170ms));
        EXPECT_EQ(lateness[5], std::chrono::nanoseconds(90ms));
    } else {
        ADD_FAILURE() << "basic_packet_grid<TimePoint>::next() returns a pacing_action whose "
                         "`scheduled` is pacer::time_point, not TimePoint: the grid cannot be "
                         "instantiated with a manual clock's time point (its body does not "
                         "compile), so the Clock seam is broken";
    }
}

TEST(packet_grid, works_with_a_manual_clock_time_point) {
    drive_grid_with(other_time_point{} + 10s);
}

TEST(packet_grid, works_with_the_real_clock_time_point) {
    drive_grid_with(t_base);
}

} // namespace

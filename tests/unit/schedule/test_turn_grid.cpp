// Multi-turn sessions (docs/scenarios.md), sans-io with a manual clock: the turns on one grid
// (schedule/turn_grid.hpp), the two protocol machines per turn and per barge-in, and the
// per-turn timeline (session/turn_timeline.hpp).

#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/native_session.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/schedule/turn_grid.hpp>
#include <pacer/session/turn_timeline.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace {

using namespace std::chrono_literals;
using pacer::duration;
using pacer::time_point;
using pacer::schedule::turn_action;
using pacer::schedule::turn_grid;
using pacer::schedule::turn_layout;
using gk = turn_action::kind;

constexpr std::size_t packet = pacer::schedule::packet_bytes; // 80 ms at 16 kHz
const time_point t0 = time_point{} + 1000s;

time_point slot(std::size_t k) {
    return t0 + k * 80ms;
}

// One step of a grid driven on time: waits are taken to their deadline, sends go at once.
struct step {
    gk what;
    std::size_t seq, slot, turn;
    bool silence, barge_in;
    time_point at;
};

std::vector<step> drive(turn_grid& g, time_point& now, std::size_t max_steps = 200) {
    std::vector<step> out;
    for (std::size_t i = 0; i < max_steps; ++i) {
        const auto a = g.next(now);
        if (a.what == gk::wait) {
            EXPECT_GE(a.scheduled, now);
            now = a.scheduled;
            continue;
        }
        out.push_back({a.what, a.seq, a.slot, a.turn, a.silence, a.barge_in, a.scheduled});
        if (a.what == gk::done)
            break;
        if (a.what == gk::send)
            g.sent(now);
    }
    return out;
}

TEST(TurnGrid, OneTurnIsThePacketGrid) {
    // 2.5 packets: the same deadlines and numbering as packet_grid, and nothing after them.
    const std::size_t bytes = packet * 5 / 2;
    turn_grid g({{bytes, {}, {}}}, true, t0);
    pacer::schedule::packet_grid p(pacer::schedule::packet_count(bytes), t0);
    time_point now = t0;
    for (;;) {
        const auto a = g.next(now);
        const auto b = p.next(now);
        if (b.what == pacer::schedule::pacing_action::kind::done) {
            EXPECT_EQ(a.what, gk::done);
            break;
        }
        EXPECT_EQ(a.seq, b.seq);
        EXPECT_EQ(a.scheduled, b.scheduled);
        if (b.what == pacer::schedule::pacing_action::kind::wait) {
            EXPECT_EQ(a.what, gk::wait);
            now = b.scheduled;
        } else {
            EXPECT_EQ(a.what, gk::send);
            g.sent(now);
            p.sent(now);
        }
    }
    EXPECT_EQ(g.sent_count(), 3u);
}

TEST(TurnGrid, PausesAreSilencePacketsOnTheSameGrid) {
    // Turn 0: 2 packets, a 200 ms pause (3 slots); turn 1: 1 packet.
    turn_grid g({{2 * packet, 200ms, {}}, {packet, {}, {}}}, true, t0);
    time_point now = t0;
    const auto steps = drive(g, now);
    ASSERT_EQ(steps.size(), 9u);
    // seq 0-1: turn 0's audio on slots 0-1; its end at slot 2's instant; silence on 2-4;
    // turn 1 on slot 5, its end at slot 6, done.
    EXPECT_EQ(steps[0].what, gk::send);
    EXPECT_EQ(steps[1].slot, 1u);
    EXPECT_EQ(steps[2].what, gk::turn_end);
    EXPECT_EQ(steps[2].turn, 0u);
    EXPECT_EQ(steps[2].at, slot(2));
    for (std::size_t i = 3; i < 6; ++i) {
        EXPECT_EQ(steps[i].what, gk::send);
        EXPECT_TRUE(steps[i].silence);
        EXPECT_EQ(steps[i].slot, i - 1);
        EXPECT_EQ(steps[i].at, slot(i - 1)); // on the grid anchored at packet 0
    }
    EXPECT_EQ(steps[6].what, gk::send);
    EXPECT_EQ(steps[6].turn, 1u);
    EXPECT_EQ(steps[6].seq, 5u);
    EXPECT_EQ(steps[6].slot, 5u);
    EXPECT_FALSE(steps[6].silence);
    EXPECT_EQ(steps[7].what, gk::turn_end); // the last turn's end too (multi-turn)
    EXPECT_EQ(steps[7].at, slot(6));
    EXPECT_EQ(steps[8].what, gk::done);
    EXPECT_EQ(g.start_slot(1), 5u);
}

TEST(TurnGrid, NoPacketPausesSkipTheirSlots) {
    // The same turns with pause_audio none: turn 1 still on slot 5, but as append 2.
    turn_grid g({{2 * packet, 200ms, {}}, {packet, {}, {}}}, false, t0);
    time_point now = t0;
    const auto steps = drive(g, now);
    ASSERT_EQ(steps.size(), 6u);
    EXPECT_EQ(steps[2].what, gk::turn_end);
    EXPECT_EQ(steps[3].what, gk::send);
    EXPECT_EQ(steps[3].seq, 2u);
    EXPECT_EQ(steps[3].slot, 5u);
    EXPECT_EQ(steps[3].at, slot(5));
    EXPECT_EQ(g.sent_count(), 3u);
}

TEST(TurnGrid, AShortLastPacketEndsTheTurnEarlyButTheNextTurnStaysOnTheGrid) {
    // Turn 0: 1.5 packets (ends 40 ms into slot 1), no pause: turn 1 starts on slot 2.
    turn_grid g({{packet * 3 / 2, {}, {}}, {packet, {}, {}}}, true, t0);
    time_point now = t0;
    const auto steps = drive(g, now);
    EXPECT_EQ(steps[2].what, gk::turn_end);
    EXPECT_EQ(steps[2].at, slot(1) + 40ms);
    EXPECT_EQ(steps[3].slot, 2u);
    EXPECT_EQ(steps[3].at, slot(2));
}

TEST(TurnGrid, ALateSenderCatchesUpWithoutShiftingTheGrid) {
    turn_grid g({{packet, 80ms, {}}, {packet, {}, {}}}, true, t0);
    time_point now = t0;
    EXPECT_EQ(g.next(now).what, gk::send);
    g.sent(now);
    now = slot(2) + 10ms; // woke 170 ms late: the turn end, the silence and turn 1 are all due
    EXPECT_EQ(g.next(now).what, gk::turn_end);
    auto a = g.next(now);
    EXPECT_TRUE(a.silence);
    EXPECT_EQ(a.scheduled, slot(1));
    g.sent(now);
    a = g.next(now);
    EXPECT_EQ(a.turn, 1u);
    EXPECT_EQ(a.scheduled, slot(2));
}

TEST(TurnGrid, BargeInStartsTheNextTurnAfterTheAssistantsAudioBegan) {
    // Turn 0: 1 packet, a 1 s pause, interrupt_after 150 ms.
    turn_grid g({{packet, 1s, 150ms}, {packet, {}, {}}}, true, t0);
    time_point now = t0;
    g.next(now);
    g.sent(now);
    now = slot(1);
    EXPECT_EQ(g.next(now).what, gk::turn_end);
    // Audio before the turn's end would not count; this reply begins 100 ms after it.
    auto a = g.next(now);
    EXPECT_TRUE(a.silence); // slot 1
    g.sent(now);
    g.assistant_audio(slot(1) + 100ms);
    g.assistant_audio(slot(1) + 130ms); // only the first counts
    // Target: slot(1) + 250 ms, so the first slot not before it is slot 5 (400 ms).
    std::vector<std::size_t> silence_slots;
    for (;;) {
        a = g.next(now);
        if (a.what == gk::wait) {
            now = a.scheduled;
            continue;
        }
        if (!a.silence)
            break;
        silence_slots.push_back(a.slot);
        g.sent(now);
    }
    EXPECT_EQ(silence_slots, (std::vector<std::size_t>{2, 3, 4}));
    EXPECT_EQ(a.turn, 1u);
    EXPECT_EQ(a.slot, 5u);
    EXPECT_TRUE(a.barge_in);
    EXPECT_EQ(a.scheduled, slot(5));
}

TEST(TurnGrid, BargeInWithoutAReplyWaitsForThePause) {
    // No assistant audio: the next turn starts after the pause (240 ms: 3 slots), no barge-in.
    turn_grid g({{packet, 240ms, 100ms}, {packet, {}, {}}}, false, t0);
    time_point now = t0;
    const auto steps = drive(g, now);
    ASSERT_EQ(steps.size(), 5u);
    EXPECT_EQ(steps[2].what, gk::send);
    EXPECT_EQ(steps[2].slot, 4u);
    EXPECT_FALSE(steps[2].barge_in);
}

// The native machine over several turns: nothing sent at a turn's end (the protocol has one
// end of input), silence in the pauses, one `sglang.input_audio.end` after the last turn.
TEST(NativeSessionTurns, StreamsEveryTurnThenOneEndOfInput) {
    using pacer::protocol::driver_action;
    using pacer::protocol::server_event;
    using k = driver_action::kind;
    pacer::protocol::native_session_options o;
    o.pcm_bytes = packet;
    o.origin = t0;
    o.turn_plan = {{packet, 160ms, {}}, {packet, {}, {}}};
    pacer::protocol::native_session m(o);
    EXPECT_EQ(m.expected_appends(), 4u); // 2 audio + 2 silence
    m.on_event(server_event::session_created);
    time_point now = t0 - 1s;
    EXPECT_EQ(m.next(now).what, k::send_update);
    m.on_event(server_event::session_updated);
    std::vector<k> kinds;
    std::vector<std::size_t> turn_of;
    for (int i = 0; i < 50; ++i) {
        const auto a = m.next(now);
        if (a.what == k::wait_until) {
            now = a.at;
            continue;
        }
        kinds.push_back(a.what);
        turn_of.push_back(a.turn);
        if (a.what == k::send_append)
            m.append_sent(now);
        if (a.what == k::send_end || a.what == k::wait_event)
            break;
    }
    EXPECT_EQ(kinds, (std::vector<k>{k::send_append, k::turn_end, k::send_append, k::send_append,
                                     k::send_append, k::turn_end, k::send_end}));
    EXPECT_EQ(turn_of[4], 1u);
    EXPECT_EQ(now, slot(4)); // the end of input: turn 1 (slot 3) + 80 ms
    EXPECT_EQ(m.appends_sent(), m.expected_appends());
}

// openai-realtime manual: commit + response.create at each turn's end, a barge-in's
// interrupt right after its first packet, and the session ends on the last turn's response.
TEST(RealtimeSessionTurns, ManualCommitsEachTurnAndInterruptsOnBargeIn) {
    using pacer::protocol::realtime_action;
    using pacer::protocol::realtime_event;
    using k = realtime_action::kind;
    pacer::protocol::realtime_session_options o;
    o.protocol = pacer::protocol::realtime_protocol::openai;
    o.turns = pacer::protocol::realtime_turns::manual;
    o.pcm_bytes = packet;
    o.origin = t0;
    o.pause_packets = false;
    o.turn_plan = {{packet, 1s, 80ms}, {packet, {}, {}}};
    pacer::protocol::realtime_session m(o);
    time_point now = t0 - 1s;
    m.on_event(realtime_event::session_created, now);
    EXPECT_EQ(m.next(now).what, k::send_update);
    m.on_event(realtime_event::session_updated, now);
    std::vector<k> kinds;
    for (int i = 0; i < 100 && kinds.size() < 9; ++i) {
        const auto a = m.next(now);
        if (a.what == k::wait_until) {
            now = a.at;
            continue;
        }
        if (a.what == k::wait_event)
            break;
        kinds.push_back(a.what);
        if (a.what == k::send_append)
            m.append_sent(now);
        if (a.what == k::send_response && kinds.size() == 4)
            m.on_event(realtime_event::audio_delta, now + 10ms); // the reply begins
    }
    // The reply began at slot 1 + 10 ms: the barge-in goes on slot 3 (the first not before
    // +90 ms), then the interrupt, then the last turn's end, its commit and response.
    EXPECT_EQ(kinds, (std::vector<k>{k::send_append, k::turn_end, k::send_commit, k::send_response,
                                     k::send_append, k::send_interrupt, k::turn_end, k::send_commit,
                                     k::send_response}));
    EXPECT_EQ(m.appends_sent(), 2u);
    EXPECT_EQ(m.expected_appends(), 2u);
    // The first response's done does not end the session; the second's does.
    m.on_event(realtime_event::response_done, now);
    EXPECT_EQ(m.next(now).what, k::wait_event);
    m.on_event(realtime_event::response_done, now);
    EXPECT_EQ(m.next(now).what, k::close);
    EXPECT_TRUE(m.finished());
}

TEST(TurnTimeline, AttributesAudioToTurnsAndMeasuresTheInterruption) {
    pacer::session::turn_timeline tl(2);
    const auto at = [](int ms) { return t0 + std::chrono::milliseconds(ms); };
    tl.turn_started(0, at(0), false);
    tl.audio(at(50), 100ms); // before turn 0 ended: nobody's
    tl.turn_ended(0, at(500));
    tl.committed(0, at(500));
    tl.speech_stopped(at(600));
    tl.audio(at(700), 200ms);  // turn 0's reply: plays 700-900
    tl.audio(at(800), 200ms);  // queued: plays 900-1100
    tl.audio(at(1200), 200ms); // the player ran dry 1100-1200: one underrun of 100 ms
    // The user barges in at 1300: played 600 ms of 600 received? 1200+200 = 1400 queued end,
    // so 100 ms still queued: played 500 ms.
    tl.turn_started(1, at(1300), true);
    tl.audio(at(1350), 40ms); // after the interruption, still turn 0's (turn 1 not ended)
    tl.turn_ended(1, at(1800));
    tl.audio(at(1900), 80ms); // turn 1's reply
    const auto r = tl.results();
    ASSERT_EQ(r.size(), 2u);
    EXPECT_NEAR(*r[0].speech_end_s - *r[0].start_s, 0.5, 1e-9);
    EXPECT_NEAR(*r[0].first_audio_s - *r[0].speech_end_s, 0.2, 1e-9);
    EXPECT_NEAR(*r[0].first_audio_s - *r[0].speech_stopped_s, 0.1, 1e-9);
    EXPECT_NEAR(*r[0].first_audio_s - *r[0].commit_s, 0.2, 1e-9);
    EXPECT_NEAR(r[0].audio_s, 0.64, 1e-9);
    EXPECT_EQ(r[0].underruns, 1u);
    EXPECT_NEAR(r[0].gap_s, 0.1, 1e-9);
    EXPECT_NEAR(*r[0].played_s, 0.5, 1e-9);
    EXPECT_NEAR(r[0].audio_after_interrupt_s, 0.04, 1e-9);
    EXPECT_NEAR(*r[0].last_audio_s - *r[0].interrupted_s, 0.05, 1e-9); // interruption latency
    EXPECT_TRUE(r[1].barge_in);
    EXPECT_NEAR(*r[1].first_audio_s - *r[1].speech_end_s, 0.1, 1e-9);
    EXPECT_FALSE(r[1].speech_stopped_s);
    EXPECT_FALSE(r[1].interrupted_s);
}

} // namespace

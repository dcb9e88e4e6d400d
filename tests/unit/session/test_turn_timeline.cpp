// The per-turn timeline (session/turn_timeline.hpp), sans-io with a manual clock: which turn a
// reply belongs to (the response's trigger for protocols that name responses), the voice end
// on the packet grid, and the simulated player's underruns (docs/scenarios.md).

#include <pacer/session/turn_timeline.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using pacer::duration;
using pacer::time_point;
using pacer::session::turn_timeline;

const time_point t0 = time_point{} + 1000s;
time_point at(int ms) {
    return t0 + std::chrono::milliseconds(ms);
}
double s(int ms) {
    return pacer::to_seconds(at(ms));
}

// One turn of 1.2 s on the grid from `start` (15 packets of 80 ms, each sent on its deadline):
// 0.48 s of voice then 0.72 s of silence, as a WAV padded with silence for server VAD.
void stream_turn(turn_timeline& tl, std::size_t j, int start) {
    tl.turn_started(j, at(start), false);
    for (int k = 0; k < 15; ++k)
        tl.packet_sent(j, static_cast<std::size_t>(k), at(start + 80 * k), at(start + 80 * k));
}

// A server-VAD reply: response.created, then `deltas` deltas of 80 ms, 80 ms apart.
void reply(turn_timeline& tl, const std::string& id, int first, int deltas) {
    tl.response_seen(id, at(first));
    for (int k = 0; k < deltas; ++k)
        tl.audio(at(first + 80 * k), 80ms, id);
}

// The case of issue 39: the server hears the silence inside the WAV and answers before the
// WAV's end. The time rule ("audio at t belongs to the latest turn whose speech had ended by
// t") credited the reply's start to nobody, and the next turn's reply (which also starts before
// its WAV's end) to the previous turn: two replies merged. A reply belongs to the turn whose
// speech_stopped preceded its response, whenever its audio arrives.
TEST(TurnAttribution, AReplyStartingBeforeTheWavsEndIsItsTurnsReply) {
    turn_timeline tl(2, {480ms, 480ms});
    stream_turn(tl, 0, 0);
    tl.speech_stopped(at(800));       // 480 ms voice + 240 ms VAD silence + the 80 ms window
    reply(tl, "response_0", 900, 5);  // 900 ... 1220 ms
    tl.turn_ended(0, at(1200));       // the WAV's end, after the reply began
    reply(tl, "response_0", 1300, 4); // the rest of it: 1300 ... 1540 (a 0 ms gap at 1300)
    stream_turn(tl, 1, 2000);
    tl.speech_stopped(at(2800));
    reply(tl, "response_1", 2900, 9); // 2900 ... 3540, across turn 1's end at 3200
    tl.turn_ended(1, at(3200));

    const auto r = tl.results();
    ASSERT_EQ(r.size(), 2u);
    EXPECT_DOUBLE_EQ(*r[0].first_audio_s, s(900));
    EXPECT_DOUBLE_EQ(*r[0].last_audio_s, s(1540));
    EXPECT_NEAR(r[0].audio_s, 0.72, 1e-9);
    EXPECT_EQ(r[0].response_id, "response_0");
    EXPECT_DOUBLE_EQ(*r[0].voice_end_s, s(480));
    EXPECT_NEAR(*r[0].first_audio_s - *r[0].speech_stopped_s, 0.1, 1e-9);
    EXPECT_NEAR(*r[0].first_audio_s - *r[0].speech_end_s, -0.3, 1e-9); // before the WAV's end
    EXPECT_DOUBLE_EQ(*r[1].first_audio_s, s(2900));
    EXPECT_DOUBLE_EQ(*r[1].last_audio_s, s(3540));
    EXPECT_NEAR(r[1].audio_s, 0.72, 1e-9);
    EXPECT_EQ(r[1].response_id, "response_1");
    EXPECT_DOUBLE_EQ(*r[1].voice_end_s, s(2480));
    for (const auto& t : r) {
        EXPECT_EQ(t.underruns, 0u);
        EXPECT_EQ(t.unsolicited, 0u);
    }
}

// A response the server starts with no turn's commit or speech_stopped before it is
// unsolicited: counted on the turn under way, its audio nobody's reply.
TEST(TurnAttribution, AResponseWithNoTurnBeforeItIsUnsolicited) {
    turn_timeline tl(2);
    tl.turn_started(0, at(0), false);
    reply(tl, "greeting", 10, 3); // before anything of the user's ended
    tl.turn_ended(0, at(500));
    tl.committed(0, at(500));
    reply(tl, "answer_0", 700, 2);
    reply(tl, "again", 900, 2); // no second trigger for it
    tl.turn_started(1, at(2000), false);
    tl.turn_ended(1, at(2500));
    tl.committed(1, at(2500));
    reply(tl, "answer_1", 2700, 1);
    const auto r = tl.results();
    EXPECT_EQ(r[0].unsolicited, 2u);
    EXPECT_EQ(r[0].response_id, "answer_0");
    EXPECT_DOUBLE_EQ(*r[0].first_audio_s, s(700));
    EXPECT_DOUBLE_EQ(*r[0].last_audio_s, s(780));
    EXPECT_NEAR(r[0].audio_s, 0.16, 1e-9);
    EXPECT_EQ(r[1].unsolicited, 0u);
    EXPECT_EQ(r[1].response_id, "answer_1");
    EXPECT_DOUBLE_EQ(*r[1].first_audio_s, s(2700));
}

// A response cancelled before it was created (only its response.done names it) still answers
// its trigger: the next response is the next turn's.
TEST(TurnAttribution, ResponsesAnswerTheTriggersInOrder) {
    turn_timeline tl(3);
    for (std::size_t j = 0; j < 3; ++j) {
        tl.turn_started(j, at(1000 * static_cast<int>(j)), false);
        tl.turn_ended(j, at(1000 * static_cast<int>(j) + 400));
        tl.speech_stopped(at(1000 * static_cast<int>(j) + 500));
    }
    tl.response_seen("r0", at(2600)); // response.done cancelled, never started
    reply(tl, "r1", 2700, 1);
    reply(tl, "r2", 2800, 1);
    const auto r = tl.results();
    EXPECT_EQ(r[0].response_id, "r0");
    EXPECT_FALSE(r[0].first_audio_s);
    EXPECT_EQ(r[1].response_id, "r1");
    EXPECT_DOUBLE_EQ(*r[1].first_audio_s, s(2700));
    EXPECT_EQ(r[2].response_id, "r2");
    EXPECT_DOUBLE_EQ(*r[2].first_audio_s, s(2800));
}

// A delta whose response was never announced is tied to a trigger when it first appears.
TEST(TurnAttribution, ADeltaNamingANewResponseTiesItToItsTurn) {
    turn_timeline tl(2);
    tl.turn_started(0, at(0), false);
    tl.speech_stopped(at(300));
    tl.audio(at(350), 80ms, "r0");
    tl.turn_ended(0, at(500));
    const auto r = tl.results();
    EXPECT_EQ(r[0].response_id, "r0");
    EXPECT_DOUBLE_EQ(*r[0].first_audio_s, s(350));
}

// The voice end: the last voiced frame's end on the grid, where its packet's audio plays out
// (the later of the packet's deadline and its send start, + the frame's place in the packet).
// A turn without voice has none.
TEST(TurnAttribution, TheVoiceEndIsOnItsPacketsPlayOut) {
    turn_timeline tl(2, {std::chrono::milliseconds(430), std::nullopt});
    tl.turn_started(0, at(0), false);
    for (int k = 0; k < 8; ++k) // packet 5 (400-480 ms of the audio) goes 3 ms late
        tl.packet_sent(0, static_cast<std::size_t>(k), at(80 * k), at(80 * k + (k == 5 ? 3 : 0)));
    tl.turn_started(1, at(1000), false);
    for (int k = 0; k < 3; ++k)
        tl.packet_sent(1, static_cast<std::size_t>(k), at(1000 + 80 * k), at(1000 + 80 * k));
    const auto r = tl.results();
    EXPECT_DOUBLE_EQ(*r[0].voice_end_s, s(433));
    EXPECT_FALSE(r[1].voice_end_s);
}

// The simulated player: a gap shorter than the tolerance (5 ms) is no underrun; every gap is
// still in `gap_s`, the underruns' in `underrun_s`.
TEST(TurnAttribution, PlayerGapsUnderTheToleranceAreNoUnderruns) {
    turn_timeline tl(1);
    tl.turn_started(0, at(0), false);
    tl.turn_ended(0, at(500));
    tl.audio(at(600), 80ms);
    tl.audio(at(684), 80ms); // 4 ms after the queue ran dry: no underrun
    tl.audio(at(784), 80ms); // 20 ms: an underrun
    const auto r = tl.results();
    EXPECT_EQ(r[0].underruns, 1u);
    EXPECT_NEAR(r[0].underrun_s, 0.020, 1e-9);
    EXPECT_NEAR(r[0].gap_s, 0.024, 1e-9);
}

} // namespace

namespace {

// vllm-omni: the whole 800 ms reply arrived at once, before the barge-in; the listener had
// played 600 ms of it when turn 1 barged in, and its clear was answered 30 ms later. The
// audio stopped for the listener there: the interruption latency is 30 ms, not 0 (its last
// delta came before the barge-in) and not the 200 ms the tail would have played.
TEST(TurnAttribution, AClearStopsTheInterruptedRepliesAudioForTheListener) {
    turn_timeline tl(2);
    tl.turn_started(0, at(0), false);
    tl.turn_ended(0, at(1000));
    tl.committed(0, at(1000));
    tl.response_seen("resp_0", at(1001));
    tl.audio(at(1001), 800ms, "resp_0");
    tl.turn_started(1, at(1601), true);
    tl.output_cleared("resp_0", at(1631));
    tl.output_cleared("resp_9", at(1640)); // no such response: nothing
    const auto r = tl.results();
    ASSERT_TRUE(r[0].output_stopped_s);
    EXPECT_DOUBLE_EQ(*r[0].output_stopped_s, s(1631));
    EXPECT_FALSE(r[1].output_stopped_s);
}

// A clear answered after the tail had played out: the audio stopped where it ended.
TEST(TurnAttribution, AClearAfterThePlayOutStopsNothingLater) {
    turn_timeline tl(2);
    tl.turn_started(0, at(0), false);
    tl.turn_ended(0, at(1000));
    tl.committed(0, at(1000));
    tl.response_seen("resp_0", at(1000));
    tl.audio(at(1000), 800ms, "resp_0");
    tl.turn_started(1, at(1700), true);
    tl.output_cleared("resp_0", at(1900));
    EXPECT_DOUBLE_EQ(*tl.results()[0].output_stopped_s, s(1800));
}

} // namespace

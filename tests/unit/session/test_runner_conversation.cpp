// A conversation as `run` and `serve` plan it (session::conversation_plan) and as its
// per-session rows are written (turns.jsonl, metrics::append_turn_rows): docs/scenarios.md.

#include <pacer/metrics/realtime.hpp>
#include <pacer/schedule/scenario.hpp>
#include <pacer/session/runner.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace pacer;
using namespace std::chrono_literals;

// Two turns of the session's input with a 0.3-0.5 s pause, then 0.1 s of silence.
session::conversation_plan plan() {
    auto sc = schedule::parse_scenario(
        R"({"turns":[{"audio":"input","pause":{"min":"0.3s","max":"0.5s"}},)"
        R"({"audio":"input","pause":"0.2s","interrupt_after":"0.1s"},{"audio":"silence:0.1s"}]})",
        "talk.json");
    session::conversation_plan p;
    p.turns.resize(3);
    p.turns[2].pcm = protocol::pcm_input::silence(3200); // 0.1 s at 16 kHz, held nowhere
    p.scenario = std::make_shared<const schedule::scenario>(std::move(sc));
    return p;
}

TEST(ConversationPlan, WithoutAScenarioIsTheInputAlone) {
    const session::conversation_plan none;
    EXPECT_FALSE(none);
    EXPECT_EQ(none.name(), "single");
    EXPECT_FALSE(none.barge_in());
    EXPECT_EQ(none.length(16000), 500ms);             // 0.5 s of input
    EXPECT_EQ(none.streamed_bytes(16000, 7), 16000u); // what it is, whatever the count
}

TEST(ConversationPlan, LengthPutsEachTurnOnWholeSlotsThenItsLongestPause) {
    const auto p = plan();
    EXPECT_TRUE(p);
    EXPECT_EQ(p.name(), "talk.json");
    EXPECT_TRUE(p.barge_in());
    // An input of 0.2 s + one byte pair takes 3 slots (240 ms) per turn; the silence turn 2
    // slots (0.1 s); pauses at their longest: 0.5 s and 0.2 s.
    EXPECT_EQ(p.length(6402), 240ms + 500ms + 240ms + 200ms + 160ms);
}

TEST(ConversationPlan, StreamedBytesAreWholePacketsButTheLastTurnsLast) {
    const auto p = plan();
    // 12 appends: 11 of 80 ms (turns padded to the grid, pauses' silence), then the silence
    // turn's short last packet: 0.1 s is 3,200 bytes, its second packet 640.
    EXPECT_EQ(p.streamed_bytes(6402, 12), 11u * 2560 + 640);
    // A last turn of the session's input: its own last packet (of 6,402 bytes: 1,282).
    auto q = plan();
    q.turns[2].pcm = protocol::pcm_input{};
    EXPECT_EQ(q.streamed_bytes(6402, 5), 4u * 2560 + 1282);
}

std::vector<boost::json::object> rows(std::uint32_t session,
                                      const std::vector<trace::turn_result>& turns) {
    std::string text;
    metrics::append_turn_rows(text, session, turns);
    std::vector<boost::json::object> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(boost::json::parse(line).as_object());
    return out;
}

// Each figure sits beside the instants it is the difference of; what a turn lacks is null.
TEST(TurnRows, OneLinePerTurnEachFigureBesideItsReferencePoints) {
    trace::turn_result answered;
    answered.start_s = 10.0;
    answered.speech_end_s = 10.5;
    answered.commit_s = 10.25;
    answered.first_audio_s = 11.0;
    answered.last_audio_s = 12.0;
    answered.audio_s = 1.0;
    answered.underruns = 2;
    answered.gap_s = 0.125;
    answered.interrupted_s = 11.5; // the next turn barged in half-way through the reply
    answered.played_s = 0.25;
    answered.audio_after_interrupt_s = 0.375;
    trace::turn_result barge_in;
    barge_in.start_s = 11.5;
    barge_in.barge_in = true;
    barge_in.speech_end_s = 12.0;
    barge_in.speech_stopped_s = 12.5; // no reply came

    const auto r = rows(7, {answered, barge_in});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].at("session").to_number<int>(), 7);
    EXPECT_EQ(r[0].at("turn").to_number<int>(), 0);
    EXPECT_FALSE(r[0].at("barge_in").as_bool());
    EXPECT_DOUBLE_EQ(r[0].at("speech_end_s").as_double(), 10.5);
    EXPECT_DOUBLE_EQ(r[0].at("first_audio_s").as_double(), 11.0);
    EXPECT_DOUBLE_EQ(r[0].at("ttfa_from_speech_end_s").as_double(), 0.5);
    EXPECT_DOUBLE_EQ(r[0].at("ttfa_from_commit_s").as_double(), 0.75);
    EXPECT_TRUE(r[0].at("speech_stopped_s").is_null());
    EXPECT_TRUE(r[0].at("ttfa_from_speech_stopped_s").is_null());
    EXPECT_DOUBLE_EQ(r[0].at("response_duration_s").as_double(), 1.0);
    EXPECT_DOUBLE_EQ(r[0].at("interrupted_s").as_double(), 11.5);
    EXPECT_DOUBLE_EQ(r[0].at("interrupt_latency_s").as_double(), 0.5); // 12.0 - 11.5
    EXPECT_DOUBLE_EQ(r[0].at("audio_after_interrupt_s").as_double(), 0.375);
    EXPECT_DOUBLE_EQ(r[0].at("played_at_interrupt_s").as_double(), 0.25);
    EXPECT_DOUBLE_EQ(r[0].at("player_gap_s").as_double(), 0.125);
    EXPECT_EQ(r[0].at("underruns").to_number<int>(), 2);

    EXPECT_EQ(r[1].at("turn").to_number<int>(), 1);
    EXPECT_TRUE(r[1].at("barge_in").as_bool());
    EXPECT_DOUBLE_EQ(r[1].at("speech_stopped_s").as_double(), 12.5);
    for (const char* k : {"first_audio_s", "ttfa_from_speech_end_s", "ttfa_from_speech_stopped_s",
                          "response_duration_s", "interrupt_latency_s", "player_gap_s"})
        EXPECT_TRUE(r[1].at(k).is_null()) << k;
    // The same turns pooled as summary.json has them: the rows agree with `turns.all`.
    const std::vector<std::vector<trace::turn_result>> sessions{{answered, barge_in}};
    const auto all = metrics::turn_metrics_json(sessions).at("all").as_object();
    EXPECT_EQ(all.at("turns").to_number<int>(), 2);
    EXPECT_EQ(all.at("answered").to_number<int>(), 1);
    EXPECT_EQ(all.at("interrupted").to_number<int>(), 1);
    EXPECT_DOUBLE_EQ(all.at("ttfa_from_speech_end_s").at("p95").as_double(), 0.5);
    EXPECT_DOUBLE_EQ(all.at("interrupt_latency_s").at("max").as_double(), 0.5);
}

// Voice-to-voice beside the voice end, the response the reply was tied to, the underruns'
// time and the unsolicited responses; every time and duration in plain decimals, to the
// microsecond (0.1 + 0.7 is 0.7999999999999999 in binary: the row says 0.8).
TEST(TurnRows, VoiceToVoiceAndPlainDecimals) {
    trace::turn_result t;
    t.start_s = 848.1;
    t.voice_end_s = 848.289;
    t.speech_end_s = 848.768;
    t.speech_stopped_s = 848.7690001;
    t.first_audio_s = 848.7690004;
    t.last_audio_s = 0.1 + 0.7 + 848.7690004;
    t.audio_s = 0.1 + 0.7;
    t.response_id = "response_3";
    t.underruns = 1;
    t.gap_s = 0.026;
    t.underrun_s = 0.020;
    t.unsolicited = 2;
    trace::turn_result silent; // a turn without voice and without reply
    silent.start_s = 850.0;
    silent.speech_end_s = 851.0;

    std::string text;
    metrics::append_turn_rows(text, 0, std::vector<trace::turn_result>{t, silent});
    EXPECT_EQ(text.find("99999"), std::string::npos) << text;
    EXPECT_EQ(text.find("00001"), std::string::npos) << text;
    const auto r = rows(0, {t, silent});
    EXPECT_EQ(r[0].at("voice_end_s").as_double(), 848.289);
    EXPECT_EQ(r[0].at("ttfa_from_voice_end_s").as_double(), 0.48);
    EXPECT_EQ(r[0].at("ttfa_from_speech_end_s").as_double(), 0.001);
    EXPECT_EQ(r[0].at("ttfa_from_speech_stopped_s").as_double(), 0.0);
    EXPECT_EQ(r[0].at("response_duration_s").as_double(), 0.8);
    EXPECT_EQ(r[0].at("audio_s").as_double(), 0.8);
    EXPECT_EQ(r[0].at("response_id").as_string(), "response_3");
    EXPECT_EQ(r[0].at("underrun_s").as_double(), 0.02);
    EXPECT_EQ(r[0].at("player_gap_s").as_double(), 0.026);
    EXPECT_EQ(r[0].at("unsolicited_responses").to_number<int>(), 2);
    for (const char* k : {"voice_end_s", "ttfa_from_voice_end_s", "response_id", "underrun_s"})
        EXPECT_TRUE(r[1].at(k).is_null()) << k;

    // A figure below 1e-4 (the server answered 84 µs after its own speech_stopped) is a plain
    // decimal too, not 8.4e-05 (json_text).
    trace::turn_result quick = t;
    quick.first_audio_s = 848.769184;
    quick.speech_stopped_s = 848.7691;
    std::string quick_text;
    metrics::append_turn_rows(quick_text, 0, std::vector<trace::turn_result>{quick});
    EXPECT_NE(quick_text.find("\"ttfa_from_speech_stopped_s\":0.000084,"), std::string::npos)
        << quick_text;
    EXPECT_EQ(quick_text.find("e-"), std::string::npos) << quick_text;

    const std::vector<std::vector<trace::turn_result>> sessions{{t, silent}};
    const auto all = metrics::turn_metrics_json(sessions).at("all").as_object();
    EXPECT_EQ(all.at("ttfa_from_voice_end_s").at("p50").as_double(), 0.48);
    EXPECT_EQ(all.at("ttfa_from_voice_end_s").at("count").to_number<int>(), 1);
    EXPECT_EQ(all.at("underrun_s").at("max").as_double(), 0.02);
    EXPECT_EQ(all.at("unsolicited_responses").to_number<int>(), 2);
}

} // namespace

// The per-turn line of `pacer run`'s table (run/turn_line.hpp), from summaries written here:
// voice-to-voice where the summary has it, the input's end named as such where it does not,
// the interruption latency only when a turn was interrupted, nothing for a single-turn run.

#include <pacer/run/turn_line.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

namespace json = boost::json;

json::object summary_of(const std::string& turns_all) {
    return json::parse(R"({"server":{},"turns":{"by_turn":[],"all":)" + turns_all + "}}")
        .as_object();
}

TEST(TurnLine, ShowsVoiceToVoiceAndInterruptionLatency) {
    const auto line = pacer::run::turn_line(summary_of(
        R"({"turns":8,"answered":7,"interrupted":2,"underruns":0,"unsolicited_responses":1,
            "ttfa_from_voice_end_s":{"count":7,"p50":0.4801,"p95":0.53,"max":0.6},
            "ttfa_from_speech_end_s":{"count":7,"p50":0.0004,"p95":0.001,"max":0.002},
            "interrupt_latency_s":{"count":2,"p50":0.04,"p95":0.08,"max":0.08}})"));
    EXPECT_EQ(line, "  turns      7 of 8 answered, 2 interrupted, 1 unsolicited reply; "
                    "voice-to-voice p50 480.10 ms  p95 530.00 ms; interruption latency p50 "
                    "40.00 ms  p95 80.00 ms");
}

TEST(TurnLine, NamesTheInputEndWhenTheVoiceEndIsNotMeasured) {
    // A summary of a pacer that did not measure the voice's end, no turn interrupted, two
    // underruns totalling 0.25 s.
    const auto line = pacer::run::turn_line(summary_of(
        R"({"turns":4,"answered":4,"interrupted":0,"underruns":2,"underrun_s":0.25,
            "ttfa_from_speech_end_s":{"count":4,"p50":0.5,"p95":0.75,"max":0.75},
            "interrupt_latency_s":null})"));
    EXPECT_EQ(line, "  turns      4 of 4 answered, 0 interrupted; first audio after the turn's "
                    "input ended (not the voice's end) p50 500.00 ms  p95 750.00 ms; 2 "
                    "underruns (0.25 s)");
    EXPECT_EQ(line.find("interruption"), std::string::npos);
}

TEST(TurnLine, NoAnsweredVoiceIsADashAndASingleTurnRunHasNoLine) {
    const auto line = pacer::run::turn_line(summary_of(
        R"({"turns":2,"answered":0,"interrupted":0,"underruns":0,
            "ttfa_from_voice_end_s":null,"ttfa_from_speech_end_s":null})"));
    EXPECT_NE(line.find("0 of 2 answered"), std::string::npos) << line;
    EXPECT_NE(line.find("voice-to-voice -"), std::string::npos) << line;
    EXPECT_EQ(pacer::run::turn_line(json::parse(R"({"server":{}})").as_object()), "");
}

} // namespace

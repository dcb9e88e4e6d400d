#include <pacer/metrics/realtime.hpp>
#include <pacer/metrics/slo.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using pacer::metrics::evaluate_slos;
using pacer::metrics::parse_slos;
using pacer::metrics::slo_scope;
using pacer::trace::turn_result;

TEST(Slo, ParsesRatesAndDurations) {
    const auto s = parse_slos("unit-miss-rate=0.01,underrun-ratio=0.02,ttfa-p95=1.5s,"
                              "ttfa-p50=200ms,success-rate=0.99");
    ASSERT_EQ(s.size(), 5u);
    EXPECT_EQ(s[0].name, "unit-miss-rate");
    EXPECT_DOUBLE_EQ(s[0].bound, 0.01);
    EXPECT_FALSE(s[0].at_least);
    EXPECT_DOUBLE_EQ(s[2].bound, 1.5);
    EXPECT_DOUBLE_EQ(s[3].bound, 0.2);
    EXPECT_TRUE(s[4].at_least);
    EXPECT_TRUE(parse_slos("").empty());
}

TEST(Slo, RejectsUnknownNamesBadValuesAndRepeats) {
    for (const char* bad :
         {"latency=1", "unit-miss-rate", "unit-miss-rate=abc", "underrun-ratio=1.5",
          "ttfa-p95=fast", "ttfa-p95=1s,ttfa-p95=2s", "unit-miss-rate=-0.1"})
        EXPECT_THROW(parse_slos(bad), std::invalid_argument) << bad;
}

TEST(Slo, EvaluatesEachCheckAndMissesAbsentFigures) {
    const auto aggregate = boost::json::parse(R"({
        "attempted_sessions": 4, "successful_sessions": 3,
        "underrun_ratio": 0.01,
        "ttfa_s": {"n": 0, "p50": null, "p95": null},
        "units": {"unit_miss_rate": 0.02}
    })")
                               .as_object();
    const auto r = evaluate_slos(
        parse_slos("underrun-ratio=0.02,unit-miss-rate=0.01,success-rate=0.75,ttfa-p95=1s"),
        aggregate);
    const auto& checks = r.at("checks").as_array();
    ASSERT_EQ(checks.size(), 4u);
    EXPECT_TRUE(checks[0].at("met").as_bool());  // 0.01 <= 0.02
    EXPECT_FALSE(checks[1].at("met").as_bool()); // 0.02 > 0.01
    EXPECT_TRUE(checks[2].at("met").as_bool());  // 3/4 >= 0.75
    EXPECT_DOUBLE_EQ(checks[2].at("value").as_double(), 0.75);
    EXPECT_FALSE(checks[3].at("met").as_bool()); // no TTFA at all: missed
    EXPECT_TRUE(checks[3].at("value").is_null());
    EXPECT_FALSE(r.at("met").as_bool());
    EXPECT_TRUE(evaluate_slos(parse_slos("underrun-ratio=0.02"), aggregate).at("met").as_bool());
}

// The SLOs on a conversation's turns are known only where the sessions have turns (and
// barge-ins): anywhere else they are refused when parsed, one line that says what they need.
TEST(TurnSlo, IsRefusedWithoutAScenarioThatHasTurnsOrBargeIns) {
    const auto message = [](const char* text, slo_scope scope) {
        try {
            parse_slos(text, scope);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    const auto no_turns = message("ttfa-p95=2s,turn-ttfa-p95=1.5s", {});
    EXPECT_NE(no_turns.find("'turn-ttfa-p95=1.5s'"), std::string::npos) << no_turns;
    EXPECT_NE(no_turns.find("needs --scenario with several turns"), std::string::npos) << no_turns;
    EXPECT_EQ(no_turns.find('\n'), std::string::npos);
    // A multi-turn scenario without a barge-in has no interruption to judge.
    const auto no_barge_in = message("interrupt-latency-p95=200ms", {true, false});
    EXPECT_NE(no_barge_in.find("needs a --scenario with one"), std::string::npos) << no_barge_in;
    EXPECT_EQ(message("turn-ttfa-p95=1.5s", {true, false}), "accepted");

    const auto s = parse_slos("turn-ttfa-p95=1.5s,interrupt-latency-p95=200ms", {true, true});
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].name, "turn-ttfa-p95");
    EXPECT_DOUBLE_EQ(s[0].bound, 1.5);
    EXPECT_FALSE(s[0].at_least);
    EXPECT_EQ(s[1].name, "interrupt-latency-p95");
    EXPECT_DOUBLE_EQ(s[1].bound, 0.2);
    EXPECT_THROW(parse_slos("turn-ttfa-p95=soon", {true, true}), std::invalid_argument);
}

// A level's turns as its sessions recorded them, judged through the same figures summary.json
// carries (turn_metrics_json under the aggregate's `turns`): p95 over every turn of the level.
TEST(TurnSlo, JudgesThePercentilesOfTheLevelsTurns) {
    // Two sessions of ten turns: turn j of session i ends at 10 i + j and its first reply
    // audio comes (i x 10 + j + 1) x 0.1 s later: 0.1 ... 2.0 s over the level's 20 turns.
    std::vector<std::vector<turn_result>> sessions(2);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 10; ++j) {
            turn_result t;
            t.speech_end_s = 10.0 * i + j;
            t.first_audio_s = *t.speech_end_s + (i * 10 + j + 1) * 0.1;
            t.last_audio_s = *t.first_audio_s + 0.5;
            sessions[i].push_back(t);
        }
    // Two barge-ins: one 0.3 s before its reply's last audio, one after the reply had ended
    // (latency 0).
    sessions[0][1].interrupted_s = *sessions[0][1].last_audio_s - 0.3;
    sessions[1][4].interrupted_s = *sessions[1][4].last_audio_s + 1.0;
    boost::json::object aggregate;
    aggregate["turns"] = pacer::metrics::turn_metrics_json(sessions);

    // The p95 of 20 values is the 19th smallest: 1.9 s (the bounds keep clear of rounding).
    const auto ttfa = evaluate_slos(parse_slos("turn-ttfa-p95=1.91s", {true, true}), aggregate);
    EXPECT_TRUE(ttfa.at("met").as_bool());
    EXPECT_NEAR(ttfa.at("checks").as_array()[0].at("value").as_double(), 1.9, 1e-9);
    EXPECT_FALSE(evaluate_slos(parse_slos("turn-ttfa-p95=1.89s", {true, true}), aggregate)
                     .at("met")
                     .as_bool());
    // Interruption latency over the two interrupted turns: 0 and 0.3 s, p95 0.3 s.
    const auto interrupt =
        evaluate_slos(parse_slos("interrupt-latency-p95=290ms", {true, true}), aggregate);
    EXPECT_FALSE(interrupt.at("met").as_bool());
    EXPECT_NEAR(interrupt.at("checks").as_array()[0].at("value").as_double(), 0.3, 1e-9);
    EXPECT_TRUE(evaluate_slos(parse_slos("interrupt-latency-p95=310ms", {true, true}), aggregate)
                    .at("met")
                    .as_bool());
}

// A barge-in scenario whose assistant never spoke in time interrupted nothing: the figure is
// absent and its SLO missed, as any SLO without its figure.
TEST(TurnSlo, MissesALevelWithoutInterruptions) {
    std::vector<std::vector<turn_result>> sessions(1);
    turn_result t;
    t.speech_end_s = 1.0;
    t.first_audio_s = 1.4;
    sessions[0] = {t, t};
    boost::json::object aggregate;
    aggregate["turns"] = pacer::metrics::turn_metrics_json(sessions);
    const auto r = evaluate_slos(
        parse_slos("turn-ttfa-p95=1s,interrupt-latency-p95=1s", {true, true}), aggregate);
    const auto& checks = r.at("checks").as_array();
    EXPECT_TRUE(checks[0].at("met").as_bool());
    EXPECT_NEAR(checks[0].at("value").as_double(), 0.4, 1e-9);
    EXPECT_TRUE(checks[1].at("value").is_null());
    EXPECT_FALSE(checks[1].at("met").as_bool());
    EXPECT_FALSE(r.at("met").as_bool());
}

} // namespace

// --warm-until-stable's rule (docs/telemetry.md) on synthetic samples with known times: no
// clock is read, the "now" of each verdict is given.

#include <pacer/telemetry/stability.hpp>

#include <gtest/gtest.h>

namespace pacer::telemetry {
namespace {

sample power_sample(double t, std::optional<double> w, std::optional<double> c,
                    std::string source = "nvml:0") {
    sample s;
    s.monotonic_s = t;
    s.source = std::move(source);
    s.power_w = w;
    s.temperature_c = c;
    return s;
}

stability_rule rule_10s() {
    stability_rule r;
    r.window = std::chrono::seconds(10);
    r.max_wait = std::chrono::seconds(60);
    return r;
}

TEST(TelemetryStability, TheDefaultsAreThreePercentAndOneDegreeOverThirtySeconds) {
    const stability_rule r;
    EXPECT_DOUBLE_EQ(r.power_fraction, 0.03);
    EXPECT_DOUBLE_EQ(r.temperature_c, 1.0);
    EXPECT_EQ(r.window, std::chrono::seconds(30));
    EXPECT_EQ(r.max_wait, std::chrono::minutes(10));
}

TEST(TelemetryStability, SteadyOnceAWholeWindowIsWithinTheRule) {
    // Warming: power climbs 200 -> 300 W and temperature 40 -> 60 °C over 20 s, then holds
    // at 300 W ± 1 % and 60.0-60.8 °C.
    std::vector<sample> s;
    for (int t = 0; t <= 20; ++t)
        s.push_back(power_sample(100 + t, 200 + 5 * t, 40 + t));
    for (int t = 21; t <= 40; ++t)
        s.push_back(power_sample(100 + t, t % 2 ? 303 : 297, 60 + (t % 5) * 0.2));
    // At 125 s the window (115-125) still holds the climb.
    auto v = judge_stability(s, 100, 125, rule_10s());
    EXPECT_FALSE(v.stable);
    EXPECT_FALSE(v.gave_up);
    EXPECT_NE(v.why.find("nvml:0: power varied"), std::string::npos) << v.why;
    // At 131 s the window (121-131) is all plateau: 6/300 = 2 % and 0.8 °C.
    v = judge_stability(s, 100, 131, rule_10s());
    EXPECT_TRUE(v.stable) << v.why;
    EXPECT_DOUBLE_EQ(v.waited_s, 31);
    ASSERT_EQ(v.sources.size(), 1u);
    EXPECT_NEAR(*v.sources[0].power_spread_fraction, 6.0 / 300.0, 1e-12);
    EXPECT_NEAR(*v.sources[0].temperature_spread_c, 0.8, 1e-9);
    EXPECT_EQ(v.sources[0].samples, 10u);
    // A tighter rule (1 %) is not met by the same plateau.
    auto tight = rule_10s();
    tight.power_fraction = 0.01;
    EXPECT_FALSE(judge_stability(s, 100, 131, tight).stable);
}

TEST(TelemetryStability, TemperatureAloneCanKeepItWaiting) {
    std::vector<sample> s;
    for (int t = 0; t <= 20; ++t)
        s.push_back(power_sample(t, 300, 50 + 0.15 * t)); // 1.35 °C over the last 10 s
    const auto v = judge_stability(s, 0, 20, rule_10s());
    EXPECT_FALSE(v.stable);
    EXPECT_NE(v.why.find("temperature varied 1.35 °C"), std::string::npos) << v.why;
}

TEST(TelemetryStability, AWindowNotYetSampledIsNotSteady) {
    // Flat readings, but only 5 s of them since the wait began.
    std::vector<sample> s;
    for (int t = 0; t <= 5; ++t)
        s.push_back(power_sample(t, 300, 60));
    const auto v = judge_stability(s, 0, 5, rule_10s());
    EXPECT_FALSE(v.stable);
    EXPECT_NE(v.why.find("sampled for less than the 10 s window"), std::string::npos) << v.why;
    // Samples before the wait began do not count as covering the window.
    std::vector<sample> older{power_sample(-20, 300, 60)};
    older.insert(older.end(), s.begin(), s.end());
    EXPECT_FALSE(judge_stability(older, 0, 5, rule_10s()).stable);
}

TEST(TelemetryStability, EveryGpuMustBeSteadyAndFailedReadsAreIgnored) {
    std::vector<sample> s;
    for (int t = 0; t <= 12; ++t) {
        s.push_back(power_sample(t, 300, 60, "nvml:0"));
        s.push_back(power_sample(t, 100 + 10 * t, 60, "nvml:1")); // still climbing
        sample lost = power_sample(t, 900, 99, "nvml:0");
        lost.error = "GPU is lost";
        s.push_back(lost);
    }
    auto v = judge_stability(s, 0, 12, rule_10s());
    EXPECT_FALSE(v.stable);
    ASSERT_EQ(v.sources.size(), 2u);
    EXPECT_TRUE(v.sources[0].stable);
    EXPECT_FALSE(v.sources[1].stable);
    EXPECT_EQ(v.why.find("nvml:0"), std::string::npos) << v.why;
    EXPECT_NE(v.why.find("nvml:1: power varied"), std::string::npos) << v.why;
}

TEST(TelemetryStability, GivesUpAfterTheMaximumWait) {
    std::vector<sample> s;
    for (int t = 0; t <= 70; ++t)
        s.push_back(power_sample(t, 100 + 10 * t, 60));
    EXPECT_FALSE(judge_stability(s, 0, 59, rule_10s()).gave_up);
    const auto v = judge_stability(s, 0, 60, rule_10s());
    EXPECT_FALSE(v.stable);
    EXPECT_TRUE(v.gave_up);
    // Nothing with power or temperature: never steady, so the wait ends at the maximum too.
    const std::vector<sample> none{power_sample(0, std::nullopt, std::nullopt)};
    const auto n = judge_stability(none, 0, 60, rule_10s());
    EXPECT_FALSE(n.stable);
    EXPECT_TRUE(n.gave_up);
    EXPECT_EQ(n.why, "no sample with a power or temperature reading");
    const auto j = stability_json(rule_10s(), v, 3);
    EXPECT_EQ(j.at("warmup_runs").as_uint64(), 3u);
    EXPECT_DOUBLE_EQ(j.at("rule").at("window_s").as_double(), 10);
    EXPECT_TRUE(j.at("gave_up").as_bool());
    EXPECT_TRUE(j.at("why_not").is_string());
}

} // namespace
} // namespace pacer::telemetry

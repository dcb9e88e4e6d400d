#include <pacer/metrics/slo.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using pacer::metrics::evaluate_slos;
using pacer::metrics::parse_slos;

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

} // namespace

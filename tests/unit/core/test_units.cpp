// Unit tests of command-line duration parsing.

#include <pacer/core/units.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string_view>

namespace {

using namespace std::chrono_literals;
using pacer::parse_duration;

TEST(parse_duration, accepts_the_documented_forms) {
    EXPECT_EQ(parse_duration("30s"), std::chrono::nanoseconds(30s));
    EXPECT_EQ(parse_duration("1.5s"), std::chrono::nanoseconds(1500ms));
    EXPECT_EQ(parse_duration("250ms"), std::chrono::nanoseconds(250ms));
    EXPECT_EQ(parse_duration("2m"), std::chrono::nanoseconds(120s));
    EXPECT_EQ(parse_duration("1h"), std::chrono::nanoseconds(3600s));
    EXPECT_EQ(parse_duration("10"), std::chrono::nanoseconds(10s)); // bare seconds
}

TEST(parse_duration, accepts_other_units_and_fractions) {
    EXPECT_EQ(parse_duration("0"), std::chrono::nanoseconds(0));
    EXPECT_EQ(parse_duration("0s"), std::chrono::nanoseconds(0));
    EXPECT_EQ(parse_duration("0.08s"), std::chrono::nanoseconds(80ms));
    EXPECT_EQ(parse_duration("0.5ms"), std::chrono::nanoseconds(500us));
    EXPECT_EQ(parse_duration("750us"), std::chrono::nanoseconds(750us));
    EXPECT_EQ(parse_duration("2min"), std::chrono::nanoseconds(120s));
    EXPECT_EQ(parse_duration("1.25h"), std::chrono::nanoseconds(4500s));
}

TEST(parse_duration, rejects_everything_else) {
    for (std::string_view bad : {"",     "abc",  "-1s", "5x",    "nan",          "1e400s", "s",
                                 "ms",   "-0.5", "inf", "infs",  "-inf",         "1e400",  "30 s",
                                 " 30s", "30s ", "30S", "1.5.s", "99999999999s", "1..5s",  "+1s"}) {
        EXPECT_FALSE(parse_duration(bad).has_value())
            << "accepted \"" << bad << "\" as " << parse_duration(bad)->count() << " ns";
    }
}

TEST(parse_duration, accepts_compound_forms_largest_unit_first) {
    EXPECT_EQ(parse_duration("2m30s"), std::chrono::nanoseconds(150s));
    EXPECT_EQ(parse_duration("1h30m"), std::chrono::nanoseconds(5400s));
    EXPECT_EQ(parse_duration("1h0m5s"), std::chrono::nanoseconds(3605s));
    EXPECT_EQ(parse_duration("1m0.5s"), std::chrono::nanoseconds(60500ms));
    EXPECT_EQ(parse_duration("1s250ms"), std::chrono::nanoseconds(1250ms));
    EXPECT_EQ(parse_duration("2min30s"), std::chrono::nanoseconds(150s));
    EXPECT_EQ(parse_duration("1h2m3s4ms5us"), std::chrono::nanoseconds(1h + 2min + 3s + 4ms + 5us));
    EXPECT_EQ(parse_duration("90"), std::chrono::nanoseconds(90s));
}

TEST(parse_duration, rejects_junk_in_compound_forms) {
    for (std::string_view bad : {"1x", "m", "-1s", "1s2", "1s1h", "1m1m", "30s2m", "1m-30s",
                                 "1m 30s", "2m30", "1h.5m", "1.m", "h1", "1ms2s", "1s+2ms"}) {
        EXPECT_FALSE(parse_duration(bad).has_value())
            << "accepted \"" << bad << "\" as " << parse_duration(bad)->count() << " ns";
    }
}

TEST(parse_duration, rejects_overflow_of_the_sum_and_of_a_term) {
    EXPECT_EQ(parse_duration("2000000h"), std::chrono::nanoseconds(2000000h)); // 7.2e18 ns fits
    EXPECT_FALSE(parse_duration("2500001h").has_value());                      // over 9e18 ns
    EXPECT_FALSE(parse_duration("2400000h9999999m").has_value()); // each fits, the sum does not
    EXPECT_FALSE(parse_duration("99999999999999999999999s").has_value());
}

} // namespace

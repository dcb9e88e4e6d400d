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

} // namespace

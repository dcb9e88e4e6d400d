// Floats printed as the reference harness (Python's repr) prints them: messages such as
// `Session timeout after 90.0s` must match its text byte for byte.

#include <pacer/core/float_repr.hpp>
#include <pacer/core/json_text.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace pacer {
namespace {

TEST(float_repr, whole_numbers_keep_a_decimal_point) {
    EXPECT_EQ(python_float_repr(90.0), "90.0");
    EXPECT_EQ(python_float_repr(4.0), "4.0");
    EXPECT_EQ(python_float_repr(0.0), "0.0");
    EXPECT_EQ(python_float_repr(-0.0), "-0.0");
    EXPECT_EQ(python_float_repr(230.0), "230.0");
    EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
}

TEST(float_repr, fractions_use_the_shortest_round_trip_digits) {
    EXPECT_EQ(python_float_repr(4.5), "4.5");
    EXPECT_EQ(python_float_repr(0.25), "0.25");
    EXPECT_EQ(python_float_repr(1.1), "1.1");
    EXPECT_EQ(python_float_repr(0.1 + 0.2), "0.30000000000000004");
    EXPECT_EQ(python_float_repr(-2.75), "-2.75");
    EXPECT_EQ(python_float_repr(123456.789), "123456.789");
    EXPECT_EQ(python_float_repr(0.0001), "0.0001");
    EXPECT_EQ(python_float_repr(0.00012), "0.00012");
}

TEST(float_repr, scientific_outside_exponents_minus_four_to_fifteen) {
    EXPECT_EQ(python_float_repr(1e16), "1e+16");
    EXPECT_EQ(python_float_repr(2.5e16), "2.5e+16");
    EXPECT_EQ(python_float_repr(1e100), "1e+100");
    EXPECT_EQ(python_float_repr(123456789012345680.0), "1.2345678901234568e+17");
    EXPECT_EQ(python_float_repr(1e-05), "1e-05");
    EXPECT_EQ(python_float_repr(1.5e-07), "1.5e-07");
    EXPECT_EQ(python_float_repr(-3e-300), "-3e-300");
    EXPECT_EQ(python_float_repr(5e-324), "5e-324");
    EXPECT_EQ(python_float_repr(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
}

// The result files' numbers (json_text): the same shortest digits, never in scientific notation
// below 1e16 (issue 39: turns.jsonl wrote `8.4e-05` where people read 0.000084).
TEST(float_repr, plain_float_text_lays_small_numbers_out_in_plain_decimals) {
    EXPECT_EQ(plain_float_text(8.4e-05), "0.000084");
    EXPECT_EQ(plain_float_text(9.75e-05), "0.0000975");
    EXPECT_EQ(plain_float_text(-1.5e-07), "-0.00000015");
    EXPECT_EQ(plain_float_text(1e-05), "0.00001");
    EXPECT_EQ(plain_float_text(0.00012), "0.00012");
    EXPECT_EQ(plain_float_text(0.48), "0.48");
    EXPECT_EQ(plain_float_text(70.0), "70.0");
    EXPECT_EQ(plain_float_text(1e16), "1e+16");
    // Reads back as the same double, as python_float_repr's text does.
    std::mt19937_64 g(7);
    std::uniform_real_distribution<double> exponent(-12, 15);
    for (int i = 0; i < 2000; ++i) {
        const double x = std::pow(10.0, exponent(g));
        const auto text = plain_float_text(x);
        EXPECT_EQ(text.find('e'), std::string::npos) << text;
        EXPECT_EQ(std::strtod(text.c_str(), nullptr), x) << text;
    }
}

TEST(float_repr, non_finite_values) {
    EXPECT_EQ(python_float_repr(std::numeric_limits<double>::quiet_NaN()), "nan");
    EXPECT_EQ(python_float_repr(std::numeric_limits<double>::infinity()), "inf");
    EXPECT_EQ(python_float_repr(-std::numeric_limits<double>::infinity()), "-inf");
}

// The trace lines' and receipts' seconds: the same text as fmt's `{:.9f}` (what pacer wrote
// before), for clock readings, small and large values, exact ties at the tenth decimal (odd
// multiples of 2^-10, e.g. 0.0009765625, which must round the same way), signs and specials.
TEST(float_repr, nine_and_six_decimals_print_as_fmt_does) {
    std::vector<double> xs = {0.0,
                              -0.0,
                              1.0,
                              0.0009765625,
                              -0.0009765625,
                              100.0 + 3.0 / 1024,
                              12.0000000005,
                              0.1,
                              1e-10,
                              123456.789012345678,
                              1e15,
                              1e36,
                              1e300,
                              std::numeric_limits<double>::denorm_min(),
                              std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity()};
    for (int k = 1; k < 2048; k += 2)
        xs.push_back(k / 1024.0 + 7); // every tie of the 1/1024 grid
    std::mt19937_64 rng(14);
    std::uniform_real_distribution<double> uptime(0.0, 4e6); // CLOCK_MONOTONIC seconds
    for (int i = 0; i < 20000; ++i)
        xs.push_back(uptime(rng));
    // Every binary exponent the integer path takes, both signs, up to and past its 2^33 limit,
    // and values a hair below a whole second (the carry into the integer part).
    for (int e = -60; e <= 40; ++e)
        for (int i = 0; i < 200; ++i) {
            const double x = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng), e);
            xs.push_back(i % 2 == 0 ? x : -x);
        }
    for (const double base : {0.0, 1.0, 86399.0, 8589934590.0})
        for (const double below : {5e-10, 4.9999e-10, 5.0001e-10, 1e-12})
            xs.push_back(base + 1.0 - below);
    xs.push_back(std::nextafter(0x1p33, 0.0));
    xs.push_back(0x1p33);
    xs.push_back(-std::nextafter(0x1p33, 0.0));
    for (const double x : xs) {
        std::string ours = "t=";
        append_fixed9(ours, x);
        EXPECT_EQ(ours, fmt::format("t={:.9f}", x)) << "x = " << fmt::format("{}", x);
        // Six decimals (samples.json's deviations) over the same values.
        std::string six = "d=";
        append_fixed6(six, x);
        EXPECT_EQ(six, fmt::format("d={:.6f}", x)) << "x = " << fmt::format("{}", x);
    }
    // Every tie of six decimals on a grid a double holds exactly (k / 2^7 has ties at 10^-6
    // only where 2^-7 × odd is ...5 at the 7th decimal: 1/128 = 0.0078125).
    for (int k = -512; k <= 512; ++k) {
        const double x = k / 128.0 + (k % 3) * 1e6;
        std::string six;
        append_fixed6(six, x);
        EXPECT_EQ(six, fmt::format("{:.6f}", x)) << "x = " << fmt::format("{}", x);
    }
}

// Issue 33 item 16: result files write plain decimals, not Boost.JSON 1.81's 9.9E0 and 7E1
// (nor, issue 39, Python's 8.4e-05).
TEST(json_text, doubles_are_plain_decimals_and_the_rest_is_boost_json_text) {
    const boost::json::value v = {{"duration", 9.917630892},
                                  {"capacity_rps", 70.0},
                                  {"tiny", 1e-05},
                                  {"lag", 8.4e-05},
                                  {"count", 3},
                                  {"big", std::uint64_t{18446744073709551615u}},
                                  {"neg", -2},
                                  {"name", "a \"quoted\"\n line"},
                                  {"none", nullptr},
                                  {"flags", {true, false}},
                                  {"nested", {{"x", 0.5}, {"empty", boost::json::array{}}}},
                                  {"nan", std::nan("")}};
    EXPECT_EQ(
        json_text(v),
        R"({"duration":9.917630892,"capacity_rps":70.0,"tiny":0.00001,"lag":0.000084,"count":3,)"
        R"("big":18446744073709551615,"neg":-2,"name":"a \"quoted\"\n line","none":null,)"
        R"("flags":[true,false],"nested":{"x":0.5,"empty":[]},"nan":null})");
    // What it writes reads back as the same value, numbers of the same kind.
    boost::json::value finite = v;
    finite.as_object().erase("nan");
    EXPECT_EQ(boost::json::parse(json_text(finite)), finite);
    EXPECT_TRUE(boost::json::parse(json_text(finite)).at("capacity_rps").is_double());
}

} // namespace
} // namespace pacer

// The loop lag over time (summary.json "loop_lag_over_time"): each tick's lag lands in the
// second it woke in, on the clock, from the monitors' start and period alone.

#include <pacer/metrics/loop_lag.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

using pacer::metrics::loop_lag_over_time;

std::vector<double> max_s(const boost::json::object& o) {
    std::vector<double> v;
    for (const auto& x : o.at("max_s").as_array())
        v.push_back(x.to_number<double>());
    return v;
}

TEST(loop_lag_over_time, each_lag_lands_in_the_second_its_tick_woke) {
    // Context 0 starts at 10 s: 99 punctual ticks (10.01 ... 10.99), then one 150 ms late: it
    // woke at 10 + 100 x 0.01 + 0.15 = 11.15, in second 1. Context 1 starts at 10.5 s; its
    // first tick is 20 ms late (10.53, second 0), its second 3 ms late (10.553, second 0).
    std::vector<double> c0(99, 0.0);
    c0.push_back(0.15);
    const auto o = loop_lag_over_time({c0, {0.02, 0.003}}, {10.0, 10.5}, 0.01);
    EXPECT_EQ(o.at("interval_s").to_number<double>(), 1);
    EXPECT_EQ(o.at("start_s").to_number<double>(), 10.0);
    EXPECT_EQ(max_s(o), (std::vector<double>{0.02, 0.15}));
}

TEST(loop_lag_over_time, the_lags_push_later_ticks_along) {
    // A 0.995 s stall at the first tick: it woke at 0.01 + 0.995 = 1.005 s, in second 1, and
    // tick 1 after it at 1.005 + 0.01 + 0.001 = 1.016 s: second 0 saw no late wake at all.
    // Half that stall keeps both ticks in second 0.
    const auto o = loop_lag_over_time({{0.995, 0.001}}, {0.0}, 0.01);
    EXPECT_EQ(max_s(o), (std::vector<double>{0.0, 0.995}));
    const auto p = loop_lag_over_time({{0.5, 0.001}}, {0.0}, 0.01);
    EXPECT_EQ(max_s(p), (std::vector<double>{0.5}));
}

TEST(loop_lag_over_time, no_lags_no_seconds) {
    const auto o = loop_lag_over_time({{}, {}}, {5.0, 6.0}, 0.01);
    EXPECT_TRUE(o.at("max_s").as_array().empty());
    EXPECT_TRUE(loop_lag_over_time({}, {}, 0.01).at("max_s").as_array().empty());
}

} // namespace

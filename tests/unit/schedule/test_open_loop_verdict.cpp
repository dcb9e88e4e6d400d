// The open-loop verdict every command applies (`pacer run --rate`, `pacer http`): dispatch lag
// p99 <= 5 ms and max <= 80 ms, one rule in one function, checked with constructed values.

#include <pacer/session/open_loop.hpp>

#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace {

using namespace std::chrono_literals;
using pacer::session::cap_policy;
using pacer::session::client_schedule_thresholds;
using pacer::session::dispatcher;
using pacer::session::schedule_kept;

TEST(ScheduleVerdict, TheClientRuleIsP99Within5MsAndMaxWithin80Ms) {
    EXPECT_EQ(client_schedule_thresholds.dispatch_lag_p99, 5ms);
    EXPECT_EQ(client_schedule_thresholds.dispatch_lag_max, 80ms);
    const auto& t = client_schedule_thresholds;
    EXPECT_TRUE(schedule_kept(0.0, 0.0, t));
    EXPECT_TRUE(schedule_kept(0.005, 0.080, t)); // both bounds are inclusive
    EXPECT_FALSE(schedule_kept(0.0051, 0.010, t));
    EXPECT_FALSE(schedule_kept(0.001, 0.0801, t));
    EXPECT_FALSE(schedule_kept(0.006, 0.090, t));
    // 4 ms p99 and 30 ms max: kept by this rule, not by the library's 1 ms / 10 ms default.
    EXPECT_TRUE(schedule_kept(0.004, 0.030, t));
    EXPECT_FALSE(schedule_kept(0.004, 0.030, {}));
}

TEST(ScheduleVerdict, NothingDispatchedKeptItsScheduleVacuously) {
    EXPECT_TRUE(schedule_kept(std::nullopt, std::nullopt, client_schedule_thresholds));
    EXPECT_FALSE(schedule_kept(std::nullopt, 0.2, client_schedule_thresholds));
}

TEST(ScheduleVerdict, TheOpenLoopSummaryAppliesAndStatesTheClientRule) {
    // Arrivals every 10 ms; each dispatched 3 ms late, one 40 ms late.
    const auto t0 = pacer::time_point{} + 1s;
    std::vector<std::chrono::nanoseconds> offs;
    for (int i = 0; i < 200; ++i)
        offs.emplace_back(std::chrono::milliseconds(10 * i));
    dispatcher d(offs, t0, 0, cap_policy::queue);
    for (std::size_t i = 0; i < offs.size(); ++i)
        d.dispatched(i, t0 + offs[i] + (i == 100 ? 40ms : 3ms));
    const auto result = pacer::session::make_open_loop_result(d);
    const auto s = pacer::session::open_loop_summary(result, client_schedule_thresholds);
    EXPECT_TRUE(s.at("schedule_kept").as_bool());
    EXPECT_DOUBLE_EQ(s.at("schedule_kept_thresholds_s").at("dispatch_lag_p99").as_double(), 0.005);
    EXPECT_DOUBLE_EQ(s.at("schedule_kept_thresholds_s").at("dispatch_lag_max").as_double(), 0.080);
    EXPECT_EQ(s.at("deadline_missed").as_uint64(), 0u); // over the max threshold only
    // The same lags fail the stricter library default.
    EXPECT_FALSE(pacer::session::open_loop_summary(result).at("schedule_kept").as_bool());

    // One arrival 81 ms late breaks the max.
    dispatcher late(offs, t0, 0, cap_policy::queue);
    for (std::size_t i = 0; i < offs.size(); ++i)
        late.dispatched(i, t0 + offs[i] + (i == 100 ? 81ms : 1ms));
    const auto s2 = pacer::session::open_loop_summary(pacer::session::make_open_loop_result(late),
                                                      client_schedule_thresholds);
    EXPECT_FALSE(s2.at("schedule_kept").as_bool());
    EXPECT_EQ(s2.at("deadline_missed").as_uint64(), 1u);
}

} // namespace

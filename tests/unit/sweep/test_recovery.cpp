// The wait for a server's recovery before a run (sweep/recovery.hpp) on a manual clock: each
// look (a canary, or the server's stats) is scripted and advances the clock by what it would
// take; the pause between looks advances it too. Nothing waits.

#include <pacer/sweep/recovery.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace pacer;
using namespace std::chrono_literals;
using sweep::recovery_look;
using sweep::recovery_record;
using sweep::recovery_settings;

// A manual clock and a scripted server: look k returns looks[k] (the last one again when they
// run out) and takes `look_cost`.
struct recovery_server {
    std::deque<recovery_look> looks{};
    duration look_cost = std::chrono::milliseconds(2500);
    time_point now{std::chrono::hours(1000)};
    std::size_t pauses = 0;
    bool interrupt_on_pause = false;

    recovery_record wait(const recovery_settings& s, std::optional<double> baseline) {
        return sweep::wait_for_recovery(s, baseline,
                                        [this] {
                                            now += look_cost;
                                            const auto l = looks.front();
                                            if (looks.size() > 1)
                                                looks.pop_front();
                                            return l;
                                        },
                                        {[this] { return now; },
                                         [this](duration d) {
                                             ++pauses;
                                             now += d;
                                             return interrupt_on_pause;
                                         }});
    }
};

recovery_look canary(double seconds) {
    return {.canary_s = seconds};
}

recovery_look pending(double units) {
    return {.pending = units};
}

const recovery_settings canary_only{.canary = true, .max = std::chrono::seconds(120)};

TEST(sweep_recovery, the_canary_margin_is_20_ms_or_half_the_baseline) {
    EXPECT_DOUBLE_EQ(sweep::canary_limit_s(0.006), 0.026);
    EXPECT_DOUBLE_EQ(sweep::canary_limit_s(0.040), 0.060);
    EXPECT_DOUBLE_EQ(sweep::canary_limit_s(0.100), 0.150);
}

TEST(sweep_recovery, a_recovered_server_costs_one_canary) {
    recovery_server m{.looks = {canary(0.007)}};
    const auto r = m.wait(canary_only, 0.006);
    EXPECT_TRUE(r.recovered);
    EXPECT_EQ(r.looks, 1u);
    EXPECT_DOUBLE_EQ(r.waited_s, 2.5);
    EXPECT_EQ(m.pauses, 0u);
}

TEST(sweep_recovery, a_degraded_server_is_watched_until_its_canary_is_back) {
    // A canary 46 ms over a 6 ms baseline (limit 26 ms), twice, then 25 ms.
    recovery_server m{.looks = {canary(0.046), canary(0.046), canary(0.025)}};
    const auto r = m.wait(canary_only, 0.006);
    EXPECT_TRUE(r.recovered);
    EXPECT_EQ(r.looks, 3u);
    EXPECT_EQ(m.pauses, 2u);
    EXPECT_DOUBLE_EQ(r.waited_s, 3 * 2.5 + 2 * 1.0);
    EXPECT_EQ(r.last.canary_s, 0.025);
}

TEST(sweep_recovery, the_wait_ends_before_a_look_would_pass_the_maximum) {
    recovery_server m{.looks = {canary(0.046)}};
    const auto r = m.wait({.canary = true, .max = std::chrono::seconds(20)}, 0.006);
    EXPECT_FALSE(r.recovered);
    // Looks end at 2.5, 6, 9.5, 13, 16.5, 20 s: a seventh would end at 23.5 s.
    EXPECT_EQ(r.looks, 6u);
    EXPECT_DOUBLE_EQ(r.waited_s, 20.0);
    EXPECT_EQ(r.last.canary_s, 0.046);
}

TEST(sweep_recovery, without_a_baseline_no_canary_passes) {
    recovery_server m{.looks = {canary(0.001)}};
    const auto r = m.wait({.canary = true, .max = std::chrono::seconds(10)}, std::nullopt);
    EXPECT_FALSE(r.recovered);
    EXPECT_EQ(r.looks, 3u); // 2.5, 6, 9.5 s
}

TEST(sweep_recovery, a_canary_that_measured_nothing_is_not_back) {
    recovery_server m{.looks = {recovery_look{}, canary(0.006)}};
    const auto r = m.wait(canary_only, 0.006);
    EXPECT_TRUE(r.recovered);
    EXPECT_EQ(r.looks, 2u);
}

TEST(sweep_recovery, the_stats_wait_for_no_pending_work) {
    recovery_server m{.looks = {pending(12), pending(3), pending(0)},
                      .look_cost = std::chrono::milliseconds(10)};
    const auto r = m.wait({.stats = true, .max = std::chrono::seconds(120)}, std::nullopt);
    EXPECT_TRUE(r.recovered);
    EXPECT_EQ(r.looks, 3u);
    EXPECT_DOUBLE_EQ(r.waited_s, 3 * 0.010 + 2 * 1.0);
    // Stats that cannot be read never pass.
    recovery_server unreadable{.looks = {{.error = "HTTP 404"}},
                               .look_cost = std::chrono::milliseconds(10)};
    const auto u = unreadable.wait({.stats = true, .max = std::chrono::seconds(5)}, std::nullopt);
    EXPECT_FALSE(u.recovered);
    EXPECT_EQ(u.last.error, "HTTP 404");
}

TEST(sweep_recovery, canary_and_stats_must_both_pass) {
    // The queue is empty at once, the canary is back only at the third look: a server's stats
    // can say empty while it is still slow.
    recovery_server m{.looks = {{.canary_s = 0.046, .pending = 0},
                                {.canary_s = 0.046, .pending = 0},
                                {.canary_s = 0.007, .pending = 0}}};
    const auto r = m.wait({.canary = true, .stats = true, .max = std::chrono::seconds(120)}, 0.006);
    EXPECT_TRUE(r.recovered);
    EXPECT_EQ(r.looks, 3u);
}

TEST(sweep_recovery, a_signal_during_a_pause_ends_the_wait) {
    recovery_server m{.looks = {canary(0.046)}, .interrupt_on_pause = true};
    const auto r = m.wait(canary_only, 0.006);
    EXPECT_FALSE(r.recovered);
    EXPECT_TRUE(r.interrupted);
    EXPECT_EQ(r.looks, 1u);
    EXPECT_DOUBLE_EQ(r.waited_s, 3.5);
}

recovery_record waited(bool recovered, double seconds, std::optional<double> canary_s) {
    recovery_record r;
    r.recovered = recovered;
    r.waited_s = seconds;
    r.looks = 1;
    r.last.canary_s = canary_s;
    return r;
}

TEST(sweep_recovery, the_verdict_says_how_the_server_held_up) {
    EXPECT_EQ(sweep::recovery_verdict({}, 0.006), "no level overloaded the server");
    const std::vector<sweep::overload_record> back{{5, "c5", waited(true, 8.2, 0.007)},
                                                   {5, "c5-confirm1", waited(true, 11.6, 0.006)}};
    EXPECT_EQ(sweep::recovery_verdict(back, 0.006),
              "the server recovered within 12 s after every overload (2 overloads)");
    auto stuck = back;
    stuck.push_back({4, "c4", waited(false, 118.0, 0.066)});
    EXPECT_EQ(sweep::recovery_verdict(stuck, 0.006),
              "the server stayed degraded after level 4 (canary lag 66 ms vs baseline 6 ms, "
              "118 s waited)");
    const std::vector<sweep::overload_record> unwatched{{5, "c5", std::nullopt}};
    EXPECT_EQ(sweep::recovery_verdict(unwatched, std::nullopt),
              "the server's recovery was not watched (--recovery none)");
}

TEST(sweep_recovery, json_records_every_overload_and_its_recovery) {
    const std::vector<sweep::overload_record> list{{5, "c5", waited(true, 8.2, 0.007)},
                                                   {6, "c6", std::nullopt}};
    const auto o = sweep::overloads_json(canary_only, 0.006, "/pending_units", list);
    EXPECT_EQ(o.at("checks").as_array().size(), 1u);
    EXPECT_EQ(o.at("checks").as_array()[0].as_string(), "canary");
    EXPECT_DOUBLE_EQ(o.at("baseline_s").as_double(), 0.006);
    EXPECT_DOUBLE_EQ(o.at("canary_limit_s").as_double(), 0.026);
    EXPECT_TRUE(o.at("stats_pointer").is_null());
    const auto& overloads = o.at("overloads").as_array();
    ASSERT_EQ(overloads.size(), 2u);
    EXPECT_EQ(overloads[0].at("level").as_uint64(), 5u);
    EXPECT_TRUE(overloads[0].at("recovery").at("recovered").as_bool());
    EXPECT_DOUBLE_EQ(overloads[0].at("recovery").at("waited_s").as_double(), 8.2);
    EXPECT_TRUE(overloads[1].at("recovery").is_null());
    EXPECT_EQ(o.at("verdict").as_string(), sweep::recovery_verdict(list, 0.006));
}

} // namespace

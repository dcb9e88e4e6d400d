// The capacity search over request rates (rate_space, as `pacer http --find-capacity` walks it)
// driven by a scripted probe: no network, no run, every outcome chosen here.

#include <pacer/capacity_search/capacity.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace pacer;
using capacity_search::client_policy;
using capacity_search::level_outcome;
using capacity_search::try_kind;

using rates = std::vector<double>;

// A server that meets the SLOs up to `capacity` requests/s; the client keeps its schedule up
// to `client_limit`; a rate below `min_rate` gives no arrival; a signal arrives at run number
// `interrupt_at` (1-based; 0: never); `unreachable` reaches nobody. Records every run.
struct rate_server {
    double capacity = 0;
    double client_limit = 1e9;
    double min_rate = 0;
    std::size_t interrupt_at = 0;
    bool unreachable = false;
    std::set<std::size_t> flaky_runs{}; // run numbers that miss whatever the rate
    std::vector<capacity_search::capacity_try> runs{};

    capacity_search::level_outcome operator()(const capacity_search::capacity_try& t) {
        runs.push_back(t);
        const auto n = runs.size();
        if (t.value < min_rate)
            return {.nothing_to_run = true};
        return {.interrupted = n == interrupt_at,
                .unreachable = unreachable,
                .valid = t.value <= client_limit,
                .slo_met = t.value <= capacity && !flaky_runs.contains(n)};
    }
    rates values() const {
        rates v;
        for (const auto& r : runs)
            v.push_back(r.value);
        return v;
    }
};

// Today's `pacer http` search: no confirmation, no verification, a slow client is a miss.
constexpr capacity_search::search_policy classic_policy{
    0, 0, capacity_search::client_policy::counts_as_miss};

capacity_search::capacity_search_result
search(rate_server& m, double start, std::size_t steps,
       capacity_search::search_policy policy = classic_policy) {
    return capacity_search::search_capacity(
        capacity_search::rate_space(1e6, 10, steps), start, policy,
        [&m](const capacity_search::capacity_try& t) { return m(t); });
}

TEST(sweep_capacity_rates, doubles_while_probes_pass_then_bisects_the_given_steps) {
    rate_server m{.capacity = 50};
    const auto r = search(m, 10, 3);
    // 10, 20, 40 pass; 80 fails; then (40+80)/2 = 60 fails, 50 passes, 55 fails.
    EXPECT_EQ(m.values(), (rates{10, 20, 40, 80, 60, 50, 55}));
    EXPECT_EQ(r.good, 50);
    EXPECT_EQ(r.bad, 55);
    EXPECT_EQ(to_string(r.limited_by), "slo");
    EXPECT_EQ(r.boundary_held, std::nullopt);
    EXPECT_TRUE(r.notes.empty());
}

TEST(sweep_capacity_rates, halves_from_a_failing_start_until_one_passes) {
    rate_server m{.capacity = 7};
    const auto r = search(m, 100, 1);
    // 100, 50, 25, 12.5 fail; 6.25 passes; one bisection: 9.375 fails.
    EXPECT_EQ(m.values(), (rates{100, 50, 25, 12.5, 6.25, 9.375}));
    EXPECT_EQ(r.good, 6.25);
    EXPECT_EQ(r.bad, 9.375);
    for (const auto& p : r.probes)
        EXPECT_EQ(p.run.kind, capacity_search::try_kind::search);
}

TEST(sweep_capacity_rates, no_bisection_step_leaves_the_bracket_as_found) {
    rate_server m{.capacity = 30};
    const auto r = search(m, 10, 0);
    EXPECT_EQ(m.values(), (rates{10, 20, 40}));
    EXPECT_EQ(r.good, 20);
    EXPECT_EQ(r.bad, 40);
}

TEST(sweep_capacity_rates, doubling_stops_at_the_maximum_rate_or_after_its_moves) {
    rate_server m{.capacity = 1e9};
    auto r = capacity_search::search_capacity(
        capacity_search::rate_space(50, 10, 4), 10, classic_policy,
        [&m](const capacity_search::capacity_try& t) { return m(t); });
    EXPECT_EQ(m.values(), (rates{10, 20, 40})); // 80 > 50: not probed
    EXPECT_EQ(r.good, 40);
    EXPECT_EQ(r.bad, std::nullopt);
    EXPECT_EQ(to_string(r.limited_by), "max-rate");

    rate_server n{.capacity = 1e9};
    r = search(n, 1, 4);
    EXPECT_EQ(n.runs.size(), 11u); // the first probe and ten doublings
    EXPECT_EQ(r.good, 1024);
}

TEST(sweep_capacity_rates, halving_stops_after_its_moves_with_no_rate_passing) {
    rate_server m{.capacity = 0};
    const auto r = search(m, 1024, 4);
    EXPECT_EQ(m.runs.size(), 11u);
    EXPECT_EQ(r.good, std::nullopt);
    EXPECT_EQ(r.bad, 1);
    EXPECT_EQ(to_string(r.limited_by), "slo");
}

TEST(sweep_capacity_rates, a_rate_with_nothing_to_run_ends_the_search_unjudged) {
    rate_server m{.capacity = 0, .min_rate = 1};
    const auto r = search(m, 4, 4);
    // 4, 2, 1 fail; 0.5 gives no arrival.
    EXPECT_EQ(m.values(), (rates{4, 2, 1, 0.5}));
    EXPECT_EQ(r.bad, 1);
    EXPECT_EQ(r.good, std::nullopt);
    EXPECT_EQ(to_string(r.limited_by), "nothing-to-run");
}

TEST(sweep_capacity_rates, an_unreachable_server_or_a_signal_ends_it_at_once) {
    rate_server down{.capacity = 50, .unreachable = true};
    auto r = search(down, 10, 4);
    EXPECT_EQ(down.values(), rates{10});
    EXPECT_EQ(to_string(r.limited_by), "unreachable");
    EXPECT_EQ(r.good, std::nullopt);
    EXPECT_EQ(r.bad, std::nullopt); // the run is recorded, not judged

    rate_server signalled{.capacity = 50, .interrupt_at = 3};
    r = search(signalled, 10, 4);
    EXPECT_EQ(signalled.values(), (rates{10, 20, 40}));
    EXPECT_EQ(to_string(r.limited_by), "interrupted");
    EXPECT_EQ(r.good, 20);
    EXPECT_EQ(r.probes.size(), 3u);
}

TEST(sweep_capacity_rates, a_client_that_falls_behind_is_a_miss_and_the_search_goes_on_below) {
    rate_server m{.capacity = 1000, .client_limit = 30};
    const auto r = search(m, 10, 2);
    // 40 is not kept: a miss, tried once; the bisection goes on below it.
    EXPECT_EQ(m.values(), (rates{10, 20, 40, 30, 35}));
    EXPECT_EQ(r.good, 30);
    EXPECT_EQ(r.bad, 35);
    EXPECT_EQ(to_string(r.limited_by), "slo");

    // The level search's policy instead tries it twice and stops at the client.
    rate_server n{.capacity = 1000, .client_limit = 30};
    const auto s = search(n, 10, 2, {0, 0, capacity_search::client_policy::ends_search});
    EXPECT_EQ(n.values(), (rates{10, 20, 40, 40}));
    EXPECT_EQ(to_string(s.limited_by), "client");
}

TEST(sweep_capacity_rates, confirmation_and_verification_work_over_rates_too) {
    // Run 2 (the first at 20) misses once; its confirmation meets.
    rate_server m{.capacity = 50, .flaky_runs = {2}};
    const auto r = search(m, 10, 1, {1, 2, capacity_search::client_policy::counts_as_miss});
    ASSERT_GE(r.probes.size(), 3u);
    EXPECT_EQ(r.probes[2].run.kind, capacity_search::try_kind::confirm);
    EXPECT_EQ(r.probes[2].run.value, 20);
    ASSERT_FALSE(r.notes.empty());
    EXPECT_EQ(r.notes[0], "rate 20 requests/s failed its first 1 run(s) and met its SLOs on "
                          "confirmation try 1: it counts as good");
    // 10, 20 (x2), 40, 80 (x2), 60 (x2): capacity 40, first failing 60, each verified twice.
    EXPECT_EQ(r.good, 40);
    EXPECT_EQ(r.bad, 60);
    ASSERT_TRUE(r.capacity_check && r.failing_check);
    EXPECT_EQ(r.capacity_check->value, 40);
    EXPECT_EQ(r.capacity_check->runs, 2u);
    EXPECT_EQ(r.failing_check->met, 0u);
    EXPECT_EQ(r.boundary_held, true);
}

TEST(sweep_capacity_rates, a_verification_that_moves_the_answer_bisects_afresh) {
    // 40 passes in the search (run 3) and misses its one verification run (run 6) only.
    rate_server m{.capacity = 50, .flaky_runs = {6}};
    const auto r = search(m, 10, 1, {0, 1, capacity_search::client_policy::counts_as_miss});
    // Search: 10, 20, 40, 80, 60. Round 1: 40 misses its verification, so it counts as
    // failing and one bisection afresh between 20 and 40 gives 30. Round 2: 30 holds, 40 meets,
    // so 40 counts as good and one bisection between 40 and 60 gives 50. Round 3: 50 and 60
    // hold.
    EXPECT_EQ(m.values(), (rates{10, 20, 40, 80, 60, 40, 30, 30, 40, 50, 50, 60}));
    EXPECT_EQ(r.good, 50);
    EXPECT_EQ(r.bad, 60);
    ASSERT_EQ(r.notes.size(), 2u);
    EXPECT_EQ(r.notes[0], "capacity rate 40 requests/s met its SLOs in 0 of 1 verification runs: "
                          "it counts as failing, and the search goes on below it");
    EXPECT_EQ(r.notes[1], "first failing rate 40 requests/s met its SLOs in every one of 1 "
                          "verification runs: it counts as good, and the search goes on above it");
    EXPECT_EQ(r.boundary_held, true);
}

} // namespace

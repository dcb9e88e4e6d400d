// The pure parts of `pacer serve`'s sweep (module `sweep`): the client-timing validity rules,
// the record of the checks, and the capacity search driven by constructed level outcomes (no
// network, no level run).

#include <pacer/capacity_search/capacity.hpp>
#include <pacer/sweep/validity.hpp>

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace pacer;
using capacity_search::level_outcome;
using sweep::timing_limits;
using sweep::validity_problems;

metrics::level_session make_session(bool admitted, std::optional<double> lateness_p99_s) {
    metrics::level_session s;
    s.admitted.admitted = admitted;
    s.send_lateness_p99_s = lateness_p99_s;
    return s;
}

using strings = std::vector<std::string>;

TEST(sweep_validity, a_level_within_every_limit_is_valid) {
    const std::vector sessions{make_session(true, 0.001), make_session(true, 0.020)};
    EXPECT_EQ(validity_problems({}, 0.020, sessions), strings{});
}

TEST(sweep_validity, no_loop_lag_samples_is_a_problem) {
    const std::vector sessions{make_session(true, 0.001)};
    EXPECT_EQ(validity_problems({}, std::nullopt, sessions),
              strings{"the loop-lag ticker has no samples"});
}

TEST(sweep_validity, loop_lag_over_its_limit_is_a_problem) {
    const std::vector sessions{make_session(true, 0.001)};
    EXPECT_EQ(validity_problems({}, 0.0251, sessions), strings{"loop lag p99 25.1 ms > 20 ms"});
    // The limit is the one given.
    EXPECT_EQ(validity_problems({.loop_lag_ms = 30}, 0.0251, sessions), strings{});
}

TEST(sweep_validity, an_admitted_session_late_or_without_sends_is_a_problem) {
    const std::vector late{make_session(true, 0.001), make_session(true, 0.021)};
    EXPECT_EQ(validity_problems({}, 0.001, late),
              strings{"1 admitted session(s) with send-lateness p99 > 20 ms or no sends"});
    const std::vector silent{make_session(true, std::nullopt), make_session(true, 0.5)};
    EXPECT_EQ(validity_problems({}, 0.001, silent),
              strings{"2 admitted session(s) with send-lateness p99 > 20 ms or no sends"});
    EXPECT_EQ(
        validity_problems({.send_lateness_ms = 600}, 0.001, std::vector{make_session(true, 0.5)}),
        strings{});
}

TEST(sweep_validity, sessions_not_admitted_do_not_count_but_one_admission_is_needed) {
    const std::vector none{make_session(false, std::nullopt), make_session(false, 9.0)};
    EXPECT_EQ(validity_problems({}, 0.001, none), strings{"no session was admitted"});
    EXPECT_EQ(validity_problems({}, 0.001, {}), strings{"no session was admitted"});
    const std::vector one{make_session(false, 9.0), make_session(true, 0.001)};
    EXPECT_EQ(validity_problems({}, 0.001, one), strings{});
}

TEST(sweep_validity, every_problem_is_listed_in_order) {
    const std::vector sessions{make_session(false, std::nullopt)};
    EXPECT_EQ(validity_problems({.loop_lag_ms = 5, .send_lateness_ms = 5}, 0.010, sessions),
              (strings{"loop lag p99 10.0 ms > 5 ms", "no session was admitted"}));
}

TEST(sweep_validity, checks_record_the_limits_and_the_native_session_checks) {
    const auto o = sweep::validity_checks_json({.loop_lag_ms = 15, .send_lateness_ms = 25},
                                               "native", std::nullopt);
    EXPECT_EQ(o.at("protocol").as_string(), "native");
    const auto& client = o.at("client").as_array();
    ASSERT_EQ(client.size(), 3u);
    EXPECT_EQ(client[0].as_string(), "loop-lag p99 of the session contexts <= 15 ms");
    EXPECT_EQ(client[1].as_string(), "every admitted session's send-lateness p99 <= 25 ms");
    EXPECT_EQ(client[2].as_string(), "at least one session admitted");
    EXPECT_EQ(o.at("session").as_array().size(), 5u);
    EXPECT_EQ(o.at("session").as_array()[1].as_string(), "every append sent");
    EXPECT_EQ(o.at("oracle").as_string(), "not run by serve: `pacer replay` of a level runs it");
}

TEST(sweep_validity, checks_of_a_realtime_protocol_are_its_own) {
    metrics::realtime_context c;
    c.protocol = protocol::realtime_protocol::vllm;
    const auto o = sweep::validity_checks_json({}, "vllm-realtime", c);
    EXPECT_EQ(o.at("protocol").as_string(), "vllm-realtime");
    const auto expected = metrics::realtime_protocol_checks(c);
    const auto& session = o.at("session").as_array();
    ASSERT_EQ(session.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
        EXPECT_EQ(session[i].as_string(), expected[i]);
    EXPECT_EQ(o.at("oracle").as_string(),
              "not applicable: the replay oracle judges the native protocol only");
}

// A server that meets the SLOs up to `capacity` sessions, and a client that keeps up. With
// `cold_start`, the first run of a level above every level run before misses (a GPU server's
// first batch of a new size), as `pacer native-mock --cold-start-ms` does. Records every run.
struct model_server {
    std::size_t capacity = 0;
    bool cold_start = false;
    std::map<std::size_t, std::vector<capacity_search::level_outcome>>
        scripted{}; // per level, in turn
    std::vector<capacity_search::level_try> runs{};
    std::size_t high_water = 0;

    capacity_search::level_outcome operator()(const capacity_search::level_try& t) {
        runs.push_back(t);
        const bool cold = cold_start && t.level > high_water;
        high_water = std::max(high_water, t.level);
        if (auto it = scripted.find(t.level); it != scripted.end() && !it->second.empty()) {
            auto r = it->second.front();
            it->second.erase(it->second.begin());
            return r;
        }
        return {.slo_met = t.level <= capacity && !cold};
    }
    std::vector<std::size_t> levels() const {
        std::vector<std::size_t> v;
        for (const auto& r : runs)
            v.push_back(r.level);
        return v;
    }
    // "8s" (search), "8c1" (confirm 1), "8v2" (verify 2).
    std::vector<std::string> story() const {
        std::vector<std::string> v;
        for (const auto& r : runs)
            v.push_back(std::to_string(r.level) + (r.kind == capacity_search::try_kind::search ? "s"
                                                   : r.kind == capacity_search::try_kind::confirm
                                                       ? "c" + std::to_string(r.attempt)
                                                       : "v" + std::to_string(r.attempt)));
        return v;
    }
};

capacity_search::capacity_result search(model_server& m, capacity_search::capacity_settings s) {
    return capacity_search::search_capacity(
        s, [&m](const capacity_search::level_try& t) { return m(t); });
}

using levels = std::vector<std::size_t>;

// The classic search: no confirmation, no verification, doubling and bisection (growth 2; the
// tests below that name no growth are of the search before --growth, and keep its stories).
capacity_search::capacity_settings classic(std::size_t start, std::size_t max, double resolution) {
    return {.start_level = start,
            .max_level = max,
            .resolution = resolution,
            .confirm = 0,
            .verify_repeats = 0,
            .growth = 2};
}

TEST(sweep_capacity, doubles_then_bisects_to_the_last_good_level) {
    model_server m{.capacity = 37};
    const auto r = search(m, classic(1, 1024, 0));
    EXPECT_EQ(r.sessions, 37u);
    EXPECT_EQ(r.first_failing_level, 38u);
    EXPECT_EQ(to_string(r.limited_by), "slo");
    EXPECT_EQ(r.probed_levels, (levels{1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37}));
    EXPECT_EQ(r.boundary_held, std::nullopt); // nothing verified
}

TEST(sweep_capacity, resolution_stops_the_bisection_early) {
    model_server m{.capacity = 37};
    const auto r = search(m, classic(1, 1024, 0.25));
    // 40 - 32 <= 0.25 x 32: close enough.
    EXPECT_EQ(r.sessions, 32u);
    EXPECT_EQ(r.first_failing_level, 40u);
    EXPECT_EQ(r.probed_levels, (levels{1, 2, 4, 8, 16, 32, 64, 48, 40}));
}

TEST(sweep_capacity, every_level_good_up_to_the_maximum) {
    model_server m{.capacity = 1000};
    const auto r = search(m, classic(3, 20, 0.05));
    EXPECT_EQ(r.sessions, 20u);
    EXPECT_EQ(r.first_failing_level, std::nullopt);
    EXPECT_EQ(to_string(r.limited_by), "max-level");
    EXPECT_EQ(r.probed_levels, (levels{3, 6, 12, 20}));
}

TEST(sweep_capacity, a_first_level_that_misses_gives_zero) {
    model_server m{.capacity = 0};
    const auto r = search(m, classic(1, 64, 0.05));
    EXPECT_EQ(r.sessions, 0u);
    EXPECT_EQ(r.first_failing_level, 1u);
    EXPECT_EQ(to_string(r.limited_by), "slo");
    EXPECT_EQ(r.probed_levels, levels{1});
}

TEST(sweep_capacity, a_level_not_valid_once_is_probed_again_and_the_search_goes_on) {
    model_server m{.capacity = 1000};
    m.scripted[4] = {{.valid = false}};
    const auto r = search(m, classic(1, 8, 0.05));
    EXPECT_EQ(r.sessions, 8u);
    EXPECT_EQ(to_string(r.limited_by), "max-level");
    EXPECT_EQ(m.story(), (std::vector<std::string>{"1s", "2s", "4s", "4c1", "8s"}));
}

TEST(sweep_capacity, a_level_not_valid_on_every_try_ends_the_search_at_the_client) {
    model_server m{.capacity = 1000};
    m.scripted[16] = {{.valid = false}, {.valid = false}, {.valid = false}};
    auto r = search(m, classic(1, 1024, 0.05));
    EXPECT_EQ(r.sessions, 8u);
    EXPECT_EQ(r.first_failing_level, std::nullopt);
    EXPECT_EQ(to_string(r.limited_by), "client");
    EXPECT_EQ(r.probed_levels, (levels{1, 2, 4, 8, 16, 16}));

    // With two confirmations, three tries; the verification does not run after the client.
    model_server again{.capacity = 1000};
    again.scripted[16] = {{.valid = false}, {.valid = false}, {.valid = false}};
    r = search(
        again,
        {.start_level = 8, .max_level = 1024, .confirm = 2, .verify_repeats = 2, .growth = 2});
    EXPECT_EQ(to_string(r.limited_by), "client");
    EXPECT_EQ(again.story(), (std::vector<std::string>{"8s", "16s", "16c1", "16c2"}));
}

TEST(sweep_capacity, a_level_that_misses_once_then_meets_counts_as_good) {
    model_server m{.capacity = 1000};
    m.scripted[4] = {{.slo_met = false}}; // a transient: the second try meets
    const auto r = search(
        m, {.start_level = 1, .max_level = 8, .confirm = 1, .verify_repeats = 0, .growth = 2});
    EXPECT_EQ(r.sessions, 8u);
    EXPECT_EQ(m.story(), (std::vector<std::string>{"1s", "2s", "4s", "4c1", "8s"}));
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_NE(r.notes[0].find("level 4"), std::string::npos) << r.notes[0];
    // Every try is in the result, with its kind and outcome.
    ASSERT_EQ(r.probes.size(), 5u);
    EXPECT_EQ(r.probes[2].run.kind, capacity_search::try_kind::search);
    EXPECT_FALSE(r.probes[2].outcome.met());
    EXPECT_EQ(r.probes[3].run.kind, capacity_search::try_kind::confirm);
    EXPECT_TRUE(r.probes[3].outcome.met());
}

// The field report: a cold first level made the classic search answer "first level - 1".
TEST(sweep_capacity, a_cold_first_level_fools_the_classic_search_and_not_the_confirmed_one) {
    model_server fooled{.capacity = 37, .cold_start = true};
    auto r = search(fooled, classic(8, 1024, 0));
    EXPECT_EQ(r.sessions, 7u); // the defect this search exists to avoid
    EXPECT_EQ(r.first_failing_level, 8u);

    model_server m{.capacity = 37, .cold_start = true};
    r = search(m, {.start_level = 8, .max_level = 1024, .resolution = 0, .growth = 2});
    EXPECT_EQ(r.sessions, 37u);
    EXPECT_EQ(r.first_failing_level, 38u);
    EXPECT_EQ(to_string(r.limited_by), "slo");
    EXPECT_EQ(r.boundary_held, true);
    EXPECT_EQ(m.story(),
              (std::vector<std::string>{"8s",   "8c1", "16s",  "16c1", "32s",  "32c1", "64s",
                                        "64c1", "48s", "48c1", "40s",  "40c1", "36s",  "38s",
                                        "38c1", "37s", "37v1", "37v2", "38v1", "38v2"}));
    ASSERT_TRUE(r.capacity_check && r.failing_check);
    EXPECT_EQ(r.capacity_check->met, 2u);
    EXPECT_EQ(r.failing_check->met, 0u);
}

TEST(sweep_capacity, a_capacity_level_that_fails_verification_sends_the_search_down) {
    model_server m{.capacity = 39};
    m.scripted[40] = {{}}; // one lucky run of 40 in the search; it misses when verified

    const auto r = search(m, {.start_level = 32, .max_level = 64, .resolution = 0, .growth = 2});
    EXPECT_EQ(r.sessions, 39u);
    EXPECT_EQ(r.first_failing_level, 40u);
    EXPECT_EQ(r.boundary_held, true);
    EXPECT_EQ(m.story(),
              (std::vector<std::string>{"32s",  "64s", "64c1", "48s",  "48c1", "40s",  "44s",
                                        "44c1", "42s", "42c1", "41s",  "41c1", "40v1", "40v2",
                                        "36s",  "38s", "39s",  "39v1", "39v2", "40v1", "40v2"}));
    ASSERT_FALSE(r.notes.empty());
    EXPECT_NE(r.notes.front().find("capacity level 40 met its SLOs in 0 of 2"), std::string::npos)
        << r.notes.front();
}

TEST(sweep_capacity, a_first_failing_level_that_meets_every_verification_sends_the_search_up) {
    model_server m{.capacity = 20};
    m.scripted[20] = {{.slo_met = false}, {.slo_met = false}}; // both search tries: a bad moment
    const auto r = search(m, {.start_level = 8, .max_level = 64, .resolution = 0, .growth = 2});
    EXPECT_EQ(r.sessions, 20u);
    EXPECT_EQ(r.first_failing_level, 21u);
    EXPECT_EQ(to_string(r.limited_by), "slo");
    EXPECT_EQ(r.boundary_held, true);
    EXPECT_EQ(m.story(), (std::vector<std::string>{"8s",   "16s",  "32s",  "32c1", "24s",  "24c1",
                                                   "20s",  "20c1", "18s",  "19s",  "19v1", "19v2",
                                                   "20v1", "20v2", "22s",  "22c1", "21s",  "21c1",
                                                   "20v1", "20v2", "21v1", "21v2"}));
    ASSERT_FALSE(r.notes.empty());
    EXPECT_NE(r.notes.front().find("first failing level 20 met its SLOs in every one of 2"),
              std::string::npos)
        << r.notes.front();
}

TEST(sweep_capacity, a_boundary_that_meets_sometimes_is_reported_not_held) {
    model_server m{.capacity = 9};
    m.scripted[10] = {{.slo_met = false}, {.slo_met = false}, {}, {.slo_met = false}};
    const auto r = search(m, {.start_level = 8, .max_level = 64, .resolution = 0, .growth = 2});
    EXPECT_EQ(r.sessions, 9u);
    EXPECT_EQ(r.first_failing_level, 10u);
    EXPECT_EQ(r.boundary_held, false);
    ASSERT_TRUE(r.failing_check);
    EXPECT_EQ(r.failing_check->met, 1u);
    EXPECT_FALSE(r.failing_check->held);
    const auto o = capacity_search::capacity_json(r, "");
    EXPECT_FALSE(o.at("boundary_held").as_bool());
    EXPECT_EQ(o.at("verification").at("first_failing_level").at("met").as_uint64(), 1u);
}

TEST(sweep_capacity, a_verification_run_whose_client_fell_behind_is_run_again_not_counted) {
    model_server m{.capacity = 37};
    m.scripted[37] = {{}, {.valid = false, .slo_met = false}}; // search, then a host stall
    const auto r = search(m, {.start_level = 32, .max_level = 64, .resolution = 0, .growth = 2});
    EXPECT_EQ(r.sessions, 37u);
    EXPECT_EQ(r.boundary_held, true);
    ASSERT_TRUE(r.capacity_check);
    EXPECT_EQ(r.capacity_check->runs, 2u);
    EXPECT_EQ(r.capacity_check->met, 2u);
    EXPECT_EQ(r.capacity_check->invalid, 1u);
    const auto story = m.story();
    EXPECT_EQ(std::vector<std::string>(story.end() - 5, story.end()),
              (std::vector<std::string>{"37v1", "37v2", "37v3", "38v1", "38v2"}));
}

TEST(sweep_capacity, an_unreachable_server_or_a_signal_ends_it_at_once) {
    model_server down{.capacity = 1000};
    down.scripted[4] = {{.unreachable = true}};
    auto r = search(down, classic(1, 1024, 0.05));
    EXPECT_EQ(r.sessions, 2u);
    EXPECT_EQ(to_string(r.limited_by), "unreachable");
    EXPECT_EQ(r.probed_levels, (levels{1, 2, 4}));

    model_server stopped{.capacity = 37};
    stopped.scripted[48] = {{.interrupted = true}};
    r = search(stopped, classic(1, 1024, 0));
    EXPECT_EQ(r.sessions, 32u);
    EXPECT_EQ(r.first_failing_level, 64u);
    EXPECT_EQ(to_string(r.limited_by), "interrupted");
    EXPECT_EQ(r.probed_levels, (levels{1, 2, 4, 8, 16, 32, 64, 48}));

    // A signal during the verification ends it there too.
    model_server verifying{.capacity = 37};
    verifying.scripted[37] = {{}, {.interrupted = true}};
    r = search(verifying, {.start_level = 32, .max_level = 64, .resolution = 0, .growth = 2});
    EXPECT_EQ(to_string(r.limited_by), "interrupted");
    EXPECT_EQ(r.boundary_held, std::nullopt);
    EXPECT_EQ(verifying.story().back(), "37v1");
}

TEST(sweep_capacity, json_names_the_answer_and_the_evidence) {
    capacity_search::capacity_result r;
    r.sessions = 32;
    r.first_failing_level = 40;
    r.limited_by = capacity_search::limit::slo;
    r.probed_levels = {32, 64, 40};
    auto o = capacity_search::capacity_json(r, "ttfa-p95<=0.5");
    EXPECT_EQ(o.at("sessions").as_uint64(), 32u);
    EXPECT_EQ(o.at("first_failing_level").as_uint64(), 40u);
    EXPECT_EQ(o.at("limited_by").as_string(), "slo");
    ASSERT_EQ(o.at("probed_levels").as_array().size(), 3u);
    EXPECT_EQ(o.at("probed_levels").as_array()[1].as_uint64(), 64u);
    EXPECT_EQ(o.at("slo").as_string(), "ttfa-p95<=0.5");
    r.first_failing_level.reset();
    EXPECT_TRUE(capacity_search::capacity_json(r, "").at("first_failing_level").is_null());
}

// --growth: after the first miss no level is probed above the last good one by more than the
// factor, so the search overloads the server it measures less deeply than doubling does.
TEST(sweep_capacity, after_the_first_miss_it_grows_gently) {
    model_server m{.capacity = 37};
    const auto r = search(m, {.start_level = 8,
                              .max_level = 1024,
                              .resolution = 0,
                              .confirm = 0,
                              .verify_repeats = 0,
                              .growth = 1.25});
    EXPECT_EQ(r.sessions, 37u);
    EXPECT_EQ(r.first_failing_level, 38u);
    // Doubling to the first miss (64), then 40 = 32 x 1.25 where bisection would try 48.
    EXPECT_EQ(r.probed_levels, (levels{8, 16, 32, 64, 40, 36, 38, 37}));
    model_server doubling{.capacity = 37};
    search(doubling, classic(8, 1024, 0));
    EXPECT_EQ(doubling.levels(), (levels{8, 16, 32, 64, 48, 40, 36, 38, 37}));
}

TEST(sweep_capacity, no_probe_after_a_miss_exceeds_the_growth_and_the_knee_is_still_found) {
    for (double growth : {1.1, 1.25, 1.5}) {
        for (std::size_t capacity = 1; capacity <= 150; ++capacity) {
            SCOPED_TRACE(testing::Message() << "growth " << growth << ", capacity " << capacity);
            model_server m{.capacity = capacity};
            const auto r = search(m, {.start_level = 4,
                                      .max_level = 1024,
                                      .resolution = 0,
                                      .confirm = 1,
                                      .verify_repeats = 2,
                                      .growth = growth});
            EXPECT_EQ(r.sessions, capacity);
            EXPECT_EQ(r.boundary_held, true);
            std::size_t good = 0;
            bool missed = false;
            for (const auto& t : m.runs) {
                // A new level (confirmations and verifications re-run a level already tried).
                if (missed && good > 0 && t.kind == capacity_search::try_kind::search) {
                    const auto most = std::max<std::size_t>(
                        good + 1, static_cast<std::size_t>(static_cast<double>(good) * growth));
                    EXPECT_LE(t.level, most) << "after good " << good;
                }
                if (t.level <= capacity)
                    good = std::max(good, t.level);
                else
                    missed = true;
            }
        }
    }
}

TEST(sweep_capacity, the_cost_of_a_search_counts_its_runs_above_the_capacity) {
    const capacity_search::capacity_settings gentle{.start_level = 8, .resolution = 0.05};
    auto classic_settings = gentle;
    classic_settings.growth = 2;
    // The server: capacity 62 from level 8 (confirm 1, verify 2).
    model_server m{.capacity = 62};
    search(m, gentle);
    const auto cost = capacity_search::search_cost_at(gentle, 62);
    EXPECT_EQ(cost.runs, m.runs.size());
    std::size_t above = 0;
    for (const auto& t : m.runs)
        above += t.level > 62;
    EXPECT_EQ(cost.above, above);
    // Over every capacity from 8 to 255, gentle growth overloads less often than doubling.
    std::size_t gentle_above = 0, doubling_above = 0;
    for (std::size_t k = 8; k < 256; ++k) {
        gentle_above += capacity_search::search_cost_at(gentle, k).above;
        doubling_above += capacity_search::search_cost_at(classic_settings, k).above;
    }
    EXPECT_LT(gentle_above, doubling_above);
}

// A run that started on a server that had not recovered from the run before (`recovered`
// false) never decides the search alone.
TEST(sweep_capacity, a_miss_on_an_unrecovered_server_is_tried_again) {
    model_server m{.capacity = 20};
    const capacity_search::level_outcome degraded{.slo_met = false, .recovered = false};
    m.scripted[16] = {degraded, degraded}; // the search's try and its confirmation
    const auto r = search(m, {.start_level = 8, .max_level = 20, .verify_repeats = 0});
    EXPECT_EQ(m.story(), (std::vector<std::string>{"8s", "16s", "16c1", "16c2", "20s"}));
    EXPECT_EQ(r.sessions, 20u);
    ASSERT_EQ(r.probes.size(), 5u);
    EXPECT_FALSE(r.probes[1].outcome.recovered);
    const auto o = capacity_search::capacity_json(r, "");
    EXPECT_FALSE(o.at("probes").as_array()[1].at("server_recovered").as_bool());
    EXPECT_TRUE(o.at("probes").as_array()[3].at("server_recovered").as_bool());
}

TEST(sweep_capacity, a_miss_on_a_recovered_server_decides_as_before) {
    model_server m{.capacity = 20};
    // The first try ran degraded, its confirmation on a recovered server: a real miss.
    m.scripted[16] = {{.slo_met = false, .recovered = false}, {.slo_met = false}};
    const auto r =
        search(m, {.start_level = 8, .max_level = 64, .confirm = 1, .verify_repeats = 0});
    EXPECT_EQ(r.first_failing_level, 16u);
    EXPECT_EQ(m.story()[1], "16s");
    EXPECT_EQ(m.story()[2], "16c1");
    EXPECT_NE(m.story()[3], "16c2");
}

TEST(sweep_capacity, a_level_missed_only_on_an_unrecovered_server_stops_the_search) {
    model_server m{.capacity = 1000};
    const capacity_search::level_outcome degraded{.slo_met = false, .recovered = false};
    m.scripted[16] = {degraded, degraded, degraded};
    const auto r = search(m, {.start_level = 8, .max_level = 64});
    EXPECT_EQ(m.story(), (std::vector<std::string>{"8s", "16s", "16c1", "16c2"}));
    EXPECT_EQ(r.sessions, 8u);
    EXPECT_EQ(r.first_failing_level, std::nullopt);
    EXPECT_EQ(to_string(r.limited_by), "not-recovered");
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_NE(r.notes[0].find("level 16 missed only on a server that had not recovered"),
              std::string::npos)
        << r.notes[0];
}

TEST(sweep_capacity, a_verification_run_on_an_unrecovered_server_is_run_again_not_counted) {
    model_server m{.capacity = 37};
    // 37's search run, then its first verification on a degraded server (a miss).
    m.scripted[37] = {{}, {.slo_met = false, .recovered = false}};
    const auto r = search(m, {.start_level = 32, .max_level = 64, .resolution = 0, .growth = 2});
    EXPECT_EQ(r.sessions, 37u);
    EXPECT_EQ(r.boundary_held, true);
    ASSERT_TRUE(r.capacity_check);
    EXPECT_EQ(r.capacity_check->runs, 2u);
    EXPECT_EQ(r.capacity_check->met, 2u);
    EXPECT_EQ(r.capacity_check->invalid, 0u);
    EXPECT_EQ(r.capacity_check->unrecovered, 1u);
    const auto o = capacity_search::capacity_json(r, "");
    EXPECT_EQ(o.at("verification").at("capacity_level").at("not_recovered").as_uint64(), 1u);
}

} // namespace

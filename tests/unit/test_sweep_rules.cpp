// The pure parts of `pacer serve`'s sweep (module `sweep`): the client-timing validity rules,
// the record of the checks, and the capacity search driven by constructed level outcomes (no
// network, no level run).

#include <pacer/sweep/capacity.hpp>
#include <pacer/sweep/validity.hpp>

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace pacer;
using sweep::level_outcome;
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

// A server that meets the SLOs up to `capacity` sessions, and a client that keeps up. Records
// the probes with their second-try flag.
struct model_server {
    std::size_t capacity = 0;
    std::map<std::size_t, std::vector<level_outcome>> scripted{}; // per level, in turn
    std::vector<std::pair<std::size_t, bool>> probes{};

    level_outcome operator()(std::size_t level, bool second_try) {
        probes.emplace_back(level, second_try);
        if (auto it = scripted.find(level); it != scripted.end() && !it->second.empty()) {
            auto r = it->second.front();
            it->second.erase(it->second.begin());
            return r;
        }
        return {.slo_met = level <= capacity};
    }
};

sweep::capacity_result search(model_server& m, sweep::capacity_settings s) {
    return sweep::search_capacity(
        s, [&m](std::size_t level, bool second_try) { return m(level, second_try); });
}

using levels = std::vector<std::size_t>;

TEST(sweep_capacity, doubles_then_bisects_to_the_last_good_level) {
    model_server m{.capacity = 37};
    const auto r = search(m, {.start_level = 1, .max_level = 1024, .resolution = 0});
    EXPECT_EQ(r.sessions, 37u);
    EXPECT_EQ(r.first_failing_level, 38u);
    EXPECT_EQ(r.limited_by, "slo");
    EXPECT_EQ(r.probed_levels, (levels{1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37}));
}

TEST(sweep_capacity, resolution_stops_the_bisection_early) {
    model_server m{.capacity = 37};
    const auto r = search(m, {.start_level = 1, .max_level = 1024, .resolution = 0.25});
    // 40 - 32 <= 0.25 x 32: close enough.
    EXPECT_EQ(r.sessions, 32u);
    EXPECT_EQ(r.first_failing_level, 40u);
    EXPECT_EQ(r.probed_levels, (levels{1, 2, 4, 8, 16, 32, 64, 48, 40}));
}

TEST(sweep_capacity, every_level_good_up_to_the_maximum) {
    model_server m{.capacity = 1000};
    const auto r = search(m, {.start_level = 3, .max_level = 20, .resolution = 0.05});
    EXPECT_EQ(r.sessions, 20u);
    EXPECT_EQ(r.first_failing_level, std::nullopt);
    EXPECT_EQ(r.limited_by, "max-level");
    EXPECT_EQ(r.probed_levels, (levels{3, 6, 12, 20}));
}

TEST(sweep_capacity, a_first_level_that_misses_gives_zero) {
    model_server m{.capacity = 0};
    const auto r = search(m, {.start_level = 1, .max_level = 64, .resolution = 0.05});
    EXPECT_EQ(r.sessions, 0u);
    EXPECT_EQ(r.first_failing_level, 1u);
    EXPECT_EQ(r.limited_by, "slo");
    EXPECT_EQ(r.probed_levels, levels{1});
}

TEST(sweep_capacity, a_level_not_valid_once_is_probed_again_and_the_search_goes_on) {
    model_server m{.capacity = 1000};
    m.scripted[4] = {{.valid = false}};
    const auto r = search(m, {.start_level = 1, .max_level = 8, .resolution = 0.05});
    EXPECT_EQ(r.sessions, 8u);
    EXPECT_EQ(r.limited_by, "max-level");
    EXPECT_EQ(m.probes, (std::vector<std::pair<std::size_t, bool>>{
                            {1, false}, {2, false}, {4, false}, {4, true}, {8, false}}));
}

TEST(sweep_capacity, a_level_not_valid_twice_ends_the_search_at_the_client) {
    model_server m{.capacity = 1000};
    m.scripted[16] = {{.valid = false}, {.valid = false}};
    const auto r = search(m, {.start_level = 1, .max_level = 1024, .resolution = 0.05});
    EXPECT_EQ(r.sessions, 8u);
    EXPECT_EQ(r.first_failing_level, std::nullopt);
    EXPECT_EQ(r.limited_by, "client");
    EXPECT_EQ(r.probed_levels, (levels{1, 2, 4, 8, 16, 16}));
}

TEST(sweep_capacity, an_unreachable_server_or_a_signal_ends_it_at_once) {
    model_server down{.capacity = 1000};
    down.scripted[4] = {{.unreachable = true}};
    auto r = search(down, {.start_level = 1, .max_level = 1024, .resolution = 0.05});
    EXPECT_EQ(r.sessions, 2u);
    EXPECT_EQ(r.limited_by, "unreachable");
    EXPECT_EQ(r.probed_levels, (levels{1, 2, 4}));

    model_server stopped{.capacity = 37};
    stopped.scripted[48] = {{.interrupted = true}};
    r = search(stopped, {.start_level = 1, .max_level = 1024, .resolution = 0});
    EXPECT_EQ(r.sessions, 32u);
    EXPECT_EQ(r.first_failing_level, 64u);
    EXPECT_EQ(r.limited_by, "interrupted");
    EXPECT_EQ(r.probed_levels, (levels{1, 2, 4, 8, 16, 32, 64, 48}));
}

TEST(sweep_capacity, json_names_the_answer_and_the_evidence) {
    sweep::capacity_result r;
    r.sessions = 32;
    r.first_failing_level = 40;
    r.limited_by = "slo";
    r.probed_levels = {32, 64, 40};
    auto o = sweep::capacity_json(r, "ttfa-p95<=0.5");
    EXPECT_EQ(o.at("sessions").as_uint64(), 32u);
    EXPECT_EQ(o.at("first_failing_level").as_uint64(), 40u);
    EXPECT_EQ(o.at("limited_by").as_string(), "slo");
    ASSERT_EQ(o.at("probed_levels").as_array().size(), 3u);
    EXPECT_EQ(o.at("probed_levels").as_array()[1].as_uint64(), 64u);
    EXPECT_EQ(o.at("slo").as_string(), "ttfa-p95<=0.5");
    r.first_failing_level.reset();
    EXPECT_TRUE(sweep::capacity_json(r, "").at("first_failing_level").is_null());
}

} // namespace

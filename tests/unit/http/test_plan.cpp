// The plan of `pacer http` made from its options' values (src/http/plan.cpp): headers, the API
// key from the environment and the schedule, each bad value one line.

#include <pacer/core/bad_input.hpp>
#include <pacer/http/plan.hpp>
#include <pacer/runtime/exit_status.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace pacer;

std::string error_of(const auto& f) {
    try {
        f();
    } catch (const bad_input& e) {
        return e.what();
    }
    return "";
}

TEST(http_plan, headers_and_the_api_key_are_added_and_only_their_names_kept) {
    ::setenv("PACER_TEST_PLAN_KEY", "sk-123", 1);
    http::http_plan p;
    http::add_headers({"X-Trace:  abc", "Accept: text/event-stream"}, "PACER_TEST_PLAN_KEY", p);
    ASSERT_EQ(p.headers.size(), 3u);
    EXPECT_EQ(p.headers[0], (std::pair<std::string, std::string>{"X-Trace", "abc"}));
    EXPECT_EQ(p.headers[2],
              (std::pair<std::string, std::string>{"Authorization", "Bearer sk-123"}));
    EXPECT_EQ(p.header_names, (std::vector<std::string>{"X-Trace", "Accept", "Authorization"}));
    ::unsetenv("PACER_TEST_PLAN_KEY");
}

TEST(http_plan, a_bad_header_or_a_missing_key_is_one_line) {
    http::http_plan p;
    EXPECT_EQ(error_of([&] { http::add_headers({"no colon"}, "", p); }),
              "--header 'no colon' must be 'Name: value'");
    EXPECT_EQ(error_of([&] { http::add_headers({"Bad Name: x"}, "", p); }),
              "--header 'Bad Name' must be 'Name: value'");
    ::unsetenv("PACER_TEST_PLAN_UNSET");
    EXPECT_EQ(error_of([&] { http::add_headers({}, "PACER_TEST_PLAN_UNSET", p); }),
              "--api-key-env PACER_TEST_PLAN_UNSET: the variable is not set or empty");
}

TEST(http_plan, the_schedule_is_made_from_the_options_and_sharded) {
    http::http_options s;
    s.arrivals.rate = 50;
    s.arrivals.count = 6;
    s.shard = "1/2";
    http::http_plan p;
    http::resolve_schedule(s, p);
    EXPECT_EQ(p.schedule.offsets.size(), 6u);
    EXPECT_EQ(p.indices, (std::vector<std::size_t>{1, 3, 5}));
    EXPECT_EQ(p.schedule.sha256.size(), 64u);
    EXPECT_EQ(p.policy, session::cap_policy::queue);

    s.arrivals.burstiness = 2;
    EXPECT_EQ(error_of([&] { http::resolve_schedule(s, p); }),
              "--burstiness applies only to --arrival gamma (got --arrival poisson)");
    s.arrivals.burstiness.reset();
    s.arrivals.duration = "soon";
    EXPECT_EQ(error_of([&] { http::resolve_schedule(s, p); }),
              "--duration must be a duration such as 60s, 1.5m or 250ms, got \"soon\"");
}

} // namespace

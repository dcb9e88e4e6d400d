// `pacer run`'s options resolved into a job without the command line (run/run_plan.hpp): the
// checks and what they resolve to (the timeout, this shard's arrivals, the estimates), each
// refusal a one-line bad_input.

#include <pacer/core/bad_input.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/run/run_plan.hpp>
#include <pacer/runtime/exit_status.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace {

using namespace pacer;
using namespace std::chrono_literals;

// The message `f` throws as bad_input ("" when it throws nothing).
template <class F>
std::string refusal(F&& f) {
    try {
        f();
    } catch (const bad_input& e) {
        return e.what();
    }
    return {};
}

// `pacer run --rate 10 --sessions 8 --shard 1/2` as the command fills the options.
run::run_job sharded_open_loop() {
    run::run_job job;
    job.options.arrivals.rate = 10;
    job.options.arrivals.count = 8;
    job.options.arrivals.seed = 7;
    job.options.shard = "1/2";
    return job;
}

TEST(RunPlan, NumbersAreCheckedAndTheTimeoutParsed) {
    run::run_options s;
    EXPECT_EQ(run::check_numbers(s), std::nullopt); // no --timeout: the default, later
    s.timeout = "90s";
    EXPECT_EQ(run::check_numbers(s), std::chrono::nanoseconds(90s));
    s.timeout = "soon";
    EXPECT_EQ(refusal([&] { run::check_numbers(s); }),
              "--timeout 'soon' is not a positive duration such as 90s");
    s.concurrency = 0; // the first mistake is the one reported
    EXPECT_EQ(refusal([&] { run::check_numbers(s); }), "--concurrency must be at least 1");
}

TEST(RunPlan, AnOpenLoopShardRunsEveryOtherArrivalOfTheOneSchedule) {
    auto job = sharded_open_loop();
    run::plan_sessions(job);
    ASSERT_TRUE(job.open_loop);
    ASSERT_EQ(job.open_loop->offsets.size(), 8u);
    EXPECT_FALSE(job.open_loop->sha256.empty());
    ASSERT_TRUE(job.shard);
    EXPECT_EQ(job.shard->index, 1u);
    ASSERT_EQ(job.arrivals.size(), 4u);
    EXPECT_EQ(job.sessions, 4u);
    for (std::size_t i = 0; i < job.arrivals.size(); ++i)
        EXPECT_EQ(job.arrivals[i], job.open_loop->offsets[2 * i + 1]);
    EXPECT_EQ(job.start_monotonic, std::nullopt);
}

TEST(RunPlan, OpenLoopAndClosedBatchRefuseEachOthersOptions) {
    auto job = sharded_open_loop();
    job.options.arrivals.rate.reset(); // --sessions alone
    EXPECT_EQ(refusal([&] { run::plan_sessions(job); }),
              "an open-loop run needs --rate R (arrivals per second), --stages or --schedule "
              "FILE");
    job = sharded_open_loop();
    job.options.arrivals.count.reset(); // --rate alone
    EXPECT_EQ(refusal([&] { run::plan_sessions(job); }),
              "an open-loop run needs --sessions N (how many arrivals)");
    // --burstiness is gamma's only: refused with poisson, as docs/schedule.md says (issue 41:
    // run took it silently).
    job = sharded_open_loop();
    job.options.arrivals.burstiness = 2;
    EXPECT_EQ(refusal([&] { run::plan_sessions(job); }),
              "--burstiness applies only to --arrival gamma (got --arrival poisson)");
    job.options.arrivals.arrival = "gamma";
    EXPECT_EQ(refusal([&] { run::plan_sessions(job); }), "");
    job = sharded_open_loop();
    job.options.concurrency_given = true;
    EXPECT_EQ(refusal([&] { run::plan_sessions(job); }),
              "--concurrency starts every session at once; open-loop runs take --sessions");
    run::run_job closed;
    closed.options.max_concurrency = 4;
    EXPECT_EQ(refusal([&] { run::plan_sessions(closed); }),
              "--max-concurrency gates open-loop arrivals: give --rate and --sessions");
}

TEST(RunPlan, TheTimeoutIsTheInputPlusAMinuteOrLongerThanTheInput) {
    run::run_job job;
    job.input_length = std::chrono::duration_cast<duration>(2s);
    run::set_timeout(job, std::nullopt);
    EXPECT_EQ(job.timeout, std::chrono::nanoseconds(62s));
    job.options.timeout = "1s";
    EXPECT_EQ(refusal([&] { run::set_timeout(job, std::chrono::nanoseconds(1s)); }),
              "--timeout 1s must be longer than the input (2.00 s)");
    run::set_timeout(job, std::chrono::nanoseconds(5s));
    EXPECT_EQ(job.timeout, std::chrono::nanoseconds(5s));
}

TEST(RunPlan, EstimatesFollowTheTraceModeAndTheSessionsInFlight) {
    run::run_job job;
    job.options.concurrency = 3;
    job.sessions = 3;
    job.input_length = std::chrono::duration_cast<duration>(10s);
    job.timeout = 70s;
    const auto full = run::disk_estimate(job);
    job.options.trace = "receipts";
    const auto receipts = run::disk_estimate(job);
    EXPECT_GT(full, receipts);
    EXPECT_GT(receipts, 0u);
    job.options.trace = "none";
    EXPECT_EQ(run::disk_estimate(job), 0u);
    job.options.keep_traces = true;
    EXPECT_EQ(refusal([&] { run::disk_estimate(job); }),
              "--keep-traces needs --trace full (--trace none writes no trace.jsonl)");
    // A closed batch has all its sessions in flight; the built-in mock holds the other end.
    EXPECT_EQ(run::sessions_in_flight(job), 3u);
    EXPECT_EQ(run::descriptors_needed(job), 3u * 4 + 64);
    job.options.url = "ws://127.0.0.1:1/v1/realtime";
    EXPECT_EQ(run::descriptors_needed(job), 3u * 3 + 64);
}

} // namespace

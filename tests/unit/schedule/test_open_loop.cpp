// The sans-io open-loop dispatcher (a sans-io core), driven with explicit time points: no
// io_context, no sleeping. Each test narrates the run as the driver would see it: ask
// `next(now)`, act, report `dispatched`/`completed` with the time it happened.

#include <pacer/session/open_loop.hpp>

#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <vector>

namespace {

using namespace std::chrono_literals;
namespace json = boost::json;
using pacer::time_point;
using pacer::session::cap_policy;
using pacer::session::dispatcher;
using kind = pacer::session::dispatch_action::kind;

// An arbitrary origin far from the clock's epoch; every time below is t0 + something.
const time_point t0 = time_point{} + 1h;

std::vector<std::chrono::nanoseconds> offsets(std::initializer_list<std::chrono::milliseconds> ms) {
    std::vector<std::chrono::nanoseconds> out;
    for (auto m : ms)
        out.push_back(m);
    return out;
}

double seconds(std::chrono::nanoseconds d) {
    return std::chrono::duration<double>(d).count();
}

// Every arrival is still scheduled at start + offset, whatever happened during the run.
void expect_schedule_intact(const dispatcher& d,
                            const std::vector<std::chrono::nanoseconds>& offs) {
    ASSERT_EQ(d.records().size(), offs.size());
    for (std::size_t i = 0; i < offs.size(); ++i)
        EXPECT_EQ(d.records()[i].scheduled, t0 + offs[i]) << "arrival " << i;
}

TEST(OpenLoopDispatcher, FiresArrivalsAtTheirScheduledTimes) {
    const auto offs = offsets({10ms, 20ms, 30ms});
    dispatcher d(offs, t0, 0, cap_policy::queue);

    // Before the first arrival: wait until its absolute deadline.
    auto a = d.next(t0);
    EXPECT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.index, 0u);
    EXPECT_EQ(a.scheduled, t0 + 10ms);

    // Each arrival is due exactly at its deadline and dispatched on time.
    for (std::size_t i = 0; i < 3; ++i) {
        const auto due = t0 + offs[i];
        EXPECT_EQ(d.next(due - 1ns).what, kind::wait_until);
        a = d.next(due);
        ASSERT_EQ(a.what, kind::dispatch);
        EXPECT_EQ(a.index, i);
        EXPECT_EQ(a.scheduled, due);
        EXPECT_EQ(d.next(due).index, i) << "asking twice changes nothing";
        d.dispatched(i, due);
    }
    // Everything dispatched, two still in flight: drain, then done.
    d.completed(0, t0 + 15ms);
    EXPECT_EQ(d.next(t0 + 40ms).what, kind::drain);
    d.completed(2, t0 + 45ms);
    d.completed(1, t0 + 50ms);
    EXPECT_EQ(d.next(t0 + 50ms).what, kind::done);

    const auto& r = d.records();
    for (const auto& rec : r)
        EXPECT_EQ(*rec.dispatch_lag(), 0ns);
    EXPECT_EQ(*r[0].latency(), 5ms);
    EXPECT_EQ(*r[1].latency(), 30ms);
    EXPECT_EQ(*r[2].latency(), 15ms);
    EXPECT_EQ(d.peak_in_flight(), 3u);
    expect_schedule_intact(d, offs);

    const auto s = pacer::session::open_loop_summary(pacer::session::make_open_loop_result(d));
    EXPECT_EQ(s.at("requests").at("dispatched").as_uint64(), 3u);
    EXPECT_EQ(s.at("requests").at("completed").as_uint64(), 3u);
    EXPECT_TRUE(s.at("schedule_kept").as_bool());
    EXPECT_FALSE(s.at("cap").at("binding").as_bool());
    EXPECT_EQ(s.at("cap").at("max_concurrency").as_uint64(), 0u);
}

TEST(OpenLoopDispatcher, LateWakeFiresEveryOverdueArrivalAtOnceInOrder) {
    const auto offs = offsets({10ms, 20ms, 30ms, 40ms});
    dispatcher d(offs, t0, 0, cap_policy::queue);
    EXPECT_EQ(d.next(t0).scheduled, t0 + 10ms);

    // The dispatcher was asleep until 35 ms: the three overdue arrivals fire now, in order.
    const auto late = t0 + 35ms;
    for (std::size_t i = 0; i < 3; ++i) {
        const auto a = d.next(late);
        ASSERT_EQ(a.what, kind::dispatch);
        EXPECT_EQ(a.index, i);
        EXPECT_EQ(a.scheduled, t0 + offs[i]) << "reported at its own deadline, not at now";
        d.dispatched(i, late);
    }
    // The fourth is not shifted by the lateness: still due at 40 ms.
    auto a = d.next(late);
    EXPECT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.scheduled, t0 + 40ms);
    a = d.next(t0 + 40ms);
    ASSERT_EQ(a.what, kind::dispatch);
    d.dispatched(3, t0 + 40ms);

    const auto& r = d.records();
    EXPECT_EQ(*r[0].dispatch_lag(), 25ms);
    EXPECT_EQ(*r[1].dispatch_lag(), 15ms);
    EXPECT_EQ(*r[2].dispatch_lag(), 5ms);
    EXPECT_EQ(*r[3].dispatch_lag(), 0ms);
    for (std::size_t i = 0; i < 4; ++i)
        d.completed(i, t0 + 50ms);
    EXPECT_EQ(d.next(t0 + 50ms).what, kind::done);
    // Latency stays anchored to the schedule; the uncorrected view hides the lateness.
    EXPECT_EQ(*r[0].latency(), 40ms);
    EXPECT_EQ(*r[0].uncorrected_latency(), 15ms);
    expect_schedule_intact(d, offs);

    // Lags 0, 5, 15, 25 ms: the p99 (24.7 ms) and the max exceed 1 ms and 10 ms.
    const auto s = pacer::session::open_loop_summary(pacer::session::make_open_loop_result(d));
    EXPECT_FALSE(s.at("schedule_kept").as_bool());
    EXPECT_EQ(s.at("deadline_missed").as_uint64(), 2u); // 15 ms and 25 ms > 10 ms
    EXPECT_DOUBLE_EQ(s.at("dispatch_lag_s").at("max").as_double(), 0.025);
    EXPECT_DOUBLE_EQ(s.at("dispatch_lag_s").at("p50").as_double(), 0.010);
    EXPECT_DOUBLE_EQ(s.at("latency_s").at("max").as_double(), 0.040);
    EXPECT_DOUBLE_EQ(s.at("uncorrected_latency_s").at("max").as_double(), 0.015);
}

TEST(OpenLoopDispatcher, CapOneQueueHoldsTheSecondRequestAndItsLatencyIncludesTheWait) {
    const auto offs = offsets({0ms, 10ms, 12ms});
    dispatcher d(offs, t0, 1, cap_policy::queue);

    // Request 0 takes the only slot at 0 ms.
    ASSERT_EQ(d.next(t0).what, kind::dispatch);
    d.dispatched(0, t0);

    // At 10 ms request 1 is due but the slot is taken: wait for a completion.
    auto a = d.next(t0 + 10ms);
    EXPECT_EQ(a.what, kind::wait_for_slot);
    EXPECT_EQ(a.index, 1u);
    EXPECT_EQ(a.scheduled, t0 + 10ms);
    // Request 2 (due at 12 ms) queues behind it, in order.
    EXPECT_EQ(d.next(t0 + 13ms).index, 1u);

    // Request 0 completes at 25 ms: request 1 goes at once, request 2 waits again.
    d.completed(0, t0 + 25ms);
    a = d.next(t0 + 25ms);
    ASSERT_EQ(a.what, kind::dispatch);
    EXPECT_EQ(a.index, 1u);
    d.dispatched(1, t0 + 25ms);
    a = d.next(t0 + 25ms);
    EXPECT_EQ(a.what, kind::wait_for_slot);
    EXPECT_EQ(a.index, 2u);

    // Request 1 completes at 30 ms; request 2 goes at 31 ms (the dispatcher was 1 ms slow).
    d.completed(1, t0 + 30ms);
    ASSERT_EQ(d.next(t0 + 31ms).what, kind::dispatch);
    d.dispatched(2, t0 + 31ms);
    d.completed(2, t0 + 40ms);
    EXPECT_EQ(d.next(t0 + 40ms).what, kind::done);

    const auto& r = d.records();
    // Request 1: held 15 ms by the cap, no lag of its own, latency 20 ms from its schedule
    // (the uncorrected view would show only its 5 ms of service).
    EXPECT_EQ(r[1].cap_delay, 15ms);
    EXPECT_EQ(*r[1].dispatch_lag(), 0ms);
    EXPECT_EQ(*r[1].latency(), 20ms);
    EXPECT_EQ(*r[1].uncorrected_latency(), 5ms);
    // Request 2: held 18 ms (12 -> 30), then 1 ms of dispatcher lag; latency 28 ms.
    EXPECT_EQ(r[2].cap_delay, 18ms);
    EXPECT_EQ(*r[2].dispatch_lag(), 1ms);
    EXPECT_EQ(*r[2].latency(), 28ms);
    EXPECT_EQ(r[0].cap_delay, 0ms);
    EXPECT_EQ(d.peak_in_flight(), 1u);
    expect_schedule_intact(d, offs);

    const auto s = pacer::session::open_loop_summary(pacer::session::make_open_loop_result(d));
    const auto& cap = s.at("cap");
    EXPECT_TRUE(cap.at("binding").as_bool());
    EXPECT_EQ(cap.at("delayed").as_uint64(), 2u);
    EXPECT_EQ(cap.at("dropped").as_uint64(), 0u);
    EXPECT_EQ(cap.at("max_concurrency").as_uint64(), 1u);
    EXPECT_EQ(cap.at("policy").as_string(), "queue");
    EXPECT_EQ(cap.at("delay_s").at("n").as_uint64(), 2u);
    EXPECT_DOUBLE_EQ(cap.at("delay_s").at("max").as_double(), 0.018);
    EXPECT_DOUBLE_EQ(cap.at("delay_s").at("p50").as_double(), seconds(16500us));
    // The cap's wait is disclosed under `cap`, not blamed on the dispatcher: lags 0, 0, 1 ms.
    EXPECT_DOUBLE_EQ(s.at("dispatch_lag_s").at("max").as_double(), 0.001);
    EXPECT_TRUE(s.at("schedule_kept").as_bool());
    EXPECT_DOUBLE_EQ(s.at("latency_s").at("max").as_double(), 0.028);
}

TEST(OpenLoopDispatcher, CapDelayIsOnlyWhatTheDispatcherSawTheCapHold) {
    // The slot frees before the (late) dispatcher ever sees request 1 blocked: the whole
    // delay is the dispatcher's own lag, not the cap's (the conservative attribution).
    const auto offs = offsets({0ms, 10ms});
    dispatcher d(offs, t0, 1, cap_policy::queue);
    d.dispatched(0, t0);
    d.completed(0, t0 + 15ms);
    ASSERT_EQ(d.next(t0 + 20ms).what, kind::dispatch);
    d.dispatched(1, t0 + 20ms);
    EXPECT_EQ(d.records()[1].cap_delay, 0ms);
    EXPECT_EQ(*d.records()[1].dispatch_lag(), 10ms);
}

TEST(OpenLoopDispatcher, DropPolicyCountsAndSkips) {
    const auto offs = offsets({0ms, 5ms, 10ms, 30ms});
    dispatcher d(offs, t0, 1, cap_policy::drop);

    ASSERT_EQ(d.next(t0).what, kind::dispatch);
    d.dispatched(0, t0);
    // Request 1 finds the slot taken at 5 ms: dropped, and the next arrival keeps its time.
    auto a = d.next(t0 + 5ms);
    EXPECT_EQ(a.what, kind::drop);
    EXPECT_EQ(a.index, 1u);
    a = d.next(t0 + 5ms);
    EXPECT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.scheduled, t0 + 10ms);
    // Same for request 2 at 10 ms.
    EXPECT_EQ(d.next(t0 + 10ms).what, kind::drop);
    EXPECT_EQ(d.next(t0 + 10ms).scheduled, t0 + 30ms);
    // Request 0 completes at 20 ms; request 3 finds the slot free at 30 ms.
    d.completed(0, t0 + 20ms);
    ASSERT_EQ(d.next(t0 + 30ms).what, kind::dispatch);
    d.dispatched(3, t0 + 30ms);
    EXPECT_EQ(d.next(t0 + 31ms).what, kind::drain);
    d.completed(3, t0 + 35ms);
    EXPECT_EQ(d.next(t0 + 35ms).what, kind::done);

    EXPECT_EQ(d.dropped_count(), 2u);
    const auto& r = d.records();
    EXPECT_TRUE(r[1].dropped);
    EXPECT_TRUE(r[2].dropped);
    EXPECT_FALSE(r[1].dispatched);
    EXPECT_FALSE(r[0].dropped);
    EXPECT_FALSE(r[3].dropped);
    expect_schedule_intact(d, offs);

    const auto s = pacer::session::open_loop_summary(pacer::session::make_open_loop_result(d));
    EXPECT_EQ(s.at("requests").at("scheduled").as_uint64(), 4u);
    EXPECT_EQ(s.at("requests").at("dispatched").as_uint64(), 2u);
    EXPECT_EQ(s.at("requests").at("completed").as_uint64(), 2u);
    EXPECT_EQ(s.at("requests").at("dropped").as_uint64(), 2u);
    EXPECT_EQ(s.at("requests").at("not_dispatched").as_uint64(), 0u);
    const auto& cap = s.at("cap");
    EXPECT_TRUE(cap.at("binding").as_bool());
    EXPECT_EQ(cap.at("dropped").as_uint64(), 2u);
    EXPECT_EQ(cap.at("delayed").as_uint64(), 0u);
    EXPECT_EQ(cap.at("policy").as_string(), "drop");
    EXPECT_TRUE(s.at("schedule_kept").as_bool());
}

TEST(OpenLoopDispatcher, CapThatNeverFillsIsNotBinding) {
    const auto offs = offsets({0ms, 10ms, 20ms});
    dispatcher d(offs, t0, 2, cap_policy::queue);
    for (std::size_t i = 0; i < 3; ++i) {
        const auto due = t0 + offs[i];
        ASSERT_EQ(d.next(due).what, kind::dispatch);
        d.dispatched(i, due);
        d.completed(i, due + 5ms);
    }
    const auto s = pacer::session::open_loop_summary(pacer::session::make_open_loop_result(d));
    EXPECT_FALSE(s.at("cap").at("binding").as_bool());
    EXPECT_EQ(s.at("cap").at("delayed").as_uint64(), 0u);
    EXPECT_EQ(s.at("cap").at("delay_s").at("n").as_uint64(), 0u);
    EXPECT_TRUE(s.at("cap").at("delay_s").at("max").is_null());
    EXPECT_EQ(s.at("cap").at("peak_in_flight").as_uint64(), 1u);
}

TEST(OpenLoopDispatcher, ScheduleKeptThresholdsAreStatedAndApplied) {
    // Lags of 0 and 2 ms: p99 1.98 ms > 1 ms, max 2 ms <= 10 ms -> not kept, nothing missed.
    const auto offs = offsets({0ms, 10ms});
    dispatcher d(offs, t0, 0, cap_policy::queue);
    d.dispatched(0, t0);
    d.dispatched(1, t0 + 12ms);
    auto s = pacer::session::open_loop_summary(pacer::session::make_open_loop_result(d));
    EXPECT_FALSE(s.at("schedule_kept").as_bool());
    EXPECT_EQ(s.at("deadline_missed").as_uint64(), 0u);
    EXPECT_DOUBLE_EQ(s.at("schedule_kept_thresholds_s").at("dispatch_lag_p99").as_double(), 0.001);
    EXPECT_DOUBLE_EQ(s.at("schedule_kept_thresholds_s").at("dispatch_lag_max").as_double(), 0.010);
    // Dispatched but never completed: counted, no latency sample.
    EXPECT_EQ(s.at("requests").at("completed").as_uint64(), 0u);
    EXPECT_EQ(s.at("latency_s").at("n").as_uint64(), 0u);

    // Looser thresholds keep the same run.
    dispatcher d2(offs, t0, 0, cap_policy::queue);
    d2.dispatched(0, t0);
    d2.dispatched(1, t0 + 12ms);
    s = pacer::session::open_loop_summary(pacer::session::make_open_loop_result(d2),
                                          {.dispatch_lag_p99 = 2ms, .dispatch_lag_max = 2ms});
    EXPECT_TRUE(s.at("schedule_kept").as_bool());
}

TEST(OpenLoopDispatcher, StopDrainsThenEnds) {
    const auto offs = offsets({0ms, 10ms, 20ms});
    dispatcher d(offs, t0, 0, cap_policy::queue);
    d.dispatched(0, t0);
    d.stop();
    EXPECT_EQ(d.next(t0 + 30ms).what, kind::drain);
    d.completed(0, t0 + 31ms);
    EXPECT_EQ(d.next(t0 + 31ms).what, kind::done);
    const auto s = pacer::session::open_loop_summary(pacer::session::make_open_loop_result(d));
    EXPECT_EQ(s.at("requests").at("not_dispatched").as_uint64(), 2u);
    EXPECT_TRUE(s.at("interrupted").as_bool());
}

TEST(OpenLoopDispatcher, EmptyScheduleIsDone) {
    dispatcher d({}, t0, 0, cap_policy::queue);
    EXPECT_EQ(d.next(t0).what, kind::done);
    const auto s = pacer::session::open_loop_summary(pacer::session::make_open_loop_result(d));
    EXPECT_TRUE(s.at("schedule_kept").as_bool());
    EXPECT_TRUE(s.at("dispatch_lag_s").at("p99").is_null());
}

TEST(OpenLoopDispatcher, MisuseThrows) {
    const auto offs = offsets({0ms, 10ms});
    dispatcher d(offs, t0, 1, cap_policy::queue);
    EXPECT_THROW(d.dispatched(1, t0), std::logic_error); // not the head
    EXPECT_THROW(d.completed(0, t0), std::logic_error);  // not in flight
    d.dispatched(0, t0);
    EXPECT_THROW(d.dispatched(1, t0 + 10ms), std::logic_error); // cap full
    d.completed(0, t0 + 1ms);
    EXPECT_THROW(d.completed(0, t0 + 2ms), std::logic_error); // twice
}

TEST(OpenLoopDispatcher, CapPolicyNames) {
    using pacer::session::parse_cap_policy;
    EXPECT_EQ(pacer::session::to_string(cap_policy::queue), "queue");
    EXPECT_EQ(pacer::session::to_string(cap_policy::drop), "drop");
    EXPECT_EQ(parse_cap_policy("queue"), cap_policy::queue);
    EXPECT_EQ(parse_cap_policy("drop"), cap_policy::drop);
    EXPECT_FALSE(parse_cap_policy("Queue"));
}

} // namespace

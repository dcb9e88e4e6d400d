// The native mock's compute model with a manual clock: the shared worker's queue arithmetic
// (`service_queue`), the cold start of a new high-water mark of open sessions (`cold_start`) and
// the degradation after an overload (`overload_penalty`).
// Times are plain time points the test chooses; nothing waits. Its use from many threads at once
// is tested in tests/async/server/test_compute_model_threads.cpp (run under TSan too).

#include <pacer/server/detail/compute_model.hpp>

#include <gtest/gtest.h>

#include "compute_model_clock.hpp"
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace pacer::server::detail {
namespace {

using namespace std::chrono_literals;
using test_clock::at;
using test_clock::ms;

TEST(ServiceQueue, AnIdleWorkerTakesAUnitAtOnce) {
    service_queue q(5ms);
    const auto a = q.admit(at(0ms));
    EXPECT_EQ(a.start, at(0ms));
    EXPECT_EQ(a.done, at(5ms));
    EXPECT_EQ(a.wait, 0ms);
    EXPECT_EQ(a.queued, 1u);
    EXPECT_EQ(q.backlog(at(0ms)), 5ms);
    EXPECT_EQ(q.backlog(at(5ms)), 0ms);
    // Long after, the worker is idle again: the next unit does not wait.
    const auto b = q.admit(at(100ms));
    EXPECT_EQ(b.start, at(100ms));
    EXPECT_EQ(b.wait, 0ms);
    EXPECT_EQ(b.queued, 1u);
}

TEST(ServiceQueue, UnitsOfOneTickQueueFirstInFirstOut) {
    // C sessions on a common 80 ms grid, S = 10 ms: the k-th unit of a tick waits k x S, so the
    // last one's output (before the unit latency) leaves C x S after the tick.
    constexpr int sessions = 6;
    service_queue q(10ms);
    std::vector<service_queue::admission> tick;
    for (int s = 0; s < sessions; ++s)
        tick.push_back(q.admit(at(0ms)));
    for (int k = 0; k < sessions; ++k) {
        SCOPED_TRACE(k);
        EXPECT_EQ(tick[k].wait, ms(10 * k));
        EXPECT_EQ(tick[k].done, at(ms(10 * (k + 1))));
        EXPECT_EQ(tick[k].queued, static_cast<std::uint64_t>(k + 1));
    }
    EXPECT_EQ(q.backlog(at(0ms)), 60ms);
    // 60 ms < 80 ms: the worker is idle again before the next tick.
    EXPECT_EQ(q.admit(at(80ms)).wait, 0ms);
}

TEST(ServiceQueue, AboveTheKneeTheBacklogGrowsTickByTick) {
    // 10 sessions x 10 ms = 100 ms of work every 80 ms: 20 ms more backlog each tick.
    service_queue q(10ms);
    for (int tick = 0; tick < 4; ++tick)
        for (int s = 0; s < 10; ++s)
            q.admit(at(ms(80 * tick)));
    // Work done by 4 ticks: 400 ms, started at 0 with no idle gap; at 240 ms (the last tick) it
    // still holds 400 - 240 = 160 ms.
    EXPECT_EQ(q.backlog(at(240ms)), 160ms);
    const auto late = q.admit(at(240ms));
    EXPECT_EQ(late.wait, 160ms);
    EXPECT_EQ(late.queued, 17u); // 16 units of 10 ms ahead, and itself
}

TEST(ServiceQueue, WorkOfASessionThatLeftIsStillDone) {
    // Session A queues 20 units at once (an overload) and leaves; the queue knows no sessions,
    // so B, arriving later, waits behind A's remaining work.
    service_queue q(10ms);
    for (int u = 0; u < 20; ++u)
        q.admit(at(0ms));
    EXPECT_EQ(q.backlog(at(50ms)), 150ms); // A is gone: its work is not
    const auto b = q.admit(at(50ms));
    EXPECT_EQ(b.start, at(200ms));
    EXPECT_EQ(b.wait, 150ms);
    EXPECT_EQ(b.queued, 16u);
    // Once the backlog has drained, B's next unit is served at once.
    EXPECT_EQ(q.admit(at(300ms)).wait, 0ms);
}

TEST(ServiceQueue, PartlyServedUnitCountsAsQueued) {
    service_queue q(10ms);
    q.admit(at(0ms));
    const auto a = q.admit(at(3ms)); // the first is 3 ms into its service
    EXPECT_EQ(a.wait, 7ms);
    EXPECT_EQ(a.queued, 2u);
    const auto b = q.admit(at(10ms)); // the first is done; the second just started
    EXPECT_EQ(b.wait, 10ms);
    EXPECT_EQ(b.queued, 2u);
}

TEST(ServiceQueue, NoServiceTimeIsNoWorker) {
    service_queue q(0ms);
    for (int u = 0; u < 5; ++u) {
        const auto a = q.admit(at(0ms));
        EXPECT_EQ(a.done, at(0ms));
        EXPECT_EQ(a.wait, 0ms);
        EXPECT_EQ(a.queued, 1u);
    }
    EXPECT_EQ(q.backlog(at(0ms)), 0ms);
}

TEST(ColdStart, OnlyANewHighWaterMarkPays) {
    cold_start c(30ms, 2s);
    // Before any session: no cold window.
    EXPECT_EQ(c.extra(at(0ms)), 0ms);
    // A first level of 3: each session raises the mark (1, 2, 3), one cold start.
    EXPECT_TRUE(c.opened(1, at(0ms)));
    EXPECT_TRUE(c.opened(2, at(10ms)));
    EXPECT_TRUE(c.opened(3, at(20ms)));
    EXPECT_EQ(c.count(), 1u);
    EXPECT_EQ(c.high_water(), 3u);
    // Units in the 2 s after the last raise pay; the window ends 2 s after it.
    EXPECT_EQ(c.extra(at(100ms)), 30ms);
    EXPECT_EQ(c.extra(at(2019ms)), 30ms);
    EXPECT_EQ(c.extra(at(2020ms)), 0ms);
    // The same level again (sessions 1..3 open again, later): no raise, no cost.
    for (std::size_t open = 1; open <= 3; ++open)
        EXPECT_FALSE(c.opened(open, at(5000ms)));
    EXPECT_EQ(c.extra(at(5100ms)), 0ms);
    // A lower level never pays.
    EXPECT_FALSE(c.opened(2, at(8000ms)));
    EXPECT_EQ(c.extra(at(8100ms)), 0ms);
    EXPECT_EQ(c.count(), 1u);
    // A higher level pays again, from its first session above the mark.
    EXPECT_FALSE(c.opened(3, at(10000ms)));
    EXPECT_EQ(c.extra(at(10010ms)), 0ms);
    EXPECT_TRUE(c.opened(4, at(10020ms)));
    EXPECT_EQ(c.extra(at(10030ms)), 30ms);
    EXPECT_EQ(c.count(), 2u);
    EXPECT_EQ(c.high_water(), 4u);
}

TEST(ColdStart, AnEarlierRaiseNeverShortensTheWindow) {
    cold_start c(30ms, 2s);
    EXPECT_TRUE(c.opened(2, at(1000ms)));
    // A raise reported late (another thread read an earlier clock) keeps the later end.
    EXPECT_TRUE(c.opened(3, at(500ms)));
    EXPECT_EQ(c.extra(at(2900ms)), 30ms);
    EXPECT_EQ(c.extra(at(3000ms)), 0ms);
    EXPECT_EQ(c.count(), 1u); // the second raise fell inside the first one's window
}

TEST(ColdStart, ARaiseAfterTheWindowIsANewColdStart) {
    cold_start c(30ms, 1s);
    EXPECT_TRUE(c.opened(1, at(0ms)));
    // The window has ended when a second session joins 1.5 s later: a second cold start.
    EXPECT_TRUE(c.opened(2, at(1500ms)));
    EXPECT_EQ(c.count(), 2u);
    EXPECT_EQ(c.extra(at(2400ms)), 30ms);
}

TEST(ColdStart, ZeroExtraIsOffButKeepsTheMark) {
    cold_start c(0ms, 2s);
    EXPECT_FALSE(c.opened(5, at(0ms)));
    EXPECT_EQ(c.extra(at(1ms)), 0ms);
    EXPECT_EQ(c.count(), 0u);
    EXPECT_EQ(c.high_water(), 5u);
}

TEST(OverloadPenalty, AFreshServerPaysNothingBelowTheLimit) {
    overload_penalty p(40ms, 10s, 80ms);
    // Lags up to one unit (80 ms) are not an overload: no unit pays.
    for (int t = 0; t < 10; ++t)
        EXPECT_EQ(p.unit(at(ms(80 * t)), 80ms), 0ms);
    EXPECT_EQ(p.overloads(), 0u);
    EXPECT_EQ(p.degraded(at(1000ms)), 0ms);
}

TEST(OverloadPenalty, AfterAnOverloadEveryUnitPaysUntilTheRecovery) {
    overload_penalty p(40ms, 10s, 80ms);
    // An overload period: units at 1.0 s .. 1.8 s lag 85 ms. They pay (the server is degraded
    // from the first), and the period is one overload.
    for (int t = 0; t < 10; ++t)
        EXPECT_EQ(p.unit(at(ms(1000 + 80 * t)), 85ms), 40ms);
    EXPECT_EQ(p.overloads(), 1u);
    // One session afterwards, lag 5 ms: degraded for 10 s after the last overloaded unit
    // (1.72 s), whatever the load now.
    EXPECT_EQ(p.degraded(at(2000ms)), 9720ms);
    EXPECT_EQ(p.unit(at(2000ms), 5ms), 40ms);
    EXPECT_EQ(p.unit(at(11719ms), 5ms), 40ms);
    EXPECT_EQ(p.unit(at(11720ms), 5ms), 0ms);
    EXPECT_EQ(p.degraded(at(11720ms)), 0ms);
    // The penalty is not part of the lag judged: 5 + 40 ms never counted as an overload.
    EXPECT_EQ(p.overloads(), 1u);
}

TEST(OverloadPenalty, ANewOverloadWhileDegradedProlongsItAndAfterRecoveryCountsAgain) {
    overload_penalty p(40ms, 5s, 80ms);
    EXPECT_EQ(p.unit(at(0ms), 100ms), 40ms);
    EXPECT_EQ(p.unit(at(3000ms), 100ms), 40ms); // inside the window: the same overload, longer
    EXPECT_EQ(p.overloads(), 1u);
    EXPECT_EQ(p.degraded(at(3000ms)), 5000ms);
    // A report from another thread with an earlier clock never shortens it.
    EXPECT_EQ(p.unit(at(2000ms), 100ms), 40ms);
    EXPECT_EQ(p.degraded(at(3000ms)), 5000ms);
    EXPECT_EQ(p.unit(at(8000ms), 5ms), 0ms); // recovered
    EXPECT_EQ(p.unit(at(9000ms), 100ms), 40ms);
    EXPECT_EQ(p.overloads(), 2u);
}

TEST(OverloadPenalty, ZeroPenaltyIsOff) {
    overload_penalty p(0ms, 5s, 80ms);
    EXPECT_EQ(p.unit(at(0ms), 500ms), 0ms);
    EXPECT_EQ(p.unit(at(10ms), 5ms), 0ms);
    EXPECT_EQ(p.overloads(), 0u);
    EXPECT_EQ(p.degraded(at(10ms)), 0ms);
}

} // namespace
} // namespace pacer::server::detail

// run_options::handle_signals: the run takes SIGINT/SIGTERM on a thread of its own at the normal
// policy, never on the SCHED_IDLE trace writer's (which a busy host starves of CPU), and the
// writer's thread blocks them so that the kernel never runs their handler there. Runs the native
// mock in-process on loopback; nothing here is timed.

#include <pacer/session/error.hpp>
#include <pacer/session/live_counters.hpp>
#include <pacer/session/runner.hpp>

#include <gtest/gtest.h>

#include "async/mock_thread.hpp"
#include "async/threads.hpp"
#include "unit/scratch_folder.hpp"
#include <csignal>
#include <optional>
#include <sched.h>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace {

using pacer::testing::blocks_signal;
using pacer::testing::mock_thread;
using pacer::testing::thread_named;

// Once the sessions stream, the signals' thread is up at the caller's (normal) policy and the
// writer's blocks SIGINT and SIGTERM; a SIGINT to the process then ends the run as an interrupted
// one: every session interrupted, and its last failure says so. The sessions' input (4 s) is their
// only bound: a signal left unhandled lets them finish, and the test fails on `interrupted`.
TEST(RunnerSignals, SigintIsTakenOnANormalPolicyThreadAndInterruptsEverySession) {
    const pacer::test::scratch_folder scratch("pacer-runner-signals");
    mock_thread mock({});
    auto o = mock.run_options(2, 50, scratch.path);
    o.handle_signals = true;
    pacer::session::live_counters live;
    o.live = &live;
    std::optional<pid_t> signals, writer;
    int signals_policy = -1, signals_nice = -100;
    bool writer_blocks = false;
    std::thread interrupter([&] {
        // Polls the live totals (a condition, not a synchronisation by sleep) until the
        // sessions stream; bounded by their input (or their end, if they cannot stream).
        while (live.packets_sent.load() < 2 && live.done.load() + live.failed.load() < 2)
            ::usleep(1'000);
        signals = thread_named("pacer-signals");
        writer = thread_named("pacer-writer");
        if (signals) {
            signals_policy = ::sched_getscheduler(*signals);
            signals_nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(*signals));
        }
        if (writer)
            writer_blocks = blocks_signal(*writer, SIGINT) && blocks_signal(*writer, SIGTERM);
        if (signals) // no signal without its handler: it would end the test process
            ::kill(::getpid(), SIGINT);
    });
    const auto out = pacer::session::run_duplex(o);
    interrupter.join();
    // The caller's own policy and nice (SCHED_OTHER at 0 when run by hand): never lowered.
    ASSERT_TRUE(signals.has_value());
    EXPECT_EQ(signals_policy, ::sched_getscheduler(0));
    EXPECT_NE(signals_policy, SCHED_IDLE);
    EXPECT_EQ(signals_nice, ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid())));
    ASSERT_TRUE(writer.has_value());
    EXPECT_TRUE(writer_blocks);
    EXPECT_TRUE(out.interrupted);
    ASSERT_EQ(out.sessions.size(), 2u);
    for (const auto& r : out.sessions) {
        SCOPED_TRACE(r.index);
        EXPECT_TRUE(r.interrupted);
        EXPECT_LT(r.appends_sent, 50u);
        ASSERT_FALSE(r.failures.empty());
        EXPECT_EQ(r.failures.back().code, pacer::session::session_errc::interrupted);
    }
}

} // namespace

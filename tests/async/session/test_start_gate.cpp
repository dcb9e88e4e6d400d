// The start gate of a serving level on real io_contexts: sessions on two threads report, and
// only the last report releases the ready ones, all with the same common start. Nothing sleeps:
// each step is run to completion with `run`/`restart`, and the threads are joined.

#include <pacer/session/start_gate.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using pacer::time_point;
using pacer::session::start_gate;

TEST(StartGate, ReleasesReadySessionsOnlyAfterTheLastReportWithOneCommonStart) {
    boost::asio::io_context a{1}, b{1};
    start_gate gate(3, 200ms);
    std::optional<time_point> got_a, got_b;
    gate.arrive(a.get_executor(), [&](time_point t) { got_a = t; });
    a.run(); // nothing is posted before every session has reported
    EXPECT_FALSE(got_a);
    EXPECT_FALSE(gate.common_start());

    const auto before_last = pacer::clock::now();
    gate.arrive(b.get_executor(), [&](time_point t) { got_b = t; });
    // The third session ends without negotiating, on another thread.
    std::thread other([&] { gate.arrive(b.get_executor(), {}); });
    other.join();
    a.restart();
    a.run();
    b.run();
    ASSERT_TRUE(got_a);
    ASSERT_TRUE(got_b);
    EXPECT_EQ(*got_a, *got_b);
    ASSERT_TRUE(gate.common_start());
    EXPECT_EQ(*gate.common_start(), *got_a);
    // Fixed `lead` after the last report, which came after `before_last`.
    EXPECT_GE(*got_a, before_last + 200ms);
    EXPECT_EQ(gate.ready(), 2u);
}

TEST(StartGate, EverySessionFailingStillFixesTheStart) {
    boost::asio::io_context io{1};
    start_gate gate(2, 0ms);
    gate.arrive(io.get_executor(), {});
    gate.arrive(io.get_executor(), {});
    EXPECT_TRUE(gate.common_start());
    EXPECT_EQ(gate.ready(), 0u);
}

TEST(StartGate, OneReportTooManyIsAnError) {
    boost::asio::io_context io{1};
    start_gate gate(1, 0ms);
    gate.arrive(io.get_executor(), {});
    EXPECT_THROW(gate.arrive(io.get_executor(), {}), std::logic_error);
}

TEST(StartGate, ReportsFromManyThreadsReleaseEveryReadySessionOnce) {
    constexpr int threads = 8;
    boost::asio::io_context io{1};
    start_gate gate(threads, 0ms);
    std::atomic<int> released{0};
    std::vector<time_point> starts;
    std::vector<std::thread> workers;
    for (int i = 0; i < threads; ++i)
        workers.emplace_back([&, i] {
            if (i % 2 == 0)
                gate.arrive(io.get_executor(), [&](time_point t) {
                    ++released;
                    starts.push_back(t); // runs on `io`'s single thread below
                });
            else
                gate.arrive(io.get_executor(), {});
        });
    for (auto& w : workers)
        w.join();
    io.run();
    EXPECT_EQ(released.load(), threads / 2);
    ASSERT_EQ(starts.size(), static_cast<std::size_t>(threads / 2));
    for (auto t : starts)
        EXPECT_EQ(t, starts.front());
}

} // namespace

// `run_open_loop` on a real io_context. Every arrival is already due (offsets zero or in the
// past), so nothing waits on a timer and nothing here asserts on timing: the tests check that
// each request runs exactly once with its own index, that the run returns only after every
// request completed, that the cap is honoured, and that a throwing request is recorded.
// `run_for` is a liveness guard only (a bug fails the test instead of hanging it).

#include <pacer/session/open_loop.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>
#include <vector>

namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace session = pacer::session;

constexpr auto watchdog = 60s;

// one run_coro helper: co_spawn with a handler that keeps the exception, run, rethrow, and fail
// if the coroutine never finished.
template <class T>
T run_coro(asio::io_context& ctx, pacer::awaitable<T> a) {
    std::optional<T> result;
    std::exception_ptr error;
    bool finished = false;
    asio::co_spawn(ctx, std::move(a), [&](std::exception_ptr e, T r) {
        finished = true;
        error = e;
        if (!e)
            result = std::move(r);
    });
    ctx.run_for(watchdog);
    if (!finished)
        throw std::runtime_error("the coroutine never finished");
    if (error)
        std::rethrow_exception(error);
    EXPECT_TRUE(ctx.stopped()) << "work left over after the run";
    return std::move(*result);
}

// n arrivals, all at or before the start: offsets 0, -1 ms, 0, -1 ms, ...
std::vector<std::chrono::nanoseconds> due_now(std::size_t n) {
    std::vector<std::chrono::nanoseconds> out(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = i % 2 ? std::chrono::nanoseconds(-1ms) : 0ns;
    return out;
}

// Counts each index it sees and the requests overlapping in time; yields a few times so that
// requests really overlap.
struct probe {
    std::vector<int> seen;
    std::vector<pacer::time_point> scheduled;
    std::size_t running = 0, peak = 0;

    explicit probe(std::size_t n) : seen(n, 0), scheduled(n) {}

    session::open_loop_request request() {
        return [this](std::size_t i, pacer::time_point at) -> pacer::awaitable<void> {
            ++seen.at(i);
            scheduled.at(i) = at;
            peak = std::max(peak, ++running);
            auto ex = co_await asio::this_coro::executor;
            for (int k = 0; k < 3; ++k)
                co_await asio::post(ex, pacer::use_awaitable);
            --running;
        };
    }
};

TEST(OpenLoopAsync, EveryRequestRunsOnceWithItsOwnIndex) {
    constexpr std::size_t n = 500;
    asio::io_context ctx;
    probe p(n);
    session::open_loop_options o;
    o.start = pacer::clock::now() - 1s; // all in the past
    const auto offs = due_now(n);
    auto r = run_coro(ctx, session::run_open_loop(offs, o, p.request()));

    ASSERT_EQ(r.records.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(p.seen[i], 1) << "request " << i;
        EXPECT_EQ(p.scheduled[i], *o.start + offs[i]) << "request " << i;
        EXPECT_EQ(r.records[i].scheduled, *o.start + offs[i]);
        EXPECT_TRUE(r.records[i].dispatched);
        EXPECT_TRUE(r.records[i].completed);
        EXPECT_FALSE(r.records[i].failed);
    }
    EXPECT_EQ(p.running, 0u) << "returned before every request completed";
    EXPECT_TRUE(r.failures.empty());
    const auto s = session::open_loop_summary(r);
    EXPECT_EQ(s.at("requests").at("completed").as_uint64(), n);
    EXPECT_EQ(s.at("latency_s").at("n").as_uint64(), n);
}

TEST(OpenLoopAsync, QueueCapBoundsConcurrencyAndLosesNothing) {
    constexpr std::size_t n = 200;
    asio::io_context ctx;
    probe p(n);
    session::open_loop_options o;
    o.max_concurrency = 3;
    o.policy = session::cap_policy::queue;
    auto r = run_coro(ctx, session::run_open_loop(due_now(n), o, p.request()));

    for (std::size_t i = 0; i < n; ++i)
        EXPECT_EQ(p.seen[i], 1) << "request " << i;
    EXPECT_LE(p.peak, 3u);
    EXPECT_EQ(r.peak_in_flight, 3u);
    const auto s = session::open_loop_summary(r);
    EXPECT_EQ(s.at("requests").at("completed").as_uint64(), n);
    EXPECT_EQ(s.at("cap").at("dropped").as_uint64(), 0u);
    EXPECT_TRUE(s.at("cap").at("binding").as_bool());
}

TEST(OpenLoopAsync, DropCapSkipsWhatFindsTheSlotsTaken) {
    // All arrivals are due at once and the dispatcher fires them without yielding, so the
    // first two take the slots and every other one is dropped.
    constexpr std::size_t n = 50;
    asio::io_context ctx;
    probe p(n);
    session::open_loop_options o;
    o.max_concurrency = 2;
    o.policy = session::cap_policy::drop;
    auto r = run_coro(ctx, session::run_open_loop(due_now(n), o, p.request()));

    EXPECT_EQ(p.seen[0], 1);
    EXPECT_EQ(p.seen[1], 1);
    for (std::size_t i = 2; i < n; ++i) {
        EXPECT_EQ(p.seen[i], 0) << "request " << i;
        EXPECT_TRUE(r.records[i].dropped);
    }
    const auto s = session::open_loop_summary(r);
    EXPECT_EQ(s.at("cap").at("dropped").as_uint64(), n - 2);
    EXPECT_EQ(s.at("requests").at("completed").as_uint64(), 2u);
}

TEST(OpenLoopAsync, ThrowingRequestIsRecordedNotLost) {
    constexpr std::size_t n = 10;
    asio::io_context ctx;
    probe p(n);
    auto inner = p.request();
    // Request 3 throws inside its coroutine, request 4 throws before returning one.
    session::open_loop_request req = [&](std::size_t i,
                                         pacer::time_point at) -> pacer::awaitable<void> {
        if (i == 4)
            throw std::runtime_error("cannot build request 4");
        return [](session::open_loop_request f, std::size_t i,
                  pacer::time_point at) -> pacer::awaitable<void> {
            co_await f(i, at);
            if (i == 3)
                throw std::runtime_error("boom");
        }(inner, i, at);
    };
    auto r = run_coro(ctx, session::run_open_loop(due_now(n), {}, req));

    ASSERT_EQ(r.failures.size(), 2u);
    EXPECT_TRUE(r.records[3].failed);
    EXPECT_TRUE(r.records[4].failed);
    EXPECT_TRUE(r.records[3].completed);
    for (const auto& f : r.failures) {
        EXPECT_TRUE(f.error);
        EXPECT_TRUE(f.index == 3 || f.index == 4);
        EXPECT_EQ(f.message, f.index == 3 ? "boom" : "cannot build request 4");
    }
    const auto s = session::open_loop_summary(r);
    EXPECT_EQ(s.at("requests").at("failed").as_uint64(), 2u);
    EXPECT_EQ(s.at("requests").at("completed").as_uint64(), n);
    EXPECT_EQ(s.at("latency_s").at("n").as_uint64(), n - 2);
    EXPECT_EQ(s.at("errors").as_array().size(), 2u);
}

TEST(OpenLoopAsync, EmptyRequestFunctionIsAConfigurationError) {
    asio::io_context ctx;
    EXPECT_THROW(run_coro(ctx, session::run_open_loop(due_now(1), {}, {})), std::invalid_argument);
}

} // namespace

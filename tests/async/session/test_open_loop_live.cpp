// The live totals an open-loop run keeps for `pacer http`'s progress line: the dispatcher's
// (session::open_loop_live) against the run's own records, and a request's end counted by
// observe_request (http::http_live). All arrivals are already due: nothing waits on a timer and
// nothing asserts on timing; `run_for` is a liveness guard only.

#include <pacer/http/progress.hpp>
#include <pacer/session/open_loop.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <vector>

namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace session = pacer::session;

session::open_loop_result run(asio::io_context& ctx,
                              pacer::awaitable<session::open_loop_result> a) {
    std::optional<session::open_loop_result> result;
    asio::co_spawn(ctx, std::move(a), [&](std::exception_ptr e, session::open_loop_result r) {
        if (!e)
            result = std::move(r);
    });
    ctx.run_for(60s);
    if (!result)
        throw std::runtime_error("the run never finished");
    return std::move(*result);
}

session::open_loop_request yielding() {
    return [](std::size_t, pacer::time_point) -> pacer::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        for (int k = 0; k < 3; ++k)
            co_await asio::post(ex, pacer::use_awaitable);
    };
}

TEST(OpenLoopLive, DropCapCountsDispatchesDropsAndEveryLag) {
    constexpr std::size_t n = 40;
    asio::io_context ctx;
    session::open_loop_live live;
    session::open_loop_options o;
    o.max_concurrency = 2;
    o.policy = session::cap_policy::drop;
    o.start = pacer::clock::now() - 1s;
    o.live = &live;
    const auto r = run(
        ctx, session::run_open_loop(std::vector<std::chrono::nanoseconds>(n, 0ns), o, yielding()));
    const auto s = session::open_loop_summary(r);
    EXPECT_EQ(live.dispatched.load(), s.at("requests").at("dispatched").as_uint64());
    EXPECT_EQ(live.dropped.load(), s.at("cap").at("dropped").as_uint64());
    EXPECT_EQ(live.dispatched.load() + live.dropped.load(), n);
    EXPECT_EQ(live.dispatch_lag_ns.count(), live.dispatched.load());
    EXPECT_EQ(
        live.start_ns.load(),
        std::chrono::duration_cast<std::chrono::nanoseconds>(o.start->time_since_epoch()).count());
    // Every lag is about 1 s (the start was 1 s ago): the p99 read back is at least that.
    EXPECT_GE(*live.dispatch_lag_ns.quantile(0.99), 1'000'000'000);
}

TEST(OpenLoopLive, QueueCapCountsTheArrivalsItHeld) {
    constexpr std::size_t n = 30;
    asio::io_context ctx;
    session::open_loop_live live;
    session::open_loop_options o;
    o.max_concurrency = 3;
    o.live = &live;
    const auto r = run(
        ctx, session::run_open_loop(std::vector<std::chrono::nanoseconds>(n, 0ns), o, yielding()));
    std::uint64_t held = 0;
    for (const auto& rec : r.records)
        held += rec.cap_delay > pacer::duration::zero() ? 1 : 0;
    EXPECT_GT(held, 0u);
    EXPECT_EQ(live.delayed.load(), held);
    EXPECT_EQ(live.dispatched.load(), n);
    EXPECT_EQ(live.dropped.load(), 0u);
}

// Request i ends at once: 4 times fine with a first token 20 ms after its schedule, a timeout
// (i = 4), a throw (i = 5). A free coroutine: its frame holds its parameters.
pacer::awaitable<void> fake_request(pacer::metrics::llm_request& r, std::size_t i,
                                    pacer::time_point at) {
    r.completed = pacer::clock::now();
    if (i == 4)
        r.error = "timeout";
    if (i == 5)
        throw std::runtime_error("a bug");
    r.first_token = at + 20ms;
    co_return;
}

TEST(OpenLoopLive, ObservedRequestsCountTheirEndByKind) {
    constexpr std::size_t n = 6;
    asio::io_context ctx;
    std::vector<pacer::metrics::llm_request> records(n);
    pacer::http::http_live live;
    session::open_loop_options o;
    o.start = pacer::clock::now();
    const auto request = [&](std::size_t i, pacer::time_point at) -> pacer::awaitable<void> {
        return pacer::http::observe_request(fake_request(records[i], i, at), records[i], at, &live);
    };
    const auto r =
        run(ctx, session::run_open_loop(std::vector<std::chrono::nanoseconds>(n, 0ns), o, request));
    EXPECT_EQ(r.failures.size(), 1u); // the throw still reaches the dispatcher
    EXPECT_EQ(live.done.load(), 4u);
    EXPECT_EQ(live.failed[2].load(), 1u); // timeout: llm_error_kinds[2]
    EXPECT_EQ(live.failed.back().load(), 1u);
    EXPECT_EQ(live.ttft_ns.count(), 4u);
    const auto p50 = *live.ttft_ns.quantile(0.5);
    EXPECT_GE(p50, 20'000'000);
    EXPECT_LE(p50, 22'500'000); // within one bucket (12.5 %)
}

} // namespace

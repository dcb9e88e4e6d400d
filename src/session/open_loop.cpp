#include <pacer/core/awaitable.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/session/open_loop.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/array.hpp>

#include <map>
#include <memory>
#include <utility>

namespace pacer::session {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

std::string describe(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        return ex.what();
    } catch (...) {
        return "unknown exception";
    }
}

// Shared by the dispatcher loop and the completion handlers of its requests. Held by
// shared_ptr so that a handler destroyed late (its io_context torn down mid-run) never
// touches freed memory. Everything runs on one thread: no lock.
struct run_state {
    run_state(executor ex, std::span<const std::chrono::nanoseconds> offsets,
              const open_loop_options& o, time_point start)
        : core(offsets, start, o.max_concurrency, o.policy), wake(std::move(ex)) {
        wake.expires_at(time_point::max());
    }

    dispatcher core;
    // The dispatcher's one wait for a completion: a completion cancels it. Only the
    // dispatcher waits on it, so a cancel never wakes anybody else.
    steady_timer wake;
    bool waiting_for_completion = false;
    std::vector<request_failure> failures;

    void on_complete(std::size_t index, std::exception_ptr e) {
        const auto now = clock::now();
        core.completed(index, now, e != nullptr);
        if (e)
            failures.push_back({index, e, describe(e)});
        if (waiting_for_completion)
            wake.cancel();
    }
};

} // namespace

awaitable<open_loop_result> run_open_loop(std::vector<std::chrono::nanoseconds> offsets,
                                          open_loop_options options, open_loop_request request) {
    if (!request)
        throw std::invalid_argument("run_open_loop: no request function");
    auto ex = co_await asio::this_coro::executor;
    // A cancelled wait must come back as an error code, not an exception: we still have to
    // wait for the requests in flight before returning.
    co_await asio::this_coro::throw_if_cancelled(false);

    const time_point start = options.start.value_or(clock::now());
    auto st = std::make_shared<run_state>(ex, offsets, options, start);
    if (options.live)
        options.live->start_ns.store(
            std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count(),
            std::memory_order_relaxed);
    offsets = {}; // the dispatcher holds the absolute deadlines now
    steady_timer deadline(ex);

    for (;;) {
        // One clock read per step: it decides the action and stamps the dispatch.
        const auto now = clock::now();
        const auto a = st->core.next(now);
        using kind = dispatch_action::kind;
        switch (a.what) {
        case kind::dispatch: {
            // Building the awaitable may itself throw (a request function that is not a
            // coroutine): that is a failed request too, never a lost one.
            std::optional<awaitable<void>> work;
            std::exception_ptr thrown;
            try {
                work.emplace(request(a.index, a.scheduled));
            } catch (...) {
                thrown = std::current_exception();
            }
            st->core.dispatched(a.index, now);
            if (auto* live = options.live) {
                const auto& rec = st->core.records()[a.index];
                live->dispatch_lag_ns.record(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(*rec.dispatch_lag())
                        .count());
                if (rec.cap_delay > duration::zero())
                    live->delayed.fetch_add(1, std::memory_order_relaxed);
                live->dispatched.fetch_add(1, std::memory_order_relaxed);
            }
            if (thrown) {
                st->on_complete(a.index, thrown);
                break;
            }
            asio::co_spawn(ex, std::move(*work),
                           [st, i = a.index](std::exception_ptr e) { st->on_complete(i, e); });
            break;
        }
        case kind::drop:
            if (options.live)
                options.live->dropped.fetch_add(1, std::memory_order_relaxed);
            break;
        case kind::wait_until: {
            // Absolute deadline (absolute deadlines): a late wake never shifts later arrivals.
            deadline.expires_at(a.scheduled);
            co_await deadline.async_wait(use_tuple);
            const auto cs = co_await asio::this_coro::cancellation_state;
            if (cs.cancelled() != asio::cancellation_type::none)
                st->core.stop();
            break;
        }
        case kind::wait_for_slot:
        case kind::drain: {
            st->waiting_for_completion = true;
            st->wake.expires_at(time_point::max());
            co_await st->wake.async_wait(use_tuple);
            st->waiting_for_completion = false;
            // A drain ignores cancellation: the requests in flight must still be awaited.
            const auto cs = co_await asio::this_coro::cancellation_state;
            if (a.what == kind::wait_for_slot && cs.cancelled() != asio::cancellation_type::none)
                st->core.stop();
            break;
        }
        case kind::done: {
            open_loop_result r = make_open_loop_result(st->core);
            r.failures = std::move(st->failures);
            co_return r;
        }
        }
    }
}

} // namespace pacer::session

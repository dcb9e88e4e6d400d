#pragma once
// A manual clock and its timer, for coroutines under test (Boost.MySQL's mock timer is the
// model): the clock's `now()` moves only when the test says, and a timer's wait completes when
// the test has moved the clock to its expiry (`run_until`), through the io_context's queue, as
// Asio's own timers complete. No thread, no sleep, no real time: `io_context::poll` runs what
// is ready. The timer has the interface the session uses of `steady_timer` (expires_at,
// async_wait with any completion token, cancel, the cancellation slot of the wait's handler).
//
// One clock for every test of a binary, coroutine or sans-io machine alike:
// `manual_clock::reset()` at the start of each test.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <optional>

namespace pacer::test {

class manual_clock {
public:
    using duration = pacer::duration;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = pacer::time_point;
    static constexpr bool is_steady = true;

    static time_point now() noexcept { return now_; }

    /// A fresh clock at 1,000 s, with no wait pending.
    static void reset() {
        now_ = time_point{} + std::chrono::seconds(1000);
        waits_.clear();
    }

    /// Moves the clock to `t`, completing every wait due on the way in the order of its expiry
    /// (the clock stands at each expiry while `pump` runs what it woke). `pump` runs the
    /// context until nothing is ready.
    static void run_until(time_point t, const std::function<void()>& pump) {
        pump();
        for (;;) {
            const auto next = earliest();
            if (!next || *next > t)
                break;
            now_ = std::max(now_, *next);
            complete_due();
            pump();
        }
        now_ = std::max(now_, t);
        pump();
    }
    /// Moves the clock by `d` at once, completing nothing: the process was not scheduled
    /// (a stall). The waits due complete at the next `run_until`.
    static void jump(duration d) { now_ += d; }
    /// Sets the clock to `t`, back or forth, completing nothing: for sans-io machines driven by
    /// hand, which only read the time (a test may replay an earlier moment).
    static void set(time_point t) { now_ = t; }

    /// The earliest expiry of a pending wait.
    static std::optional<time_point> earliest() {
        std::optional<time_point> e;
        for (const auto& w : waits_)
            if (!e || w.at < *e)
                e = w.at;
        return e;
    }
    static std::size_t pending() { return waits_.size(); }

    // The timer's side ------------------------------------------------------------------------

    using handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;

    static void add(const void* owner, time_point at, pacer::executor ex, handler h) {
        const std::uint64_t id = ++ids_;
        auto slot = boost::asio::get_associated_cancellation_slot(h);
        if (slot.is_connected())
            slot.assign([id](boost::asio::cancellation_type) {
                complete(id, boost::asio::error::operation_aborted);
            });
        waits_.push_back({id, owner, at, ex, std::move(h)});
        if (at <= now_)
            complete(id, {});
    }
    /// Completes the waits of `owner` with operation_aborted; returns how many.
    static std::size_t cancel(const void* owner) {
        std::size_t n = 0;
        for (auto it = waits_.begin(); it != waits_.end();) {
            auto next = std::next(it);
            if (it->owner == owner) {
                complete(it->id, boost::asio::error::operation_aborted);
                ++n;
            }
            it = next;
        }
        return n;
    }

private:
    struct wait {
        std::uint64_t id;
        const void* owner;
        time_point at;
        pacer::executor ex;
        handler h;
    };

    static void complete(std::uint64_t id, boost::system::error_code ec) {
        const auto it =
            std::find_if(waits_.begin(), waits_.end(), [id](const wait& w) { return w.id == id; });
        if (it == waits_.end())
            return;
        auto h = std::move(it->h);
        auto ex = it->ex;
        waits_.erase(it);
        boost::asio::post(ex, [h = std::move(h), ec]() mutable {
            h.get_cancellation_slot().clear();
            std::move(h)(ec);
        });
    }
    static void complete_due() {
        for (auto it = waits_.begin(); it != waits_.end();) {
            auto next = std::next(it);
            if (it->at <= now_)
                complete(it->id, {});
            it = next;
        }
    }

    static inline time_point now_ = time_point{} + std::chrono::seconds(1000);
    static inline std::list<wait> waits_;
    static inline std::uint64_t ids_ = 0;
};

/// `steady_timer`'s interface on the manual clock.
class manual_timer {
public:
    using clock_type = manual_clock;
    using time_point = pacer::time_point;
    using duration = pacer::duration;
    using executor_type = pacer::executor;

    explicit manual_timer(executor_type ex) : ex_(ex) {}
    ~manual_timer() { cancel(); }
    manual_timer(const manual_timer&) = delete;
    manual_timer& operator=(const manual_timer&) = delete;

    executor_type get_executor() const { return ex_; }
    time_point expiry() const { return expiry_; }
    /// As Asio's: cancels the pending waits.
    std::size_t expires_at(time_point t) {
        const auto n = cancel();
        expiry_ = t;
        return n;
    }
    std::size_t expires_after(duration d) { return expires_at(manual_clock::now() + d); }
    std::size_t cancel() { return manual_clock::cancel(this); }

    template <class Token>
    auto async_wait(Token&& token) {
        return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
            [this](auto handler) {
                manual_clock::add(this, expiry_, ex_, manual_clock::handler(std::move(handler)));
            },
            token);
    }

private:
    executor_type ex_;
    time_point expiry_{};
};

} // namespace pacer::test

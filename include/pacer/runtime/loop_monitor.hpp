#pragma once
// A 10 ms ticker on an io_context that measures how late the context wakes it: the lag of the
// context itself. Every run reports it, so a run shows whether the client stalled.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>

#include <atomic>
#include <vector>

namespace pacer::runtime {

class loop_monitor {
public:
    explicit loop_monitor(duration period = std::chrono::milliseconds(10)) : period_(period) {}

    /// Ticks on the calling coroutine's executor until `stop()`; each tick records
    /// lag = max(0, wake - deadline) in seconds. The next deadline is one period after the
    /// wake, so one stall is one sample, not a burst of catch-up samples.
    pacer::awaitable<void> run();

    /// Asks `run()` to return at its next tick. Thread safety: callable from any thread.
    void stop() { stopping_.store(true, std::memory_order_relaxed); }

    /// Also keeps `*sink` at least the largest lag seen, in ns (a relaxed atomic maximum, for
    /// the live progress line; several monitors may share one). Set before `run()`.
    void report_max_to(std::atomic<std::int64_t>* sink) { max_sink_ = sink; }

    /// The lags recorded; read after `run()` has returned.
    const std::vector<double>& lags_s() const { return lags_s_; }

    /// When `run()` began: its first deadline is one period later, and tick i woke at
    /// started() + (i + 1) periods + the lags of ticks 0..i (each deadline is one period after
    /// the previous wake), so the lags can be put on the clock afterwards.
    time_point started() const { return started_; }

    duration period() const { return period_; }

private:
    duration period_;
    std::atomic<bool> stopping_{false};
    std::vector<double> lags_s_;
    time_point started_{};
    std::atomic<std::int64_t>* max_sink_ = nullptr;
};

} // namespace pacer::runtime

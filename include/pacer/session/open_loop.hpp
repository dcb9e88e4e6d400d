#pragma once
// The open-loop driver: `run_open_loop` fires the arrivals of a fixed schedule on the caller's
// executor. The sans-io dispatcher, the records and the summary are the schedule's
// (schedule/open_loop.hpp; named here too for the session's callers). See docs/open-loop.md.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/core/live_histogram.hpp>
#include <pacer/schedule/open_loop.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace pacer::session {

using schedule::basic_dispatch_action;
using schedule::basic_dispatcher;
using schedule::basic_request_record;
using schedule::cap_policy;
using schedule::client_schedule_thresholds;
using schedule::dispatch_action;
using schedule::dispatcher;
using schedule::make_open_loop_result;
using schedule::open_loop_result;
using schedule::open_loop_summary;
using schedule::parse_cap_policy;
using schedule::request_failure;
using schedule::request_record;
using schedule::schedule_kept;
using schedule::schedule_thresholds;
using schedule::to_string;

/// Live totals of an open-loop run for a progress line: the dispatcher bumps them with relaxed
/// atomic adds on its executor (no lock, no wait); another thread reads them while it runs.
struct open_loop_live {
    std::atomic<std::int64_t> start_ns{0}; ///< the schedule's origin (clock epoch), once known
    std::atomic<std::uint64_t> dispatched{0};
    std::atomic<std::uint64_t> dropped{0}; ///< skipped by the `drop` cap policy
    std::atomic<std::uint64_t> delayed{0}; ///< dispatched after the cap held them
    live_histogram dispatch_lag_ns;        ///< as `dispatch_lag()`: cap delay left out
};

/// How `run_open_loop` runs.
struct open_loop_options {
    /// The schedule's origin; default: the clock when `run_open_loop` starts.
    std::optional<time_point> start;
    std::size_t max_concurrency = 0; ///< 0 = unlimited
    cap_policy policy = cap_policy::queue;
    /// Optional: live totals for a progress line; must outlive the run.
    open_loop_live* live = nullptr;
};

/// One request of the run: called on the run's executor with the arrival index and its
/// scheduled time; the returned coroutine is co_spawned at once on that executor.
using open_loop_request =
    std::function<pacer::awaitable<void>(std::size_t index, time_point scheduled)>;

/// Runs `offsets` open-loop on the caller's executor: waits with `steady_timer::expires_at`
/// on each absolute deadline, co_spawns `request(i, scheduled)` on the same executor (requests
/// run concurrently), honours the cap, and returns once every dispatched request completed.
///
/// A request should not throw (its errors are its own data). If it does, the arrival is
/// recorded as failed and the exception is kept in `failures`, never swallowed silently.
///
/// @par Cancellation
/// Honours the cancellation types the awaiting coroutine lets through (terminal by default):
/// no further arrival is dispatched, in-flight requests are awaited (they are not cancelled;
/// bound them with their own timeouts), and the result says `interrupted`.
///
/// @par Thread safety
/// The executor must run on one thread (or be a strand): requests complete on it and update
/// the dispatcher without a lock. Throws `std::invalid_argument` for an empty `request`.
pacer::awaitable<open_loop_result> run_open_loop(std::vector<std::chrono::nanoseconds> offsets,
                                                 open_loop_options options,
                                                 open_loop_request request);

} // namespace pacer::session

#pragma once
// The open-loop dispatcher: requests fired on a fixed, seeded arrival schedule (sans-io),
// what it recorded of each arrival, and the summary of whether the schedule was kept.
//
// Request i is *scheduled* at `start + offsets[i]` (the latency anchor), *dispatched* when it
// is handed to the transport, and *completed* when it ends. Latency is completed - scheduled
// (corrected, free of coordinated omission); completed - dispatched is reported beside it as
// the uncorrected view. The schedule is fixed before the run and never moves:
//
// - A dispatcher that falls behind fires every overdue arrival at once, in index order, and
//   records each one's dispatch lag; it never shifts a later arrival.
// - `max_concurrency` C (0 = unlimited) gates dispatch without touching the schedule. Policy
//   `queue` holds the due arrival (and every later one behind it, in order) until a request
//   completes; the wait counts in its latency because latency stays anchored to the schedule.
//   Policy `drop` skips an arrival that finds C requests in flight and counts it (k6's
//   "dropped iterations"). When the cap binds, the summary discloses it.
//
// `basic_dispatcher` is the sans-io core (a sans-io core): the caller asks `next(now)` and
// acts. `session::run_open_loop` is the Asio driver; tests drive the core with explicit time
// points. See docs/open-loop.md.

#include <pacer/core/clock.hpp>
#include <pacer/schedule/arrival.hpp>

#include <boost/json/object.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::schedule {

/// What a concurrency cap does with an arrival that finds every slot taken.
enum class cap_policy {
    queue, ///< wait for a free slot, in schedule order; the wait counts in latency (default)
    drop,  ///< skip the arrival and count it as dropped
};

/// "queue" or "drop".
std::string_view to_string(cap_policy policy) noexcept;

/// The inverse of `to_string`; nullopt for any other text (case-sensitive).
std::optional<cap_policy> parse_cap_policy(std::string_view name) noexcept;

/// What happened to one arrival of the schedule.
template <class TimePoint>
struct basic_request_record {
    using duration_type = typename TimePoint::duration;

    TimePoint scheduled{};               ///< start + offset: the latency anchor
    std::optional<TimePoint> dispatched; ///< handed to the transport
    std::optional<TimePoint> completed;  ///< the request ended (successfully or not)
    bool dropped = false;                ///< skipped by the `drop` cap policy
    bool failed = false;                 ///< the request threw (see `run_open_loop`)
    /// How long the concurrency cap held this due arrival: from its scheduled time to the
    /// completion that freed the slot it took (`queue` policy); zero when it was not held.
    duration_type cap_delay{};

    /// The dispatcher's own lateness: dispatched - scheduled - cap_delay. Without a binding
    /// cap this is exactly dispatched - scheduled. Nullopt when not dispatched.
    std::optional<duration_type> dispatch_lag() const {
        if (!dispatched)
            return std::nullopt;
        return *dispatched - scheduled - cap_delay;
    }
    /// completed - scheduled (corrected latency). Nullopt when not completed.
    std::optional<duration_type> latency() const {
        if (!completed)
            return std::nullopt;
        return *completed - scheduled;
    }
    /// completed - dispatched (the uncorrected view, which hides queueing before dispatch).
    std::optional<duration_type> uncorrected_latency() const {
        if (!completed || !dispatched)
            return std::nullopt;
        return *completed - *dispatched;
    }
};

using request_record = basic_request_record<time_point>;

/// What the dispatcher's caller should do next. `index` and `scheduled` name the head of the
/// schedule (the lowest arrival not yet dispatched or dropped) for every kind but `drain` and
/// `done`, where `index` is the arrival count.
template <class TimePoint>
struct basic_dispatch_action {
    enum class kind {
        dispatch,      ///< hand arrival `index` to the transport now, then call `dispatched`
        wait_until,    ///< nothing is due: wait until `scheduled` (an absolute deadline)
        wait_for_slot, ///< arrival `index` is due but the cap is full: wait for a completion
        drop,          ///< arrival `index` was dropped (already recorded): ask again
        drain,         ///< every arrival was dispatched or dropped: wait for a completion
        done,          ///< every arrival was dispatched or dropped and none is in flight
    };
    kind what;
    std::size_t index = 0;
    TimePoint scheduled{};
};

using dispatch_action = basic_dispatch_action<time_point>;

/// Sans-io open-loop dispatch of a fixed schedule, with an optional concurrency cap.
///
/// Arrivals are dispatched strictly in index order (the schedule is expected, not required,
/// to be non-decreasing; an out-of-order offset is simply overdue). `next(now)` never returns
/// a deadline later than one that has passed: a caller that wakes late gets `dispatch` for
/// every overdue arrival in turn.
///
/// `cap_delay` is attributed conservatively: an arrival counts as held by the cap only once a
/// `next()` call has seen it due with every slot taken (`wait_for_slot`); its cap delay runs
/// from its scheduled time to the `completed()` call that freed a slot. Time the caller spent
/// late before observing the block stays in the dispatch lag.
///
/// @par Thread safety
/// None; one dispatcher per run, used from one thread.
template <class TimePoint = time_point>
class basic_dispatcher {
public:
    using action = basic_dispatch_action<TimePoint>;
    using record = basic_request_record<TimePoint>;
    using kind = typename action::kind;

    /// Arrival i is scheduled at `start + offsets[i]`. `max_concurrency` 0 means unlimited.
    basic_dispatcher(std::span<const std::chrono::nanoseconds> offsets, TimePoint start,
                     std::size_t max_concurrency, cap_policy policy)
        : start_(start), cap_(max_concurrency), policy_(policy) {
        records_.resize(offsets.size());
        for (std::size_t i = 0; i < offsets.size(); ++i)
            records_[i].scheduled =
                start + std::chrono::duration_cast<typename TimePoint::duration>(offsets[i]);
    }

    /// The next action at time `now`. Records a drop (policy `drop`) or a slot wait (policy
    /// `queue`) as a side effect; otherwise changes nothing, so asking twice is harmless.
    action next(TimePoint now) {
        if (next_ >= records_.size() || stopped_)
            return {in_flight_ > 0 ? kind::drain : kind::done, records_.size(), {}};
        record& r = records_[next_];
        if (now < r.scheduled)
            return {kind::wait_until, next_, r.scheduled};
        if (cap_ == 0 || in_flight_ < cap_)
            return {kind::dispatch, next_, r.scheduled};
        if (policy_ == cap_policy::drop) {
            r.dropped = true;
            ++dropped_;
            return {kind::drop, next_++, r.scheduled};
        }
        head_blocked_ = true;
        return {kind::wait_for_slot, next_, r.scheduled};
    }

    /// Arrival `index` (the head, for which `next` said `dispatch`) was handed to the
    /// transport at `now`. Throws `std::logic_error` for any other arrival or a full cap.
    void dispatched(std::size_t index, TimePoint now) {
        if (index != next_ || next_ >= records_.size() || stopped_)
            throw std::logic_error("open-loop dispatcher: dispatched() out of order");
        if (cap_ != 0 && in_flight_ >= cap_)
            throw std::logic_error("open-loop dispatcher: dispatched() with the cap full");
        record& r = records_[index];
        r.dispatched = now;
        if (head_blocked_ && slot_freed_at_) {
            // Held from its scheduled time until a slot freed; never more than the whole lag.
            const auto held = *slot_freed_at_ - r.scheduled;
            const auto lag = now - r.scheduled;
            r.cap_delay = std::max(decltype(held)::zero(), std::min(held, lag));
        }
        head_blocked_ = false;
        slot_freed_at_.reset();
        ++next_;
        ++dispatched_;
        peak_in_flight_ = std::max(peak_in_flight_, ++in_flight_);
    }

    /// Dispatched arrival `index` ended at `now`; `failed` when it threw. Throws
    /// `std::logic_error` for an arrival not in flight.
    void completed(std::size_t index, TimePoint now, bool failed = false) {
        if (index >= records_.size() || !records_[index].dispatched || records_[index].completed)
            throw std::logic_error("open-loop dispatcher: completed() for a request not in flight");
        record& r = records_[index];
        r.completed = now;
        r.failed = failed;
        --in_flight_;
        ++completed_;
        if (head_blocked_ && !slot_freed_at_)
            slot_freed_at_ = now;
    }

    /// Dispatch nothing more (an interrupted run): `next` returns `drain`, then `done`. The
    /// remaining arrivals stay neither dispatched nor dropped.
    void stop() { stopped_ = true; }

    const std::vector<record>& records() const { return records_; }
    std::vector<record> take_records() { return std::move(records_); }
    TimePoint start() const { return start_; }
    std::size_t count() const { return records_.size(); }
    std::size_t dispatched_count() const { return dispatched_; }
    std::size_t completed_count() const { return completed_; }
    std::size_t dropped_count() const { return dropped_; }
    std::size_t in_flight() const { return in_flight_; }
    std::size_t peak_in_flight() const { return peak_in_flight_; }
    std::size_t max_concurrency() const { return cap_; }
    cap_policy policy() const { return policy_; }
    bool stopped() const { return stopped_; }

private:
    std::vector<record> records_;
    TimePoint start_;
    std::size_t cap_;
    cap_policy policy_;
    std::size_t next_ = 0;
    std::size_t in_flight_ = 0, peak_in_flight_ = 0;
    std::size_t dispatched_ = 0, completed_ = 0, dropped_ = 0;
    bool head_blocked_ = false;              ///< `next` saw the head due with the cap full
    std::optional<TimePoint> slot_freed_at_; ///< first completion since the head blocked
    bool stopped_ = false;
};

extern template class basic_dispatcher<time_point>;

using dispatcher = basic_dispatcher<time_point>;

/// A request that threw (a bug of the request: errors are supposed to be data).
struct request_failure {
    std::size_t index = 0;
    std::exception_ptr error;
    std::string message; ///< `what()`, or "unknown exception"
};

/// Everything a run recorded. An aggregate, so tests can fill it from a sans-io dispatcher.
struct open_loop_result {
    std::vector<request_record> records; ///< by arrival index
    time_point start{};
    std::size_t max_concurrency = 0;
    cap_policy policy = cap_policy::queue;
    std::size_t peak_in_flight = 0;
    std::vector<request_failure> failures; ///< in completion order
    bool interrupted = false; ///< cancelled: arrivals after the stop were not dispatched
};

/// The result of a sans-io dispatcher (its records are moved out).
open_loop_result make_open_loop_result(dispatcher& d);

/// The tolerance of `schedule_kept`.
struct schedule_thresholds {
    duration dispatch_lag_p99 = std::chrono::milliseconds(1);
    duration dispatch_lag_max = std::chrono::milliseconds(10);
};

/// The verdict rule of every pacer command with an open loop (`pacer run --rate`, `pacer
/// http`): the client kept its schedule when dispatch lag p99 <= 5 ms and max <= 80 ms (an
/// arrival is late for its schedule when it would be late as a packet on the 80 ms grid).
inline constexpr schedule_thresholds client_schedule_thresholds{std::chrono::milliseconds(5),
                                                                std::chrono::milliseconds(80)};

/// The rule itself, over dispatch lags in seconds: p99 <= `t.dispatch_lag_p99` and max <=
/// `t.dispatch_lag_max`. A missing figure (nothing was dispatched) passes: an empty sample
/// kept its schedule vacuously.
bool schedule_kept(std::optional<double> lag_p99_s, std::optional<double> lag_max_s,
                   const schedule_thresholds& t);

/// The open-loop part of a summary, all times in seconds:
///
/// - `requests`: scheduled, dispatched, completed, failed, dropped, not_dispatched
/// - `latency_s` (completed - scheduled) and `uncorrected_latency_s` (completed - dispatched)
///   over the completed, non-failed requests (p50/p75/p95/p99, max, mean)
/// - `dispatch_lag_s` (p50/p90/p99/p99.9, max, mean), `deadline_missed` (lag above the max
///   threshold), `schedule_kept` (lag p99 and max within `schedule_thresholds`, stated in
///   `schedule_kept_thresholds_s`)
/// - `cap`: max_concurrency (0 = unlimited), policy, binding, delayed, delay_s, dropped,
///   peak_in_flight
/// - `errors`: each distinct failure message with its count; `interrupted`
boost::json::object open_loop_summary(const open_loop_result& result,
                                      const schedule_thresholds& thresholds = {});

/// One row per stage of a staged schedule (summary.json's `open_loop.stages`), times in
/// seconds from the schedule's origin. An arrival belongs to the stage its scheduled offset
/// falls in (`stage_index`); a dispatch to the stage whose window holds its dispatch time (one
/// after the last stage counts in the last):
///
/// - `stage` (its canonical `--stages` text), `from_s`, `to_s`, `target_per_s` (the stage's
///   mean rate, (from + to) / 2), `target_from_per_s`, `target_to_per_s`
/// - `offered`, `offered_per_s`: the schedule's arrivals in the stage, and per second
/// - `achieved`, `achieved_per_s`: the dispatches within the stage's window, and per second
/// - `completed` (the stage's arrivals that ended without failure), `failed`, `dropped`
/// - `latency_s`: completed - scheduled over the stage's completed arrivals (as `latency_s`)
boost::json::array stage_rows(const open_loop_result& result, std::span<const stage> stages);

} // namespace pacer::schedule

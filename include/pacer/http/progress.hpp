#pragma once
// The live progress line of `pacer http` (`--progress auto|always|never`, the rules of
// progress.hpp: on a terminal one line rewritten at most 4 times a second, elsewhere a plain
// line every 10 s and a last one at the end). Its figures come from relaxed atomic totals: the
// dispatcher's (session::open_loop_live: dispatched, dropped, held by the cap, dispatch lag)
// and the requests' own as they end (http_live: done, failed by kind, TTFT). The line is made
// on a thread of its own; nothing it does runs on, or waits for, the client's io_context.

#include <pacer/console/progress.hpp>
#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/core/live_histogram.hpp>
#include <pacer/metrics/llm.hpp>
#include <pacer/session/open_loop.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pacer::http {

/// Failure kinds on the line: metrics::llm_error_kinds, then "other" (a request that threw or
/// an unknown kind).
inline constexpr std::size_t http_failure_kinds = std::size(metrics::llm_error_kinds) + 1;

/// What the requests bump as they end (relaxed atomics; called on the client's executor).
struct http_live {
    std::atomic<std::uint64_t> done{0}; ///< ended without error
    std::array<std::atomic<std::uint64_t>, http_failure_kinds> failed{};
    live_histogram ttft_ns; ///< first token − scheduled, requests that ended without error

    /// Request `r`, scheduled at `scheduled`, has ended.
    void ended(const metrics::llm_request& r, time_point scheduled);
    /// A request threw (counted as "other").
    void threw() { failed.back().fetch_add(1, std::memory_order_relaxed); }
};

/// Awaits `request` (the one of record `r`, scheduled at `scheduled`), then counts its end in
/// `live` (nullptr: counts nothing). A request that throws is counted as failed ("other") and
/// its exception goes on to the dispatcher, which records it.
pacer::awaitable<void> observe_request(pacer::awaitable<void> request,
                                       const metrics::llm_request& r, time_point scheduled,
                                       http_live* live);

/// The totals at one instant, as plain numbers.
struct http_progress_snapshot {
    std::uint64_t total = 0; ///< arrivals of the schedule (this process's)
    std::uint64_t due = 0;   ///< arrivals whose scheduled time has passed
    std::uint64_t dispatched = 0, dropped = 0, delayed = 0, done = 0;
    std::array<std::uint64_t, http_failure_kinds> failed{};
    std::optional<double> dispatch_lag_p99_s, ttft_p50_s;
    std::size_t max_concurrency = 0; ///< 0: no cap

    std::uint64_t failed_total() const;
    std::uint64_t in_flight() const; ///< dispatched − ended, never below 0
};

/// Reads the totals at `now`; `offsets` is the schedule (its origin is `dispatch.start_ns`,
/// unknown until the dispatcher starts: nothing is due before).
http_progress_snapshot take_http_snapshot(const session::open_loop_live& dispatch,
                                          const http_live& requests,
                                          std::span<const std::chrono::nanoseconds> offsets,
                                          std::size_t max_concurrency, time_point now);

/// The line, terminal form ("\r\033[K" + text, cut to `width` - 1 columns when known) or plain
/// form (text + "\n"):
/// `progress 12s (ETA 48s)  requests 600/3000 due, 598 dispatched, 12 in flight, 580 done,
/// 6 failed (timeout 4, http_status 2)  dispatch lag p99 0.2 ms  TTFT p50 35 ms  cap 12/64`
std::string format_http_progress(const http_progress_snapshot& s, const console::progress_view& v,
                                 bool terminal, std::size_t width = 0);

/// What a scrape of `pacer http --metrics-listen` returns: the line's totals in the Prometheus
/// text format (requests scheduled, due, dispatched, dropped, delayed, done, failed by kind, in
/// flight; dispatch lag p99 and TTFT p50 once known; the cap; the offered rate of the run or
/// of the capacity search's probe).
std::string http_metrics_text(const http_progress_snapshot& s, double offered_rate);

/// The progress line of `pacer http`: `progress_reporter`'s thread and rules, with this
/// command's totals and line. `begin` starts a phase (the run, or one probe of a capacity
/// search) with fresh totals; `end` closes it (terminal: the line is cleared; plain: its last
/// line). Call both from the command's thread while no request runs.
class http_progress_reporter {
public:
    explicit http_progress_reporter(console::progress_mode mode, std::FILE* out = stderr);

    bool on() const { return lines_.on(); }

    /// Starts a phase over `offsets` (kept by reference: must outlive the phase).
    void begin(std::string label, std::span<const std::chrono::nanoseconds> offsets,
               std::size_t max_concurrency, std::optional<double> expected_s);
    void end() { lines_.end(); }

    /// The running phase's totals at `now`, from any thread (`--metrics-listen`).
    http_progress_snapshot snapshot(time_point now);

    /// The phase's totals (pass to session::open_loop_options::live and to the requests);
    /// valid from `begin` to the next `begin`.
    session::open_loop_live& dispatch() { return state_->dispatch; }
    http_live& requests() { return state_->requests; }

private:
    struct state {
        session::open_loop_live dispatch;
        http_live requests;
    };

    std::mutex mutex_; // guards the phase below against the progress thread
    std::unique_ptr<state> state_ = std::make_unique<state>();
    std::span<const std::chrono::nanoseconds> offsets_;
    std::size_t max_concurrency_ = 0;
    console::progress_reporter lines_; // last: its thread stops before the phase is destroyed
};

} // namespace pacer::http

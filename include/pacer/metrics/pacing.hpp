#pragma once
// Module `metrics` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns pacing,
// serving, unit, level, LLM and realtime metrics, the protocol oracle, SLOs, `samples.json`,
// summaries and the pooling of parts. It may include core, schedule, trace, runtime, protocol; it
// may not include transport, session, server, telemetry, report, record, sweep, run, http, cli,
// console, capacity_search (the build fails if it does).
//
// Pacing evidence of a `pacer run`: how far every append started from its deadline on the
// session's 80 ms grid, and whether the client itself stalled (loop lag, trace channel waits).

#include <pacer/schedule/constants.hpp>
#include <pacer/schedule/open_loop.hpp>
#include <pacer/trace/receipt_spool.hpp>
#include <pacer/trace/receipt_stats.hpp>
#include <pacer/trace/receipts.hpp>

#include <boost/json/object.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::metrics {

/// One packet further than this from its deadline is late; any late packet makes the run
/// pacing-unqualified (docs/architecture.md, "Time").
using schedule::late_threshold_s;

/// Deviation of each append of one session from its deadline as recorded: start_s -
/// scheduled_s (the grid's origin + seq * 80 ms; a lockstep packet or an unanchored packet 0
/// is scheduled at its own send). None before the session streamed.
std::vector<double> packet_deviations(const trace::session_result& s);

/// The largest number of sessions whose input streams (first append start to last append
/// completion, as the sessions folded them) overlapped at one instant.
std::size_t peak_overlapping_streams(const std::vector<trace::session_result>& sessions);

/// What a run folds as it goes (trace/receipt_stats.hpp), from sessions whose `appends` were
/// read back (offline tools, tests): fills each session's counters (and `appends_sent`) and
/// returns the distributions of all their appends.
trace::receipt_statistics fold_appends(std::vector<trace::session_result>& sessions);

/// How long sessions waited for room in the trace channel (a writer that falls behind), summed.
struct trace_channel_waits {
    std::uint64_t waits = 0;
    double wait_s = 0;
};
trace_channel_waits sum_trace_waits(const std::vector<trace::session_result>& sessions);

struct pacing_figures {
    std::size_t sessions = 0, admitted = 0, rejected = 0, complete = 0;
    std::size_t sessions_with_late_packet = 0;
    std::size_t packets_expected = 0, packets_sent = 0, late_packets = 0;
    /// Of `late_packets`, those a send stall made late (the server's; trace::fold_receipt).
    std::size_t late_after_send_stall = 0;
    bool pacing_qualified = false;
    boost::json::object json; ///< the whole `pacing` part of summary.json
};

/// Everything about pacing and sessions that summary.json reports, from what the sessions
/// folded as they went (their counters and `receipts`, the runner's merged histograms): no
/// receipt is needed. The deviation and send-time quantiles come from the histograms, within
/// 1/2,048 of the exact value (core/histogram.hpp); n, max and mean are exact.
pacing_figures summarize_pacing(const std::vector<trace::session_result>& sessions,
                                const trace::receipt_statistics& receipts,
                                const std::vector<std::vector<double>>& loop_lag_s);
/// The same from sessions with their `appends` read back (`fold_appends` on a copy).
pacing_figures summarize_pacing(const std::vector<trace::session_result>& sessions,
                                const std::vector<std::vector<double>>& loop_lag_s);

/// The open-loop records a run adds to its `samples.json`: arrival i of `result` is arrival
/// `first_index + i * index_stride` of the whole schedule (a shard I of N: I and N).
struct open_loop_arrivals {
    const schedule::open_loop_result* result = nullptr;
    std::size_t first_index = 0;
    std::size_t index_stride = 1;
};

/// `samples.json`: per-session raw deviations (µs resolution), enough to pool runs later.
/// Open-loop runs add an `open_loop` object with every arrival's raw times (ns resolution):
/// `start_s` (the schedule's origin, monotonic seconds) and `arrivals`, each with `index` (in
/// the whole schedule), `offset_ns`, `dispatched_s` and `completed_s` (seconds since
/// `start_s`, or null), `cap_delay_s`, `dropped` and `failed` (see docs/scale-out.md).
std::string samples_json(const std::vector<trace::session_result>& sessions,
                         const open_loop_arrivals& open_loop = {});

/// Where `write_samples` takes one session's deviations from: fills `out`, or returns an error
/// message.
using deviations_source =
    std::function<std::string(const trace::session_result&, std::vector<double>& out)>;

/// A run's source: each session's `input-send-receipts.json` under `root`, or (`pacer run
/// --trace none`) the receipts text the writer kept, taken from `kept` (and erased from it).
/// Sessions that sent nothing or whose trace failed have no deviations.
deviations_source run_receipts(std::filesystem::path root,
                               std::map<std::uint32_t, std::string>* kept = nullptr);
/// The same, with `pacer run --trace none`'s spool as the source (each session taken once).
deviations_source run_receipts(std::filesystem::path root, trace::receipt_spool* kept);

/// `samples.json` as `samples_json` writes it, streamed to `out` one session at a time: each
/// session's deviations are read from `source`, written and dropped, so no more than one
/// session's receipts are in memory. Returns an error message for each session whose
/// deviations could not be read (its `deviation_s` is then empty).
/// Read back by `read_samples` (metrics/samples_file.hpp).
std::vector<std::string> write_samples(const std::function<void(std::string_view)>& out,
                                       const std::vector<trace::session_result>& sessions,
                                       const deviations_source& source,
                                       const open_loop_arrivals& open_loop = {});

} // namespace pacer::metrics

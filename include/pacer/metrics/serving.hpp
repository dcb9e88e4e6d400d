#pragma once
// Serving metrics of one recorded session (docs/protocol.md §4), computed offline from its
// trace and its input-send receipts. Pure functions: no files, no sockets. Parsing takes the
// files' text; `pacer replay` reads the files. The receipts' type and parser are trace's
// (pacer/trace/receipts.hpp), and so are the trace lines' (pacer/trace/lines.hpp).

#include <pacer/core/histogram.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/schedule/constants.hpp>
#include <pacer/trace/lines.hpp>
#include <pacer/trace/receipts.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::metrics {

/// A send is late when it started more than this after its scheduled time (4.1).
inline constexpr double late_send_threshold_s = 0.020;
/// The largest pacing deviation of a qualified input (4.1, one packet).
inline constexpr double pacing_tolerance_s = schedule::packet_period_s;
/// A playback deficit smaller than this is rounding, not an underrun (4.2).
inline constexpr double playback_epsilon_s = 1e-9;
/// Input PCM16 mono 16 kHz: bytes per second and per 80 ms packet.
inline constexpr double input_bytes_per_s = static_cast<double>(schedule::input_bytes_per_second);
inline constexpr std::size_t input_packet_bytes = schedule::packet_bytes;

/// `trace.jsonl` as `trace::parse_trace` reads it (docs/protocol.md §3.1).
using trace::parse_trace;
using trace::parsed_trace;
using trace::trace_line;

/// `input-send-receipts.json` as `trace::parse_receipts` reads it (docs/protocol.md §3.2); the
/// metrics read other clients' folders too (`trace::receipt_rules::any_client`).
using trace::send_receipts;

/// `{n, p50, p75, p95, p99, max}` with linear-interpolated percentiles; empty: n=0, rest null.
boost::json::object distribution_json(std::vector<double> values);

/// The same keys from values folded into a histogram (memory bounded whatever their number):
/// n and max exact, the percentiles within `log_histogram::relative_precision` of the exact ones.
boost::json::object histogram_distribution_json(const log_histogram& values);

/// The decoded size of a PCM16 payload, or nullopt unless it is valid padded base64 of whole,
/// nonempty samples.
std::optional<std::size_t> pcm16_bytes(std::string_view base64);

/// One output audio packet: its receipt time and its duration in seconds.
struct audio_packet {
    double arrival_s = 0;
    double duration_s = 0;
};

struct underrun_result {
    std::size_t count = 0;
    double total_s = 0;
    double worst_s = 0;
};

/// The playback underrun simulation of docs/protocol.md §4.2: playback starts `reserve_s` after the
/// first packet; the packets (in order) and a sentinel (end_s, 0) are walked up to the first
/// arrival after `end_s`. `packets` must not be empty.
underrun_result playback_underruns(std::span<const audio_packet> packets, double end_s,
                                   double reserve_s);

/// Send lateness of every append with a `scheduled_s`: max(0, start_s - scheduled_s) (4.1).
struct send_timing {
    std::vector<double> lateness_s;
    std::size_t late = 0;                 ///< lateness > late_send_threshold_s
    std::optional<double> late_send_rate; ///< late / sent; null when nothing was sent
};
send_timing send_lateness(const send_receipts& receipts);

/// Pacing deviation of the traced appends (4.1): (t_j - t_0) - t_start_ms_j / 1000.
struct pacing_deviation_result {
    std::vector<double> deviations_s;
    double max_abs_deviation_s = 0;
    bool within_tolerance = false;    ///< false when there are no appends
    std::optional<std::size_t> worst; ///< index of the append with the largest |deviation|
    std::size_t worst_line = 0;       ///< its trace line
    /// "input pacing deviation X s at append i (trace line L) exceeds 0.08s", when exceeded.
    std::optional<std::string> error;
};
pacing_deviation_result pacing_deviation(std::span<const trace_line> trace);

/// What a session's metrics need besides its files: the run's parameters (formerly
/// `session_context`, a name now kept for the per-thread context of the session runner).
struct session_params {
    /// D, the input duration. Null: the sum of the traced appends' decoded bytes / 32000.
    std::optional<double> input_duration_s;
    double startup_reserve_s = 0.080;
};

/// Continuous-output session metrics (docs/protocol.md §4.2). For a non-continuous profile the
/// session-wide continuous fields (TTFA, gaps, drift, coverage, underrun) are null (4.4) and
/// "no output audio" is not an error.
struct session_metrics {
    bool continuous = true;
    double input_duration_s = 0;
    std::vector<std::string> errors;
    bool success() const { return errors.empty(); }

    std::size_t appends_sent = 0, expected_appends = 0;
    send_timing sends;
    std::optional<double> ttfa_s;
    std::vector<double> gaps_s, gap_excess_s, drift_s;
    std::optional<double> final_drift_s;
    std::optional<double> required_playout_buffer_s; ///< max(0, max drift)
    std::size_t output_samples = 0;
    double output_duration_s = 0;
    std::optional<double> coverage;
    std::optional<underrun_result> underrun;
    std::optional<double> underrun_ratio;

    boost::json::object to_json() const;
};

session_metrics compute_session_metrics(std::span<const trace_line> trace,
                                        const send_receipts& receipts,
                                        const protocol::profile& profile,
                                        const session_params& context);

/// The aggregate over sessions (docs/protocol.md §4.2 "Aggregate").
boost::json::object aggregate_sessions(std::span<const session_metrics> sessions);

/// Per-unit metrics (docs/protocol.md §4.3, MiniCPM-o style; computed for any profile).
struct unit_metrics {
    double unit_s = 0;
    std::size_t expected_units = 0, completed_units = 0, missed_units = 0;
    std::optional<double> unit_miss_rate; ///< missed / expected; null when expected is 0
    std::vector<double> speak_lag_s, listen_lag_s;
    std::vector<double> reply_lag_s; ///< per response: first audio - unit ready
    /// The last input unit's lag (also in speak/listen lags): from the end-of-input send when
    /// the server completed it after that send, else from the grid like every other unit.
    std::optional<double> tail_unit_lag_s;
    /// "end_of_input" or "grid": which reference timed the tail unit (null: not completed).
    std::optional<std::string> tail_unit_reference;
    underrun_result underrun; ///< summed over responses
    double output_duration_s = 0;
    std::optional<double> underrun_ratio; ///< null when there is no audio
    std::optional<double> units_per_s;
    std::vector<std::string> errors;

    boost::json::object to_json() const;
};

unit_metrics compute_unit_metrics(std::span<const trace_line> trace, const send_receipts& receipts,
                                  const protocol::profile& profile, const session_params& context);

} // namespace pacer::metrics

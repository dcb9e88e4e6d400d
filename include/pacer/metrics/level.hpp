#pragma once
// The serving evaluation of one concurrency level (docs/protocol.md §4.2-4.4, S-J + S-W): every
// session's recorded files → its status and metrics; the sessions → the level's aggregate.
// Pure functions of the files' text, like serving.hpp: `pacer serve` and `pacer replay` read
// the files.

#include <pacer/metrics/serving.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::metrics {

/// S-W status of a session (4.4): `rejected` (never admitted: 503 exhausted), else
/// `succeeded` / `failed`.
enum class session_status { succeeded, failed, rejected };
std::string_view to_string(session_status s);

/// S-W admission (4.4): admitted = the receipts flag, or any `receive` line, or an admission
/// record `connection_admitted`; rejected = not admitted and some admission record has 503
/// and `exhausted`.
struct admission {
    bool admitted = false;
    bool rejected = false;
    std::size_t denials = 0; ///< `connection_denied` records
};
admission classify_admission(std::span<const trace_line> trace, const send_receipts& receipts);

/// Per-response metrics (4.4), grouped by `response_id`: TTFA from `response.created`, gap
/// excess within the response, max drift and the playout buffer it requires.
/// Every response a `response.created`, an audio delta or a `response.done` names is listed,
/// in order of first mention; S-W lists only responses with audio, and the distributions are
/// the same either way (a response without audio has no TTFA, gap or drift).
struct response_metrics {
    std::string id;
    std::optional<double> created_s;
    std::optional<double> ttfa_s; ///< first audio - `response.created` receipt
    std::vector<double> gap_excess_s;
    std::optional<double> max_drift_s;
    std::optional<double> required_playout_buffer_s; ///< max(0, max drift)
    double output_duration_s = 0;
    std::size_t audio_packets = 0;
    std::optional<std::string> status; ///< `response.done` status, when it arrived

    boost::json::object to_json() const;
};
std::vector<response_metrics> compute_response_metrics(std::span<const trace_line> trace,
                                                       const protocol::profile& profile);

/// The S-W unit lag (4.4): first `unit.done unit_k` receipt - (session_start + (k+1) u), for
/// k < floor((D + 1e-9) / u); later units are `excluded_terminal_units`; a bad `unit_id` is
/// an error. And the media lags: for the first audio delta of each media time equal to an
/// append's (seq x 80 ms, rounded to 0.001 ms): t - scheduled_s and t - start_s.
struct timeline_metrics {
    std::vector<double> unit_lag_s;
    std::vector<std::size_t> excluded_terminal_units;
    std::vector<double> media_schedule_lag_s;
    std::vector<double> media_send_lag_s;
    std::vector<std::string> errors;

    boost::json::object to_json() const;
};
timeline_metrics compute_timeline_metrics(std::span<const trace_line> trace,
                                          const send_receipts& receipts,
                                          const protocol::profile& profile,
                                          const session_params& context);

/// Everything about one session of a level.
struct level_session {
    std::uint32_t index = 0;
    session_status status = session_status::failed;
    admission admitted;
    session_metrics session;                 ///< 4.2 (continuous fields null for unit profiles)
    unit_metrics units;                      ///< 4.3
    std::vector<response_metrics> responses; ///< 4.4
    timeline_metrics timeline;               ///< 4.4
    /// Send-lateness p99 of this session (null when nothing was sent): level validity.
    std::optional<double> send_lateness_p99_s;
    /// Files that could not be read: the session then counts as 4.2's "unreadable" session
    /// (success false, coverage 0, underrun 1/D/D, every unit missed).
    std::vector<std::string> artifact_errors;
    /// The errors that decide the status: 4.2's, 4.3's too for a non-continuous profile (S-J
    /// scores MiniCPM-o by units, the 4.2 walk still checks frames, drain, close and start),
    /// the timeline's (a bad `unit_id`) and the extra errors; a message that two of these
    /// lists repeat is kept once. 4.3's own errors stay in `units` for a continuous profile.
    std::vector<std::string> errors;

    bool success() const { return status == session_status::succeeded; }
    boost::json::object to_json() const;
};

/// Evaluates one session from its files' text. `trace_jsonl`/`receipts_json` are nullopt when
/// the file is missing; unreadable content is recorded in `artifact_errors`, never thrown.
/// `extra_errors` (e.g. "client task: ...") are added to the session's errors.
///
/// Admission is classified from whatever could be read. A rejected session gets the empty
/// metrics of an unreadable one (as S-W's `empty_session_metrics`) with the error "admission
/// rejected: HTTP 503, retries exhausted", so that the 4.2 aggregate over attempted sessions
/// counts it as a failure with coverage 0 and underrun D. A session with artifact errors gets
/// the same metrics with "unreadable session artifacts: <reason>" errors; unlike S-W, it still
/// counts as admitted when its readable part shows admission (a receive line, the receipts'
/// flag), so a damaged recording cannot leave the admitted denominators.
level_session evaluate_session(std::uint32_t index, std::optional<std::string_view> trace_jsonl,
                               std::optional<std::string_view> receipts_json,
                               const protocol::profile& profile, const session_params& context,
                               std::span<const std::string> extra_errors = {});

/// The level's aggregate: the 4.2 fields over all attempted sessions (failures and rejections
/// in the denominators), the S-W counts (`attempted_sessions`, `admitted_sessions`,
/// `rejected_sessions`, `successful_sessions` = `successful_admitted`), coverage over admitted
/// sessions, playout underrun over admitted continuous sessions (`playout_sessions`), the 4.3
/// unit aggregate (`units`: sums, `unit_miss_rate` = sum missed / sum expected,
/// `session_units_per_s`, `total_units_per_s`, pooled lags, underrun ratio over output
/// duration) and the 4.4 response and timeline distributions over admitted sessions.
///
/// Where S-J and S-W give one name two meanings, the plain name keeps S-J's (4.2, all
/// attempted sessions) and S-W's figure gets a prefix:
/// - `output_coverage`: every attempted session (S-J); `admitted_output_coverage`: admitted
///   sessions only (S-W's `output_coverage`).
/// - `underrun_sessions|count|total_s|worst_s|ratio`: every attempted session, ratio = sum
///   total / sum D (S-J); `playout_underrun_sessions|count|total_s|worst_s|ratio` with
///   `playout_sessions`: admitted sessions of a continuous profile (S-W's `underrun_*`), null
///   when there are none.
/// - `successful_sessions` counts sessions whose status is `succeeded` (S-W's, equal to
///   `successful_admitted_sessions`: a session never admitted cannot succeed), not 4.2's
///   `success` alone, which ignores the unit errors of a non-continuous profile.
/// Other S-W fields keep their names: `session_ttfa_s` (= `ttfa_s`), `required_playout_buffer_s`
/// (over all sessions that have one), `unit_lag_s`, `media_schedule_lag_s`, `media_send_lag_s`,
/// `response_ttfa_s`, `response_gap_excess_s`, `response_max_drift_s`,
/// `response_required_playout_buffer_s` (over admitted sessions). `units` follows S-J's
/// `aggregate_unit_sessions` over every attempted session (a rejected or unreadable one misses
/// all its units); its `unit_lag_s` is S-J's done - ready lag, not S-W's timeline lag above.
boost::json::object aggregate_level(std::span<const level_session> sessions,
                                    const protocol::profile& profile);

} // namespace pacer::metrics

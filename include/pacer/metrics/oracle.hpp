#pragma once
// The offline native protocol oracle (docs/protocol.md §4.5): replays one session's trace, lists
// every protocol violation and computes the oracle metrics of `report.json`.

#include <pacer/metrics/serving.hpp>
#include <pacer/protocol/events.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pacer::metrics {

/// The retry limit of pacer's client (three 503 denials, then the fourth is exhausted).
inline constexpr int max_admission_attempts = 3;

struct oracle_result {
    std::string verdict; ///< "pass", "fail" or "not_exercised"
    std::vector<std::string> violations;

    bool input_output_overlap = false;
    double input_audio_s = 0;
    double output_audio_s = 0;
    std::size_t admission_denials = 0;
    std::optional<double> first_audio_packet_s;
    std::optional<double> audio_packet_gap_max_s;
    std::optional<double> drain_after_eos_s;
    std::optional<double> close_ack_s;

    /// `{input_audio_s, output_audio_s, admission_denials, first_audio_packet_s,
    /// audio_packet_gap_max_s, input_output_overlap, drain_after_eos_s, close_ack_s}`
    boost::json::object metrics_json() const;
};

/// Checks `trace` (in file order) against the native protocol rules for `profile`: the
/// granted capabilities (the profile's unit, output rate and exact output modalities), counts,
/// order, input accounting, units, responses, output conservation (continuous
/// profiles), event types, client-side contiguity, clock monotonicity and unique event ids.
/// Verdict: `fail` with any violation; else `pass` when the profile is not continuous or some
/// append was sent between the first and the last audio receipt; else `not_exercised`.
oracle_result evaluate_trace(std::span<const trace_line> trace, const protocol::profile& profile,
                             std::optional<int> admission_limit = max_admission_attempts);

} // namespace pacer::metrics

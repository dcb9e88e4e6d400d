#pragma once
// The serving evaluation of openai-realtime and vllm-realtime sessions (docs/protocols.md,
// docs/serving.md), from their recorded files like level.hpp's for the native protocol. The
// native replay oracle does not apply to these protocols: a session is judged by the
// protocol's own checks (see `realtime_protocol_checks`), and a level by the client-validity
// verdict plus those checks. Pure functions of the files' text.

#include <pacer/metrics/level.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/protocol/realtime_session.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::metrics {

/// What a realtime session's evaluation needs besides its files.
struct realtime_context {
    protocol::realtime_protocol protocol = protocol::realtime_protocol::openai;
    protocol::realtime_turns turns = protocol::realtime_turns::server_vad;
    double input_duration_s = 0;       ///< D, the input's length
    double output_sample_rate = 24000; ///< openai-realtime's PCM16 output (session.update)
    double startup_reserve_s = 0.080;  ///< the simulated player's buffer before it starts
    double chunk_s = 0.080;            ///< an append's audio (vllm-omni: `--chunk-ms`)
};

/// The output audio of one session, response by response (`response_id`; deltas without one
/// form one response): gaps between consecutive deltas of a response and their excess over the
/// earlier delta's duration, and the playback underrun simulation of docs/protocol.md §4.2 run
/// over each response (the player starts `reserve_s` after its first delta and plays to its
/// last), summed.
struct realtime_output {
    std::size_t audio_deltas = 0;
    std::size_t responses = 0; ///< responses with audio
    double output_duration_s = 0;
    std::vector<double> gaps_s, gap_excess_s;
    underrun_result underrun;
    std::optional<double> underrun_ratio; ///< underrun total / output duration; null: no audio
    std::vector<std::string> errors;      ///< an audio delta that is not base64 PCM16
};

/// Gaps and underrun of the audio deltas (`response.output_audio.delta`, beta
/// `response.audio.delta`) in `trace` at `sample_rate` Hz.
realtime_output realtime_output_audio(std::span<const trace_line> trace, double sample_rate,
                                      double reserve_s);

/// One realtime session's figures, in seconds (null when the session lacks them).
struct realtime_figures {
    std::optional<double> anchor_s;        ///< the grid's origin (receipts' session_start_s)
    std::optional<double> utterance_end_s; ///< the commit, or speech_stopped (server-vad)
    std::optional<double> first_audio_from_utterance_end_s;
    std::optional<double> first_audio_from_anchor_s;
    std::optional<double> first_transcript_from_utterance_end_s;
    std::optional<double> first_transcript_from_anchor_s;
    std::optional<double> final_transcript_from_utterance_end_s;
    /// (the last output event - the anchor) / D: about 1 when the server keeps up with the
    /// input, more when its output ends later than the input does.
    std::optional<double> real_time_factor;
    std::size_t transcript_deltas = 0;
    realtime_output output;

    boost::json::object to_json() const;
};

/// A realtime session of a level: status, admission and send lateness as `level_session`
/// has them (`base`; its `session` holds the 4.2-style figures the table and the SLOs read:
/// `ttfa_s` = first audio from the anchor, gaps, underrun over the output), and the figures.
struct realtime_level_session {
    level_session base;
    realtime_figures figures;

    boost::json::object to_json() const;
};

/// The protocol's own checks a session must pass (what `evaluate_realtime_session` tests),
/// in words, for the level summary's `validity_checks`.
std::vector<std::string> realtime_protocol_checks(const realtime_context& context);

/// Evaluates one realtime session from its files' text (nullopt: the file is missing).
realtime_level_session evaluate_realtime_session(std::uint32_t index,
                                                 std::optional<std::string_view> trace_jsonl,
                                                 std::optional<std::string_view> receipts_json,
                                                 const realtime_context& context,
                                                 std::span<const std::string> extra_errors = {});

/// The level's aggregate: `attempted_sessions`, `admitted_sessions`, `rejected_sessions`,
/// `successful_sessions`, `send_lateness_s`, `ttfa_s` (first audio from the anchor),
/// `output_gap_s`, `output_gap_excess_s`, `underrun_count|total_s|ratio` (ratio over the
/// output's duration), `output_duration_s`, and `realtime`: the distributions of every
/// figure of `realtime_figures` over the sessions that have it.
boost::json::object aggregate_realtime_level(std::span<const realtime_level_session> sessions);

} // namespace pacer::metrics

#pragma once
// Latency figures of the openai-realtime and vllm-realtime protocols (docs/protocols.md), for
// summary.json's `server`: time to the first audio delta and to the first transcript delta,
// from the end of the utterance and from the schedule anchor (the packet grid's origin), and
// vllm's final transcript latency (`transcription.done` after the end of the utterance).

#include <pacer/trace/receipts.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pacer::metrics {

/// `{count, p50, p95, max}` in seconds for each figure (null figures when no session has one).
boost::json::object realtime_latency_json(const std::vector<trace::session_result>& sessions);

/// Multi-turn scenarios (docs/scenarios.md): `{by_turn: [per turn index], all: pooled}`, each
/// with `{count, p50, p95, max}` seconds (null without values; to the microsecond) of:
/// - `ttfa_from_voice_end_s` (voice-to-voice): first assistant audio − the turn's voice end;
/// - `ttfa_from_speech_end_s`: first assistant audio − the turn's end-of-input instant;
/// - `ttfa_from_speech_stopped_s`: first audio − the server's `speech_stopped` (server VAD);
/// - `ttfa_from_commit_s`: first audio − the turn's commit (openai-realtime manual);
/// - `response_duration_s`: last − first audio delta of the turn's reply;
/// - `interrupt_latency_s` (turns a barge-in interrupted): last audio delta of the reply −
///   the barge-in's first packet, 0 when the reply had already ended;
/// - `audio_after_interrupt_s`: seconds of reply PCM that arrived after that packet;
/// - `played_at_interrupt_s`: what the simulated player had played by then;
/// - `player_gap_s`: the player's silent gaps between two deltas of the reply, all of them;
/// - `underrun_s`: of those, the underruns' (gaps of at least
///   session::player_underrun_tolerance), per answered turn;
/// plus the counts `turns`, `answered` (turns with a reply), `interrupted`, `underruns` and
/// `unsolicited_responses` (responses no turn's commit or speech_stopped asked for).
boost::json::object turn_metrics_json(const std::vector<trace::session_result>& sessions);
/// The same over each session's turns (one vector a session, in turn order).
boost::json::object turn_metrics_json(std::span<const std::vector<trace::turn_result>> sessions);

/// One turn's figures (see turn_metrics_json), each nullopt when the turn has none: the
/// time-to-first-audio figures need a reply and their reference point, `response_duration_s`
/// a reply, `player_gap_s` a reply, the interruption figures a barge-in on the turn.
struct turn_figures {
    std::optional<double> ttfa_from_voice_end_s;
    std::optional<double> ttfa_from_speech_end_s;
    std::optional<double> ttfa_from_speech_stopped_s;
    std::optional<double> ttfa_from_commit_s;
    std::optional<double> response_duration_s;
    std::optional<double> interrupt_latency_s;
    std::optional<double> audio_after_interrupt_s;
    std::optional<double> played_at_interrupt_s;
    std::optional<double> player_gap_s;
    std::optional<double> underrun_s;
};
turn_figures figures_of(const trace::turn_result& turn);

/// turns.jsonl (docs/scenarios.md): one JSON line per turn of session `session`, appended to
/// `out`: `session`, `turn`, `barge_in`, the turn's instants (CLOCK_MONOTONIC seconds, null
/// when absent: `start_s`, `voice_end_s`, `speech_end_s`, `commit_s`, `speech_stopped_s`,
/// `first_audio_s`, `last_audio_s`, `interrupted_s`), `response_id`, `audio_s`, `underruns`,
/// `unsolicited_responses`, and its figures under summary.json's names (null when the turn has
/// none), each the difference of two of those instants. Every time and duration is rounded to
/// the microsecond (plain decimals).
void append_turn_rows(std::string& out, std::uint32_t session,
                      std::span<const trace::turn_result> turns);

/// Writes `file` (new: never overwritten), the turns.jsonl of a run or a serving run: every
/// session's turn rows (append_turn_rows), in session order. Throws std::runtime_error when it
/// cannot be written.
void write_turn_rows(const std::filesystem::path& file,
                     const std::vector<trace::session_result>& sessions);

/// How long each session's `session.update` took to be acknowledged (`session.updated`
/// received - the update's send start), over the sessions that got an ack: `{n, p50, ...}`.
boost::json::object update_ack_json(const std::vector<trace::session_result>& sessions);

} // namespace pacer::metrics

#pragma once
// The send receipts of a session and what the session recorded (docs/protocol.md §3.2): one
// type, one formatter and one parser of `input-send-receipts.json`. The session fills a
// `session_result` and streams its receipts to the writer; the runner reads them back through
// `read_receipts`, and metrics, replay, reports and the recorder through `parse_receipts`.

#include <pacer/core/failure.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::trace {

/// The phases of a connection's opening, in seconds (the transport measures them).
struct handshake_times {
    double connect_s = 0; ///< TCP connect
    double tls_s = 0;     ///< TLS handshake (0 over plain ws://)
    double upgrade_s = 0; ///< WebSocket upgrade
};

/// One append as `input-send-receipts.json` records it: small and allocation-free (64 bytes),
/// streamed to the writer as the session goes.
struct append_receipt {
    /// The append's `event_id`: pacer's are 32 hex characters; one read from another client's
    /// file (`receipt_rules::any_client`) may be shorter, padded with NUL.
    std::array<char, 32> event_id{};
    std::uint64_t seq = 0;
    /// The packet's deadline as the session recorded it; NaN when the file records none
    /// (C1/C2 receipts, read with `receipt_rules::any_client`): see `scheduled()`.
    double scheduled_s = 0;
    double start_s = 0;
    double completed_s = 0;

    std::string_view id() const {
        std::size_t n = 0;
        while (n < event_id.size() && event_id[n] != '\0')
            ++n;
        return {event_id.data(), n};
    }
    /// Sets `event_id` to `id`; false (and nothing set) when it is longer than 32 characters.
    bool set_id(std::string_view id);
    /// `scheduled_s`, or nullopt when the receipt records no deadline.
    std::optional<double> scheduled() const {
        return std::isnan(scheduled_s) ? std::nullopt : std::optional<double>(scheduled_s);
    }
};

/// One user turn of a multi-turn scenario (docs/scenarios.md), as the session saw it; times
/// are CLOCK_MONOTONIC seconds. The per-turn metrics (time to first audio from each reference
/// point, response duration, interruption latency) are differences of these.
struct turn_result {
    std::optional<double> start_s;          ///< the turn's first packet's send start
    bool barge_in = false;                  ///< it started by talking over the assistant
    std::optional<double> speech_end_s;     ///< its end-of-input instant (end of the speech)
    std::optional<double> commit_s;         ///< openai-realtime manual: its commit sent
    std::optional<double> speech_stopped_s; ///< server VAD: the server's `speech_stopped`
    /// Where the user's voice ended: the last voiced 10 ms frame of the turn's input, found
    /// before the run, played out on the grid (none for a turn without voice).
    std::optional<double> voice_end_s;
    /// The assistant's reply to the turn (docs/scenarios.md, "Which turn a reply answers"):
    /// the audio of the responses tied to the turn (openai-realtime), or what arrived after
    /// its end and before the next turn's end (responses without ids: the native protocol).
    std::optional<double> first_audio_s;
    std::optional<double> last_audio_s;
    double audio_s = 0;                     ///< seconds of PCM received
    std::optional<std::string> response_id; ///< the first response tied to the turn
    /// Responses the server started with no turn's commit or `speech_stopped` before them,
    /// while this turn was the latest started (turn 0: also before it).
    std::uint64_t unsolicited = 0;
    /// The simulated player (plays each delta as it comes, in real time): its silent gaps
    /// between two deltas (`gap_s`, all of them), and the underruns, the gaps of at least
    /// `player_underrun_tolerance` (count and seconds).
    std::uint64_t underruns = 0;
    double gap_s = 0;
    double underrun_s = 0;
    /// Interrupted by the next turn's barge-in: its first packet's send start, what the player
    /// had played by then, and the audio that arrived after it.
    std::optional<double> interrupted_s;
    std::optional<double> played_s;
    double audio_after_interrupt_s = 0;
    /// vllm-omni: where the interrupted reply's audio stopped for the listener (its
    /// `output_audio_buffer.cleared`, or its play-out when that came first).
    std::optional<double> output_stopped_s;
};

/// vllm-omni only: what its listener and its exchange counted (docs/protocols.md, "vllm-omni").
struct omni_figures {
    std::uint64_t responses = 0;     ///< `response.created`
    std::uint64_t completed = 0;     ///< `response.done` completed
    std::uint64_t cancelled = 0;     ///< `response.done` cancelled
    std::uint64_t listens = 0;       ///< `response.listen` (the model kept listening)
    std::uint64_t commits = 0;       ///< commits sent
    std::uint64_t deferred = 0;      ///< commits answered `response_create_deferred`
    std::uint64_t unanswered = 0;    ///< commits never answered when the session ended
    std::uint64_t playback_acks = 0; ///< `playback.ack` sent
    std::uint64_t acknowledged = 0;  ///< `playback.acknowledged`
    std::uint64_t ack_errors = 0;    ///< `playback_item_mismatch`, `_not_found`, `_ack_too_late`
    std::uint64_t event_acks = 0;    ///< `session.event_ack` sent
    std::uint64_t heartbeats = 0;    ///< `session.heartbeat` sent
    std::uint64_t cleared = 0;       ///< `output_audio_buffer.cleared`
    double audio_received_ms = 0;    ///< the audio the deltas carried (24 kHz PCM16)
    double server_audio_ms = 0; ///< the server's `metadata.audio_duration_ms`, each reply's last
    double dropped_ms = 0;      ///< audio a clear dropped before it played
    std::vector<double> ack_round_trip_s; ///< `playback.ack` → its answer
    /// The server's stall: why commits went unanswered (`response_create_deferred`, or
    /// `no reply`); empty when every commit was answered.
    std::string stall;
};

struct session_result {
    std::uint32_t index = 0;
    bool admitted = false;
    bool rejected = false;    ///< 503 on every handshake (admission exhausted)
    bool complete = false;    ///< the whole protocol ran and no error was recorded
    bool interrupted = false; ///< ended early by the runner's interrupt
    int admission_denials = 0;
    std::optional<double> session_start_s; ///< origin of the packet grid
    std::optional<double> scheduled_s;     ///< open loop: the scheduled start (latency anchor)
    bool dispatched = true;                ///< open loop: false when the cap dropped it
    std::optional<double> connect_start_s;
    std::optional<double> updated_s;     ///< `session.updated` received
    std::optional<double> update_sent_s; ///< `session.update` sent (its send start)
    /// The connection's phases (TCP connect, TLS, WebSocket upgrade), once admitted.
    std::optional<handshake_times> handshake;
    std::optional<double> first_audio_s; ///< first `response.output_audio.delta`
    /// openai-realtime / vllm-realtime: the utterance's end (the commit, or `speech_stopped`
    /// with server-vad), the first transcript delta, and `transcription.done`.
    std::optional<double> utterance_end_s;
    std::optional<double> first_transcript_s;
    std::optional<double> final_transcript_s;
    std::size_t expected_appends = 0;
    std::size_t appends_sent = 0;
    /// What the session folded of its receipts as it sent them (trace/receipt_stats.hpp):
    /// appends further than 80 ms from their deadline, the first append's start, the last
    /// append's start and completion.
    std::size_t late_appends = 0;
    /// Of `late_appends`, those a send stall made late: a write longer than 80 ms (the server's
    /// full TCP window) held the session past their late line, and the ones sent in the
    /// catch-up right after it. The server's lateness, not the client's.
    std::size_t late_appends_after_send_stall = 0;
    /// Folding state: the run of late appends now going on began at a stalled write.
    bool late_run_from_send_stall = false;
    std::optional<double> first_append_start_s;
    std::optional<double> last_append_start_s;
    std::optional<double> last_append_completed_s;
    /// The receipts, only when read back from `input-send-receipts.json` (`read_receipts`,
    /// offline tools and tests): a running session streams them to the writer and keeps none,
    /// and a run never reads them back, so its memory does not grow with its length.
    std::vector<append_receipt> appends;
    /// The session's failures, in order: what went wrong as codes (session_errc,
    /// transport_errc) with their data. Compare the codes, never the text: the text (the
    /// trace `error` line's, `reference_text`) is made only where a line or a file is written.
    std::vector<failure> failures;
    std::string trace_error; ///< the writer's failure for this session
    std::uint64_t frames_received = 0;
    std::uint64_t bytes_received = 0;
    std::uint64_t trace_waits = 0;
    double trace_wait_s = 0;
    bool ready = false; ///< negotiated: reported ready to the start gate
    /// Send stalls: writes (of any frame) longer than `send_stall_threshold`, including one
    /// cut short by the session's end; the longest write; and, when the session was stopped
    /// (deadline, interrupt) during a write, how long that write had been pending.
    std::uint64_t stalled_sends = 0;
    std::optional<double> longest_write_s;
    std::optional<double> pending_write_s;
    /// Multi-turn scenarios only (empty for `single`): each user turn.
    std::vector<turn_result> turns;
    /// vllm-omni only.
    std::optional<omni_figures> omni;
};

/// The receipts file is `{"session_start_s":…,"admitted":…,"appends":[…]}\n`, written in
/// pieces: the head with the first append, then one append at a time, then the tail.
std::string receipts_head(const session_result& r);
/// One append's object, `{"event_id":…,"seq":…,"scheduled_s":…,"start_s":…,"completed_s":…}`
/// (seconds with nine decimals), appended to `out` or returned.
void append_receipt_json(std::string& out, const append_receipt& a);
std::string receipt_json(const append_receipt& a);
/// The rest of the file when the session ends: the tail, or the whole file without appends.
std::string receipts_tail(const session_result& r);

/// How strictly `parse_receipts` reads a receipts file.
enum class receipt_rules {
    /// pacer's own files, read back at the end of a run: every append has a 32-character
    /// `event_id` and a `scheduled_s`.
    pacer,
    /// Any recorded folder (replay, reports, serving levels, `pacer record`): also other
    /// clients' receipts. An append may lack `scheduled_s` (C1/C2 record none; NaN then) and its
    /// `event_id` may be shorter than 32 characters or absent (empty then).
    any_client,
};

/// What `input-send-receipts.json` holds.
struct send_receipts {
    std::optional<double> session_start_s; ///< null until the first append was sent
    std::optional<bool> admitted;          ///< absent in C1-C3 receipts
    std::vector<append_receipt> appends;
};

/// Parses the text of `input-send-receipts.json`: an object with an array `appends` of objects
/// with a non-negative integer `seq` and finite numbers `start_s`, `completed_s` and (pacer's
/// rules) `scheduled_s`, an `event_id` string (pacer's rules: 32 characters; any client's: at
/// most 32), and optionally `session_start_s` (a number or null) and `admitted` (read when a
/// boolean). Throws std::runtime_error with the reason.
send_receipts parse_receipts(std::string_view text, receipt_rules rules);

/// Fills `r.appends` from the session's receipts file (pacer's rules); returns an error
/// message or "".
std::string read_receipts(session_result& r, const std::filesystem::path& file);
/// The same from the receipts' text (`pacer run --trace none` spools them); `origin`
/// names them in the error message.
std::string read_receipts_text(session_result& r, std::string_view text, std::string_view origin);
/// Only the appends' deviations (`start_s - scheduled_s`, in order) from the receipts' text,
/// read by pacer's rules into `out` (cleared first, its capacity kept): what samples.json
/// needs, without the receipts themselves. Returns "" or, with `out` empty, the error as
/// `read_receipts_text` words it.
std::string read_receipt_deviations(std::string_view text, std::string_view origin,
                                    std::vector<double>& out);
/// The same from the session's receipts file, as `read_receipts` reads it.
std::string read_receipt_deviations(const std::filesystem::path& file, std::vector<double>& out);

} // namespace pacer::trace

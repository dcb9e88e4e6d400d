#pragma once
// `pacer native-mock`: a mock of the native full-duplex realtime server (docs/protocol.md §1.4, the
// DuplexPeer recipe of section 6) whose healthy sessions pass the protocol oracle (4.5). It
// speaks like VoiceChat (continuous output, a 256-sample codec holdback) or like MiniCPM-o
// (silent while listening, one reply per question), releases unit output in bursts, models a
// server whose per-unit latency grows with the number of open sessions, and injects the fault
// modes of the reference peer into chosen sessions while the others stay healthy.

#include <pacer/protocol/events.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/server/mock_server.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pacer::server {

/// The reference peer's failure modes (docs/protocol.md §6; DuplexPeer). Those tied to audio fire
/// on the session's first append, as the reference's do.
enum class peer_fault {
    none,
    server_error,   ///< a fatal `error` answering the append, then session.closed server_error
    delayed_fatal,  ///< the same, with session.closed 0.6 s later (adapter teardown)
    nonfatal_error, ///< a nonfatal `error` answering each append (not accepted); close works
    timeout,        ///< never answers again (the client's session deadline fires)
    malformed_json, ///< the frame `{not valid json`, then silence
    nonfinite,      ///< a unit.done carrying `"backlog_ms":NaN`, then silence
    disconnect,     ///< a close frame with code 1011 "deliberate disconnect"
    linger,         ///< after session.closed the socket stays open until the client closes it
    close_without_update, ///< answers session.update with session.closed (client_closed)
};

/// Parses a fault name (`none`, `server_error`, ...); throws bad_input.
peer_fault parse_peer_fault(std::string_view name);

/// A set of accept-order session indices, written `0,2,5-7`.
class session_set {
public:
    /// Parses `0,2,5-7` (ascending or not, no blanks); throws bad_input naming
    /// `--fault-sessions` for anything else (empty items, `a-b` with b < a, non-digits).
    static session_set parse(std::string_view list);
    bool contains(std::size_t index) const;

private:
    std::vector<std::pair<std::size_t, std::size_t>> ranges_; // inclusive
};

struct native_mock_options : host_options {
    /// `nemotron` (VoiceChat: 80 ms units, continuous) or `minicpmo` (1000 ms units, replies
    /// only to questions); any name or alias `protocol::find_profile` knows except the legacy one.
    const protocol::profile* profile = &protocol::default_profile();
    /// Hz of output PCM16; 0: the profile's rate (22050 VoiceChat, 24000 MiniCPM-o).
    int output_sample_rate = 0;
    /// Unit output is held and released this many units at a time.
    std::size_t burst_units = 1;
    /// MiniCPM-o profile: unit k ends a question, and gets a reply, when k+1 is a multiple.
    std::size_t question_every = 3;
    /// Capacity model: a unit's output leaves `unit_latency + per_session_cost x (open - 1)`
    /// after its last input byte arrived, never before the previous unit's output.
    std::chrono::duration<double, std::milli> unit_latency{0};
    std::chrono::duration<double, std::milli> per_session_cost{0};
    /// `--service-ms S`: one compute worker shared by every session (and thread) of the mock,
    /// first in first out: each completed unit needs S of it, and its output leaves at
    /// max(ready, worker free) + S + the capacity model's latency. Work queued for sessions
    /// that left is still done. 0: no worker (the capacity model alone, as before).
    std::chrono::duration<double, std::milli> service_time{0};
    /// `--cold-start-ms X` and `--cold-start-s K`: when the open sessions reach a new
    /// high-water mark, every unit completed in the next K costs X more. X of 0: off.
    std::chrono::duration<double, std::milli> cold_start_extra{0};
    std::chrono::duration<double> cold_start_window{2.0};
    /// `--overload-penalty-ms X` and `--recovery-s T`: once a unit's modelled lag (worker wait,
    /// service, capacity model; neither cold start nor this penalty) exceeds one unit, every
    /// unit (and openai-realtime response) ready within T of the last such unit costs X more.
    /// X of 0: off.
    std::chrono::duration<double, std::milli> overload_penalty{0};
    std::chrono::duration<double> recovery{30.0};
    peer_fault fault = peer_fault::none;
    /// Sessions (accept order) the fault hits; nullopt: all of them.
    std::optional<session_set> fault_sessions;
    /// `--protocol`: nullopt is native; openai-realtime answers `session.updated` on update,
    /// `input_audio_buffer.committed` on commit, a response (`response.created`, `reply` of
    /// audio in 80 ms deltas with transcript deltas, `response.done` completed) to each
    /// `response.create` and each server-VAD turn, `response.done` cancelled (or an error when
    /// none is active) to `response.cancel`, `conversation.item.truncated` to
    /// `conversation.item.truncate`; vllm-realtime
    /// answers each 80 ms (2,560 bytes at 16 kHz) with a `transcription.delta` and the final
    /// commit with `transcription.done`. Both on the same capacity model; the fault modes are
    /// the native protocol's only. The session completes when the client closes. vllm-omni
    /// (vLLM-Omni's full-duplex `/v1/realtime?duplex=1`) is described in docs/native-mock.md.
    std::optional<protocol::realtime_protocol> realtime;
    /// openai-realtime, server VAD (on unless `session.update` sets `turn_detection` null, as
    /// OpenAI's default): an 80 ms window of input is speech when its RMS is at least this many
    /// dBFS (`--vad-threshold-dbfs`); speech stops after `vad_silence` of windows below it
    /// (`--vad-silence-ms`, or the session's `silence_duration_ms`). Then the mock commits and
    /// answers on its own; speech starting during a response cancels it (`turn_detected`).
    double vad_threshold_dbfs = -40;
    std::chrono::duration<double, std::milli> vad_silence{500};
    /// openai-realtime: each response (`response.create`, or a server-VAD turn) is this much
    /// audio, in 80 ms deltas paced in real time from the first (`--reply-ms`).
    std::chrono::duration<double, std::milli> reply{800};
    /// openai-realtime: a response being cancelled (`response.cancel`, or speech under server
    /// VAD) sends nothing due after this, then `response.done` cancelled
    /// (`--cancel-reaction-ms`).
    std::chrono::duration<double, std::milli> cancel_reaction{20};
    /// vllm-omni (docs/native-mock.md, "vllm-omni"): a session.update without `ref_audio` as a
    /// `data:audio/wav;base64,` URL is refused with `ref_audio_required`, as MiniCPM-o's
    /// (`--require-ref-audio`).
    bool require_ref_audio = false;
    /// vllm-omni: the `playback_commit_policy` of a session that does not set one
    /// (`--playback-commit-policy`): under ack_only (true) a response whose audio was sent but
    /// not acknowledged as played (`playback.ack`) keeps the session busy, and later commits
    /// wait (`response_create_deferred`); under commit_all_on_done (false) only a response
    /// still being generated does.
    bool ack_only = true;
    /// vllm-omni: the older servers' names `response.audio.delta` and
    /// `response.audio_transcript.delta` (and their `.done`) instead of the GA ones.
    bool beta_audio_names = false;
    /// vllm-omni, sessions with `turn_detection` null (`--model-turns`): the model decides:
    /// the end of speech in the input (the server VAD's detector; no speech events are sent)
    /// opens a reply without a commit, deferred alike while the session is busy, and a
    /// client's commit gets `input_audio_buffer.committed` alone. Off: only commits get replies.
    bool model_turns = false;
    /// vllm-omni: every Nth answered commit gets `response.listen` (the model keeps listening)
    /// instead of a response (`--listen-every`); 0: never.
    std::size_t listen_every = 0;
    /// vllm-omni: a response's `reply` audio goes out in deltas of this much audio, paced in
    /// real time (`--reply-delta-ms`; the model's 1,000 ms unit by default).
    std::chrono::duration<double, std::milli> reply_delta{1000};
};

/// The granted capabilities the mock sends in every `session.updated` of `options` (the
/// normalised ones: an output rate of 0 is the profile's): the full set of the reference
/// mock, with the profile's unit, output rate and output modalities.
std::string granted_capabilities(const native_mock_options& options);

/// Prints what `pacer native-mock` would serve with `o` on `threads` threads (its `--dry-run`
/// plan, once the options are checked); `fault_sessions` is `--fault-sessions` as given (empty:
/// all sessions).
void print_native_mock_plan(const native_mock_options& o, std::size_t threads,
                            const std::string& stats_output, std::string_view fault_sessions);

/// The native mock on one io_context (run it on one thread: no strand, no lock).
///
/// @par Per session
/// `session.created` on accept; `session.updated` with the full granted set; per append
/// `sglang.input_audio.accepted` at once; per completed unit the unit's output (continuous:
/// `response_0` opened once, an audio delta of the fresh samples minus a 256-sample holdback,
/// a transcript delta, `sglang.unit.done`) on the capacity model's clock; on EOS `ended`, the
/// held units, the holdback flush, the response terminal (`completed`/`stop`), the tail unit
/// and `drained`, behind any pending output; on close `session.closed client_closed`.
///
/// @par Stats
/// The common ones plus `appends`, `units`, `responses`, `responses_cancelled`,
/// `faults_injected`, the options that
/// shape the output, `unit_output_lag_s`: from a unit's last input byte to the write of its
/// output, `cold_starts`, `high_water_sessions` and `overloads`, and `server_stats`: the document
/// of `GET /stats` since its last reset.
///
/// @par GET /stats
/// A plain HTTP GET of `/stats` on the mock's port (not an upgrade) answers the server's own
/// view as JSON (docs/native-mock.md, "GET /stats"): unit latency, queue wait, batch sizes,
/// backlog, cold starts, since the last `GET /stats?reset=1` (which answers, then resets).
///
/// @par Threads
/// Sessions may be spread over several io_contexts, each run by one thread (the first
/// accepts); each session lives on one, and what the mock counts is kept per thread and
/// merged when read (the shared worker and the cold start are atomics).
class native_mock final : public mock_server {
public:
    /// Throws bad_input for option values it cannot serve (a legacy profile, a
    /// burst of 0, an output rate too low for the holdback, a negative latency...).
    native_mock(boost::asio::io_context& ctx, native_mock_options options);
    /// Sessions spread over `contexts` (at least one; the first accepts), round robin.
    native_mock(std::span<boost::asio::io_context* const> contexts, native_mock_options options);
};

} // namespace pacer::server

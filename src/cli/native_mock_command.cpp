// `pacer native-mock`: the native realtime mock (VoiceChat- or MiniCPM-o-like, bursts, a
// capacity model, fault modes) as its own process. docs/native-mock.md describes it. Its flags;
// checking and running them is server::run_native_mock's (server/mock_process.hpp).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/server/mock_process.hpp>

#include <CLI/CLI.hpp>

namespace pacer::cli {

namespace {

// The flags of the conversational protocols: openai-realtime's and vllm-omni's server VAD,
// replies and cancels, then vllm-omni's own.
void add_conversation_options(CLI::App& sub, server::native_mock_process_options& s) {
    sub.add_option(
           "--vad-threshold-dbfs", s.vad_threshold_dbfs,
           "openai-realtime and vllm-omni server VAD: an 80 ms window of input is speech when its "
           "RMS is at least this many dBFS (zeros never are)")
        ->check(number_in(-120, 0))
        ->capture_default_str();
    sub.add_option(
           "--vad-silence-ms", s.vad_silence_ms,
           "openai-realtime and vllm-omni server VAD: speech stops after this many ms below the "
           "threshold (a session's silence_duration_ms overrides it); then the mock "
           "commits and answers")
        ->check(number_in(80, max_ms))
        ->capture_default_str();
    sub.add_option("--reply-ms", s.reply_ms,
                   "openai-realtime and vllm-omni: ms of audio in each response, sent in 80 ms "
                   "deltas (vllm-omni: --reply-delta-ms) paced in real time")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub.add_option(
           "--cancel-reaction-ms", s.cancel_reaction_ms,
           "openai-realtime and vllm-omni: a cancelled response (response.cancel, or speech under "
           "server VAD) sends nothing due later than this, then response.done "
           "cancelled")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub.add_option("--reply-delta-ms", s.reply_delta_ms,
                   "vllm-omni: each reply (--reply-ms of audio) goes out in deltas of this much "
                   "audio, paced in real time")
        ->check(number_in(10, max_ms))
        ->capture_default_str();
    sub.add_option("--playback-commit-policy", s.playback_commit_policy,
                   "vllm-omni, for sessions that do not set it: ack_only (a reply whose audio "
                   "was sent but not acknowledged as played by playback.ack keeps the session "
                   "busy; later commits are deferred, so a client that never acks stalls) or "
                   "commit_all_on_done")
        ->capture_default_str();
    sub.add_flag("--require-ref-audio", s.options.require_ref_audio,
                 "vllm-omni: refuse a session.update without ref_audio (a "
                 "data:audio/wav;base64 URL) with ref_audio_required, as MiniCPM-o does");
    sub.add_flag("--model-turns", s.options.model_turns,
                 "vllm-omni, sessions with turn_detection null: the model decides; the end of "
                 "speech in the input opens a reply without a commit (a commit gets "
                 "input_audio_buffer.committed alone)");
    sub.add_flag("--beta-audio-names", s.options.beta_audio_names,
                 "vllm-omni: name the deltas response.audio.delta and "
                 "response.audio_transcript.delta, as older servers do");
    sub.add_option("--listen-every", s.options.listen_every,
                   "vllm-omni: answer every Nth commit with response.listen (the model keeps "
                   "listening) instead of a reply; 0: never")
        ->check(whole_number(0, 1'000'000))
        ->capture_default_str();
}

} // namespace

command add_native_mock_command(CLI::App& app) {
    auto s = std::make_shared<server::native_mock_process_options>();
    auto* sub = app.add_subcommand(
        "native-mock",
        "Mock of the native full-duplex realtime server on ws://HOST:PORT/v1/realtime (wss:// "
        "with --tls-cert and --tls-key) "
        "(docs/protocol.md §1.4 and the section 6 recipe): healthy sessions pass `pacer replay`. "
        "VoiceChat-like (continuous audio) or MiniCPM-o-like (replies to questions), unit output "
        "in bursts, a capacity model whose unit latency grows with open sessions, a shared compute "
        "worker with its backlog, a cold start per new high-water mark of sessions, HTTP 503 "
        "admission limits, and the reference peer's fault modes for chosen sessions. With "
        "--protocol vllm-omni: vLLM-Omni's full-duplex /v1/realtime?duplex=1 (and /v1/duplex), "
        "server_event_seq, playback.ack and the ack_only stall. GET /stats "
        "on the same port answers the server's own view (?reset=1 resets it). Prints "
        "'listening on HOST:PORT' when ready; on SIGINT/SIGTERM writes --stats-output and exits "
        "0. See docs/native-mock.md.");
    sub->footer(server_exit_statuses);
    auto& o = s->options;
    add_mock_process_options(*sub, o, s->stats_output);
    add_mock_threads_option(*sub, s->threads);
    sub->add_option("--protocol", s->protocol,
                    "Protocol served: native, openai-realtime (responses of audio and transcript "
                    "deltas at 24 kHz, server VAD, cancel, truncate), vllm-realtime "
                    "(transcription deltas) or vllm-omni (vLLM-Omni's full duplex: 1000 ms "
                    "units, replies on commit or server VAD, playback acknowledgement, "
                    "barge-in); docs/native-mock.md")
        ->capture_default_str();
    sub->add_option("--profile", s->profile,
                    "Server profile: nemotron (80 ms units, 22050 Hz, speaks continuously, grants "
                    "output audio) or minicpmo (1000 ms units, 24000 Hz, silent while listening, "
                    "replies to questions, grants output audio and text)")
        ->capture_default_str();
    sub->add_option("--output-sample-rate", o.output_sample_rate,
                    "Hz of the output PCM16 (0: the profile's rate; another rate than the "
                    "profile's fails the oracle's output_audio_format check)")
        ->check(whole_number(0, 1'000'000))
        ->capture_default_str();
    sub->add_option("--burst-units", o.burst_units,
                    "Hold unit output and release it this many units at a time, back to back, "
                    "like a server that decodes in chunks")
        ->check(whole_number(1, 1'000'000))
        ->capture_default_str();
    sub->add_option("--question-every", o.question_every,
                    "minicpmo: unit k ends a question, and gets a reply (its own response, one "
                    "unit of audio), when k+1 is a multiple of N")
        ->check(whole_number(1, 1'000'000))
        ->capture_default_str();
    sub->add_option("--unit-latency-ms", s->unit_latency_ms,
                    "Capacity model L: a unit's output leaves L + P x (open sessions - 1) ms "
                    "after its last input byte arrived, never before the previous unit's")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--per-session-cost-ms", s->per_session_cost_ms,
                    "Capacity model P: extra latency per other open session, in ms")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--service-ms", s->service_ms,
                    "One compute worker shared by every session (and thread), first in first "
                    "out: each completed unit needs S ms of it and its output leaves at "
                    "max(ready, worker free) + S + the capacity model's latency; work queued "
                    "for sessions that left is still done (the backlog after an overload). "
                    "0: no worker")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--cold-start-ms", s->cold_start_ms,
                    "When the open sessions reach a new high-water mark (a batch size the "
                    "server has not seen), every unit completed in the next --cold-start-s "
                    "costs X ms more. 0: off")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--cold-start-s", s->cold_start_s,
                    "How long a cold start lasts after each new high-water mark, in seconds")
        ->check(number_in(0.001, 3600))
        ->capture_default_str();
    sub->add_option("--overload-penalty-ms", s->overload_penalty_ms,
                    "After an overload (a unit whose modelled lag exceeded one unit), every unit "
                    "ready within --recovery-s of the last overloaded unit costs X ms more, as a "
                    "server degraded by its overload. 0: off")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--recovery-s", s->recovery_s,
                    "How long the server stays degraded after its last overloaded unit, in s")
        ->check(number_in(0.001, 86400))
        ->capture_default_str();
    add_conversation_options(*sub, *s);
    sub->add_option(
           "--fault", s->fault,
           "Fault of the reference peer, on the session's first append unless said: "
           "server_error (fatal error, then session.closed server_error), delayed_fatal (the "
           "same, closed 0.6 s later), nonfatal_error (a nonfatal error per append), timeout "
           "(no answer again), malformed_json (the frame '{not valid json'), nonfinite (NaN in "
           "a frame), disconnect (close code 1011), linger (on session.close: session.closed, "
           "socket left open), close_without_update (session.update answered by "
           "session.closed); none")
        ->capture_default_str();
    sub->add_option("--fault-sessions", s->fault_sessions,
                    "Sessions the fault hits, by accept order from 0, e.g. 0,2,5-7 (default: "
                    "all); the others stay healthy");
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return server::run_native_mock(*s); }};
}

} // namespace pacer::cli

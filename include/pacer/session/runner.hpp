#pragma once
// Module `session` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns the
// duplex session coroutine, the N-session runner and its session contexts, the conversation of
// `--scenario` (scenario_plan.hpp), the open-loop driver, the start gate, live counters, LLM
// prompts. It may include core, schedule, trace, runtime, protocol, transport; it may not
// include metrics, server, telemetry, report, record, sweep, run, http, cli, console,
// capacity_search (the build fails if it does).
//
// Runs N duplex sessions at once: T single-threaded session contexts (one thread each, no
// strand, no lock), a loop monitor on each, and the trace writer on its own context thread.

#include <pacer/schedule/scenario.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/session/open_loop.hpp>
#include <pacer/session/voice_end.hpp>
#include <pacer/trace/writer.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::session {

/// Sessions one command may run or one level may hold (`-c`, `--sessions`, levels...).
inline constexpr std::uint64_t max_sessions = 1'000'000;

/// A session timeout not given on the command line is the input's length plus this.
inline constexpr std::chrono::seconds default_timeout_margin{60};

/// Session `i` of `sessions`: its start offset within `stagger` (see run_options::stagger_slots).
duration stagger_offset(std::size_t i, std::size_t sessions, duration stagger, std::size_t slots);

/// A multi-turn scenario as every session of a run (or of a serving level) plays it
/// (docs/scenarios.md): the scenario, and each turn's audio. `pacer run` and `pacer serve`
/// fill it once from `--scenario` and hand it to the runner, which gives each session its
/// own pause draws.
struct conversation_plan {
    /// Null: `single`, one turn of the input (today's session, unchanged).
    std::shared_ptr<const schedule::scenario> scenario;
    /// Each turn's audio, in order; a turn without `pcm` streams the session's own input.
    std::vector<session_turn> turns;
    /// How each turn's voice end is found (`--voice-threshold-db`, `--voice-hangover-ms`): the
    /// runner looks once per turn audio and per input, before any session starts.
    voice_settings voice;

    explicit operator bool() const { return scenario != nullptr; }
    /// The scenario's name (`multi-turn`, `barge-in`, a file's path), `single` without one.
    std::string_view name() const;
    /// Whether some turn barges in (`interrupt_after`).
    bool barge_in() const { return scenario && scenario->barge_in(); }
    /// The longest a session's turns take with an input of `input_bytes` (16 kHz PCM16): each
    /// turn on whole 80 ms slots, then its longest pause (the input's length without a
    /// scenario). A barge-in's turn may start later than its pause's end: the session's
    /// timeout has room for that (the default adds 60 s).
    duration length(std::size_t input_bytes) const;
    /// The 16 kHz bytes a session's `appends` appends span on the grid with an input of
    /// `input_bytes`: 80 ms each (pauses' silence packets, a turn's short last packet counted as
    /// its whole slot, since the next turn starts on the next one), the last one the last
    /// turn's last packet. How long a conversation's input was, for the
    /// evaluation of its files (`appends` is the session's own count: its pause draws and
    /// barge-ins decide it).
    std::size_t streamed_bytes(std::size_t input_bytes, std::size_t appends) const;
};

struct run_options {
    std::size_t sessions = 1;
    std::size_t threads = 1; ///< session contexts; sessions are dealt round-robin
    transport::ws_endpoint endpoint;
    protocol::pcm_input pcm;
    /// Several inputs: session i streams inputs[i mod n] (`pcm` is then ignored).
    std::vector<protocol::pcm_input> inputs;
    duration timeout = protocol::session_timeout;
    std::filesystem::path trace_root; ///< must exist; gets `session-NNN/`
    std::size_t channel_capacity = 1 << 16;
    /// What each session writes (`pacer run --trace`): `none` keeps the receipts in the writer's
    /// memory and reads them from there, so the summary's figures are the same in every mode.
    trace::mode trace = trace::mode::full;
    /// Blocks each session context once for this long, half-way through its sessions' input,
    /// to prove that the lateness detector fires (fault injection, never in a real run).
    std::optional<duration> inject_stall;
    /// Mixed into each session's event id seed; ids are unique across sessions, runs and
    /// processes whatever it is (see protocol::unique_id_seed).
    std::uint64_t seed = 0x9ac3e5;
    /// Session i's phase is `stagger_origin + i/N x stagger` (+ m x 80 ms): once negotiated, it
    /// starts streaming on the first instant of its phase that is not past, spreading the
    /// sessions' 80 ms grids over the period instead of aligning every send on one instant.
    /// Each grid is still anchored to its packet 0's actual send.
    duration stagger = protocol::packet_period;
    /// With K > 0, the stagger's offsets are rounded down to K slots (k/K x stagger), so the
    /// sessions of a slot share their phase, start on the same instants whenever each
    /// negotiated, and one timer wake-up serves them all; each session still awaits its own
    /// absolute deadlines. 0: every session its own phase.
    std::size_t stagger_slots = 0;
    /// The stagger's origin, shared by every session of the run (and by the workers of
    /// `--processes`, which pass their common start). Default: when `run_duplex` starts.
    std::optional<time_point> stagger_origin;
    /// SIGINT/SIGTERM end every session cleanly (close handshake, lines on disk) instead of
    /// killing the process; the outcome says `interrupted`.
    bool handle_signals = true;
    /// Open-loop arrivals: session i starts at its scheduled offset (instead of all at once),
    /// dispatched from context 0; `sessions` must equal `arrivals->size()`.
    std::optional<std::vector<std::chrono::nanoseconds>> arrivals;
    std::size_t max_concurrency = 0; ///< open loop: sessions in flight at most (0: no cap)
    cap_policy policy = cap_policy::queue;
    /// Open loop: the schedule's origin (arrival i is due at origin + offset i). Default: when
    /// the dispatcher starts. Workers and shards that share a start pass it, so that they all
    /// run one schedule from one instant.
    std::optional<time_point> open_loop_start;
    /// A serving level (docs/protocol.md §2.2): every session negotiates, then all start streaming
    /// from one common start this long after the last is ready; session i's grid is offset
    /// by stagger x i/N (S-W `--stagger-ms`). Nullopt: each session starts on its own.
    std::optional<duration> start_gate_lead;
    /// Lockstep pacing with units of this many input bytes (see session_options).
    std::optional<std::size_t> lockstep_unit_bytes;
    /// The server profile every session negotiates (see session_options); nullptr: default.
    const protocol::profile* profile = nullptr;
    /// The wire protocol and its settings (see session_options); nullopt: native.
    std::optional<protocol::realtime_protocol> realtime;
    protocol::realtime_turns turns = protocol::realtime_turns::server_vad;
    std::string model;
    /// The append grid's period and vllm-omni's settings (session_options' `chunk`, `omni`).
    duration chunk = protocol::packet_period;
    omni_settings omni;
    /// The input at the protocol's rate, resampled once for every session.
    protocol::pcm_input wire_pcm;
    /// With several `inputs`: each at the protocol's rate, in the same order (session i
    /// streams wire_inputs[i mod n]); empty: `wire_pcm` for every session.
    std::vector<protocol::pcm_input> wire_inputs;
    /// A multi-turn scenario (docs/scenarios.md; none: one turn of the input): its turns'
    /// audio and barge-ins; session i draws its pauses with `draw_pauses(*scenario, i)`, and
    /// its turns without audio of their own stream its input.
    conversation_plan conversation;
    /// Optional: live totals for a progress line (see live_counters); the sessions and the
    /// loop monitors update it while the run goes. Must outlive `run_duplex`.
    live_counters* live = nullptr;
    /// Optional (closed-loop runs): called on the session's own context thread as each
    /// session ends, once its files are on disk (trace_root/session-NNN/). Whatever it does
    /// there delays every other session of that context: `pacer record --postprocess inline`
    /// post-processes there on purpose, as a diagnostic.
    std::function<void(std::size_t index, const session_result&)> on_session_end;
};

struct run_outcome {
    std::vector<session_result> sessions;        ///< by session index
    std::vector<std::vector<double>> loop_lag_s; ///< per session context
    /// per session context: when its loop monitor started (CLOCK_MONOTONIC s), and its period
    std::vector<double> loop_lag_started_s;
    double loop_lag_period_s = 0.010;
    trace::writer_stats writer;
    std::vector<double> context_cpu_s; ///< CPU seconds of each session context's thread
    double writer_cpu_s = 0;           ///< CPU seconds of the writer thread
    double started_s = 0;
    double wall_s = 0;
    std::size_t stalls_injected = 0;
    bool interrupted = false;                  ///< a signal ended the run early
    std::optional<open_loop_result> open_loop; ///< open-loop runs: the dispatcher's records
    std::optional<double> common_start_s;      ///< start-gate runs: the level's common start
    std::size_t ready_sessions = 0;            ///< start-gate runs: sessions that negotiated
    /// Every append's deviation and send time, folded as sent (bounded: no receipt is kept).
    trace::receipt_statistics receipts;
    /// `--trace none` only: each session's receipts text, as the writer spooled it (the only
    /// source of samples.json's per-packet deviations); `take` one session at a time.
    std::shared_ptr<trace::receipt_spool> kept_receipts;
};

/// Runs the sessions and returns once every session has ended and its files are written.
run_outcome run_duplex(const run_options& options);

} // namespace pacer::session

#pragma once
// One duplex session (docs/protocol.md §1.5): admission with 503 retries, negotiation, appends
// paced on the absolute 80 ms grid while the server's events are received, end of input, drain,
// close. Failures are data: they become trace `error` lines and an incomplete result; only a
// broken invariant throws. A failing task (receive loop, or a send) records the session's one
// error and stops the other task at once; nothing is sent after it.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/omni_session.hpp>
#include <pacer/protocol/pcm_input.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/session/live_counters.hpp>
#include <pacer/session/start_gate.hpp>
#include <pacer/trace/receipt_stats.hpp>
#include <pacer/trace/receipts.hpp>
#include <pacer/trace/record.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pacer::protocol {
struct profile;
} // namespace pacer::protocol

namespace pacer::session {

/// Ends sessions early (SIGINT/SIGTERM). One per session context, used on its thread only:
/// each running session subscribes and unsubscribes when it ends (a finished session leaves
/// nothing behind here); `request()` stops every subscribed session.
class interrupt_source {
public:
    interrupt_source() = default;
    interrupt_source(const interrupt_source&) = delete;
    interrupt_source& operator=(const interrupt_source&) = delete;

    /// A session's registration: moving it transfers it, resetting or destroying it ends it.
    class subscription {
    public:
        subscription() = default;
        subscription(subscription&& o) noexcept
            : source_(std::exchange(o.source_, nullptr)), it_(o.it_) {}
        subscription& operator=(subscription&& o) noexcept {
            if (this != &o) {
                reset();
                source_ = std::exchange(o.source_, nullptr);
                it_ = o.it_;
            }
            return *this;
        }
        ~subscription() { reset(); }
        void reset() {
            if (source_)
                source_->stops_.erase(it_);
            source_ = nullptr;
        }

    private:
        friend class interrupt_source;
        subscription(interrupt_source* s, std::list<std::function<void()>>::iterator it)
            : source_(s), it_(it) {}
        interrupt_source* source_ = nullptr;
        std::list<std::function<void()>>::iterator it_;
    };

    /// Calls `stop` on `request()` until the subscription ends. `stop` must not unsubscribe.
    [[nodiscard]] subscription subscribe(std::function<void()> stop) {
        return {this, stops_.insert(stops_.end(), std::move(stop))};
    }

    /// Interrupt every session still running (stop streaming, close, write what was recorded).
    void request() {
        requested = true;
        for (auto& stop : stops_)
            stop();
    }
    /// Sessions subscribed now.
    std::size_t subscribers() const { return stops_.size(); }

    bool requested = false;

private:
    std::list<std::function<void()>> stops_;
};

/// One user turn of a multi-turn scenario (docs/scenarios.md), as a session streams it.
struct session_turn {
    /// 16 kHz mono PCM16 (non-empty whole samples), shared read-only, or silence (held
    /// nowhere). None: the session's own input (`session_options::pcm` and `wire_pcm`).
    protocol::pcm_input pcm;
    /// At the protocol's rate; none: the session resamples `pcm` itself.
    protocol::pcm_input wire_pcm;
    duration pause{}; ///< after the turn's audio (this session's draw)
    std::optional<duration> interrupt_after;
    /// Where the voice ends in the turn's audio, from its start (find_voice_end, found once
    /// before the run); none: no voice, or not looked for.
    std::optional<duration> voice_end;
};

/// What a vllm-omni session adds to its options (docs/protocols.md, "vllm-omni").
struct omni_settings {
    protocol::omni_turns turns = protocol::omni_turns::manual;
    /// The listener's playback acks: on, at least every `ack_every`; off (`--ack never`).
    bool ack = true;
    duration ack_every = protocol::omni_default_ack;
    duration heartbeat = protocol::omni_heartbeat_period;
    /// The assistant's voice, `data:audio/wav;base64,…`, shared read-only; null: none.
    std::shared_ptr<const std::string> ref_audio;
    std::string instructions;
};

struct session_options {
    std::uint32_t index = 0;
    transport::ws_endpoint endpoint;
    /// 16 kHz mono PCM16 LE input, shared read-only by every session (silence: held nowhere).
    protocol::pcm_input pcm;
    /// Bounds the whole session: admission, exchange and close (`timeout_s`).
    duration timeout = protocol::session_timeout;
    /// A common start gate for packet 0; without it the grid is anchored to packet 0's send.
    std::optional<time_point> origin;
    /// Without `origin`: the stagger. With `stagger_origin` (the run's one origin), packet 0
    /// goes at the first instant, once negotiated, on `stagger_origin + start_delay + m × 80 ms`
    /// (m ≥ 0), so that sessions of one offset start and wake on the same instants; without
    /// it, `start_delay` after `session.updated`.
    std::optional<time_point> stagger_origin;
    duration start_delay{};
    /// A serving level's common start (docs/protocol.md §2.2): the session reports to the gate once
    /// negotiated (or once it has ended without negotiating), and its grid's origin is the
    /// gate's common start + `start_offset`. Must outlive the session.
    start_gate* gate = nullptr;
    duration start_offset{};
    /// Lockstep pacing (docs/protocol.md §2.3, per-unit profiles): no sleeps; after the packet that
    /// completes unit k (of this many input bytes), wait for the k-th `sglang.unit.done`; EOS
    /// right after the last append. Nullopt: real-time pacing on the 80 ms grid.
    std::optional<std::size_t> lockstep_unit_bytes;
    /// The server profile, whose output modalities `session.update` asks for; nullptr: the
    /// default (VoiceChat) profile. Must outlive the session (the profiles are static).
    const protocol::profile* profile = nullptr;
    /// The wire protocol: nullopt is native; else openai-realtime or vllm-realtime
    /// (docs/protocols.md), with its turn handling, model and quiet period.
    std::optional<protocol::realtime_protocol> realtime;
    protocol::realtime_turns turns = protocol::realtime_turns::server_vad;
    std::string model;
    duration quiet = protocol::server_vad_quiet;
    /// The input at the protocol's rate (openai-realtime: 24 kHz), resampled once by the
    /// caller; none: the session resamples `pcm` itself.
    protocol::pcm_input wire_pcm;
    std::uint64_t seed = 0; ///< event ids (the runner gives each session a unique seed)
    int admission_retries = protocol::admission_retries;
    duration admission_backoff = protocol::admission_backoff;
    duration post_close = protocol::post_close;
    /// Called on the session's executor right after packet 0 has been handed to the socket.
    std::function<void()> on_streaming;
    /// Optional: lets the runner end the session early; must outlive the session.
    interrupt_source* interrupt = nullptr;
    /// Optional: the run's live totals (sessions, packets, late packets, errors), bumped with
    /// relaxed atomic adds as the session goes; must outlive the session.
    live_counters* live = nullptr;
    /// False (`pacer run --trace receipts|none`): no trace line is built or queued.
    bool trace_lines = true;
    /// Optional: the statistics every receipt is folded into as it is produced (the session
    /// context's: touched only on its thread); must outlive the session.
    trace::receipt_statistics* receipt_stats = nullptr;
    /// A multi-turn scenario: its turns (at least two) on the one grid, a turn without `pcm`
    /// streaming `pcm` (and `wire_pcm`), and whether the pauses carry silence packets; empty:
    /// one turn of `pcm` (today's session, unchanged).
    /// The session's result then has one `turns` entry each.
    std::vector<session_turn> conversation;
    bool pause_packets = true;
    /// The append grid's period: 80 ms, or vllm-omni's `--chunk-ms` (a multiple of 10 ms).
    duration chunk = protocol::packet_period;
    /// vllm-omni only (`realtime` = vllm_omni): its turns, its listener and its voice.
    omni_settings omni;
};

/// A socket write that takes longer than one packet period is a send stall: the server's
/// TCP window was full (it stopped reading, or reads slower than the client sends).
using schedule::send_stall_threshold;

/// What a session recorded and its receipts file belong to the trace (trace/receipts.hpp).
using trace::append_receipt;
using trace::read_receipts;
using trace::read_receipts_text;
using trace::receipt_json;
using trace::receipts_head;
using trace::receipts_tail;
using trace::session_result;

/// Session states alive in this process: a session's state (socket, timers, buffers) lives
/// exactly as long as its `run_duplex_session` call, so this is the number of sessions running
/// (diagnostics, and the test that finished sessions leave nothing behind).
std::size_t session_states_alive();

/// Runs one session on the calling coroutine's executor (a single-threaded context; no
/// strand, no lock). Hands trace lines to `traces` and returns once its files are written.
/// Cancellation: none per operation; the session's own deadline (`timeout`) and the
/// `interrupt` source stop it through its own `cancellation_signal` (no grace, nothing more
/// sent, the error line, the close and the files still follow; docs/architecture.md).
pacer::awaitable<session_result> run_duplex_session(session_options options,
                                                    trace::channel& traces);

} // namespace pacer::session

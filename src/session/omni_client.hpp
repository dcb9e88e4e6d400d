#pragma once
// Internal to src/session: the client of vLLM-Omni's full-duplex protocol (`--protocol
// vllm-omni`), one row of the protocol table (session_run.hpp). It owns what the session does
// that is the protocol's: its sans-io machine (protocol/omni_session.hpp, which holds the
// listener), its receive handling and its wire (omni_events.hpp). Not installed, not part of
// the public API.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/base64.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/omni_events.hpp>
#include <pacer/protocol/omni_session.hpp>
#include <pacer/schedule/turn_grid.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/session/error.hpp>

#include "native_client.hpp" // pcm_duration
#include "session_setup.hpp"
#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::session::detail {

struct omni_client {
    using machine = protocol::omni_session;
    using action = protocol::omni_action;

    static machine make_machine(const session_options& o) { return omni_machine(o); }
    /// vllm-omni takes pacer's 16 kHz input as it is.
    static protocol::pcm_input wire_input(const session_options&, const protocol::pcm_input&) {
        return {};
    }

    /// A frame the session has read and scanned: its trace line, its event for the machine
    /// (and the listener in it), and what the result and the turn timeline take from it.
    template <class S>
    static awaitable<void> on_frame(S& c, const protocol::event_scanner& scanner,
                                    std::string_view frame, time_point now) {
        using k = protocol::omni_event_kind;
        if (c.trace.lines())
            co_await c.trace.emit(trace::direction::receive, to_seconds(now), frame);
        const auto e = protocol::read_omni_event(scanner.type(), frame, scanner.response_id(),
                                                 scanner.audio_decoded_size());
        c.machine.on_event(e, now);
        if (e.kind == k::session_updated && !c.result.updated_s)
            c.result.updated_s = to_seconds(now);
        if (c.timeline)
            note_turn_event(c, e, now);
        // The three ack errors are counted and tolerated (the machine); any other error is
        // the server's refusal (resource_exhausted: over capacity) and ends the session.
        if (e.kind == k::error && !protocol::is_playback_ack_error(e.code))
            co_await c.record_error(make_failure(session_errc::server_error, frame));
    }

    template <class S>
    static void note_turn_event(S& c, const protocol::omni_event& e, time_point now) {
        using k = protocol::omni_event_kind;
        if (e.kind == k::speech_stopped)
            c.timeline->speech_stopped(now);
        if ((e.kind == k::response_created || e.kind == k::response_done) && !e.response_id.empty())
            c.timeline->response_seen(e.response_id, now);
        if (e.kind == k::audio_delta)
            c.timeline->audio(now, e.audio, e.response_id);
        if (e.kind == k::output_cleared)
            c.timeline->output_cleared(e.response_id, now);
    }

    static void settle(const machine& m, session_result& r) {
        const auto seconds = [](std::optional<time_point> t) {
            return t ? std::optional<double>(to_seconds(*t)) : std::nullopt;
        };
        r.utterance_end_s = seconds(m.input_end());
        r.first_audio_s = seconds(m.first_audio_at());
        r.first_transcript_s = seconds(m.first_transcript_at());
        const auto& n = m.counts();
        auto& f = r.omni.emplace();
        f.responses = n.responses;
        f.completed = n.completed;
        f.cancelled = n.cancelled;
        f.listens = n.listens;
        f.commits = n.commits;
        f.deferred = n.deferred;
        f.unanswered = m.unanswered();
        f.playback_acks = n.playback_acks;
        f.acknowledged = n.acknowledged;
        f.ack_errors = n.ack_errors;
        f.event_acks = n.event_acks;
        f.heartbeats = n.heartbeats;
        f.cleared = n.cleared;
        f.audio_received_ms = n.audio_received_ms;
        f.server_audio_ms = n.server_audio_ms;
        f.dropped_ms = n.dropped_ms;
        f.ack_round_trip_s = n.ack_round_trip_s;
        f.stall = m.stall();
    }

    /// Append k carries the input's k-th chunk (`session_options::chunk`, 200 ms by default):
    /// 16 kHz PCM16 as pacer holds it, the last chunk whatever remains.
    struct wire {
        const protocol::pcm_input& pcm;
        const std::vector<session_turn>& turns; // multi-turn: each turn's audio (else `pcm`)
        std::size_t size;                       // a chunk's bytes
        std::vector<std::uint8_t> silence;      // one silent chunk
        std::string audio_b64;

        wire(const session_options& o, const machine&)
            : pcm(o.pcm), turns(o.conversation), size(schedule::turn_grid::chunk_bytes(o.chunk)),
              silence(size, 0) {}

        // Chunk k of `in` (silence is held nowhere: it is read from the one silent chunk).
        std::span<const std::uint8_t> chunk(const protocol::pcm_input& in, std::size_t k) const {
            const std::size_t begin = std::min(k * size, in.size());
            const std::size_t n = std::min(size, in.size() - begin);
            if (in.is_silence())
                return std::span<const std::uint8_t>(silence).first(n);
            return in.bytes(begin, n);
        }

        void append(std::string& frame, std::string_view event_id, const action& a) {
            std::span<const std::uint8_t> bytes;
            if (a.silence)
                bytes = silence;
            else if (turns.empty())
                bytes = chunk(pcm, a.seq);
            else
                bytes = chunk(turns[a.turn].pcm, a.packet);
            audio_b64.clear();
            base64_append(audio_b64, bytes.data(), bytes.size());
            protocol::omni_append(frame, event_id, audio_b64,
                                  static_cast<std::int64_t>(bytes.size() / 32));
        }
    };

    static bool unscheduled(const machine& m, std::size_t seq) {
        return seq == 0 && !m.given_origin();
    }
    static time_point origin(const machine& m) { return *m.origin(); }

    /// Every other send: false when it failed (the session stops).
    template <class S>
    static awaitable<bool> control(S& c, const action& a) {
        using kind = action::kind;
        const auto& o = c.options;
        switch (a.what) {
        case kind::send_update: {
            const protocol::omni_update u{o.model, o.omni.turns,
                                          o.omni.ref_audio ? std::string_view(*o.omni.ref_audio)
                                                           : std::string_view(),
                                          o.omni.instructions};
            auto update = protocol::omni_session_update(c.ids.next(), u);
            c.result.update_sent_s = to_seconds(S::clock::now());
            co_return co_await c.send(std::move(update));
        }
        case kind::send_commit:
            if (c.timeline && c.commits < o.conversation.size())
                c.timeline->committed(c.commits++, S::clock::now());
            co_return co_await c.send(protocol::omni_commit(c.ids.next()));
        case kind::send_interrupt:
            co_return co_await c.send(protocol::omni_output_clear(c.ids.next()));
        case kind::send_event_ack:
            co_return co_await c.send(protocol::omni_event_ack(a.event_seq));
        case kind::send_heartbeat:
            co_return co_await c.send(protocol::omni_heartbeat(c.ids.next()));
        case kind::send_playback_ack: {
            auto ack = protocol::omni_playback_ack(c.ids.next(), a.response_id, a.played_ms);
            c.machine.playback_ack_sent(S::clock::now()); // the round trip starts here
            co_return co_await c.send(std::move(ack));
        }
        case kind::send_close:
            co_return co_await c.send(protocol::omni_close(c.ids.next()));
        case kind::close:
            c.client_closed = true;
            co_await c.ws->close(protocol::close_timeout);
            co_return true;
        default: // the driver's own steps
            co_return true;
        }
    }
};

} // namespace pacer::session::detail

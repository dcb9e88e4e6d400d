#pragma once
// Internal to src/session: the native protocol's client, one row of the protocol table
// (session_run.hpp). It owns what the session does that is the protocol's: its sans-io machine
// (protocol/native_session.hpp), its receive handling (a frame's trace line and its event for
// the machine) and its wire (the append frames, the other messages). The session coroutine
// does the rest, the same for every protocol. Not installed, not part of the public API.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/base64.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/native_session.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/session/duplex_session.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "session_setup.hpp"
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::session::detail {

/// The duration of `bytes` of PCM16 mono at `rate` Hz.
inline duration pcm_duration(std::size_t bytes, std::size_t rate) {
    return std::chrono::duration_cast<duration>(std::chrono::nanoseconds(
        static_cast<std::int64_t>(bytes / 2) * 1'000'000'000LL / static_cast<std::int64_t>(rate)));
}

/// Whether a frame fits on one trace line as it arrived.
inline bool one_line(std::string_view frame) {
    return std::memchr(frame.data(), '\n', frame.size()) == nullptr &&
           std::memchr(frame.data(), '\r', frame.size()) == nullptr;
}

/// A received frame's trace line: the frame as it arrived, unless it spans lines
/// (pretty-printed JSON would break the one-object-per-line trace): then its compact form.
inline std::string trace_line(std::string_view frame) {
    return one_line(frame) ? std::string(frame) : boost::json::serialize(boost::json::parse(frame));
}

struct native_client {
    using machine = protocol::native_session;
    using action = protocol::driver_action;

    static machine make_machine(const session_options& o) { return machine(machine_options(o)); }
    /// The native protocol sends pacer's 16 kHz input itself: no input at another rate.
    static protocol::pcm_input wire_input(const session_options&, const protocol::pcm_input&) {
        return {};
    }

    /// A frame the session has read and scanned (`now_s` is `now` in seconds): its trace line,
    /// its event for the machine, and what the result and the turn timeline take from it.
    template <class S>
    static awaitable<void> on_frame(S& c, const protocol::event_scanner& scanner,
                                    std::string_view frame, time_point now) {
        auto& r = c.result;
        const double now_s = to_seconds(now);
        const auto kind = protocol::classify_server_event(scanner.type());
        if (c.trace.lines()) {
            if (one_line(frame))
                co_await c.trace.emit(trace::direction::receive, now_s, frame);
            else
                co_await c.trace.emit(trace::direction::receive, now_s,
                                      boost::json::serialize(boost::json::parse(frame)));
        }
        using protocol::server_event;
        c.machine.on_event(kind, kind == server_event::error && scanner.fatal());
        if (kind == server_event::session_updated)
            r.updated_s = now_s;
        else if (kind == server_event::output_audio_delta && !r.first_audio_s)
            r.first_audio_s = now_s;
        if (c.timeline && kind == server_event::output_audio_delta) {
            c.machine.on_assistant_audio(now);
            const auto& profile =
                c.options.profile ? *c.options.profile : protocol::default_profile();
            c.timeline->audio(now,
                              pcm_duration(scanner.audio_decoded_size(),
                                           static_cast<std::size_t>(profile.output_sample_rate)));
        }
    }

    /// What the result takes from the machine at the end (the native machine: nothing more).
    static void settle(const machine&, session_result&) {}

    /// What the native protocol puts on the wire: its append frames (packet k of the 16 kHz
    /// input) and its other messages. The driver (session_run.hpp) does the rest.
    struct wire {
        const protocol::pcm_input& pcm;
        const std::vector<session_turn>& turns; // multi-turn: each turn's audio (else `pcm`)
        std::string audio_b64;
        std::span<const std::uint8_t> previous;
        std::vector<std::uint8_t> padded;

        wire(const session_options& o, const machine&) : pcm(o.pcm), turns(o.conversation) {}

        void append(std::string& frame, std::string_view event_id, const action& a) {
            static const std::vector<std::uint8_t> silence(protocol::packet_bytes, 0);
            const std::size_t seq = a.seq;
            const std::size_t k = a.silence ? 0 : a.packet;
            // Encode the packet, unless it repeats the previous one byte for byte (silence):
            // then its base64 is the same too.
            std::span<const std::uint8_t> packet =
                a.silence ? std::span<const std::uint8_t>(silence)
                : turns.empty()
                    ? pcm.bytes(k * protocol::packet_bytes, schedule::packet_size(pcm.size(), k))
                    : turns[a.turn].pcm.bytes(k * protocol::packet_bytes,
                                              schedule::packet_size(turns[a.turn].pcm.size(), k));
            if (!a.silence && a.turn + 1 < turns.size() && packet.size() < protocol::packet_bytes) {
                // A turn's short last packet, padded with silence: the native protocol allows a
                // short packet only at the input's end (docs/protocol.md §1.3). Encoded afresh.
                padded.assign(protocol::packet_bytes, 0);
                std::memcpy(padded.data(), packet.data(), packet.size());
                packet = padded;
                previous = {};
            }
            if (seq == 0 || packet.size() != previous.size() ||
                std::memcmp(packet.data(), previous.data(), packet.size()) != 0) {
                audio_b64.clear();
                base64_append(audio_b64, packet.data(), packet.size());
            }
            previous = packet;
            protocol::append_event_encoded(frame, event_id, audio_b64, seq);
        }
    };

    /// Lockstep never waits for the grid: every packet is "scheduled" at its own send, as is an
    /// unanchored packet 0.
    static bool unscheduled(const machine& m, std::size_t seq) {
        return m.lockstep() || (seq == 0 && !m.given_origin());
    }
    static time_point origin(const machine& m) { return m.origin(); }

    /// Every other send: false when it failed (the session stops).
    template <class S>
    static awaitable<bool> control(S& c, const action& a) {
        using kind = action::kind;
        switch (a.what) {
        case kind::send_update: {
            const auto& profile =
                c.options.profile ? *c.options.profile : protocol::default_profile();
            c.result.update_sent_s = to_seconds(S::clock::now());
            co_return co_await c.send(protocol::session_update(c.ids.next(), profile));
        }
        case kind::send_end:
            co_return co_await c.send(protocol::input_audio_end(c.ids.next()));
        case kind::send_close:
            co_return co_await c.send(protocol::session_close(c.ids.next()));
        default: // the driver's own steps
            co_return true;
        }
    }
};

} // namespace pacer::session::detail

#pragma once
// Internal to src/session: the client of openai-realtime and vllm-realtime, rows of the protocol
// table (session_run.hpp). It owns what the session does that is the protocol's: its sans-io
// machine (protocol/realtime_session.hpp), its receive handling and its wire. Where the two
// protocols differ, the machine or the protocol module decides (`realtime_session_update`,
// `realtime_commit`, `wire_sample_rate`). Not installed, not part of the public API.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/base64.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/session/error.hpp>

#include <boost/json/parse.hpp>

#include "native_client.hpp" // pcm_duration
#include "session_setup.hpp"
#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::session::detail {

struct realtime_client {
    using machine = protocol::realtime_session;
    using action = protocol::realtime_action;

    static machine make_machine(const session_options& o) { return realtime_machine(o); }
    /// The input at the protocol's rate (openai-realtime: 24 kHz; vllm-realtime: as is).
    static protocol::pcm_input wire_input(const session_options& o,
                                          const protocol::pcm_input& pcm) {
        return protocol::at_wire_rate(pcm, *o.realtime);
    }

    /// A frame the session has read and scanned: its trace line (as it arrived), its event
    /// for the machine, and what the result and the turn timeline take from it.
    template <class S>
    static awaitable<void> on_frame(S& c, const protocol::event_scanner& scanner,
                                    std::string_view frame, time_point now) {
        const double now_s = to_seconds(now);
        if (c.trace.lines())
            co_await c.trace.emit(trace::direction::receive, now_s, frame);
        auto e = protocol::classify_realtime_event(scanner.type());
        // A barge-in's cancel that crossed its response's done on the wire: the server
        // had nothing left to cancel, which is no failure of the session.
        if (e == protocol::realtime_event::error && c.cancel_sent &&
            frame.find("response_cancel_not_active") != std::string_view::npos)
            e = protocol::realtime_event::other;
        c.machine.on_event(e, now);
        if (c.timeline)
            note_turn_event(c, e, scanner, frame, now);
        if (e == protocol::realtime_event::session_updated && !c.result.updated_s)
            c.result.updated_s = now_s;
        if (e == protocol::realtime_event::error)
            co_await c.record_error(make_failure(session_errc::server_error, frame));
    }

    /// The id of the response a `response.created` or `response.done` carries (`response.id`),
    /// else empty: a DOM parse, a few times a turn, never on the hot path.
    static std::string response_of(std::string_view frame) {
        boost::system::error_code ec;
        const auto doc = boost::json::parse(frame, ec);
        if (ec || !doc.is_object())
            return {};
        const auto* r = doc.get_object().if_contains("response");
        if (r == nullptr || !r->is_object())
            return {};
        const auto* id = r->get_object().if_contains("id");
        return id && id->is_string() ? std::string(id->get_string()) : std::string();
    }

    /// Multi-turn: a server event as the turn timeline needs it (a reply is tied to its turn by
    /// its response's id, turn_timeline.hpp). The assistant's item id (for a barge-in's
    /// truncate) comes from the first audio delta after a turn's end: a DOM parse once a turn,
    /// never on the hot path.
    template <class S>
    static void note_turn_event(S& c, protocol::realtime_event e,
                                const protocol::event_scanner& scanner, std::string_view frame,
                                time_point now) {
        if (e == protocol::realtime_event::speech_stopped)
            c.timeline->speech_stopped(now);
        if (e == protocol::realtime_event::response_done || scanner.type() == "response.created")
            if (const auto id = response_of(frame); !id.empty())
                c.timeline->response_seen(id, now);
        if (e != protocol::realtime_event::audio_delta)
            return;
        c.timeline->audio(now, pcm_duration(scanner.audio_decoded_size(), c.machine.sample_rate()),
                          scanner.response_id());
        if (c.need_item) {
            boost::system::error_code ec;
            const auto doc = boost::json::parse(frame, ec);
            if (!ec && doc.is_object())
                if (const auto* id = doc.get_object().if_contains("item_id");
                    id && id->is_string()) {
                    c.assistant_item = std::string(id->get_string());
                    c.need_item = false;
                }
        }
    }

    /// What the result takes from the machine at the end: the utterance's and the replies'
    /// times.
    static void settle(const machine& m, session_result& r) {
        const auto seconds = [](std::optional<time_point> t) {
            return t ? std::optional<double>(to_seconds(*t)) : std::nullopt;
        };
        r.utterance_end_s = seconds(m.utterance_end());
        r.first_audio_s = seconds(m.first_audio_at());
        r.first_transcript_s = seconds(m.first_transcript_at());
        r.final_transcript_s = seconds(m.final_transcript_at());
    }

    /// Packet k carries the wire input's k-th 80 ms (resampled to the protocol's rate).
    struct wire {
        const protocol::pcm_input& pcm;
        std::size_t rate;
        std::size_t packets;
        const std::vector<session_turn>& turns; // multi-turn: each turn's audio (else `pcm`)
        std::vector<std::uint8_t> silence;      // one silent packet at `rate`
        std::string audio_b64;

        wire(const session_options& o, const machine& m)
            : pcm(o.wire_pcm), rate(m.sample_rate()), packets(schedule::packet_count(o.pcm.size())),
              turns(o.conversation), silence(protocol::packet_bytes_at(rate), 0) {}

        void append(std::string& frame, std::string_view event_id, const action& a) {
            // Packet k of `packets` at `rate`: rate x 0.16 bytes, the last whatever remains.
            const std::size_t size = silence.size();
            std::span<const std::uint8_t> packet;
            if (a.silence)
                packet = silence;
            else if (turns.empty())
                packet = pcm.bytes(a.seq * size, a.seq + 1 >= packets ? pcm.size() : size);
            else
                packet = turns[a.turn].wire_pcm.rate_packet(
                    rate, a.packet, schedule::packet_count(turns[a.turn].pcm.size()));
            // (A turn's short last packet goes as it is: the next turn starts on the next slot.)
            audio_b64.clear();
            base64_append(audio_b64, packet.data(), packet.size());
            protocol::realtime_append(frame, event_id, audio_b64);
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
        const auto p = c.machine.protocol();
        switch (a.what) {
        case kind::send_update: {
            auto update = protocol::realtime_session_update(c.ids.next(), p, c.options.turns,
                                                            c.options.model);
            c.result.update_sent_s = to_seconds(S::clock::now());
            co_return co_await c.send(std::move(update));
        }
        case kind::send_start:
            co_return co_await c.send(protocol::realtime_commit(c.ids.next(), p, false));
        case kind::send_commit:
            if (c.timeline && c.commits < c.options.conversation.size())
                c.timeline->committed(c.commits++, S::clock::now());
            co_return co_await c.send(protocol::realtime_commit(c.ids.next(), p, true));
        case kind::turn_end: // the assistant's item the next barge-in truncates comes next
            c.need_item = true;
            co_return true;
        case kind::send_interrupt:
            co_return co_await interrupt(c, a);
        case kind::send_response:
            co_return co_await c.send(protocol::response_create(c.ids.next()));
        case kind::close:
            c.client_closed = true;
            co_await c.ws->close(protocol::close_timeout);
            co_return true;
        default: // the driver's own steps
            co_return true;
        }
    }

    // The user barged in: with manual turns the client cancels the response (server VAD
    // cancels it itself), and the assistant's item is cut where the player was. (Only while a
    // response is active: the API answers any other cancel with an error. One that crosses the
    // response's done is forgiven, see `on_frame`.)
    template <class S>
    static awaitable<bool> interrupt(S& c, const action& a) {
        if (c.options.turns == protocol::realtime_turns::manual && c.machine.response_active()) {
            c.cancel_sent = true;
            if (!co_await c.send(protocol::response_cancel(c.ids.next())))
                co_return false;
        }
        if (c.assistant_item.empty() || !c.timeline)
            co_return true;
        const auto played = c.timeline->played_s(a.turn - 1);
        const auto ms = static_cast<std::uint64_t>(std::llround(played * 1000));
        // (A local first: GCC 12 mishandles temporaries inside co_await expressions.)
        auto truncate = protocol::item_truncate(c.ids.next(), c.assistant_item, ms);
        co_return co_await c.send(std::move(truncate));
    }
};

} // namespace pacer::session::detail

#include <pacer/core/awaitable.hpp>
#include <pacer/core/base64.hpp>
#include <pacer/core/float_repr.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/native_session.hpp>
#include <pacer/protocol/opening.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/session/error.hpp>
#include <pacer/session/turn_timeline.hpp>
#include <pacer/trace/sink.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include "session_state.hpp"
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace pacer::session {

namespace asio = boost::asio;
using protocol::server_event;
using task = protocol::task_completion::task;

namespace {

using detail::session_state;
using detail::states_alive;

// The duration of `bytes` of PCM16 mono at `rate` Hz.
duration pcm_duration(std::size_t bytes, std::size_t rate) {
    return std::chrono::duration_cast<duration>(std::chrono::nanoseconds(
        static_cast<std::int64_t>(bytes / 2) * 1'000'000'000LL / static_cast<std::int64_t>(rate)));
}

// The id of the response a `response.created` or `response.done` carries (`response.id`),
// else empty: a DOM parse, a few times a turn, never on the hot path.
std::string response_of(std::string_view frame) {
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

// Multi-turn, openai-realtime and vllm-realtime: a server event as the turn timeline needs it
// (a reply is tied to its turn by its response's id, turn_timeline.hpp). The assistant's item
// id (for a barge-in's truncate) comes from the first audio delta after a turn's end: a DOM
// parse once a turn, never on the hot path.
void note_turn_event(session_state& c, protocol::realtime_event e,
                     const protocol::event_scanner& scanner, std::string_view frame,
                     time_point now) {
    if (e == protocol::realtime_event::speech_stopped)
        c.timeline->speech_stopped(now);
    if (e == protocol::realtime_event::response_done || scanner.type() == "response.created")
        if (const auto id = response_of(frame); !id.empty())
            c.timeline->response_seen(id, now);
    if (e != protocol::realtime_event::audio_delta)
        return;
    const std::size_t rate = c.rt->protocol() == protocol::realtime_protocol::openai
                                 ? protocol::openai_sample_rate
                                 : protocol::input_sample_rate;
    c.timeline->audio(now, pcm_duration(scanner.audio_decoded_size(), rate), scanner.response_id());
    if (c.need_item) {
        boost::system::error_code ec;
        const auto doc = boost::json::parse(frame, ec);
        if (!ec && doc.is_object())
            if (const auto* id = doc.get_object().if_contains("item_id"); id && id->is_string()) {
                c.assistant_item = std::string(id->get_string());
                c.need_item = false;
            }
    }
}

// Whether a frame fits on one trace line as it arrived.
bool one_line(std::string_view frame) {
    return std::memchr(frame.data(), '\n', frame.size()) == nullptr &&
           std::memchr(frame.data(), '\r', frame.size()) == nullptr;
}

// The receive loop: reads frames, traces them and feeds their kinds to the machine. Returns
// when the connection ends, a frame is refused, or the session stops.
awaitable<void> receive_loop(session_state& c) {
    protocol::event_scanner scanner;
    auto& r = c.result;
    // Never a read once the session is stopping: a stop from outside cancels the read in flight
    // once (the exchange forwards only the first cancellation to its tasks), so a read that
    // completed with a frame just as the stop came, followed by another read, would wait for a
    // frame that never comes, past the deadline and any later interrupt.
    while (!c.stopping) {
        const auto ec = co_await c.ws->read();
        const auto now = clock::now();
        const std::string_view frame = c.ws->message(); // valid until the next read
        if (ec) {
            if (c.stopping || c.client_closed)
                co_return; // stopped (the other task, the deadline, our close): nothing to report
            if (c.machine.has_seen(server_event::session_closed))
                co_return; // the server closed after session.closed, as it should
            auto f = c.ws->failure_of(ec);
            if (f.code == transport::transport_errc::closed_normally)
                f = make_failure(session_errc::closed_before_session_closed);
            co_await c.fail(std::move(f));
            co_return;
        }
        ++r.frames_received;
        r.bytes_received += frame.size();
        if (c.ws->last_was_binary()) {
            // The reference decodes a binary frame as text; the protocol forbids it, so pacer
            // refuses it (the reason is pacer's own words).
            co_await c.fail(malformed_frame(
                frame, "ValueError: binary frame (the protocol's frames are text)"));
            co_return;
        }
        if (const char* reason = scanner.scan(frame)) {
            co_await c.fail(malformed_frame(
                frame, protocol::reference_decode_error(frame, reason, scanner.error_offset())));
            co_return;
        }
        const double now_s = to_seconds(now);
        // While negotiating, an event of another protocol ends the session at once (the
        // machine decides; the frame is parsed whole only then, once or twice a session).
        const bool opening = c.rt ? c.rt->checks_opening() : c.machine.checks_opening();
        if (opening) {
            const auto shape = protocol::describe_opening(frame);
            auto wrong = c.rt ? c.rt->check_opening(scanner.type(), shape)
                              : c.machine.check_opening(scanner.type(), shape);
            if (wrong) {
                if (c.trace.lines()) {
                    // Traced as the other receives are (below). (Built in a local first: GCC 12
                    // destroys temporaries of a conditional inside a co_await expression twice.)
                    std::string line = one_line(frame)
                                           ? std::string(frame)
                                           : boost::json::serialize(boost::json::parse(frame));
                    co_await c.trace.emit(trace::direction::receive, now_s, line);
                }
                co_await c.fail(make_failure(session_errc::wrong_protocol, *wrong));
                co_return;
            }
        }
        if (c.rt) {
            if (c.trace.lines())
                co_await c.trace.emit(trace::direction::receive, now_s, frame);
            auto e = protocol::classify_realtime_event(scanner.type());
            // A barge-in's cancel that crossed its response's done on the wire: the server
            // had nothing left to cancel, which is no failure of the session.
            if (e == protocol::realtime_event::error && c.cancel_sent &&
                frame.find("response_cancel_not_active") != std::string_view::npos)
                e = protocol::realtime_event::other;
            c.rt->on_event(e, now);
            if (c.timeline)
                note_turn_event(c, e, scanner, frame, now);
            if (e == protocol::realtime_event::session_updated && !r.updated_s)
                r.updated_s = now_s;
            if (e == protocol::realtime_event::error)
                co_await c.record_error(make_failure(session_errc::server_error, frame));
            c.notify();
            continue;
        }
        const auto kind = protocol::classify_server_event(scanner.type());
        // The frame is traced as it arrived, unless it spans lines (pretty-printed JSON would
        // break the one-object-per-line trace): then in its compact form.
        if (c.trace.lines()) {
            if (one_line(frame))
                co_await c.trace.emit(trace::direction::receive, now_s, frame);
            else
                co_await c.trace.emit(trace::direction::receive, now_s,
                                      boost::json::serialize(boost::json::parse(frame)));
        }
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
        c.notify();
    }
}

// Reports the session to the level's start gate, once: ready sessions wait for the common
// start, which becomes their grid's origin (+ their stagger offset).
void report_to_gate(const std::shared_ptr<session_state>& ctx, bool ready) {
    auto& c = *ctx;
    if (!c.options.gate || c.gate_reported)
        return;
    c.gate_reported = true;
    c.result.ready = ready;
    if (!ready) {
        c.options.gate->arrive(c.signal.get_executor(), {});
        return;
    }
    c.options.gate->arrive(c.signal.get_executor(),
                           [w = std::weak_ptr<session_state>(ctx)](time_point start) {
                               if (auto ctx = w.lock()) {
                                   ctx->machine.gate_started(start);
                                   if (ctx->rt)
                                       ctx->rt->gate_started(start);
                                   ctx->notify();
                               }
                           });
}

// What the native protocol puts on the wire: its append frames (packet k of the 16 kHz input)
// and its other messages. The driver below does the rest.
struct native_wire {
    const protocol::pcm_input& pcm;
    const std::vector<session_turn>& turns; // multi-turn: each turn's audio (else `pcm`)
    std::string audio_b64;
    std::span<const std::uint8_t> previous;
    std::vector<std::uint8_t> padded;

    void append(std::string& frame, std::string_view event_id, const protocol::driver_action& a) {
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
    // Lockstep never waits for the grid: every packet is "scheduled" at its own send, as is an
    // unanchored packet 0.
    static bool unscheduled(const protocol::native_session& m, std::size_t seq) {
        return m.lockstep() || (seq == 0 && !m.given_origin());
    }
    static time_point origin(const protocol::native_session& m) { return m.origin(); }

    // Every other send: false when it failed (the session stops).
    static awaitable<bool> control(session_state& c, const protocol::driver_action& a) {
        using kind = protocol::driver_action::kind;
        switch (a.what) {
        case kind::send_update: {
            const auto& profile =
                c.options.profile ? *c.options.profile : protocol::default_profile();
            c.result.update_sent_s = to_seconds(clock::now());
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

// openai-realtime and vllm-realtime: packet k carries the wire input's k-th 80 ms (resampled to
// the protocol's rate).
struct realtime_wire {
    const protocol::pcm_input& pcm;
    std::size_t rate;
    std::size_t packets;
    const std::vector<session_turn>& turns; // multi-turn: each turn's audio (else `pcm`)
    std::vector<std::uint8_t> silence;      // one silent packet at `rate`
    std::string audio_b64;

    void append(std::string& frame, std::string_view event_id, const protocol::realtime_action& a) {
        // Packet k of `packets` at `rate`: rate x 0.16 bytes, the last whatever remains.
        const std::size_t size = rate * 2 * 80 / 1000;
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
    static bool unscheduled(const protocol::realtime_session& m, std::size_t seq) {
        return seq == 0 && !m.given_origin();
    }
    static time_point origin(const protocol::realtime_session& m) { return *m.origin(); }

    static awaitable<bool> control(session_state& c, const protocol::realtime_action& a) {
        using kind = protocol::realtime_action::kind;
        const auto p = c.rt->protocol();
        switch (a.what) {
        case kind::send_update: {
            auto update = p == protocol::realtime_protocol::openai
                              ? protocol::openai_session_update(c.ids.next(), c.options.turns)
                              : protocol::vllm_session_update(c.ids.next(), c.options.model);
            c.result.update_sent_s = to_seconds(clock::now());
            co_return co_await c.send(std::move(update));
        }
        case kind::send_start:
            co_return co_await c.send(protocol::realtime_commit(c.ids.next(), p, false));
        case kind::send_commit:
            if (c.timeline && c.commits < c.options.conversation.size())
                c.timeline->committed(c.commits++, clock::now());
            co_return co_await c.send(protocol::realtime_commit(c.ids.next(), p, true));
        case kind::send_interrupt: {
            // The user barged in: with manual turns the client cancels the response (server
            // VAD cancels it itself), and the assistant's item is cut where the player was.
            // (Only while a response is active: the API answers any other cancel with an
            // error. One that crosses the response's done is forgiven, see the receiver.)
            if (c.options.turns == protocol::realtime_turns::manual && c.rt->response_active()) {
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
};

// The driver, for either machine: does what `m.next` says until it is done or the session
// stops. Only bytes and waits here; every protocol decision is the machine's, and what goes on
// the wire is `Wire`'s. The append step (the hot path) is inline: no call, no allocation but
// the frame's and the send's.
template <class Machine, class Wire>
awaitable<void> drive(std::shared_ptr<session_state> ctx, Machine& m, Wire wire) {
    auto& c = *ctx;
    auto& r = c.result;
    std::string frame;
    std::string receipt_text; // reused: a packet's receipt costs no allocation once it has grown
    while (!c.stopping) {
        const auto a = m.next(clock::now());
        using kind = decltype(a.what);
        switch (a.what) {
        case kind::done:
            co_return;
        case kind::wait_event: // an event wakes it; `at`, when set, bounds the wait
            co_await session_state::wait(c.signal, a.at == time_point{} ? time_point::max() : a.at);
            break;
        case kind::wait_until: // absolute: a late wake never shifts the next deadline
            co_await session_state::wait(c.pace, a.at);
            break;
        case kind::join_gate:
            report_to_gate(ctx, true);
            break;
        case kind::turn_end: // multi-turn: the turn's speech has ended (its reply comes next)
            if (c.timeline)
                c.timeline->turn_ended(a.turn, a.at);
            c.need_item = true;
            if (!co_await Wire::control(c, a))
                co_return;
            break;
        case kind::send_append: {
            // Builds and sends append `seq` (its grid deadline `a.at`), streams its receipt to
            // the writer and bumps the live totals.
            append_receipt receipt;
            const auto event_id = c.ids.next();
            receipt.event_id = event_id.chars;
            receipt.seq = a.seq;
            wire.append(frame, event_id.view(), a);
            const auto start = clock::now();
            m.append_sent(start);
            if (c.timeline && !a.silence) {
                if (a.packet == 0)
                    c.timeline->turn_started(a.turn, start, a.barge_in);
                c.timeline->packet_sent(a.turn, a.packet, a.at, start);
            }
            receipt.scheduled_s = to_seconds(Wire::unscheduled(m, a.seq) ? start : a.at);
            if (a.seq == 0)
                r.session_start_s = to_seconds(Wire::origin(m));
            const bool ok = co_await c.send(frame, &receipt);
            trace::fold_receipt(r, receipt, c.options.receipt_stats, protocol::late_threshold_s);
            // The receipt goes to the writer now (`receipt` copies it); the session keeps none
            // (flat memory). (Built in a local first: GCC 12 destroys temporaries of a
            // conditional inside a co_await expression twice.)
            if (r.appends_sent == 0)
                receipt_text = receipts_head(r);
            else
                receipt_text.assign(1, ',');
            trace::append_receipt_json(receipt_text, receipt);
            co_await c.trace.receipt(receipt_text);
            ++r.appends_sent;
            c.count(&live_counters::packets_sent);
            if (std::abs(receipt.start_s - receipt.scheduled_s) > protocol::late_threshold_s)
                c.count(&live_counters::late_packets);
            if (a.seq == 0 && c.options.on_streaming)
                c.options.on_streaming();
            if (!ok)
                co_return;
            break;
        }
        default:
            if (!co_await Wire::control(c, a))
                co_return;
            break;
        }
    }
}

// Runs one task of the session, then applies the completion rules (§1.5 step 4, decided by
// `completion`): the first task to end normally waits for the other up to the grace, and
// stops it when the grace is over. An escaped exception is recorded as an error, never lost.
awaitable<void> run_task(std::shared_ptr<session_state> ctx, task which) {
    auto& c = *ctx;
    // A stop from outside cancels this task's operations (each task is its own coroutine
    // under the exchange): they report operation_aborted and the task ends on `stopping`.
    co_await asio::this_coro::throw_if_cancelled(false);
    try {
        if (which == task::receiver)
            co_await receive_loop(c);
        else if (c.rt) {
            // (The wire in a local first: GCC 12 mishandles temporaries inside co_await
            // expressions.)
            const std::size_t rate = c.rt->protocol() == protocol::realtime_protocol::openai
                                         ? protocol::openai_sample_rate
                                         : protocol::input_sample_rate;
            realtime_wire wire{c.options.wire_pcm,
                               rate,
                               schedule::packet_count(c.options.pcm.size()),
                               c.options.conversation,
                               std::vector<std::uint8_t>(rate * 2 * 80 / 1000, 0),
                               {}};
            co_await drive(ctx, *c.rt, std::move(wire));
        } else {
            native_wire wire{c.options.pcm, c.options.conversation, {}, {}, {}};
            co_await drive(ctx, c.machine, std::move(wire));
        }
    } catch (const std::exception& e) {
        c.result.failures.push_back(make_failure(session_errc::internal_error, e.what()));
    }
    if (which == task::receiver) {
        c.machine.on_receiver_ended();
        if (c.rt)
            c.rt->on_receiver_ended();
    }
    c.completion.ended(which, clock::now());
    c.notify();
    c.notify_completion();
    for (;;) {
        const auto a = c.completion.next(clock::now(), c.stopping);
        if (a.what == protocol::task_completion::action::kind::done)
            co_return;
        if (a.what == protocol::task_completion::action::kind::stop_other) {
            c.stop_all();
            continue;
        }
        co_await session_state::wait(c.wake, a.at);
    }
}

} // namespace

std::size_t session_states_alive() {
    return states_alive.load(std::memory_order_relaxed);
}

namespace {

// Phase 1, before any I/O: the deadline (the watchdog) and the interrupt stop the session from
// outside, with no grace and nothing more sent. Neither keeps the session alive once it has
// returned.
void arm_stops(const std::shared_ptr<session_state>& ctx) {
    auto& c = *ctx;
    const std::weak_ptr<session_state> weak = ctx;
    c.watchdog.expires_at(clock::now() + c.options.timeout);
    c.watchdog.async_wait([weak](boost::system::error_code ec) {
        if (auto ctx = weak.lock(); ctx && !ec) {
            ctx->timed_out = true;
            ctx->stop_from_outside();
        }
    });
    if (c.options.interrupt && c.options.interrupt->requested) {
        c.result.interrupted = true; // started after the run was interrupted: do nothing
        c.stopping = true;
    } else if (c.options.interrupt) {
        c.interrupt = c.options.interrupt->subscribe([&c] {
            c.result.interrupted = true;
            c.stop_from_outside();
        });
    }
}

// Phase 2, admission (docs/protocol.md §1.2): connects; a 503 is a denial, retried
// `admission_retries` times after a backoff. Ends admitted, rejected, failed or stopped.
awaitable<void> admit(session_state& c) {
    auto ex = co_await asio::this_coro::executor;
    auto& r = c.result;
    r.connect_start_s = to_seconds(clock::now());
    for (int attempt = 1; !c.stopping; ++attempt) {
        c.ws = std::make_unique<transport::ws_connection>(ex);
        const auto hs = co_await c.stoppable(c.ws->connect(c.options.endpoint));
        if (!hs.ec) {
            r.admitted = true;
            const auto t = c.ws->times();
            r.handshake = trace::handshake_times{t.connect_s, t.tls_s, t.upgrade_s};
            co_return;
        }
        if (c.stopping)
            co_return;
        if (hs.http_status != 503) {
            co_await c.record_error(hs.error);
            co_return;
        }
        ++r.admission_denials;
        const bool exhausted = attempt > c.options.admission_retries;
        boost::json::object event{
            {"type", "connection_denied"}, {"http_status", 503}, {"attempt", attempt}};
        if (exhausted)
            event["exhausted"] = true;
        co_await c.trace.emit(trace::direction::admission, to_seconds(clock::now()),
                              boost::json::serialize(event));
        if (exhausted) {
            r.rejected = true;
            co_return;
        }
        co_await c.stoppable(
            session_state::wait(c.pace, clock::now() + c.options.admission_backoff));
    }
}

// Phase 3, the exchange (negotiation, streaming, end of input, drain): the receive loop and
// the driver as one structured unit; both have ended (and every wait of theirs has returned)
// when it completes.
awaitable<void> exchange(std::shared_ptr<session_state> ctx) {
    using namespace asio::experimental::awaitable_operators;
    auto& c = *ctx;
    // (Locals first: GCC 12 mishandles temporaries inside co_await expressions.)
    auto receiver = run_task(ctx, task::receiver);
    auto driver = run_task(ctx, task::driver);
    auto both = std::move(receiver) && std::move(driver);
    co_await c.stoppable(std::move(both));
    if (c.completion.driver_stalled() && !c.timed_out)
        co_await c.record_error(make_failure(session_errc::driver_stalled));
}

// Phase 4, closing: no stop from outside any more; the deadline's or the interrupt's error
// line, then the connection's close.
awaitable<void> close_session(std::shared_ptr<session_state> ctx) {
    auto& c = *ctx;
    auto& r = c.result;
    c.interrupt = {};
    report_to_gate(ctx, false); // ended without negotiating: the level need not wait for it
    c.watchdog.cancel();
    if (c.timed_out) {
        // The seconds as the reference prints its float (`90.0`, `4.5`); a stalled send named.
        auto f =
            make_failure(session_errc::timeout, python_float_repr(to_seconds(c.options.timeout)));
        if (r.pending_write_s && *r.pending_write_s > to_seconds(send_stall_threshold))
            f = {session_errc::timeout_send_pending, f.detail, {}, r.pending_write_s};
        co_await c.record_error(std::move(f));
    } else if (r.interrupted)
        co_await c.record_error(make_failure(session_errc::interrupted));
    if (c.ws && c.ws->is_open())
        co_await c.ws->close(protocol::close_timeout);
}

// Phase 5, the result: what the machines saw, and whether the session is complete.
void settle_result(session_state& c) {
    auto& r = c.result;
    if (c.timeline) // a barge-in shortens a pause: the appends expected are final once streamed
        r.expected_appends = c.rt ? c.rt->expected_appends() : c.machine.expected_appends();
    if (c.rt) {
        const auto seconds = [](std::optional<time_point> t) {
            return t ? std::optional<double>(to_seconds(*t)) : std::nullopt;
        };
        r.utterance_end_s = seconds(c.rt->utterance_end());
        r.first_audio_s = seconds(c.rt->first_audio_at());
        r.first_transcript_s = seconds(c.rt->first_transcript_at());
        r.final_transcript_s = seconds(c.rt->final_transcript_at());
        r.complete = r.admitted && r.failures.empty() && r.appends_sent == r.expected_appends &&
                     c.rt->finished();
    } else
        r.complete = r.admitted && r.failures.empty() && r.appends_sent == r.expected_appends &&
                     c.machine.has_seen(server_event::input_drained) &&
                     c.machine.has_seen(server_event::session_closed);
    if (c.timeline)
        r.turns = c.timeline->results();
}

// Phase 6, the files: the receipts' tail to the writer, awaited until they are on disk.
awaitable<void> finish_files(session_state& c) {
    auto& r = c.result;
    r.trace_error = co_await c.trace.finish(receipts_tail(r));
    if (!r.trace_error.empty())
        r.complete = false;
    r.trace_waits = c.trace.waits();
    r.trace_wait_s = c.trace.wait_s();
    c.count(r.complete ? &live_counters::done : &live_counters::failed);
}

} // namespace

awaitable<session_result> run_duplex_session(session_options options, trace::channel& traces) {
    detail::prepare_inputs(options);
    auto ex = co_await asio::this_coro::executor;
    auto ctx = std::make_shared<session_state>(ex, std::move(options), traces);
    auto& c = *ctx;
    c.result.index = c.options.index;
    c.count(&live_counters::started);
    c.result.expected_appends = c.rt ? c.rt->expected_appends() : c.machine.expected_appends();
    arm_stops(ctx);
    co_await admit(c);
    if (c.result.admitted && !c.stopping)
        co_await exchange(ctx);
    co_await close_session(ctx);
    settle_result(c);
    co_await finish_files(c);
    co_return std::move(c.result);
}

} // namespace pacer::session

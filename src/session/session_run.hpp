#pragma once
// Internal to src/session: one duplex session's coroutine, generic over its protocol's client
// and its I/O (session_state.hpp), and the protocol table that picks the client. The program
// instantiates it with `asio_io` (duplex_session.cpp); the unit tests with a manual clock and a
// scripted connection (tests/unit/session/test_session_run_manual_clock.cpp). Nothing here
// tests which protocol it speaks: what differs is the client's (native_client.hpp,
// realtime_client.hpp). Not installed, not part of the public API.
//
// A client is a struct with
//   machine                 its sans-io machine: next(now) → an action whose kinds include
//                           done, wait_event, wait_until, join_gate, turn_end, send_append;
//                           append_sent, gate_started, on_receiver_ended, send_failed,
//                           checks_opening, check_opening, closed_by_server, finished,
//                           expected_appends;
//   make_machine(options)   its machine for a session's options;
//   wire_input(options, pcm) the input at its wire rate (empty: pacer's 16 kHz as is);
//   on_frame(c, scanner, frame, now)  the receive handling of one scanned frame;
//   wire{options, machine}  append(frame, event_id, action): an append's frame;
//   unscheduled, origin     the append receipt's schedule;
//   control(c, action)      every other send;
//   settle(machine, result) what the result takes from the machine at the end.
// A protocol plugs in as its machine, its client and its row in `protocol_table`.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/float_repr.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/opening.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/session/error.hpp>
#include <pacer/session/turn_timeline.hpp>
#include <pacer/trace/sink.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>

#include "native_client.hpp"
#include "omni_client.hpp"
#include "realtime_client.hpp"
#include "session_setup.hpp"
#include "session_state.hpp"
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace pacer::session::detail {

using task = protocol::task_completion::task;

// The receive loop: reads frames, traces them and hands them to the client, which feeds the
// machine. Returns when the connection ends, a frame is refused, or the session stops.
template <class S>
awaitable<void> receive_loop(S& c) {
    using clock = typename S::clock;
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
            if (c.machine.closed_by_server())
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
        // While negotiating, an event of another protocol ends the session at once (the
        // machine decides; the frame is parsed whole only then, once or twice a session).
        if (c.machine.checks_opening()) {
            const auto shape = protocol::describe_opening(frame);
            if (auto wrong = c.machine.check_opening(scanner.type(), shape)) {
                if (c.trace.lines()) {
                    // Traced as the other receives are. (Built in a local first: GCC 12
                    // destroys temporaries of a conditional inside a co_await expression twice.)
                    std::string line = trace_line(frame);
                    co_await c.trace.emit(trace::direction::receive, to_seconds(now), line);
                }
                co_await c.fail(make_failure(session_errc::wrong_protocol, *wrong));
                co_return;
            }
        }
        co_await S::client::on_frame(c, scanner, frame, now);
        c.notify();
    }
}

// Reports the session to the level's start gate, once: ready sessions wait for the common
// start, which becomes their grid's origin (+ their stagger offset).
template <class S>
void report_to_gate(const std::shared_ptr<S>& ctx, bool ready) {
    auto& c = *ctx;
    if (!c.options.gate || c.gate_reported)
        return;
    c.gate_reported = true;
    c.result.ready = ready;
    if (!ready) {
        c.options.gate->arrive(c.signal.get_executor(), {});
        return;
    }
    c.options.gate->arrive(c.signal.get_executor(), [w = std::weak_ptr<S>(ctx)](time_point start) {
        if (auto ctx = w.lock()) {
            ctx->machine.gate_started(start);
            ctx->notify();
        }
    });
}

// The driver: does what the machine's `next` says until it is done or the session stops. Only
// bytes and waits here; every protocol decision is the machine's, and what goes on the wire is
// the client's. The append step (the hot path) is inline: no call, no allocation but the
// frame's and the send's.
template <class S>
awaitable<void> drive(std::shared_ptr<S> ctx, typename S::client::wire wire) {
    using clock = typename S::clock;
    using client = typename S::client;
    auto& c = *ctx;
    auto& m = c.machine;
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
            co_await S::wait(c.signal, a.at == time_point{} ? time_point::max() : a.at);
            break;
        case kind::wait_until: // absolute: a late wake never shifts the next deadline
            co_await S::wait(c.pace, a.at);
            break;
        case kind::join_gate:
            report_to_gate(ctx, true);
            break;
        case kind::turn_end: // multi-turn: the turn's speech has ended (its reply comes next)
            if (c.timeline)
                c.timeline->turn_ended(a.turn, a.at);
            if (!co_await client::control(c, a))
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
            receipt.scheduled_s = to_seconds(client::unscheduled(m, a.seq) ? start : a.at);
            if (a.seq == 0)
                r.session_start_s = to_seconds(client::origin(m));
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
            if (!co_await client::control(c, a))
                co_return;
            break;
        }
    }
}

// Runs one task of the session, then applies the completion rules (§1.5 step 4, decided by
// `completion`): the first task to end normally waits for the other up to the grace, and
// stops it when the grace is over. An escaped exception is recorded as an error, never lost.
template <class S>
awaitable<void> run_task(std::shared_ptr<S> ctx, task which) {
    using clock = typename S::clock;
    auto& c = *ctx;
    // A stop from outside cancels this task's operations (each task is its own coroutine
    // under the exchange): they report operation_aborted and the task ends on `stopping`.
    co_await asio::this_coro::throw_if_cancelled(false);
    try {
        if (which == task::receiver)
            co_await receive_loop(c);
        else {
            // (The wire in a local first: GCC 12 mishandles temporaries inside co_await
            // expressions.)
            typename S::client::wire wire(c.options, c.machine);
            co_await drive(ctx, std::move(wire));
        }
    } catch (const std::exception& e) {
        c.result.failures.push_back(make_failure(session_errc::internal_error, e.what()));
    }
    if (which == task::receiver)
        c.machine.on_receiver_ended();
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
        co_await S::wait(c.wake, a.at);
    }
}

// Phase 1, before any I/O: the deadline (the watchdog) and the interrupt stop the session from
// outside, with no grace and nothing more sent. Neither keeps the session alive once it has
// returned.
template <class S>
void arm_stops(const std::shared_ptr<S>& ctx) {
    using clock = typename S::clock;
    auto& c = *ctx;
    const std::weak_ptr<S> weak = ctx;
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
template <class S>
awaitable<void> admit(S& c) {
    using clock = typename S::clock;
    auto ex = co_await asio::this_coro::executor;
    auto& r = c.result;
    r.connect_start_s = to_seconds(clock::now());
    for (int attempt = 1; !c.stopping; ++attempt) {
        c.ws = std::make_unique<typename S::connection>(ex);
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
        co_await c.stoppable(S::wait(c.pace, clock::now() + c.options.admission_backoff));
    }
}

// Phase 3, the exchange (negotiation, streaming, end of input, drain): the receive loop and
// the driver as one structured unit; both have ended (and every wait of theirs has returned)
// when it completes.
template <class S>
awaitable<void> exchange(std::shared_ptr<S> ctx) {
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
template <class S>
awaitable<void> close_session(std::shared_ptr<S> ctx) {
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

// Phase 5, the result: what the machine saw, and whether the session is complete.
template <class S>
void settle_result(S& c) {
    auto& r = c.result;
    if (c.timeline) // a barge-in shortens a pause: the appends expected are final once streamed
        r.expected_appends = c.machine.expected_appends();
    S::client::settle(c.machine, r);
    r.complete = r.admitted && r.failures.empty() && r.appends_sent == r.expected_appends &&
                 c.machine.finished();
    if (c.timeline)
        r.turns = c.timeline->results();
}

// Phase 6, the files: the receipts' tail to the writer, awaited until they are on disk.
template <class S>
awaitable<void> finish_files(S& c) {
    auto& r = c.result;
    r.trace_error = co_await c.trace.finish(receipts_tail(r));
    if (!r.trace_error.empty())
        r.complete = false;
    r.trace_waits = c.trace.waits();
    r.trace_wait_s = c.trace.wait_s();
    c.count(r.complete ? &live_counters::done : &live_counters::failed);
}

/// The caller's cancellation, as the session sees it: `requested` once the caller's slot was
/// emitted; `stop`, while the session runs, stops it as an interrupt does.
struct caller_stop {
    bool requested = false;
    std::function<void()> stop;
};

// Phase 1 too: the caller's cancellation stops the session as the interrupt source does.
template <class S>
void arm_caller_stop(const std::shared_ptr<S>& ctx, caller_stop& caller) {
    auto& c = *ctx;
    if (caller.requested) {
        c.result.interrupted = true;
        c.stopping = true;
        return;
    }
    caller.stop = [weak = std::weak_ptr<S>(ctx)] {
        if (auto ctx = weak.lock()) {
            ctx->result.interrupted = true;
            ctx->stop_from_outside();
        }
    };
}

/// One session of `Client`'s protocol on `Io`, the phases in order.
template <class Client, class Io>
awaitable<session_result> run_session(session_options options, trace::channel& traces,
                                      std::shared_ptr<caller_stop> caller) {
    using S = session_state<Client, Io>;
    prepare_inputs(options, &Client::wire_input);
    auto ex = co_await asio::this_coro::executor;
    auto ctx = std::make_shared<S>(ex, std::move(options), traces);
    auto& c = *ctx;
    c.result.index = c.options.index;
    c.count(&live_counters::started);
    c.result.expected_appends = c.machine.expected_appends();
    arm_stops(ctx);
    if (!c.stopping)
        arm_caller_stop(ctx, *caller);
    co_await admit(c);
    if (c.result.admitted && !c.stopping)
        co_await exchange(ctx);
    caller->stop = nullptr; // phase 4: no stop from outside any more
    co_await close_session(ctx);
    settle_result(c);
    co_await finish_files(c);
    co_return std::move(c.result);
}

/// The protocol table: one row a wire protocol, keyed by `session_options::realtime` (nullopt:
/// native), naming the client that speaks it. A fifth protocol is one more row.
template <class Io>
struct protocol_row {
    std::optional<protocol::realtime_protocol> key;
    awaitable<session_result> (*run)(session_options, trace::channel&,
                                     std::shared_ptr<caller_stop>);
};
template <class Io>
inline constexpr std::array<protocol_row<Io>, 4> protocol_table{{
    {std::nullopt, &run_session<native_client, Io>},
    {protocol::realtime_protocol::openai, &run_session<realtime_client, Io>},
    {protocol::realtime_protocol::vllm, &run_session<realtime_client, Io>},
    {protocol::realtime_protocol::vllm_omni, &run_session<omni_client, Io>},
}};

/// One session on `Io`, of the protocol its options name (the table's row).
template <class Io>
awaitable<session_result> run_any_session(session_options options, trace::channel& traces,
                                          std::shared_ptr<caller_stop> caller) {
    const auto& table = protocol_table<Io>;
    const auto row = std::find_if(table.begin(), table.end(),
                                  [&](const auto& r) { return r.key == options.realtime; });
    if (row == table.end())
        throw std::invalid_argument("no client for the session's protocol");
    co_return co_await row->run(std::move(options), traces, std::move(caller));
}

/// One session on `Io` as an asynchronous operation that honours the caller's cancellation
/// slot (Beast's flex server's way): a cancellation emitted there (terminal, as awaitables
/// forward by default) stops the session as an interrupt does (no grace, nothing more sent;
/// the `interrupted` error line, the close and the files still follow), and the result comes
/// as usual. The session itself runs as its own coroutine, never bound to that slot.
template <class Io>
awaitable<session_result> run_cancellable(session_options options, trace::channel& traces) {
    auto ex = co_await asio::this_coro::executor;
    auto caller = std::make_shared<caller_stop>();
    auto init = [&](auto handler) {
        auto slot = asio::get_associated_cancellation_slot(handler);
        if (slot.is_connected())
            slot.assign([caller](asio::cancellation_type) {
                caller->requested = true;
                if (caller->stop)
                    caller->stop();
            });
        asio::co_spawn(ex, run_any_session<Io>(std::move(options), traces, caller),
                       [h = std::move(handler)](std::exception_ptr e, session_result r) mutable {
                           asio::get_associated_cancellation_slot(h).clear();
                           std::move(h)(e, std::move(r));
                       });
    };
    auto token = use_awaitable;
    co_return co_await asio::async_initiate<decltype(token),
                                            void(std::exception_ptr, session_result)>(init, token);
}

} // namespace pacer::session::detail

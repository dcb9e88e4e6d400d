#include <pacer/core/base64.hpp>
#include <pacer/core/float_repr.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/trace/sink.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace pacer::session {

namespace asio = boost::asio;
using protocol::server_event;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

std::string error_event(std::string_view message) {
    boost::json::object o;
    o["message"] = message;
    return boost::json::serialize(o);
}

// Everything the session's coroutines share. They all run on one single-threaded executor,
// so plain fields need no lock; a coroutine that waits for a change waits on `signal`, which
// the others cancel to wake it (and it re-checks its condition: no lost wake-ups).
struct session_ctx {
    session_ctx(asio::any_io_executor ex, session_options opts, trace::channel& ch)
        : options(std::move(opts)), trace(ch, options.index), signal(ex), wake(ex), pace(ex),
          backoff(ex), watchdog(ex), ids(options.seed) {}

    session_options options;
    trace::sink trace;
    std::unique_ptr<transport::ws_connection> ws;
    asio::steady_timer signal;   // the driver waits on it for server events
    asio::steady_timer wake;     // the supervisor waits on it for task ends and the deadline
    asio::steady_timer pace;     // the packet grid
    asio::steady_timer backoff;  // admission retries
    asio::steady_timer watchdog; // the session deadline
    protocol::event_id_source ids;
    session_result result;

    std::bitset<protocol::server_event_count> seen;
    bool aborted = false;  // a server error or a broken receive: stop streaming
    bool fatal = false;    // a fatal server error: no session.close
    bool stopping = false; // the supervisor is ending the session
    bool timed_out = false;
    bool finished = false;
    bool receiver_done = false;
    bool driver_done = false;
    time_point receiver_done_at{};
    time_point driver_done_at{};
    time_point origin{}; // packet 0's deadline (the grid's origin)
    time_point last_append_start{};
    std::size_t units_done = 0;              // `sglang.unit.done` received (lockstep)
    bool gate_reported = false;              // reported to the start gate
    std::optional<time_point> gate_start;    // the gate's common start, once released
    std::optional<time_point> write_started; // the socket write in flight, if any

    // One waiter per timer: `expires_at` would cancel another coroutine's wait.
    void notify() { signal.cancel(); }
    void notify_supervisor() { wake.cancel(); }

    // Stops whatever is in flight: timers and socket operations complete at once.
    void stop_all() {
        if (write_started && !result.pending_write_s)
            result.pending_write_s = to_seconds(clock::now() - *write_started);
        stopping = true;
        pace.cancel();
        backoff.cancel();
        notify();
        notify_supervisor();
        if (ws)
            ws->cancel();
    }

    // Adds one to a live total of the run, if it keeps them.
    void count(std::atomic<std::uint64_t> live_counters::*field) {
        if (options.live)
            options.live->bump(field);
    }

    asio::awaitable<void> record_error(std::string message) {
        result.errors.push_back(message);
        count(&live_counters::errors);
        co_await trace.emit(trace::direction::error, to_seconds(clock::now()),
                            error_event(message));
    }

    // A task failed (the receive loop, or a send of the driver): its error is the session's
    // only one, and the other task is stopped at once, with no grace (as the reference client).
    // It is stopped before the error line is queued, so no `send` line follows the error. A
    // failure while the session is already stopping (deadline, interrupt, the other task's
    // failure) is the consequence of that stop: not recorded.
    asio::awaitable<void> fail(std::string message) {
        if (stopping)
            co_return;
        stop_all();
        co_await record_error(std::move(message));
    }

    // Waits until `done()` holds or the session is stopping; returns done().
    template <class Pred>
    asio::awaitable<bool> wait_for(Pred done) {
        while (!done() && !stopping) {
            signal.expires_at(time_point::max());
            co_await signal.async_wait(use_tuple);
        }
        co_return done();
    }

    // settle(X) of docs/protocol.md §1.5: X seen, or aborted.
    asio::awaitable<bool> settle(server_event e) {
        co_await wait_for([&] { return seen[static_cast<std::size_t>(e)] || aborted; });
        co_return seen[static_cast<std::size_t>(e)];
    }

    bool has_seen(server_event e) const { return seen[static_cast<std::size_t>(e)]; }

    // Sends one frame: the trace line first (its time is the send start), then the write.
    asio::awaitable<bool> send(std::string frame, append_receipt* receipt = nullptr) {
        if (stopping)
            co_return false; // the session is ending: nothing more goes out
        const auto start = clock::now();
        const double start_s = to_seconds(start);
        co_await trace.emit(trace::direction::send, start_s, frame);
        write_started = clock::now();
        const auto ec = co_await ws->write(frame);
        const auto took = clock::now() - *write_started;
        write_started.reset();
        result.stalled_sends += took > send_stall_threshold;
        result.longest_write_s = std::max(result.longest_write_s.value_or(0), to_seconds(took));
        if (receipt) {
            receipt->start_s = start_s;
            receipt->completed_s = to_seconds(clock::now());
        }
        if (ec) {
            aborted = true;
            co_await fail(ws->describe(ec));
            co_return false;
        }
        co_return true;
    }
};

asio::awaitable<void> receive_loop(std::shared_ptr<session_ctx> ctx) {
    protocol::event_scanner scanner;
    std::string frame;
    auto& r = ctx->result;
    for (;;) {
        const auto ec = co_await ctx->ws->read(frame);
        const auto now = clock::now();
        if (ec) {
            if (ctx->stopping)
                co_return; // cancelled by the supervisor: nothing to report
            if (ctx->has_seen(server_event::session_closed))
                co_return; // the server closed after session.closed, as it should
            std::string message = ctx->ws->describe(ec);
            if (message.starts_with("ConnectionClosedOK"))
                message = "RuntimeError: Connection closed without session.closed";
            co_await ctx->fail(std::move(message));
            co_return;
        }
        ++r.frames_received;
        r.bytes_received += frame.size();
        if (ctx->ws->last_was_binary()) {
            // The reference decodes a binary frame as text; the protocol forbids it, so pacer
            // refuses it (the reason is pacer's own words).
            co_await ctx->fail(protocol::malformed_frame_message(
                frame, "ValueError: binary frame (the protocol's frames are text)"));
            co_return;
        }
        if (const char* reason = scanner.scan(frame)) {
            co_await ctx->fail(protocol::malformed_frame_message(
                frame, protocol::reference_decode_error(frame, reason, scanner.error_offset())));
            co_return;
        }
        const auto kind = protocol::classify_server_event(scanner.type());
        const double now_s = to_seconds(now);
        // The frame is traced as it arrived, unless it spans lines (pretty-printed JSON would
        // break the one-object-per-line trace): then in its compact form.
        const bool one_line = std::memchr(frame.data(), '\n', frame.size()) == nullptr &&
                              std::memchr(frame.data(), '\r', frame.size()) == nullptr;
        std::string event = one_line ? frame : boost::json::serialize(boost::json::parse(frame));
        co_await ctx->trace.emit(trace::direction::receive, now_s, std::move(event));
        ctx->seen[static_cast<std::size_t>(kind)] = true;
        switch (kind) {
        case server_event::session_updated:
            r.updated_s = now_s;
            break;
        case server_event::output_audio_delta:
            if (!r.first_audio_s)
                r.first_audio_s = now_s;
            break;
        case server_event::unit_done:
            ++ctx->units_done;
            break;
        case server_event::error:
            ctx->fatal = ctx->fatal || scanner.fatal();
            ctx->aborted = true;
            break;
        default:
            break;
        }
        ctx->notify();
    }
}

asio::awaitable<void> stream_audio(session_ctx& ctx) {
    const auto& pcm = *ctx.options.pcm;
    auto& r = ctx.result;
    const auto lockstep = ctx.options.lockstep_unit_bytes;
    if (lockstep && ctx.options.origin) {
        // Lockstep sends without sleeping, but not before the level's common start.
        ctx.pace.expires_at(*ctx.options.origin);
        co_await ctx.pace.async_wait(use_tuple);
        if (ctx.stopping)
            co_return;
    }
    // Lockstep never waits for the grid: every packet is "scheduled" at its own send.
    schedule::packet_grid grid(r.expected_appends, lockstep ? std::nullopt : ctx.options.origin);
    std::size_t unit = 0; // lockstep: the next unit whose `sglang.unit.done` is awaited
    std::string frame, audio_b64;
    std::span<const std::uint8_t> previous;
    for (;;) {
        const auto action = grid.next(clock::now());
        if (action.what == schedule::pacing_action::kind::done)
            break;
        if (action.what == schedule::pacing_action::kind::wait && !lockstep) {
            // Absolute deadline: a late wake never shifts the next packet.
            ctx.pace.expires_at(action.scheduled);
            co_await ctx.pace.async_wait(use_tuple);
            if (ctx.stopping)
                co_return;
            continue;
        }
        if (ctx.aborted || ctx.stopping)
            co_return;
        const std::size_t seq = action.seq;
        const std::size_t offset = seq * schedule::packet_bytes;
        append_receipt receipt;
        const auto event_id = ctx.ids.next();
        receipt.event_id = event_id.chars;
        receipt.seq = seq;
        // Encode the packet, unless it repeats the previous one byte for byte (silence):
        // then its base64 is the same too.
        const std::span packet(pcm.data() + offset, schedule::packet_size(pcm.size(), seq));
        if (seq == 0 || packet.size() != previous.size() ||
            std::memcmp(packet.data(), previous.data(), packet.size()) != 0) {
            audio_b64.clear();
            base64_append(audio_b64, packet.data(), packet.size());
        }
        previous = packet;
        protocol::append_event_encoded(frame, event_id.view(), audio_b64, seq);
        const auto start = clock::now();
        grid.sent(start);
        receipt.scheduled_s =
            to_seconds(lockstep || (seq == 0 && !ctx.options.origin) ? start : action.scheduled);
        if (seq == 0) {
            ctx.origin = lockstep && ctx.options.origin ? *ctx.options.origin : *grid.origin();
            r.session_start_s = to_seconds(ctx.origin);
        }
        ctx.last_append_start = start;
        const bool ok = co_await ctx.send(frame, &receipt);
        // The receipt goes to the writer now; the session keeps none (flat memory).
        // (Built in a local first: GCC 12 destroys temporaries of a conditional inside a co_await
        // expression twice.)
        std::string piece = r.appends_sent == 0 ? receipts_head(r) : std::string(",");
        piece += receipt_json(receipt);
        co_await ctx.trace.receipt(std::move(piece));
        ++r.appends_sent;
        ctx.count(&live_counters::packets_sent);
        if (std::abs(receipt.start_s - receipt.scheduled_s) > 0.080) // late, as the summary counts
            ctx.count(&live_counters::late_packets);
        if (seq == 0 && ctx.options.on_streaming)
            ctx.options.on_streaming();
        if (!ok)
            co_return;
        // Lockstep: the packet that completes unit k waits for the k-th unit.done. The
        // packet's actual end counts (not offset + 2560): a short last packet that completes
        // no unit never waits for one the server can only finish after EOS.
        if (lockstep && offset + packet.size() >= (unit + 1) * *lockstep) {
            co_await ctx.wait_for([&] { return ctx.units_done > unit || ctx.aborted; });
            if (ctx.aborted || ctx.stopping)
                co_return;
            ++unit;
        }
    }
}

// Reports the session to the level's start gate, once: ready sessions wait for the common
// start, which becomes their grid's origin (+ their stagger offset).
void report_to_gate(const std::shared_ptr<session_ctx>& ctx, bool ready) {
    auto& c = *ctx;
    if (!c.options.gate || c.gate_reported)
        return;
    c.gate_reported = true;
    c.result.ready = ready;
    if (!ready) {
        c.options.gate->arrive(c.signal.get_executor(), {});
        return;
    }
    c.options.gate->arrive(c.signal.get_executor(), [ctx](time_point start) {
        ctx->gate_start = start;
        ctx->notify();
    });
}

asio::awaitable<void> drive(std::shared_ptr<session_ctx> ctx) {
    auto& c = *ctx;
    auto& r = c.result;
    if (co_await c.settle(server_event::session_created)) {
        const auto& profile = c.options.profile ? *c.options.profile : protocol::default_profile();
        if (!co_await c.send(protocol::session_update(c.ids.next(), profile)))
            co_return;
    }
    if (co_await c.settle(server_event::session_updated)) {
        if (c.options.gate) {
            report_to_gate(ctx, true);
            if (!co_await c.wait_for([&] { return c.gate_start.has_value(); }))
                co_return; // stopping (deadline or interrupt) before the level started
            c.options.origin = *c.gate_start + c.options.start_offset;
        }
        if (c.options.start_delay > duration::zero() && !c.options.origin) {
            // Stagger: spread the sessions' grids over the packet period (see runner).
            c.pace.expires_after(c.options.start_delay);
            co_await c.pace.async_wait(use_tuple);
            if (c.stopping)
                co_return;
        }
        co_await stream_audio(c);
        if (c.stopping)
            co_return;
        if (!c.aborted && r.appends_sent == r.expected_appends && r.appends_sent > 0) {
            // End of input (docs/protocol.md §2.4): not before the grid's end, nor before the last
            // packet has had its own duration on the wire. Lockstep sends it at once.
            if (!c.options.lockstep_unit_bytes) {
                const auto& pcm = *c.options.pcm;
                const auto eos_at = schedule::end_of_input_at(
                    c.origin, pcm.size(), c.last_append_start,
                    schedule::packet_size(pcm.size(), r.appends_sent - 1));
                c.pace.expires_at(eos_at);
                co_await c.pace.async_wait(use_tuple);
                if (c.stopping)
                    co_return;
            }
            if (!c.aborted) {
                if (!co_await c.send(protocol::input_audio_end(c.ids.next())))
                    co_return;
                co_await c.settle(server_event::input_drained);
            }
        }
    }
    if (c.stopping)
        co_return;
    if (!c.fatal && !c.has_seen(server_event::session_closed)) {
        if (!co_await c.send(protocol::session_close(c.ids.next())))
            co_return;
    }
    // Wait, unbounded but for the session deadline, for session.closed.
    co_await c.wait_for(
        [&] { return c.has_seen(server_event::session_closed) || c.receiver_done; });
}

// Starts `body` on the session's executor; marks `done` when it ends (an escaped exception is
// recorded as an error, never lost) and wakes the supervisor.
void start_task(std::shared_ptr<session_ctx> ctx, asio::awaitable<void> body,
                bool session_ctx::*done, time_point session_ctx::*done_at) {
    auto ex = ctx->signal.get_executor();
    asio::co_spawn(ex, std::move(body), [ctx, done, done_at](std::exception_ptr e) {
        if (e) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                ctx->result.errors.push_back(fmt::format("internal error: {}", ex.what()));
            }
        }
        (*ctx).*done = true;
        (*ctx).*done_at = clock::now();
        ctx->notify();
        ctx->notify_supervisor();
    });
}

} // namespace

std::string receipts_head(const session_result& r) {
    return fmt::format(R"({{"session_start_s":{},"admitted":{},"appends":[)",
                       r.session_start_s ? fmt::format("{:.9f}", *r.session_start_s)
                                         : std::string("null"),
                       r.admitted ? "true" : "false");
}

std::string receipt_json(const append_receipt& a) {
    return fmt::format(
        R"({{"event_id":"{}","seq":{},"scheduled_s":{:.9f},"start_s":{:.9f},"completed_s":{:.9f}}})",
        a.id(), a.seq, a.scheduled_s, a.start_s, a.completed_s);
}

std::string receipts_tail(const session_result& r) {
    return r.appends_sent > 0 ? std::string("]}\n") : receipts_head(r) + "]}\n";
}

std::string read_receipts(session_result& r, const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return fmt::format("cannot read {}", file.string());
    std::ostringstream text;
    text << in.rdbuf();
    boost::system::error_code ec;
    const auto doc = boost::json::parse(text.str(), ec);
    const auto* appends =
        ec || !doc.is_object() ? nullptr : doc.get_object().if_contains("appends");
    if (!appends || !appends->is_array())
        return fmt::format("{} is not a receipts file", file.string());
    r.appends.clear();
    r.appends.reserve(appends->get_array().size());
    try {
        for (const auto& v : appends->get_array()) {
            const auto& o = v.as_object();
            append_receipt a;
            const auto& id = o.at("event_id").as_string();
            if (id.size() != a.event_id.size())
                return fmt::format("{}: an event_id is not 32 characters", file.string());
            std::memcpy(a.event_id.data(), id.data(), id.size());
            a.seq = o.at("seq").to_number<std::uint64_t>();
            a.scheduled_s = o.at("scheduled_s").to_number<double>();
            a.start_s = o.at("start_s").to_number<double>();
            a.completed_s = o.at("completed_s").to_number<double>();
            r.appends.push_back(a);
        }
    } catch (const std::exception& e) {
        return fmt::format("{}: unreadable receipt: {}", file.string(), e.what());
    }
    return {};
}

asio::awaitable<session_result> run_duplex_session(session_options options,
                                                   trace::channel& traces) {
    auto ex = co_await asio::this_coro::executor;
    auto ctx = std::make_shared<session_ctx>(ex, std::move(options), traces);
    auto& c = *ctx;
    auto& r = c.result;
    r.index = c.options.index;
    if (!c.options.pcm || c.options.pcm->empty() || c.options.pcm->size() % 2 != 0)
        throw std::invalid_argument("session input must be non-empty whole PCM16 samples");
    c.count(&live_counters::started);
    r.expected_appends = schedule::packet_count(c.options.pcm->size());

    // The watchdog bounds the whole session, admission included.
    const auto deadline = clock::now() + c.options.timeout;
    c.watchdog.expires_at(deadline);
    c.watchdog.async_wait([ctx](boost::system::error_code ec) {
        if (!ec && !ctx->finished) {
            ctx->timed_out = true;
            ctx->stop_all();
        }
    });

    if (c.options.interrupt && c.options.interrupt->requested) {
        r.interrupted = true; // started after the run was interrupted: do nothing
        c.stopping = true;
    } else if (c.options.interrupt) {
        c.options.interrupt->timer.async_wait(
            [ctx, source = c.options.interrupt](boost::system::error_code) {
                if (source->requested && !ctx->finished) {
                    ctx->result.interrupted = true;
                    ctx->stop_all();
                }
            });
    }

    // Admission (docs/protocol.md §1.2): a 503 is a denial, retried `admission_retries` times.
    r.connect_start_s = to_seconds(clock::now());
    for (int attempt = 1; !c.stopping; ++attempt) {
        c.ws = std::make_unique<transport::ws_connection>(ex);
        const auto hs = co_await c.ws->connect(c.options.endpoint);
        if (!hs.ec) {
            r.admitted = true;
            break;
        }
        if (c.stopping)
            break;
        if (hs.http_status != 503) {
            co_await c.record_error(hs.message);
            break;
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
            break;
        }
        c.backoff.expires_after(c.options.admission_backoff);
        co_await c.backoff.async_wait(use_tuple);
    }

    if (r.admitted && !c.stopping) {
        start_task(ctx, receive_loop(ctx), &session_ctx::receiver_done,
                   &session_ctx::receiver_done_at);
        start_task(ctx, drive(ctx), &session_ctx::driver_done, &session_ctx::driver_done_at);
        // Supervise (docs/protocol.md §1.5 step 4): a task that fails has already stopped the other
        // (`fail`). Whichever task ends normally first, the other gets `post_close` to finish:
        // a driver that does not is reported as stalled, a receiver that does not is cancelled
        // silently. The watchdog stops both at the session deadline.
        bool driver_stalled = false;
        while (!(c.receiver_done && c.driver_done)) {
            auto wake = time_point::max();
            if (!c.stopping && c.receiver_done != c.driver_done) {
                const auto grace_end = (c.receiver_done ? c.receiver_done_at : c.driver_done_at) +
                                       c.options.post_close;
                if (clock::now() >= grace_end) {
                    driver_stalled = c.receiver_done;
                    c.stop_all();
                    continue;
                }
                wake = grace_end;
            }
            c.wake.expires_at(wake);
            co_await c.wake.async_wait(use_tuple);
        }
        if (driver_stalled && !c.timed_out)
            co_await c.record_error("driver stalled after the receive loop"); // no type prefix
    }
    c.finished = true;
    report_to_gate(ctx, false); // ended without negotiating: the level need not wait for it
    c.watchdog.cancel();
    if (c.timed_out) {
        // docs/protocol.md §1.5 step 5 wording, the seconds as the reference prints its float
        // (`90.0`, `4.5`); a send stalled at the deadline is named after it.
        auto message = fmt::format("Session timeout after {}s",
                                   python_float_repr(to_seconds(c.options.timeout)));
        if (r.pending_write_s && *r.pending_write_s > to_seconds(send_stall_threshold))
            message += fmt::format(" (a send was pending for {:.2f} s: the server stopped reading)",
                                   *r.pending_write_s);
        co_await c.record_error(std::move(message));
    } else if (r.interrupted)
        co_await c.record_error("Interrupted: the run was stopped by a signal");
    if (c.ws && c.ws->is_open())
        co_await c.ws->close(std::chrono::milliseconds(1000));

    r.complete = r.admitted && r.errors.empty() && r.appends_sent == r.expected_appends &&
                 c.has_seen(server_event::input_drained) &&
                 c.has_seen(server_event::session_closed);
    r.trace_error = co_await c.trace.finish(receipts_tail(r));
    if (!r.trace_error.empty())
        r.complete = false;
    r.trace_waits = c.trace.waits();
    r.trace_wait_s = c.trace.wait_s();
    c.count(r.complete ? &live_counters::done : &live_counters::failed);
    co_return std::move(r);
}

} // namespace pacer::session

#pragma once
// Internal to src/session: one duplex session's state, shared by the coroutines of
// session_run.hpp (the receive loop, the driver, the phases) and its protocol's client
// (native_client.hpp, realtime_client.hpp). Not installed, not part of the public API.
//
// The state is generic over the protocol's client (its sans-io machine, its wire, its receive
// handling) and over its I/O (`Io`: the timer, whose clock is the session's clock, and the
// connection). The program runs `asio_io`: Asio's steady_timer and the WebSocket connection;
// the unit tests run a manual clock's timer and a scripted connection.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/native_session.hpp> // task_completion
#include <pacer/session/duplex_session.hpp>
#include <pacer/session/error.hpp>
#include <pacer/session/turn_timeline.hpp>
#include <pacer/trace/sink.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "session_setup.hpp"
#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace pacer::session::detail {

namespace asio = boost::asio;

/// The program's I/O: Asio's monotonic timer (pacer's one clock) and the WebSocket connection.
struct asio_io {
    using timer = steady_timer;
    using connection = transport::ws_connection;
};

/// Session states alive in this process (session_states_alive()).
inline std::atomic<std::size_t> states_alive{0};

/// A trace `error` line's event: {"message": ...}.
inline std::string error_event(std::string_view message) {
    boost::json::object o;
    o["message"] = message;
    return boost::json::serialize(o);
}

// One session's state. The protocol's decisions live in the sans-io machines (`machine`: what
// the driver does next; `completion`: §1.5 step 4); this holds the I/O objects they need and
// moves the bytes. Both tasks run on one single-threaded executor: no lock. The only owner
// is the session coroutine (callbacks hold weak references), so a finished session's socket,
// timers and buffers go as soon as it returns.
template <class Client, class Io>
struct session_state {
    using client = Client;
    using timer = typename Io::timer;
    using clock = typename timer::clock_type;
    using connection = typename Io::connection;

    session_state(executor ex, session_options opts, trace::channel& ch)
        : options(std::move(opts)), trace(ch, options.index, options.trace_lines), signal(ex),
          wake(ex), pace(ex), watchdog(ex), ids(options.seed),
          machine(Client::make_machine(options)), completion(options.post_close) {
        if (!options.conversation.empty()) {
            std::vector<std::optional<duration>> voice;
            for (const auto& t : options.conversation)
                voice.push_back(t.voice_end);
            timeline.emplace(options.conversation.size(), std::move(voice), options.chunk);
        }
        states_alive.fetch_add(1, std::memory_order_relaxed);
    }
    ~session_state() { states_alive.fetch_sub(1, std::memory_order_relaxed); }
    session_state(const session_state&) = delete;
    session_state& operator=(const session_state&) = delete;

    session_options options;
    trace::sink trace;
    std::unique_ptr<connection> ws;
    timer signal;   // the driver waits on it for server events (one waiter)
    timer wake;     // the first task to end waits on it for the other (one waiter)
    timer pace;     // absolute deadlines: the grid, stagger, EOS, admission backoff
    timer watchdog; // the session deadline
    protocol::event_id_source ids;
    /// The protocol's sans-io machine: what the driver does next.
    typename Client::machine machine;
    protocol::task_completion completion;
    /// Multi-turn scenarios: what each turn saw; the commits sent so far (one per turn, in
    /// order) and the assistant's item the next barge-in truncates.
    std::optional<turn_timeline> timeline;
    std::size_t commits = 0;
    bool need_item = false;
    bool cancel_sent = false;
    std::string assistant_item;
    interrupt_source::subscription interrupt;
    // The deadline and the interrupt stop the session through Asio cancellation: what the
    // session awaits at that moment (the connection, the backoff, the exchange) is bound to
    // this signal's slot, and the operations under it (socket reads and writes, the timers)
    // complete with operation_aborted.
    asio::cancellation_signal stop_signal;
    session_result result;

    bool stopping = false; // the session is ending: nothing more goes out
    bool timed_out = false;
    bool gate_reported = false;
    bool client_closed = false; // realtime: the driver closed the socket (the flow's end)
    std::optional<time_point> write_started; // the socket write in flight, if any

    void notify() { signal.cancel(); }
    void notify_completion() { wake.cancel(); }

    // Stops whatever is in flight: timers and socket operations complete at once. Both tasks
    // see `stopping` when they wake and end.
    void stop_all() {
        if (write_started && !result.pending_write_s)
            result.pending_write_s = to_seconds(clock::now() - *write_started);
        stopping = true;
        pace.cancel();
        notify();
        notify_completion();
        if (ws)
            ws->cancel();
    }

    // The deadline or the interrupt: the session stops from outside, with no grace. The
    // bookkeeping of `stop_all` first (a write still pending is measured now), then a terminal
    // cancellation of whatever is bound to `stop_signal`.
    void stop_from_outside() {
        if (write_started && !result.pending_write_s)
            result.pending_write_s = to_seconds(clock::now() - *write_started);
        stopping = true;
        stop_signal.emit(asio::cancellation_type::terminal);
    }

    // Awaits `op` with `stop_signal`'s slot bound: a stop from outside cancels what it awaits.
    // A cancelled operation reports operation_aborted through its result (never an exception:
    // throw_if_cancelled is off), so the session still records its error line, closes the
    // connection and writes its files after the stop.
    template <class T>
    awaitable<T> stoppable(awaitable<T> op) {
        auto ex = co_await asio::this_coro::executor;
        co_return co_await asio::co_spawn(
            ex, unthrowing(std::move(op)),
            asio::bind_cancellation_slot(stop_signal.slot(), use_awaitable));
    }
    template <class T>
    static awaitable<T> unthrowing(awaitable<T> op) {
        co_await asio::this_coro::throw_if_cancelled(false);
        co_return co_await std::move(op);
    }

    // Adds one to a live total of the run, if it keeps them.
    void count(std::atomic<std::uint64_t> live_counters::*field) {
        if (options.live)
            options.live->bump(field);
    }

    awaitable<void> record_error(failure f) {
        const auto message = reference_text(f); // the text exists for the trace line only
        result.failures.push_back(std::move(f));
        count(&live_counters::errors);
        co_await trace.emit(trace::direction::error, to_seconds(clock::now()),
                            error_event(message));
    }

    // A task failed (the receive loop, or a send of the driver): its error is the session's
    // only one, and the other task is stopped at once, with no grace (as the reference client).
    // It is stopped before the error line is queued, so no `send` line follows the error. A
    // failure while the session is already stopping (deadline, interrupt, the other task's
    // failure) is the consequence of that stop: not recorded.
    awaitable<void> fail(failure f) {
        if (stopping)
            co_return;
        stop_all();
        co_await record_error(std::move(f));
    }

    // Sends one frame: the trace line first (its time is the send start), then the write.
    awaitable<bool> send(std::string frame, append_receipt* receipt = nullptr) {
        if (stopping)
            co_return false; // the session is ending: nothing more goes out
        const auto start = clock::now();
        const double start_s = to_seconds(start);
        if (trace.lines())
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
            machine.send_failed();
            co_await fail(ws->failure_of(ec));
            co_return false;
        }
        co_return true;
    }

    // Waits on `timer` until `at` (absolute), or until cancelled (a notification, a stop).
    static awaitable<void> wait(timer& t, time_point at) {
        t.expires_at(at);
        co_await t.async_wait(use_tuple);
    }
};

} // namespace pacer::session::detail

#pragma once
// One duplex session (PROTOCOL.md 1.5): admission with 503 retries, negotiation, appends paced
// on the absolute 80 ms grid while the server's events are received, end of input, drain,
// close. Failures are data: they become trace `error` lines and an incomplete result; only a
// broken invariant throws.

#include <pacer/core/clock.hpp>
#include <pacer/trace/record.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pacer::session {

/// Ends sessions early (SIGINT/SIGTERM). One per session context, used on its thread only:
/// every session of the context waits on `timer`; `request()` wakes them all.
struct interrupt_source {
    explicit interrupt_source(boost::asio::any_io_executor ex) : timer(std::move(ex)) {
        timer.expires_at(time_point::max());
    }
    boost::asio::steady_timer timer;
    bool requested = false;
    /// Interrupt every session still running (stop streaming, close, write what was recorded).
    void request() {
        requested = true;
        timer.cancel();
    }
    /// No session needs the source any more: release their waits without interrupting.
    void release() { timer.cancel(); }
};

struct session_options {
    std::uint32_t index = 0;
    transport::ws_endpoint endpoint;
    /// 16 kHz mono PCM16 LE input, shared read-only by every session.
    std::shared_ptr<const std::vector<std::uint8_t>> pcm;
    /// Bounds the whole session: admission, exchange and close (`timeout_s`).
    duration timeout = std::chrono::seconds(90);
    /// A common start gate for packet 0; without it the grid is anchored to packet 0's send.
    std::optional<time_point> origin;
    /// Without `origin`: how long to wait after `session.updated` before packet 0 (stagger).
    duration start_delay{};
    std::uint64_t seed = 0; ///< event ids
    int admission_retries = 3;
    duration admission_backoff = std::chrono::milliseconds(250);
    duration post_close = std::chrono::milliseconds(200);
    /// Called on the session's executor right after packet 0 has been handed to the socket.
    std::function<void()> on_streaming;
    /// Optional: lets the runner end the session early; must outlive the session.
    interrupt_source* interrupt = nullptr;
};

/// A socket write that takes longer than one packet period is a send stall: the server's
/// TCP window was full (it stopped reading, or reads slower than the client sends).
inline constexpr std::chrono::milliseconds send_stall_threshold{80};

/// One append as `input-send-receipts.json` records it.
struct append_receipt {
    std::string event_id;
    std::uint64_t seq = 0;
    double scheduled_s = 0;
    double start_s = 0;
    double completed_s = 0;
};

struct session_result {
    std::uint32_t index = 0;
    bool admitted = false;
    bool rejected = false;    ///< 503 on every handshake (admission exhausted)
    bool complete = false;    ///< the whole protocol ran and no error was recorded
    bool interrupted = false; ///< ended early by the runner's interrupt
    int admission_denials = 0;
    std::optional<double> session_start_s; ///< origin of the packet grid
    std::optional<double> scheduled_s;     ///< open loop: the scheduled start (latency anchor)
    bool dispatched = true;                ///< open loop: false when the cap dropped it
    std::optional<double> connect_start_s;
    std::optional<double> updated_s;     ///< `session.updated` received
    std::optional<double> first_audio_s; ///< first `response.output_audio.delta`
    std::size_t expected_appends = 0;
    std::vector<append_receipt> appends;
    std::vector<std::string> errors; ///< the trace `error` messages, in order
    std::string trace_error;         ///< the writer's failure for this session
    std::uint64_t frames_received = 0;
    std::uint64_t bytes_received = 0;
    std::uint64_t trace_waits = 0;
    double trace_wait_s = 0;
    /// Send stalls: writes (of any frame) longer than `send_stall_threshold`, including one
    /// cut short by the session's end; the longest write; and, when the session was stopped
    /// (deadline, interrupt) during a write, how long that write had been pending.
    std::uint64_t stalled_sends = 0;
    std::optional<double> longest_write_s;
    std::optional<double> pending_write_s;
};

/// The receipts file content: `{"session_start_s":…,"admitted":…,"appends":[…]}`.
std::string receipts_json(const session_result& r);

/// Runs one session on the calling coroutine's executor (a single-threaded context; no
/// strand, no lock). Hands trace lines to `traces` and returns once its files are written.
/// Cancellation: none per operation; the session's own deadline (`timeout`) bounds it.
boost::asio::awaitable<session_result> run_duplex_session(session_options options,
                                                          trace::channel& traces);

} // namespace pacer::session

#pragma once
// `pacer mock`: the probe mock server of the native realtime protocol. It answers each append
// with `replies_per_append` events and measures, per session, how far each append arrived
// from that session's own 80 ms grid, plus its own event-loop lag. Fault modes let end-to-end
// tests exercise every failure path of the client against a real process.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace pacer::server {

/// Failures the mock can inject into the sessions it serves.
enum class fault {
    none,
    server_error, ///< a nonfatal `error` event after the 5th append
    fatal_error,  ///< a fatal `error` (sglang.fatal) after the 5th append, then session.closed
    malformed,    ///< a frame that is not JSON after the 5th append
    vanish,       ///< the TCP connection is dropped after the 5th append (no close frame)
    stall,        ///< the session stops answering after the 5th append (client times out)
    no_created,   ///< never sends `session.created` (client times out)
    nonfinite,    ///< a frame with NaN in it after the 5th append
    binary,       ///< a binary frame (valid JSON inside) after the 5th append
    huge_frame,   ///< a 9 MiB frame, over the client's 8 MiB limit, after the 5th append
    /// stops reading its socket after the 5th append, for good (the connection stays open,
    /// nothing more is sent): the TCP window fills and the client's sends block. With this
    /// fault every accepted socket gets a small receive buffer and MSS, so the window fills
    /// within seconds rather than after megabytes.
    stop_reading,
};

/// Parses a fault name (`none`, `server_error`, ...); throws std::invalid_argument.
fault parse_fault(std::string_view name);

struct mock_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;       ///< 0: any free port
    int replies_per_append = 3;   ///< audio delta, transcript delta, unit.done, in turn
    std::size_t max_sessions = 0; ///< concurrent sessions before HTTP 503; 0: no limit
    std::size_t reject_first = 0; ///< answer the first N handshakes with HTTP 503
    fault inject = fault::none;
    std::size_t fault_every = 1; ///< the fault hits sessions 0, K, 2K... (accept order)
    int output_sample_rate = 22050;
};

/// The probe mock on one io_context (run it on one thread: no strand, no lock).
class probe_mock {
public:
    probe_mock(boost::asio::io_context& ctx, mock_options options);
    ~probe_mock();

    /// Binds and listens; throws std::system_error when the address cannot be used.
    void listen();
    /// The bound port (after `listen`).
    std::uint16_t port() const;
    /// Accepts sessions until `stop()`. Cancellation: `stop()`.
    boost::asio::awaitable<void> serve();
    /// Stops accepting and the loop monitor; open sessions end when their peers close, and
    /// sessions that stopped reading (`fault::stop_reading`) end at once.
    /// Thread safety: must be called on the mock's io_context (post it there).
    void stop();

    /// Arrival deviation, loop lag, sessions, CPU: the `--stats-output` document.
    boost::json::object stats() const;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

} // namespace pacer::server

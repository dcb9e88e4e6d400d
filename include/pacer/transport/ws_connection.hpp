#pragma once
// A WebSocket client connection with the handshake the reference harness uses: no
// compression, no keepalive pings, no subprotocol, text frames, 8 MiB inbound limit.
// Beast stays inside the .cpp so sessions compile in seconds.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace pacer::transport {

/// Where a `ws://host:port/target` URL points.
struct ws_endpoint {
    std::string host;
    std::string port = "80";
    std::string target = "/";
};

/// Parses `ws://HOST[:PORT][/PATH]` (IPv6 hosts in brackets). Throws std::invalid_argument
/// with a one-line reason for anything else (wss:// is not supported).
ws_endpoint parse_ws_url(std::string_view url);

/// Largest inbound message accepted (`MAX_MESSAGE_BYTES`).
inline constexpr std::size_t max_message_bytes = 8 * 1024 * 1024;

struct handshake_result {
    boost::system::error_code ec; ///< empty on success
    unsigned http_status = 0;     ///< the status when the server declined the upgrade
    std::string message;          ///< the trace text of a failure (`OSError: …`)
};

/// One client WebSocket. Not thread-safe: use it from one executor (a session's context).
/// At most one read and one write may be outstanding at a time.
class ws_connection {
public:
    explicit ws_connection(boost::asio::any_io_executor ex);
    ~ws_connection();
    ws_connection(const ws_connection&) = delete;
    ws_connection& operator=(const ws_connection&) = delete;

    /// Resolves, connects and performs the upgrade. A declined upgrade (e.g. HTTP 503) gives
    /// `http_status`. Cancellation: `cancel()` makes it complete with operation_aborted.
    boost::asio::awaitable<handshake_result> connect(const ws_endpoint& ep);

    /// Writes one text message.
    boost::asio::awaitable<boost::system::error_code> write(std::string_view text);

    /// Reads one message into `out` (cleared first).
    boost::asio::awaitable<boost::system::error_code> read(std::string& out);

    /// Whether the last message read was a binary frame (the protocol allows only text).
    bool last_was_binary() const;

    /// A normal close handshake (code 1000), bounded by `timeout`, then the socket is closed.
    boost::asio::awaitable<void> close(std::chrono::milliseconds timeout);

    /// Cancels outstanding operations; they complete with operation_aborted.
    void cancel();

    /// Whether the WebSocket is open (upgraded and not closed).
    bool is_open() const;

    /// The trace text for a read or write failure, in the reference's words:
    /// `ConnectionClosedError: …`, `ConnectionClosedOK: …` or `OSError: …`.
    std::string describe(boost::system::error_code ec) const;

    /// Whether `ec` is a close that the peer started with a close frame.
    bool closed_by_peer(boost::system::error_code ec) const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace pacer::transport

#pragma once
// Module `transport` (module table: cmake/PacerModules.cmake, docs/architecture.md) owns the
// WebSocket client (TLS, headers, admission), HTTP client, SSE parser, OpenAI stream chunks. It
// may include core; it may not include schedule, trace, runtime, protocol, session, console,
// capacity_search, metrics, server, telemetry, report, record, sweep, run, http, cli (or fails).
//
// A WebSocket client connection with the handshake the reference harness uses: no
// compression, no keepalive pings, no subprotocol, text frames, 8 MiB inbound limit.
// Beast stays inside the .cpp so sessions compile in seconds.

#include <pacer/core/awaitable.hpp>
#include <pacer/transport/error.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pacer::transport {

/// How long each phase of one connection took, in seconds: TCP connect (after the name was
/// resolved), TLS handshake (0 for ws://) and WebSocket upgrade.
struct handshake_times {
    double connect_s = 0;
    double tls_s = 0;
    double upgrade_s = 0;
};

/// Collects `handshake_times` from every connection that upgraded, from any thread: one entry
/// per admitted session (a 503-declined attempt records nothing).
class handshake_log {
public:
    void add(const handshake_times& t) {
        std::lock_guard lock(mutex_);
        times_.push_back(t);
    }
    std::vector<handshake_times> snapshot() const {
        std::lock_guard lock(mutex_);
        return times_;
    }

private:
    mutable std::mutex mutex_;
    std::vector<handshake_times> times_;
};

/// A client TLS configuration (an OpenSSL context: trust store, verification), built once and
/// shared by every connection of a run. Opaque: Asio's SSL stays inside the transport's .cpp.
struct tls_client_context;

/// Builds a client TLS context, shared by the WebSocket (wss://) and HTTP (https://) clients:
/// TLS 1.2 or newer; with `insecure`, no verification; otherwise peer verification against
/// `ca_file` (PEM) or, when empty, the system's CA store (each connection also checks the
/// server's name and sends SNI). Throws bad_input naming the file (with OpenSSL's
/// reason) when it cannot be loaded.
std::shared_ptr<tls_client_context> make_tls_client_context(const std::string& ca_file,
                                                            bool insecure);

/// The client's settings beyond the address, carried by `ws_endpoint` to every connection.
struct client_options {
    /// PEM file of trusted CAs for wss://; empty: the system's CA store.
    std::string ca_file;
    /// wss:// without verifying the server's certificate (nor its name).
    bool insecure = false;
    /// Extra handshake headers (`Name`, `value`), in order. The values may be secrets (an API
    /// key): never print or record them; `header_names()` is what reports may show.
    std::vector<std::pair<std::string, std::string>> headers;
    /// Built by `prepare_tls` for wss://; a connection without one builds its own.
    std::shared_ptr<tls_client_context> tls_context;
    /// Optional: where every upgraded connection reports its handshake phases.
    std::shared_ptr<handshake_log> handshakes;

    std::vector<std::string> header_names() const;
};

/// Where a `ws://host:port/target` (or `wss://`) URL points, and how to connect there.
struct ws_endpoint {
    std::string host;
    std::string port = "80";
    std::string target = "/";
    bool tls = false; ///< wss://
    client_options client;
};

/// Parses `ws://HOST[:PORT][/PATH]` or `wss://HOST[:PORT][/PATH]` (IPv6 hosts in brackets;
/// default ports 80 and 443). Throws bad_input with a one-line reason for anything
/// else.
ws_endpoint parse_ws_url(std::string_view url);

/// The value of the query parameter `name` in `target` (`/path?a=1&b=2`), decoded as servers
/// read a query (`%XX` and `+` for a space); nullopt when there is no such parameter.
std::optional<std::string> query_parameter(std::string_view target, std::string_view name);

/// `target` with `name=value` appended to its query (after any parameters already there;
/// `?` added when there is none), `value` percent-encoded: RFC 3986's unreserved characters
/// stay, every other byte becomes `%XX`. `name` is taken as it is (a plain token).
std::string with_query_parameter(std::string_view target, std::string_view name,
                                 std::string_view value);

/// Builds `ep.client.tls_context` for a wss:// endpoint from `ca_file` and `insecure` (the
/// system CA store when no file is given); nothing for ws://. Throws bad_input
/// naming the file when the CA file cannot be loaded.
void prepare_tls(ws_endpoint& ep);

/// Checks one `--header` argument, `Name: value`: a token name, no CR/LF/NUL, not a header the
/// WebSocket handshake sets itself (Host, Upgrade, Connection, Sec-WebSocket-*). Returns the
/// name and the value (surrounding blanks trimmed); throws bad_input with a reason
/// that names the header but never shows its value.
std::pair<std::string, std::string> parse_header(std::string_view text);

/// Largest inbound message accepted (`MAX_MESSAGE_BYTES`).
inline constexpr std::size_t max_message_bytes = 8 * 1024 * 1024;

struct handshake_result {
    boost::system::error_code ec; ///< empty on success
    unsigned http_status = 0;     ///< the status when the server declined the upgrade
    failure error;                ///< what failed (a transport_errc), its code empty on success
};

/// One client WebSocket. Not thread-safe: use it from one executor (a session's context).
/// At most one read and one write may be outstanding at a time.
class ws_connection {
public:
    explicit ws_connection(pacer::executor ex);
    ~ws_connection();
    ws_connection(const ws_connection&) = delete;
    ws_connection& operator=(const ws_connection&) = delete;

    /// Resolves, connects and performs the upgrade. A declined upgrade (e.g. HTTP 503) gives
    /// `http_status`. Cancellation: `cancel()` makes it complete with operation_aborted.
    pacer::awaitable<handshake_result> connect(const ws_endpoint& ep);

    /// Writes one text message.
    pacer::awaitable<boost::system::error_code> write(std::string_view text);

    /// Reads one message; `message()` then views it.
    pacer::awaitable<boost::system::error_code> read();
    /// The message the last successful `read` gave, valid until the next `read`. It lives in
    /// the connection's own buffer, reused from message to message (no zero-filled string
    /// grown for each one).
    std::string_view message() const;

    /// Whether the last message read was a binary frame (the protocol allows only text).
    bool last_was_binary() const;

    /// A normal close handshake (code 1000), bounded by `timeout`, then the socket is closed.
    pacer::awaitable<void> close(std::chrono::milliseconds timeout);

    /// Cancels outstanding operations; they complete with operation_aborted.
    void cancel();

    /// Whether the WebSocket is open (upgraded and not closed).
    bool is_open() const;

    /// What a read or write failure means (a transport_errc: the close the server started,
    /// an end without a close frame, a frame too big, another socket error), with its data.
    failure failure_of(boost::system::error_code ec) const;

    /// Whether `ec` is a close that the peer started with a close frame.
    bool closed_by_peer(boost::system::error_code ec) const;

    /// The phases of the last `connect()` (zeros for a phase not reached).
    handshake_times times() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace pacer::transport

#pragma once
// A streaming HTTP/1.1 client on Beast with a keep-alive connection pool: what `pacer http`
// sends its requests through, over plain TCP (`http://`) or TLS (`https://`: OpenSSL through
// Beast's SSL stream, with the client TLS context the WebSocket client uses).
//
// `http_pool::post_stream` POSTs one body and hands the response body to the caller as it
// arrives (chunked or not), stamping each piece with the clock; the caller parses it (SSE).
// A connection whose response ended cleanly and allows keep-alive goes back to the pool; any
// other is closed. A request whose pooled connection the server had already closed (the race of
// every keep-alive client: nothing of the answer arrived) is sent again on the next pooled
// connection, or on a new one; a new connection is never retried.
// Errors are data (`http_exchange::error`), never exceptions.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>

#include <boost/asio/ip/tcp.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pacer::transport {

namespace detail {
class socket_deadline;
}

struct tls_client_context; // ws_connection.hpp; built by make_tls_client_context

/// Where requests go: `http://HOST[:PORT][/PREFIX]` or `https://...`.
struct http_endpoint {
    std::string host;
    std::string port = "80"; ///< "443" for https:// without a port
    /// A base URL's prefix without a trailing '/', e.g. "" or "/api"; a GET URL's path as given.
    std::string base_path;
    std::string query; ///< a GET URL's query, without its '?' (a base URL has none)
    bool tls = false;  ///< https://
    /// https://: the trust settings (`make_tls_client_context`); the pool builds one with the
    /// system CA store when none is given.
    std::shared_ptr<tls_client_context> tls_context;

    /// `http://host:port/prefix` or `https://...` (IPv6 hosts in brackets).
    std::string url() const;
    /// The request target of the URL itself: the path ("/" when none) and the query.
    std::string target() const;
    /// `target()` with `key=value` added to its query.
    std::string target_with(std::string_view key_value) const;
};

/// What a URL names.
enum class url_use {
    base, ///< a base URL (`--base-url`): http:// or https://, a path prefix, no query
    get,  ///< a resource to GET (`serve --server-metrics`): http:// only, a path and a query
};

/// Parses a URL: `http[s]://host[:port][/prefix]` as a base URL, `http://host[:port][/path]
/// [?query]` as a GET URL (IPv6 hosts in brackets). The one URL parser of HTTP: throws
/// bad_input with one line naming `flag` for anything else (a scheme not taken, a
/// fragment, a query in a base URL, credentials, an empty host, a port that is not 1..65535).
http_endpoint parse_http_url(std::string_view url, std::string_view flag = "--base-url",
                             url_use use = url_use::base);

/// How an exchange ended.
enum class http_error {
    none,       ///< a 2xx answer read to its end
    connect,    ///< the connection could not be made
    status,     ///< the server answered with a status that is not 2xx
    timeout,    ///< the deadline passed first
    disconnect, ///< the connection ended before the answer did
    aborted,    ///< the caller's sink stopped reading (a malformed stream)
};

/// "none", "connect", "status", "timeout", "disconnect", "aborted".
std::string_view to_string(http_error e) noexcept;

struct http_exchange {
    http_error error = http_error::none;
    unsigned status = 0; ///< the HTTP status, 0 when none was read
    std::string message; ///< what went wrong (for `status`: the start of the body)
    bool reused = false; ///< it went over a pooled keep-alive connection
    /// A new connection's setup, in seconds: TCP connect (after name resolution) and the TLS
    /// handshake (https:// only); nullopt over a reused connection or a phase not reached.
    std::optional<double> connect_s, tls_s;
};

/// Receives a response as it arrives. Both callbacks run on the pool's executor.
struct http_body_sink {
    /// The status line and headers were read at `t` (any status).
    std::function<void(unsigned status, time_point t)> on_head;
    /// A piece of a 2xx body was read at `t`; return false to stop (the exchange then ends
    /// with `aborted` and its connection is closed).
    std::function<bool(std::string_view bytes, time_point t)> on_data;
};

using header_list = std::vector<std::pair<std::string, std::string>>;

/// Keep-alive connections to one endpoint.
///
/// @par Thread safety
/// None: use from one thread (the executor of a single-threaded io_context).
class http_pool {
public:
    http_pool(pacer::executor ex, http_endpoint endpoint);
    ~http_pool();
    http_pool(const http_pool&) = delete;
    http_pool& operator=(const http_pool&) = delete;

    /// POSTs `body` (JSON) to `target` with `headers` and streams the answer to `sink`, within
    /// `deadline` for the whole exchange (connect included).
    pacer::awaitable<http_exchange> post_stream(std::string target, std::string body,
                                                const header_list& headers, time_point deadline,
                                                http_body_sink& sink);

    /// GETs `target` with `headers` (no body; `Accept` defaults to text/event-stream, a header
    /// given replaces it) and streams the answer to `sink`, as `post_stream` does.
    pacer::awaitable<http_exchange> get_stream(std::string target, const header_list& headers,
                                               time_point deadline, http_body_sink& sink);

    /// Closes every idle connection.
    void close_idle();

    const http_endpoint& endpoint() const noexcept { return endpoint_; }
    std::size_t connections_opened() const noexcept { return opened_; }
    std::size_t connections_reused() const noexcept { return reused_; }
    std::size_t idle() const noexcept;
    /// The setup of every connection opened, in seconds, in order: TCP connect, and the TLS
    /// handshake (https:// only, else empty).
    const std::vector<double>& connect_times() const noexcept { return connect_times_; }
    const std::vector<double>& tls_times() const noexcept { return tls_times_; }

private:
    struct connection;
    struct idle_set;
    struct request_head;
    std::shared_ptr<const request_head> head_for(bool post, const std::string& target,
                                                 const header_list& headers);
    pacer::awaitable<http_exchange> exchange(bool post, std::string target, std::string body,
                                             const header_list& headers, time_point deadline,
                                             http_body_sink& sink);
    // Resolves (once), connects and, over TLS, handshakes a new connection; false with
    // `out`'s error set when it cannot.
    pacer::awaitable<bool> open(connection& conn, detail::socket_deadline& watchdog,
                                http_exchange& out);

    pacer::executor ex_;
    http_endpoint endpoint_;
    std::unique_ptr<idle_set> idle_;
    std::vector<boost::asio::ip::tcp::endpoint> resolved_;
    std::size_t opened_ = 0, reused_ = 0;
    std::vector<double> connect_times_, tls_times_;
    std::shared_ptr<const request_head> head_; // of the last target and headers
};

} // namespace pacer::transport

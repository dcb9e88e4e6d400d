#pragma once
// A byte stream that is plain TCP or TLS over TCP, chosen at run time, beneath a Beast
// WebSocket: the client connection (src/transport/ws_connection.cpp) and the mocks' listener
// (src/server/mock_host.cpp) share it. Only their sources include it (it pulls in Asio's SSL).
//
// Plain TCP reads go through a read buffer (Beast's `buffered_read_stream`): Beast's WebSocket
// reads a frame header into its small buffer (about 1.5 kB) and then the rest of the payload,
// one socket read each, so a 5 kB message and the small ones behind it cost several `recvmsg`.
// Buffered, one `recvmsg` takes everything the socket holds (up to `read_buffer_bytes`) and
// the following reads are copies from memory. TLS needs none: OpenSSL reads whole records.
//
// The TCP layer is Asio's socket on pacer's typed executor, not Beast's `tcp_stream`: that one
// keeps its state behind a `shared_ptr` and checks its timer on every read and write, for
// timeouts a session never sets. The few deadlines there are (handshakes) are a
// `socket_deadline` below.

#include <pacer/core/awaitable.hpp>

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/buffered_read_stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <utility>

namespace pacer::transport::detail {

/// A TCP socket, acceptor and resolver on pacer's executor.
using tcp_socket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, pacer::executor>;
using tcp_acceptor = boost::asio::basic_socket_acceptor<boost::asio::ip::tcp, pacer::executor>;
using tcp_resolver = boost::asio::ip::basic_resolver<boost::asio::ip::tcp, pacer::executor>;

/// A deadline that closes the socket it watches when it passes, unless disarmed (or destroyed)
/// first: the pending operations then complete with an error, and `fired()` says why. For a
/// handshake whose peer may never answer, or one HTTP exchange whose connection may change
/// (`watch`). The timer's handler holds only shared state, so it may run after this object and
/// the socket are gone.
class socket_deadline {
public:
    /// Passes at `at`, watching no socket yet.
    socket_deadline(const pacer::executor& ex, std::chrono::steady_clock::time_point at)
        : state_(std::make_shared<state>()), timer_(ex) {
        timer_.expires_at(at);
        timer_.async_wait([st = state_](const boost::system::error_code& ec) {
            if (ec || st->done)
                return;
            st->fired = true;
            if (st->socket) {
                boost::system::error_code ignored;
                st->socket->close(ignored);
            }
        });
    }
    /// Passes `after` from now, watching `socket`.
    socket_deadline(tcp_socket& socket, std::chrono::steady_clock::duration after)
        : socket_deadline(socket.get_executor(), std::chrono::steady_clock::now() + after) {
        watch(&socket);
    }
    socket_deadline(const socket_deadline&) = delete;
    socket_deadline& operator=(const socket_deadline&) = delete;
    ~socket_deadline() { disarm(); }

    /// The socket to close when the deadline passes (nullptr: none).
    void watch(tcp_socket* socket) { state_->socket = socket; }
    /// Nothing is closed from now on.
    void disarm() {
        state_->done = true;
        state_->socket = nullptr;
        timer_.cancel();
    }
    /// Whether the deadline passed (and closed the socket watched then, if any).
    bool fired() const { return state_->fired; }

private:
    struct state {
        tcp_socket* socket = nullptr;
        bool fired = false;
        bool done = false;
    };
    std::shared_ptr<state> state_;
    steady_timer timer_;
};

/// Plain until `use_tls()`; then every read and write goes through TLS (Beast's `ssl_stream`,
/// which coalesces buffer sequences into one record). `next_layer()` is the TCP socket in both
/// cases, so `beast::get_lowest_layer` reaches it.
class maybe_tls_stream {
public:
    using executor_type = pacer::executor;
    using tls_type = boost::beast::ssl_stream<tcp_socket>;
    using plain_type = boost::beast::buffered_read_stream<tcp_socket, boost::beast::flat_buffer>;

    /// The most one plain-TCP socket read takes. Only what arrives is written into it, and the
    /// buffer starts over at its beginning once drained, so mostly its first pages are used.
    static constexpr std::size_t read_buffer_bytes = 32 * 1024;

    explicit maybe_tls_stream(const executor_type& ex) : plain_(std::in_place, ex) {
        buffer_reads();
    }
    explicit maybe_tls_stream(tcp_socket&& s) : plain_(std::in_place, std::move(s)) {
        buffer_reads();
    }
    maybe_tls_stream(const maybe_tls_stream&) = delete;
    maybe_tls_stream& operator=(const maybe_tls_stream&) = delete;

    /// From now on the stream speaks TLS (handshake it through `tls()`). Call before any I/O
    /// and before taking a reference to `next_layer()`: the TCP socket moves into the TLS stream.
    void use_tls(boost::asio::ssl::context& ctx) {
        if (tls_)
            return;
        tls_.emplace(std::move(plain_->next_layer()), ctx);
        plain_.reset();
    }
    /// The TLS layer, or nullptr for plain TCP.
    tls_type* tls() { return tls_ ? &*tls_ : nullptr; }

    executor_type get_executor() { return next_layer().get_executor(); }
    tcp_socket& next_layer() { return tls_ ? tls_->next_layer() : plain_->next_layer(); }
    const tcp_socket& next_layer() const {
        return tls_ ? tls_->next_layer() : plain_->next_layer();
    }
    /// Bytes read from the plain TCP socket and not yet handed on (always 0 over TLS).
    std::size_t buffered_bytes() const { return plain_ ? plain_->buffer().size() : 0; }

    template <class MutableBufferSequence, class Token>
    auto async_read_some(const MutableBufferSequence& buffers, Token&& token) {
        if (tls_)
            return tls_->async_read_some(buffers, std::forward<Token>(token));
        return plain_->async_read_some(buffers, std::forward<Token>(token));
    }

    template <class ConstBufferSequence, class Token>
    auto async_write_some(const ConstBufferSequence& buffers, Token&& token) {
        if (tls_)
            return tls_->async_write_some(buffers, std::forward<Token>(token));
        return plain_->async_write_some(buffers, std::forward<Token>(token));
    }

    template <class MutableBufferSequence>
    std::size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
        if (tls_)
            return tls_->read_some(buffers, ec);
        return plain_->read_some(buffers, ec);
    }
    template <class ConstBufferSequence>
    std::size_t write_some(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
        if (tls_)
            return tls_->write_some(buffers, ec);
        return plain_->next_layer().write_some(buffers, ec);
    }

private:
    void buffer_reads() {
        plain_->buffer().reserve(read_buffer_bytes);
        plain_->capacity(read_buffer_bytes);
    }

    std::optional<plain_type> plain_;
    std::optional<tls_type> tls_;
};

/// The WebSocket close's teardown (found by Beast through ADL): the TLS shutdown, then the TCP
/// one, or only the latter.
inline void teardown(boost::beast::role_type role, maybe_tls_stream& s,
                     boost::system::error_code& ec) {
    if (auto* t = s.tls())
        boost::beast::teardown(role, *t, ec);
    else
        boost::beast::websocket::teardown(role, s.next_layer(), ec);
}

template <class TeardownHandler>
void async_teardown(boost::beast::role_type role, maybe_tls_stream& s, TeardownHandler&& handler) {
    if (auto* t = s.tls())
        boost::beast::async_teardown(role, *t, std::forward<TeardownHandler>(handler));
    else
        boost::beast::websocket::async_teardown(role, s.next_layer(),
                                                std::forward<TeardownHandler>(handler));
}

} // namespace pacer::transport::detail

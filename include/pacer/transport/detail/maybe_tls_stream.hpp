#pragma once
// A byte stream that is plain TCP or TLS over TCP, chosen at run time, beneath a Beast
// WebSocket: the client connection (src/transport/ws_connection.cpp) and the mocks' listener
// (src/server/mock_host.cpp) share it. Only their sources include it (it pulls in Asio's SSL).

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <optional>
#include <utility>

namespace pacer::transport::detail {

/// Plain until `use_tls()`; then every read and write goes through TLS (Beast's `ssl_stream`,
/// which coalesces buffer sequences into one record). `next_layer()` is the TCP stream in both
/// cases, so `beast::get_lowest_layer` reaches the socket.
class maybe_tls_stream {
public:
    using executor_type = boost::beast::tcp_stream::executor_type;
    using tls_type = boost::beast::ssl_stream<boost::beast::tcp_stream>;

    explicit maybe_tls_stream(const executor_type& ex) : plain_(std::in_place, ex) {}
    explicit maybe_tls_stream(boost::beast::tcp_stream&& s) : plain_(std::in_place, std::move(s)) {}
    maybe_tls_stream(const maybe_tls_stream&) = delete;
    maybe_tls_stream& operator=(const maybe_tls_stream&) = delete;

    /// From now on the stream speaks TLS (handshake it through `tls()`). Call before any I/O
    /// and before taking a reference to `next_layer()`: the TCP stream moves into the TLS one.
    void use_tls(boost::asio::ssl::context& ctx) {
        if (tls_)
            return;
        tls_.emplace(std::move(*plain_), ctx);
        plain_.reset();
    }
    /// The TLS layer, or nullptr for plain TCP.
    tls_type* tls() { return tls_ ? &*tls_ : nullptr; }

    executor_type get_executor() { return next_layer().get_executor(); }
    boost::beast::tcp_stream& next_layer() { return tls_ ? tls_->next_layer() : *plain_; }
    const boost::beast::tcp_stream& next_layer() const {
        return tls_ ? tls_->next_layer() : *plain_;
    }

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
        return plain_->socket().read_some(buffers, ec);
    }
    template <class ConstBufferSequence>
    std::size_t write_some(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
        if (tls_)
            return tls_->write_some(buffers, ec);
        return plain_->socket().write_some(buffers, ec);
    }

private:
    std::optional<boost::beast::tcp_stream> plain_;
    std::optional<tls_type> tls_;
};

/// The WebSocket close's teardown (found by Beast through ADL): the TLS shutdown, then the TCP
/// one, or only the latter.
inline void teardown(boost::beast::role_type role, maybe_tls_stream& s,
                     boost::system::error_code& ec) {
    if (auto* t = s.tls())
        boost::beast::teardown(role, *t, ec);
    else
        boost::beast::websocket::teardown(role, s.next_layer().socket(), ec);
}

template <class TeardownHandler>
void async_teardown(boost::beast::role_type role, maybe_tls_stream& s, TeardownHandler&& handler) {
    if (auto* t = s.tls())
        boost::beast::async_teardown(role, *t, std::forward<TeardownHandler>(handler));
    else
        boost::beast::websocket::async_teardown(role, s.next_layer().socket(),
                                                std::forward<TeardownHandler>(handler));
}

} // namespace pacer::transport::detail

#pragma once
// The TLS settings every pacer client and mock shares (OpenSSL through Asio's SSL): the client
// context (TLS 1.2+, the system CA store or a CA file, or no verification), the per-connection
// SNI and host-name check, the words of a failed handshake, and the mocks' server context. The
// WebSocket client (ws_connection.cpp), the HTTP client (http_client.cpp) and the mocks use
// these; only transport and server sources include this header (it pulls in Asio's SSL).

#include <pacer/transport/detail/maybe_tls_stream.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <memory>
#include <string>

namespace pacer::transport {

/// A client TLS configuration (declared in ws_connection.hpp, built by
/// `make_tls_client_context`).
struct tls_client_context {
    boost::asio::ssl::context ctx{boost::asio::ssl::context::tls_client};
    std::string ca_file; ///< empty: the system CA store
    bool insecure = false;
};

namespace detail {

using tls_stream = maybe_tls_stream::tls_type;

/// Before a client handshake on `s` to `host`: SNI with the host name (never for an address
/// literal, RFC 6066 section 3) and, unless the context is insecure, the host-name check.
/// Returns "" or what went wrong.
std::string prepare_client_handshake(tls_stream& s, const tls_client_context& ctx,
                                     const std::string& host);

/// One line about a failed client handshake (no prefix): "TLS handshake with HOST:PORT:
/// certificate verify failed: REASON (trusted: ...; see --ca-file)" or "... : MESSAGE".
std::string describe_handshake_failure(tls_stream& s, const tls_client_context& ctx,
                                       const boost::system::error_code& ec, const std::string& host,
                                       const std::string& port);

/// The mocks' server context from a PEM certificate (chain) and key: nullptr when both are
/// empty. Throws bad_input (naming --tls-cert / --tls-key) when only one is given
/// or either cannot be loaded.
std::unique_ptr<boost::asio::ssl::context> make_tls_server_context(const std::string& cert,
                                                                   const std::string& key);

} // namespace detail
} // namespace pacer::transport

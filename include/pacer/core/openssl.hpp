#pragma once
// The OpenSSL calls pacer makes itself, in one place (src/core/openssl.cpp, the only file that
// includes an OpenSSL header): the SHA-256 digest (core/sha256.hpp) and the three TLS details
// that Asio's ssl:: wrapper does not expose, which module transport's TLS code asks for by the
// connection's native handle. TLS policy (versions, trust, host-name checks) stays in transport,
// through Asio; nothing here knows a socket.

#include <string>
#include <string_view>

struct ssl_st; // OpenSSL's SSL, as asio::ssl::stream::native_handle() gives it

namespace pacer::openssl {

/// Sends `host` as the TLS server name (SNI) of the connection `ssl`. False when OpenSSL
/// refuses it.
bool set_server_name(ssl_st* ssl, const std::string& host);

/// Why the peer's certificate failed verification on `ssl` (OpenSSL's words, e.g.
/// "self-signed certificate"), or "" when it verified or was not checked.
std::string verify_failure(const ssl_st* ssl);

/// The reason of the first error in this thread's OpenSSL error queue, or `fallback` when the
/// queue is empty; clears the queue.
std::string first_error_reason(std::string_view fallback);

} // namespace pacer::openssl

#pragma once
// The failures of a WebSocket connection (transport::ws_connection): an error enum with its
// category, in the manner of Boost.Redis's error.hpp. Each code's reference text
// (pacer::reference_text) is the one the reference client wrote; its kind and, for the phases
// of connecting, its reach condition are pacer::failure_kind / pacer::reach_failure.

#include <pacer/core/failure.hpp>

#include <boost/system/error_code.hpp>

#include <type_traits>

namespace pacer::transport {

/// Why a connection failed. The `failure` that carries one holds the data its text quotes.
enum class transport_errc {
    /// The TLS client context could not be built; detail: why.
    /// "OSError: TLS: <detail>"
    tls_setup_failed = 1,
    /// The TLS handshake could not start or failed; detail: the line that says why.
    /// "OSError: <detail>"
    tls_handshake_failed,
    /// The host did not resolve; detail: the host; cause: the resolver's error.
    /// "OSError: cannot resolve <detail>: <cause>"
    resolve_failed,
    /// The TCP connect failed; detail: HOST:PORT; cause: the socket's error.
    /// "OSError: connect to <detail>: <cause>"
    connect_failed,
    /// The WebSocket upgrade failed (not declined); cause: Beast's error.
    /// "OSError: handshake: <cause>"
    upgrade_failed,
    /// The server answered the upgrade with a status; detail: the status ("503").
    /// "InvalidStatus: server rejected WebSocket connection: HTTP <detail>"
    upgrade_declined,
    /// The server closed with 1000; detail: the close frame ("1000 (OK) reason").
    /// "ConnectionClosedOK: received <detail>; then sent <detail>"
    closed_normally,
    /// The server closed with another code; detail: the close frame.
    /// "ConnectionClosedError: received <detail>; then sent <detail>"
    closed_with_error,
    /// The connection ended without a close frame (EOF, reset); cause: the socket's error.
    /// "ConnectionClosedError: no close frame received or sent (<cause>)"
    closed_without_frame,
    /// A frame larger than the limit; detail: the limit in bytes.
    /// "ConnectionClosedError: sent 1009 (message too big); frame exceeds <detail> bytes"
    message_too_big,
    /// Any other read or write error; cause: the socket's error.
    /// "OSError: <cause>"
    io_failed,
};

/// The category of transport_errc ("pacer.transport"); its `message()` says what each code
/// means, `reference_text` writes a failure's text.
const failure_category& transport_category() noexcept;

inline boost::system::error_code make_error_code(transport_errc e) noexcept {
    return {static_cast<int>(e), transport_category()};
}

} // namespace pacer::transport

namespace boost::system {
template <>
struct is_error_code_enum<pacer::transport::transport_errc> : std::true_type {};
} // namespace boost::system

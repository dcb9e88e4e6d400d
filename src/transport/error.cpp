#include <pacer/transport/error.hpp>

#include <fmt/format.h>

namespace pacer::transport {

namespace {

using boost::system::error_condition;

class transport_category_impl final : public failure_category {
public:
    using failure_category::equivalent;
    using failure_category::message;

    const char* name() const noexcept override { return "pacer.transport"; }

    std::string message(int e) const override {
        switch (static_cast<transport_errc>(e)) {
        case transport_errc::tls_setup_failed:
            return "the TLS client context could not be built";
        case transport_errc::tls_handshake_failed:
            return "the TLS handshake failed";
        case transport_errc::resolve_failed:
            return "the host did not resolve";
        case transport_errc::connect_failed:
            return "the TCP connect failed";
        case transport_errc::upgrade_failed:
            return "the WebSocket upgrade failed";
        case transport_errc::upgrade_declined:
            return "the server declined the WebSocket upgrade";
        case transport_errc::closed_normally:
            return "the server closed the connection normally (1000)";
        case transport_errc::closed_with_error:
            return "the server closed the connection with an error code";
        case transport_errc::closed_without_frame:
            return "the connection ended without a close frame";
        case transport_errc::message_too_big:
            return "a frame exceeded the largest message accepted";
        case transport_errc::io_failed:
            return "a read or write failed";
        }
        return "unknown transport error";
    }

    error_condition default_error_condition(int e) const noexcept override {
        switch (static_cast<transport_errc>(e)) {
        case transport_errc::upgrade_declined:
            return failure_kind::invalid_status;
        case transport_errc::closed_normally:
            return failure_kind::connection_closed_ok;
        case transport_errc::closed_with_error:
        case transport_errc::closed_without_frame:
        case transport_errc::message_too_big:
            return failure_kind::connection_closed_error;
        default:
            return failure_kind::os_error;
        }
    }

    // A code is equivalent to its kind and, for a phase of connecting, to its reach condition.
    bool equivalent(int e, const error_condition& condition) const noexcept override {
        if (condition.category() == reach_failure_category())
            return reach(static_cast<transport_errc>(e)) == condition.value();
        return default_error_condition(e) == condition;
    }

    std::string reference_text(const failure& f) const override {
        const auto& d = f.detail;
        switch (static_cast<transport_errc>(f.code.value())) {
        case transport_errc::tls_setup_failed:
            return fmt::format("OSError: TLS: {}", d);
        case transport_errc::tls_handshake_failed:
            return fmt::format("OSError: {}", d);
        case transport_errc::resolve_failed:
            return fmt::format("OSError: cannot resolve {}: {}", d, f.cause.message());
        case transport_errc::connect_failed:
            return fmt::format("OSError: connect to {}: {}", d, f.cause.message());
        case transport_errc::upgrade_failed:
            return fmt::format("OSError: handshake: {}", f.cause.message());
        case transport_errc::upgrade_declined:
            return fmt::format("InvalidStatus: server rejected WebSocket connection: HTTP {}", d);
        case transport_errc::closed_normally:
            return fmt::format("ConnectionClosedOK: received {}; then sent {}", d, d);
        case transport_errc::closed_with_error:
            return fmt::format("ConnectionClosedError: received {}; then sent {}", d, d);
        case transport_errc::closed_without_frame:
            return fmt::format("ConnectionClosedError: no close frame received or sent ({})",
                               f.cause.message());
        case transport_errc::message_too_big:
            return fmt::format(
                "ConnectionClosedError: sent 1009 (message too big); frame exceeds {} bytes", d);
        case transport_errc::io_failed:
            break;
        }
        return fmt::format("OSError: {}", f.cause.message());
    }

private:
    static int reach(transport_errc e) noexcept {
        switch (e) {
        case transport_errc::resolve_failed:
            return static_cast<int>(reach_failure::cannot_resolve);
        case transport_errc::connect_failed:
            return static_cast<int>(reach_failure::cannot_connect);
        case transport_errc::upgrade_failed:
            return static_cast<int>(reach_failure::handshake_failed);
        case transport_errc::upgrade_declined:
            return static_cast<int>(reach_failure::upgrade_declined);
        default:
            return 0; // no reach condition
        }
    }
};

} // namespace

const failure_category& transport_category() noexcept {
    static const transport_category_impl instance;
    return instance;
}

} // namespace pacer::transport

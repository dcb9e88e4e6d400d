#include <pacer/protocol/events.hpp>
#include <pacer/session/error.hpp>

#include <fmt/format.h>

namespace pacer::session {

namespace {

using boost::system::error_condition;

class session_category_impl final : public failure_category {
public:
    using failure_category::equivalent;
    using failure_category::message;

    const char* name() const noexcept override { return "pacer.session"; }

    std::string message(int e) const override {
        switch (static_cast<session_errc>(e)) {
        case session_errc::closed_before_session_closed:
            return "the server closed before session.closed";
        case session_errc::malformed_frame:
            return "a server frame could not be decoded";
        case session_errc::wrong_protocol:
            return "the server speaks another protocol";
        case session_errc::server_error:
            return "the server sent an error event";
        case session_errc::internal_error:
            return "the session's own code failed";
        case session_errc::driver_stalled:
            return "the driver stalled after the receive loop";
        case session_errc::timeout:
            return "the session's deadline passed";
        case session_errc::timeout_send_pending:
            return "the session's deadline passed with a send pending";
        case session_errc::interrupted:
            return "the run was stopped by a signal";
        case session_errc::admission_rejected:
            return "admission rejected: 503 on every handshake";
        case session_errc::trace_failed:
            return "the session's trace could not be written";
        case session_errc::incomplete:
            return "the session ended without a drain or a close";
        }
        return "unknown session error";
    }

    error_condition default_error_condition(int e) const noexcept override {
        switch (static_cast<session_errc>(e)) {
        case session_errc::closed_before_session_closed:
            return failure_kind::runtime_error;
        case session_errc::malformed_frame:
            return failure_kind::value_error;
        case session_errc::wrong_protocol:
            return failure_kind::wrong_protocol;
        case session_errc::timeout:
        case session_errc::timeout_send_pending:
            return failure_kind::timeout;
        case session_errc::interrupted:
            return failure_kind::interrupted;
        case session_errc::admission_rejected:
            return failure_kind::admission_rejected;
        case session_errc::trace_failed:
            return failure_kind::trace;
        case session_errc::incomplete:
            return failure_kind::incomplete;
        default: // server_error, internal_error, driver_stalled
            return failure_kind::other;
        }
    }

    // A code is equivalent to its kind; a timeout also to "no connection in time" (which
    // matters for a session that was never admitted).
    bool equivalent(int e, const error_condition& condition) const noexcept override {
        const auto c = static_cast<session_errc>(e);
        if (condition == reach_failure::no_connection_in_time)
            return c == session_errc::timeout || c == session_errc::timeout_send_pending;
        return default_error_condition(e) == condition;
    }

    std::string reference_text(const failure& f) const override {
        const auto& d = f.detail;
        switch (static_cast<session_errc>(f.code.value())) {
        case session_errc::closed_before_session_closed:
            return "RuntimeError: Connection closed without session.closed";
        case session_errc::malformed_frame:
        case session_errc::wrong_protocol:
            return d;
        case session_errc::server_error:
            return fmt::format("server error: {}", d);
        case session_errc::internal_error:
            return fmt::format("internal error: {}", d);
        case session_errc::driver_stalled:
            return "driver stalled after the receive loop"; // no type prefix
        case session_errc::timeout:
            return fmt::format("Session timeout after {}s", d);
        case session_errc::timeout_send_pending:
            if (f.figure)
                return fmt::format("Session timeout after {}s (a send was pending for {:.2f} s: "
                                   "the server stopped reading)",
                                   d, *f.figure);
            return fmt::format(
                "Session timeout after {}s (a send was pending: the server stopped reading)", d);
        case session_errc::interrupted:
            return "Interrupted: the run was stopped by a signal";
        case session_errc::admission_rejected:
            return "admission rejected: HTTP 503, retries exhausted";
        case session_errc::trace_failed:
            return fmt::format("trace: {}", d);
        case session_errc::incomplete:
            break;
        }
        return "incomplete: no drain or no close from the server";
    }
};

} // namespace

const failure_category& session_category() noexcept {
    static const session_category_impl instance;
    return instance;
}

failure make_failure(session_errc e, std::string_view detail) {
    return {e, std::string(detail)};
}

failure malformed_frame(std::string_view frame, std::string_view reason) {
    return {session_errc::malformed_frame, protocol::malformed_frame_message(frame, reason)};
}

} // namespace pacer::session

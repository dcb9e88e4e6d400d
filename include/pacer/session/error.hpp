#pragma once
// The failures a session raises itself (the connection's own are transport::transport_errc):
// an error enum with its category, in the manner of Boost.Redis's error.hpp. Each code's
// reference text (pacer::reference_text) is the one the reference client (or pacer, for the
// run's own verdicts) wrote; its kind is a pacer::failure_kind.

#include <pacer/core/failure.hpp>

#include <boost/system/error_code.hpp>

#include <string>
#include <string_view>
#include <type_traits>

namespace pacer::session {

/// Why a session failed. The `failure` that carries one holds the data its text quotes.
enum class session_errc {
    /// The server closed (1000) before `session.closed`.
    /// "RuntimeError: Connection closed without session.closed"
    closed_before_session_closed = 1,
    /// A frame that cannot be decoded (or a binary one); detail: the whole line, which quotes
    /// the frame (protocol::malformed_frame_message).
    /// "<detail>" ("ValueError: malformed server frame '...': ...")
    malformed_frame,
    /// The first event is another protocol's; detail: the whole line (protocol/opening.hpp).
    /// "<detail>" ("...: is --protocol right?")
    wrong_protocol,
    /// The server sent an `error` event the session cannot continue after; detail: the frame.
    /// "server error: <detail>"
    server_error,
    /// The session's own code threw; detail: the exception's message.
    /// "internal error: <detail>"
    internal_error,
    /// The driver did not end after the receive loop did.
    /// "driver stalled after the receive loop"
    driver_stalled,
    /// The session's deadline; detail: the timeout's seconds as the reference prints a float.
    /// "Session timeout after <detail>s"
    timeout,
    /// The deadline, with a send pending past the stall threshold; detail: as `timeout`;
    /// figure: how long the send was pending (left out when errors are counted over sessions).
    /// "Session timeout after <detail>s (a send was pending for <figure> s: the server stopped
    /// reading)", without the figure "... (a send was pending: the server stopped reading)"
    timeout_send_pending,
    /// The run was stopped by a signal.
    /// "Interrupted: the run was stopped by a signal"
    interrupted,
    /// A run's verdict on a session: 503 on every handshake.
    /// "admission rejected: HTTP 503, retries exhausted"
    admission_rejected,
    /// A run's verdict on a session: its trace could not be written; detail: the writer's reason.
    /// "trace: <detail>"
    trace_failed,
    /// A run's verdict on a session: it ended with no error, yet without a drain or a close.
    /// "incomplete: no drain or no close from the server"
    incomplete,
};

/// The category of session_errc ("pacer.session"); its `message()` says what each code means,
/// `reference_text` writes a failure's text.
const failure_category& session_category() noexcept;

inline boost::system::error_code make_error_code(session_errc e) noexcept {
    return {static_cast<int>(e), session_category()};
}

/// A session failure with the data its text quotes.
failure make_failure(session_errc e, std::string_view detail = {});

/// A frame the session cannot decode (`malformed_frame`): its line quotes the frame and the
/// reason, worded by protocol::malformed_frame_message.
failure malformed_frame(std::string_view frame, std::string_view reason);

} // namespace pacer::session

namespace boost::system {
template <>
struct is_error_code_enum<pacer::session::session_errc> : std::true_type {};
} // namespace boost::system

#pragma once
// A failure as data (docs/architecture.md, "Errors"): an error code from the module that raised
// it (transport_errc, session_errc), the data its text quotes, and the error underneath. The
// text the reference client wrote for it (trace `error` lines, summary.json) is made from the
// code only where such a line or summary is written, by `reference_text`. The rest of pacer
// compares codes, never text: against the raising module's enum, or, in modules that may not
// know it (metrics), against the conditions below, as `ec == std::errc::...` works for the
// operating system's codes.

#include <boost/system/error_category.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/error_condition.hpp>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace pacer {

/// One failure of a session (or of a connection it made).
struct failure {
    failure() = default;
    failure(boost::system::error_code code, std::string detail = {},
            boost::system::error_code cause = {}, std::optional<double> figure = {})
        : code(code), detail(std::move(detail)), cause(cause), figure(figure) {}

    boost::system::error_code code;
    /// The data its text quotes: the host, the server's close frame, the HTTP status, the frame
    /// that could not be decoded, the timeout... ("" when the code says it all).
    std::string detail;
    /// The error underneath (the socket's, the resolver's), whose message the text quotes.
    boost::system::error_code cause;
    /// A figure measured by this session that its text quotes (how long a send was pending);
    /// counting errors over sessions leaves it out (`without_figure`).
    std::optional<double> figure;

    friend bool operator==(const failure&, const failure&) = default;
};

/// The category of every failure code: each domain's enum has one, and it writes the reference
/// client's text of its failures (`reference_text`).
class failure_category : public boost::system::error_category {
public:
    /// The text the reference client wrote for `f` (whose code is of this category).
    virtual std::string reference_text(const failure& f) const = 0;

protected:
    ~failure_category() = default;
};

/// The reference client's text of `f`, written into a trace `error` line or a summary: its
/// category's wording, or "OSError: <message>" for a code of another category.
std::string reference_text(const failure& f);

/// `f` without the session's own figure: N sessions stuck on one server count as one error.
failure without_figure(failure f);

/// The kind an error is grouped under in a summary (`errors_by_kind`): the exception type of
/// the reference client, or a name of pacer's. An error condition: every failure code maps to
/// one (its category's `default_error_condition`); the condition's `message()` is the kind's
/// name in summary.json ("OSError", "Timeout", "admission rejected"...).
enum class failure_kind {
    os_error = 1,            ///< "OSError": resolving, connecting, TLS, a socket error
    invalid_status,          ///< "InvalidStatus": the upgrade declined with an HTTP status
    connection_closed_ok,    ///< "ConnectionClosedOK": the server closed with 1000
    connection_closed_error, ///< "ConnectionClosedError": any other close, or none
    value_error,             ///< "ValueError": a frame that cannot be decoded
    runtime_error,           ///< "RuntimeError": closed before `session.closed`
    timeout,                 ///< "Timeout": the session's deadline
    admission_rejected,      ///< "admission rejected": 503 on every handshake
    wrong_protocol,          ///< "wrong protocol": another protocol's first event
    interrupted,             ///< "Interrupted": the run was stopped by a signal
    trace,                   ///< "trace": the session's trace could not be written
    incomplete,              ///< "incomplete": no drain or no close
    other,                   ///< "other": anything else
};

const boost::system::error_category& failure_kind_category() noexcept;

inline boost::system::error_condition make_error_condition(failure_kind k) noexcept {
    return {static_cast<int>(k), failure_kind_category()};
}

/// The kind of `code` (failure_kind::other for a code no failure category knows).
failure_kind kind_of(const boost::system::error_code& code) noexcept;

/// Why a session could not reach the server: error conditions the codes of the connection's
/// phases (and the session's deadline) are equivalent to. `metrics::unreachable_reason` words
/// them.
enum class reach_failure {
    cannot_resolve = 1,    ///< the host name did not resolve
    cannot_connect,        ///< the TCP connect failed (refused, unreachable...)
    handshake_failed,      ///< the WebSocket upgrade failed
    upgrade_declined,      ///< the server answered the upgrade with an HTTP status
    no_connection_in_time, ///< the session's deadline passed
};

const boost::system::error_category& reach_failure_category() noexcept;

inline boost::system::error_condition make_error_condition(reach_failure r) noexcept {
    return {static_cast<int>(r), reach_failure_category()};
}

} // namespace pacer

namespace boost::system {
template <>
struct is_error_condition_enum<pacer::failure_kind> : std::true_type {};
template <>
struct is_error_condition_enum<pacer::reach_failure> : std::true_type {};
} // namespace boost::system

// The error codes of the modules that raise them (core/failure.hpp, transport/error.hpp,
// session/error.hpp): each category's name and messages, each code's kind and reach condition,
// and the reference client's text of every code, pinned as today's traces and summary.json
// write it (the artifacts stay byte-identical: docs/protocol.md and the e2e tests read them).

#include <pacer/core/failure.hpp>
#include <pacer/session/error.hpp>
#include <pacer/transport/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/beast/websocket/error.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using namespace pacer;
using session::session_errc;
using transport::transport_errc;
namespace asio_error = boost::asio::error;

constexpr int first_transport = static_cast<int>(transport_errc::tls_setup_failed);
constexpr int last_transport = static_cast<int>(transport_errc::io_failed);
constexpr int first_session = static_cast<int>(session_errc::closed_before_session_closed);
constexpr int last_session = static_cast<int>(session_errc::incomplete);

TEST(failure_codes, transport_text_is_the_reference_clients) {
    const auto text = [](transport_errc e, std::string detail = {},
                         boost::system::error_code cause = {}) {
        return reference_text({e, std::move(detail), cause});
    };
    EXPECT_EQ(text(transport_errc::tls_setup_failed, "cannot read ca.pem"),
              "OSError: TLS: cannot read ca.pem");
    EXPECT_EQ(text(transport_errc::tls_handshake_failed, "TLS handshake with h:443: expired"),
              "OSError: TLS handshake with h:443: expired");
    EXPECT_EQ(text(transport_errc::resolve_failed, "nohost.invalid", asio_error::host_not_found),
              "OSError: cannot resolve nohost.invalid: Host not found (authoritative)");
    EXPECT_EQ(
        text(transport_errc::connect_failed, "127.0.0.1:4567", asio_error::connection_refused),
        "OSError: connect to 127.0.0.1:4567: Connection refused");
    EXPECT_EQ(text(transport_errc::upgrade_failed, "", asio_error::eof),
              "OSError: handshake: End of file");
    EXPECT_EQ(text(transport_errc::upgrade_declined, "404"),
              "InvalidStatus: server rejected WebSocket connection: HTTP 404");
    EXPECT_EQ(text(transport_errc::closed_normally, "1000 (OK) bye"),
              "ConnectionClosedOK: received 1000 (OK) bye; then sent 1000 (OK) bye");
    EXPECT_EQ(text(transport_errc::closed_with_error, "1011 (internal error) boom"),
              "ConnectionClosedError: received 1011 (internal error) boom; then sent 1011 "
              "(internal error) boom");
    EXPECT_EQ(text(transport_errc::closed_without_frame, "", asio_error::connection_reset),
              "ConnectionClosedError: no close frame received or sent (Connection reset by peer)");
    EXPECT_EQ(text(transport_errc::message_too_big, "8388608"),
              "ConnectionClosedError: sent 1009 (message too big); frame exceeds 8388608 bytes");
    EXPECT_EQ(text(transport_errc::io_failed, "", asio_error::operation_aborted),
              "OSError: Operation canceled");
}

TEST(failure_codes, session_text_is_the_reference_clients) {
    const auto text = [](session_errc e, std::string detail = {}) {
        return reference_text(session::make_failure(e, std::move(detail)));
    };
    EXPECT_EQ(text(session_errc::closed_before_session_closed),
              "RuntimeError: Connection closed without session.closed");
    EXPECT_EQ(reference_text(session::malformed_frame(
                  "{x", "ValueError: binary frame (the protocol's frames are text)")),
              "ValueError: malformed server frame '{x': ValueError: binary frame (the "
              "protocol's frames are text)");
    const std::string wrong = "server's first event was 'x', not the native protocol's "
                              "'session.created': is --protocol right?";
    EXPECT_EQ(text(session_errc::wrong_protocol, wrong), wrong);
    EXPECT_EQ(text(session_errc::server_error, R"({"type":"error"})"),
              R"(server error: {"type":"error"})");
    EXPECT_EQ(text(session_errc::internal_error, "bad_alloc"), "internal error: bad_alloc");
    EXPECT_EQ(text(session_errc::driver_stalled), "driver stalled after the receive loop");
    EXPECT_EQ(text(session_errc::timeout, "1.5"), "Session timeout after 1.5s");
    const failure pending{session_errc::timeout_send_pending, "4", {}, 2.5};
    EXPECT_EQ(reference_text(pending),
              "Session timeout after 4s (a send was pending for 2.50 s: the server stopped "
              "reading)");
    // Counted over sessions without the session's own figure.
    EXPECT_EQ(reference_text(without_figure(pending)),
              "Session timeout after 4s (a send was pending: the server stopped reading)");
    EXPECT_EQ(text(session_errc::interrupted), "Interrupted: the run was stopped by a signal");
    EXPECT_EQ(text(session_errc::admission_rejected),
              "admission rejected: HTTP 503, retries exhausted");
    EXPECT_EQ(text(session_errc::trace_failed, "disk full"), "trace: disk full");
    EXPECT_EQ(text(session_errc::incomplete), "incomplete: no drain or no close from the server");
}

TEST(failure_codes, a_code_of_another_category_reads_as_an_os_error) {
    EXPECT_EQ(reference_text({asio_error::operation_aborted}), "OSError: Operation canceled");
    EXPECT_EQ(kind_of(asio_error::operation_aborted), failure_kind::other);
    EXPECT_EQ(kind_of({}), failure_kind::other);
}

TEST(failure_codes, categories_name_themselves_and_every_code_has_its_own_message) {
    EXPECT_STREQ(transport::transport_category().name(), "pacer.transport");
    EXPECT_STREQ(session::session_category().name(), "pacer.session");
    EXPECT_STREQ(failure_kind_category().name(), "pacer.failure_kind");
    EXPECT_STREQ(reach_failure_category().name(), "pacer.reach_failure");
    std::set<std::string> messages;
    for (int e = first_transport; e <= last_transport; ++e)
        messages.insert(make_error_code(static_cast<transport_errc>(e)).message());
    for (int e = first_session; e <= last_session; ++e)
        messages.insert(make_error_code(static_cast<session_errc>(e)).message());
    EXPECT_EQ(messages.size(), static_cast<std::size_t>(last_transport - first_transport + 1 +
                                                        last_session - first_session + 1))
        << "two codes say the same";
    EXPECT_EQ(messages.count("unknown transport error"), 0u);
    EXPECT_EQ(messages.count("unknown session error"), 0u);
    EXPECT_EQ(make_error_code(transport_errc::connect_failed).message(), "the TCP connect failed");
    EXPECT_EQ(make_error_code(session_errc::timeout).message(), "the session's deadline passed");
    EXPECT_EQ(transport::transport_category().message(0), "unknown transport error");
}

TEST(failure_codes, each_code_maps_to_its_kind) {
    const auto kind = [](boost::system::error_code ec) {
        return make_error_condition(kind_of(ec)).message();
    };
    EXPECT_EQ(kind(transport_errc::tls_setup_failed), "OSError");
    EXPECT_EQ(kind(transport_errc::tls_handshake_failed), "OSError");
    EXPECT_EQ(kind(transport_errc::resolve_failed), "OSError");
    EXPECT_EQ(kind(transport_errc::connect_failed), "OSError");
    EXPECT_EQ(kind(transport_errc::upgrade_failed), "OSError");
    EXPECT_EQ(kind(transport_errc::upgrade_declined), "InvalidStatus");
    EXPECT_EQ(kind(transport_errc::closed_normally), "ConnectionClosedOK");
    EXPECT_EQ(kind(transport_errc::closed_with_error), "ConnectionClosedError");
    EXPECT_EQ(kind(transport_errc::closed_without_frame), "ConnectionClosedError");
    EXPECT_EQ(kind(transport_errc::message_too_big), "ConnectionClosedError");
    EXPECT_EQ(kind(transport_errc::io_failed), "OSError");
    EXPECT_EQ(kind(session_errc::closed_before_session_closed), "RuntimeError");
    EXPECT_EQ(kind(session_errc::malformed_frame), "ValueError");
    EXPECT_EQ(kind(session_errc::wrong_protocol), "wrong protocol");
    EXPECT_EQ(kind(session_errc::server_error), "other");
    EXPECT_EQ(kind(session_errc::internal_error), "other");
    EXPECT_EQ(kind(session_errc::driver_stalled), "other");
    EXPECT_EQ(kind(session_errc::timeout), "Timeout");
    EXPECT_EQ(kind(session_errc::timeout_send_pending), "Timeout");
    EXPECT_EQ(kind(session_errc::interrupted), "Interrupted");
    EXPECT_EQ(kind(session_errc::admission_rejected), "admission rejected");
    EXPECT_EQ(kind(session_errc::trace_failed), "trace");
    EXPECT_EQ(kind(session_errc::incomplete), "incomplete");
    // The comparison the rest of pacer makes: a code against its kind's condition.
    EXPECT_TRUE(make_error_code(transport_errc::connect_failed) == failure_kind::os_error);
    EXPECT_FALSE(make_error_code(transport_errc::connect_failed) == failure_kind::timeout);
}

TEST(failure_codes, only_the_phases_of_connecting_and_the_deadline_say_why_unreachable) {
    using boost::system::error_code;
    EXPECT_TRUE(error_code(transport_errc::resolve_failed) == reach_failure::cannot_resolve);
    EXPECT_TRUE(error_code(transport_errc::connect_failed) == reach_failure::cannot_connect);
    EXPECT_TRUE(error_code(transport_errc::upgrade_failed) == reach_failure::handshake_failed);
    EXPECT_TRUE(error_code(transport_errc::upgrade_declined) == reach_failure::upgrade_declined);
    EXPECT_TRUE(error_code(session_errc::timeout) == reach_failure::no_connection_in_time);
    EXPECT_TRUE(error_code(session_errc::timeout_send_pending) ==
                reach_failure::no_connection_in_time);
    EXPECT_FALSE(error_code(transport_errc::connect_failed) == reach_failure::cannot_resolve);
    int reaching = 0;
    for (int e = first_transport; e <= last_transport; ++e)
        for (int r = 1; r <= static_cast<int>(reach_failure::no_connection_in_time); ++r)
            reaching += error_code(static_cast<transport_errc>(e)) == static_cast<reach_failure>(r);
    EXPECT_EQ(reaching, 4) << "TLS, closes and I/O errors are no reason the server was unreachable";
    EXPECT_FALSE(error_code(session_errc::interrupted) == reach_failure::no_connection_in_time);
    EXPECT_FALSE(error_code(asio_error::timed_out) == reach_failure::no_connection_in_time);
}

} // namespace

// What `pacer run` and `pacer serve` conclude once a run is over: the exit status when several
// findings apply, an unreachable server named as such, errors grouped by kind, and the disk
// estimate checked before anything is created.

#include <pacer/cli/commands.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/outcome.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/report/error_kind.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/output_dir.hpp>
#include <pacer/session/error.hpp>
#include <pacer/trace/disk_estimate.hpp>
#include <pacer/transport/error.hpp>

#include <boost/asio/error.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace pacer::cli;
using namespace pacer::metrics;
using pacer::failure;
using pacer::format_bytes;
using pacer::session::session_errc;
using pacer::transport::transport_errc;
namespace asio_error = boost::asio::error;

TEST(exit_status, interrupted_then_client_behind_then_pacer_failure_then_server) {
    EXPECT_EQ(pacer::runtime::exit_status({}), pacer::runtime::exit_ok);
    EXPECT_EQ(pacer::runtime::exit_status({.server_failed = true}), 4);
    EXPECT_EQ(pacer::runtime::exit_status({.client_failed = true, .server_failed = true}), 1);
    EXPECT_EQ(pacer::runtime::exit_status({.client_fell_behind = true, .server_failed = true}), 3);
    EXPECT_EQ(pacer::runtime::exit_status({.client_fell_behind = true, .client_failed = true}), 3);
    EXPECT_EQ(pacer::runtime::exit_status(
                  {.interrupted = true, .client_fell_behind = true, .server_failed = true}),
              130);
    EXPECT_NE(pacer::runtime::exit_server_failed, pacer::runtime::exit_failed);
}

TEST(exit_status, an_unreachable_server_gives_no_client_verdict) {
    using pacer::runtime::exit_status;
    EXPECT_EQ(exit_status({.unreachable = true}), 4);
    EXPECT_EQ(exit_status({.client_fell_behind = true, .unreachable = true}), 4);
    EXPECT_EQ(exit_status({.client_fell_behind = true, .client_failed = true, .unreachable = true}),
              1);
    EXPECT_EQ(exit_status({.interrupted = true, .unreachable = true}), 130);
    EXPECT_NE(pacer::runtime::exit_server_failed, pacer::runtime::exit_unqualified);
    EXPECT_NE(pacer::runtime::exit_server_failed, pacer::runtime::exit_usage);
}

// Failures as the connection and the session raise them (transport/error.hpp,
// session/error.hpp): grouped by their codes' conditions, never by their text.
failure refused(std::string where) {
    return {transport_errc::connect_failed, std::move(where), asio_error::connection_refused};
}

TEST(connect_failure, names_the_real_reason) {
    EXPECT_EQ(connect_failure(refused("127.0.0.1:4567")), "connection refused");
    EXPECT_EQ(connect_failure(refused("::1:4567")), "connection refused");
    EXPECT_EQ(connect_failure(
                  {transport_errc::resolve_failed, "nohost.invalid", asio_error::host_not_found}),
              "cannot resolve nohost.invalid: host not found (authoritative)");
    EXPECT_EQ(connect_failure({transport_errc::upgrade_declined, "404"}),
              "the server declined the WebSocket upgrade: HTTP 404");
    EXPECT_EQ(connect_failure({transport_errc::upgrade_failed, "", asio_error::eof}),
              "WebSocket handshake failed: end of file");
    EXPECT_EQ(connect_failure({session_errc::timeout, "2"}),
              "no connection within the 2s session timeout");
    EXPECT_EQ(connect_failure({session_errc::timeout_send_pending, "2.5", {}, 1.0}),
              "no connection within the 2.5s session timeout");
    // Not about reaching the server: closes, a TLS context, the session's own failures.
    EXPECT_EQ(connect_failure({transport_errc::closed_with_error, "1011 (internal error)"}),
              std::nullopt);
    EXPECT_EQ(connect_failure({transport_errc::tls_setup_failed, "bad CA file"}), std::nullopt);
    EXPECT_EQ(connect_failure({transport_errc::io_failed, "", asio_error::connection_refused}),
              std::nullopt)
        << "a read's error is not a connect failure, whatever its cause";
    EXPECT_EQ(connect_failure({session_errc::driver_stalled}), std::nullopt);
    EXPECT_EQ(connect_failure({asio_error::connection_refused}), std::nullopt)
        << "a bare socket code is no phase of connecting";
}

TEST(unreachable_reason, only_when_no_session_reached_the_server) {
    const std::vector<failure> refused_1{refused("127.0.0.1:1")};
    const std::vector<failure> closed{{transport_errc::closed_normally, "1000 (OK)"}};
    const std::vector<failure> none;
    EXPECT_EQ(unreachable_reason(std::vector<connect_outcome>{{false, false, refused_1},
                                                              {false, false, refused_1}}),
              "connection refused");
    // One admitted session: the server was there.
    EXPECT_EQ(unreachable_reason(
                  std::vector<connect_outcome>{{false, false, refused_1}, {true, false, closed}}),
              std::nullopt);
    // A 503 is an answer: the server was reached and rejected the session.
    EXPECT_EQ(unreachable_reason(
                  std::vector<connect_outcome>{{false, false, refused_1}, {false, true, none}}),
              std::nullopt);
    // A session that failed for another reason.
    EXPECT_EQ(unreachable_reason(std::vector<connect_outcome>{{false, false, closed}}),
              std::nullopt);
    EXPECT_EQ(unreachable_reason(std::vector<connect_outcome>{}), std::nullopt);
    // The most frequent reason of several.
    const std::vector<failure> timed_out{{session_errc::timeout, "2"}};
    EXPECT_EQ(unreachable_reason(std::vector<connect_outcome>{
                  {false, false, timed_out}, {false, false, refused_1}, {false, false, timed_out}}),
              "no connection within the 2s session timeout");
}

TEST(count_kinds, one_count_per_session_per_kind_of_code) {
    const failure malformed{session_errc::malformed_frame, "ValueError: malformed server frame"};
    const std::vector<std::vector<failure>> sessions{
        {malformed, malformed},
        // Two codes of one kind (OSError) count once for the session.
        {refused("h:1"), {transport_errc::io_failed, "", asio_error::broken_pipe}},
        {{transport_errc::resolve_failed, "h", asio_error::host_not_found}},
        {{session_errc::timeout, "2"}, {session_errc::timeout_send_pending, "2", {}, 1.5}},
        {{session_errc::admission_rejected}},
        {},
    };
    const auto kinds = count_kinds(sessions);
    ASSERT_EQ(kinds.size(), 4u);
    EXPECT_EQ(kinds[0].what, "OSError");
    EXPECT_EQ(kinds[0].sessions, 2u);
    // Ties in the order of the kinds' names, as summary.json has always listed them.
    EXPECT_EQ(kinds[1].what, "Timeout");
    EXPECT_EQ(kinds[2].what, "ValueError");
    EXPECT_EQ(kinds[2].sessions, 1u) << "one session with two ValueErrors counts once";
    EXPECT_EQ(kinds[3].what, "admission rejected");
    EXPECT_EQ(kinds[3].sessions, 1u);
}

TEST(count_kinds, a_code_no_failure_category_knows_is_other) {
    const std::vector<std::vector<failure>> sessions{{{asio_error::operation_aborted}},
                                                     {{session_errc::server_error, "{}"}}};
    const auto kinds = count_kinds(sessions);
    ASSERT_EQ(kinds.size(), 1u);
    EXPECT_EQ(kinds[0].what, "other");
    EXPECT_EQ(kinds[0].sessions, 2u);
}

TEST(count_messages, one_count_per_session_most_frequent_first) {
    const std::vector<std::vector<std::string>> sessions{
        {"ValueError: a", "ValueError: b"},
        {"OSError: x"},
        {"OSError: x", "OSError: x"},
        {},
    };
    const auto by_message = count_messages(sessions);
    ASSERT_EQ(by_message.size(), 3u);
    EXPECT_EQ(by_message[0].what, "OSError: x");
    EXPECT_EQ(by_message[0].sessions, 2u);
    EXPECT_EQ(by_message[1].what, "ValueError: a");
    EXPECT_EQ(by_message[2].what, "ValueError: b");
}

// A report has only its artifacts' text: it reads the kind off the reference wording.
TEST(report_error_kind, the_exception_type_or_a_named_kind) {
    using pacer::report::error_kind;
    EXPECT_EQ(error_kind("ConnectionClosedError: received 1011 (internal error) x; then sent 1011 "
                         "(internal error) x"),
              "ConnectionClosedError");
    EXPECT_EQ(error_kind("ValueError: malformed server frame at 3: binary frame"), "ValueError");
    EXPECT_EQ(error_kind("server's first event was 'x', not the native protocol's "
                         "'session.created': is --protocol right?"),
              "wrong protocol");
    EXPECT_EQ(error_kind("Session timeout after 2s (a send was pending for 1.00 s: x)"), "Timeout");
    EXPECT_EQ(error_kind("admission rejected: HTTP 503, retries exhausted"), "admission rejected");
    EXPECT_EQ(error_kind("appends sent 3 != expected 13"), "other");
}

// What one second of a protocol's session puts in its trace, at least: 12.5 appends of its
// wire's packets, and the output audio at its rate as base64, each event on a trace line.
double wire_trace_bytes_per_second(std::string_view protocol) {
    namespace p = pacer::protocol;
    const std::string line = R"({"direction":"receive","time_s":12345.678901234,"event":})";
    std::string frame;
    double packet_bytes = p::packet_bytes;
    if (protocol == "native") {
        const std::vector<std::uint8_t> pcm(p::packet_bytes, 1);
        p::append_event(frame, "0123456789abcdef0123456789abcdef", pcm, 12345);
    } else {
        if (protocol == "openai-realtime")
            packet_bytes = p::openai_packet_bytes;
        p::realtime_append(frame, "0123456789abcdef0123456789abcdef",
                           std::string(static_cast<std::size_t>(packet_bytes) * 4 / 3, 'A'));
    }
    const double sent = 12.5 * static_cast<double>(frame.size() + line.size());
    // Output: native up to 24 kHz (the minicpmo profile), openai-realtime 24 kHz, vllm text.
    const double output_audio = protocol == "vllm-realtime" ? 0.0 : 24000.0 * 2 * 4 / 3;
    return sent + output_audio;
}

TEST(disk_estimate, covers_each_protocols_wire_both_ways_plus_receipts) {
    using pacer::trace::trace_bytes_estimate;
    for (const auto* protocol : {"native", "openai-realtime", "vllm-realtime"}) {
        SCOPED_TRACE(protocol);
        const double wire = wire_trace_bytes_per_second(protocol);
        EXPECT_GE(static_cast<double>(trace_bytes_estimate(1, 100.0, protocol)), 100.0 * wire);
        // ... without doubling it (a needless refusal of a disk that can hold the run).
        EXPECT_LE(static_cast<double>(trace_bytes_estimate(1, 100.0, protocol)), 200.0 * wire);
    }
    // openai-realtime's 24 kHz base64 is the largest wire (issue 33 item 8: 4.5 MB estimated
    // for 5.5 MB written when it was counted as native).
    EXPECT_GT(trace_bytes_estimate(10, 2.0, "openai-realtime"),
              trace_bytes_estimate(10, 2.0, "native"));
    EXPECT_GT(trace_bytes_estimate(10, 2.0, "native"),
              trace_bytes_estimate(10, 2.0, "vllm-realtime"));
    EXPECT_EQ(trace_bytes_estimate(10, 2.0, "native"), 2'500'000u);
    EXPECT_EQ(trace_bytes_estimate(0, 2.0, "openai-realtime"), 0u);
    // 25 appends of about 150 bytes, and 4 kB of other files.
    EXPECT_EQ(pacer::trace::receipt_bytes_estimate(2, 2.0), 2u * (25u * 150u + 4096u));
    EXPECT_EQ(format_bytes(6'600'000'000'000), "6.6 TB");
    EXPECT_EQ(format_bytes(2'200'000), "2.2 MB");
}

TEST(ensure_free_space, measures_the_nearest_existing_parent_and_refuses_what_cannot_fit) {
    const auto missing = std::filesystem::temp_directory_path() / "pacer-no-such" / "run";
    ASSERT_FALSE(std::filesystem::exists(missing));
    const auto free_bytes = pacer::runtime::ensure_free_space(missing, 1);
    EXPECT_GT(free_bytes, 0u);
    EXPECT_FALSE(std::filesystem::exists(missing)) << "nothing is created";
    try {
        pacer::runtime::ensure_free_space(missing, std::numeric_limits<std::uint64_t>::max());
        FAIL() << "an impossible size was accepted";
    } catch (const pacer::bad_input& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("free"), std::string::npos) << m;
        EXPECT_NE(m.find(missing.string()), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << "one line";
    }
}

} // namespace

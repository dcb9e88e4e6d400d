#pragma once
// Module `trace` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns trace
// lines (their formatter here, their parser in trace/lines.hpp), the channel, the session-side
// sink, the writer; the send receipts (`append_receipt`, `session_result`, their formatter and
// parser); the disk a run's traces take (disk_estimate). It may include core, runtime; it may not
// include schedule, protocol, transport, session, metrics, server, telemetry, report, record,
// sweep, run, http, cli, console, capacity_search (the build fails if it does).
//
// What sessions hand to the trace writer: one trace line, or the end of a session.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace pacer::trace {

/// The `direction` of a trace line (docs/protocol.md §3.1).
enum class direction : std::uint8_t { send, receive, error, admission };

std::string_view to_string(direction d);

/// Signalled by the writer once a session's last line and its receipts are on disk (written to
/// the page cache), with the first write error of that session, if any, and its message.
using done_channel =
    boost::asio::experimental::concurrent_channel<void(boost::system::error_code, std::string)>;

/// One message on the trace channel.
struct record {
    /// `shutdown` stops the writer once everything before it is written. (The channel's own
    /// `close()` would discard buffered records, so pacer never closes it with data inside.)
    /// `receipt` is the next piece of the session's `input-send-receipts.json`, written as the
    /// session goes, so a long session holds no receipts in memory.
    enum class kind : std::uint8_t { line, receipt, end, shutdown };
    kind what = kind::line;
    direction dir = direction::send;
    std::uint32_t session = 0;
    double time_s = 0;
    /// `line`: the exact JSON object of the event (`{"message":…}` for errors).
    /// `receipt`: the next bytes of `input-send-receipts.json`.
    /// `end`: the rest of `input-send-receipts.json` (all of it when no `receipt` came before).
    std::string payload;
    /// `end` only: where the writer reports that the session is on disk.
    std::shared_ptr<done_channel> done;
};

/// The strand-free channel from every session context to the writer thread.
using channel =
    boost::asio::experimental::concurrent_channel<void(boost::system::error_code, record)>;

/// Formats one trace line: `{"direction":…,"time_s":…,"event":<payload>}\n`, appended to `out`.
void append_line(std::string& out, direction dir, double time_s, std::string_view event_json);

} // namespace pacer::trace

#pragma once
// `pacer mock`: the probe mock server of the native realtime protocol. It answers each append
// with `replies_per_append` events and measures, per session, how far each append arrived
// from that session's own 80 ms grid, plus its own event-loop lag. Fault modes let end-to-end
// tests exercise every failure path of the client against a real process.

#include <pacer/server/mock_server.hpp>

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <span>
#include <string>

namespace pacer::server {

/// Failures the mock can inject into the sessions it serves.
enum class fault {
    none,
    server_error, ///< a nonfatal `error` event after the 5th append
    fatal_error,  ///< a fatal `error` (sglang.fatal) after the 5th append, then session.closed
    malformed,    ///< a frame that is not JSON after the 5th append
    vanish,       ///< the TCP connection is dropped after the 5th append (no close frame)
    stall,        ///< the session stops answering after the 5th append (client times out)
    no_created,   ///< never sends `session.created` (client times out)
    nonfinite,    ///< a frame with NaN in it after the 5th append
    binary,       ///< a binary frame (valid JSON inside) after the 5th append
    huge_frame,   ///< a 9 MiB frame, over the client's 8 MiB limit, after the 5th append
    /// stops reading its socket after the 5th append, for good (the connection stays open,
    /// nothing more is sent): the TCP window fills and the client's sends block. With this
    /// fault every accepted socket gets a small receive buffer and MSS, so the window fills
    /// within seconds rather than after megabytes.
    stop_reading,
};

/// Parses a fault name (`none`, `server_error`, ...); throws bad_input.
fault parse_fault(std::string_view name);

struct mock_options : host_options {
    int replies_per_append = 3; ///< audio delta, transcript delta, unit.done, in turn
    fault inject = fault::none;
    std::size_t fault_every = 1; ///< the fault hits sessions 0, K, 2K... (accept order)
    int output_sample_rate = 22050;
};

/// The probe mock on one io_context (run it on one thread: no strand, no lock). Its stats add
/// `appends` and the arrival deviation of each append from its session's grid.
class probe_mock final : public mock_server {
public:
    /// Throws bad_input for a negative reply count or a fault period of 0.
    probe_mock(boost::asio::io_context& ctx, mock_options options);
    /// Sessions spread over `contexts` (at least one; the first accepts), round robin; each
    /// thread keeps its own counts, merged in `stats()` once every context has stopped.
    probe_mock(std::span<boost::asio::io_context* const> contexts, mock_options options);
};

} // namespace pacer::server

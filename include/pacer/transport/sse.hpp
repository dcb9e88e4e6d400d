#pragma once
// Server-sent events (the `text/event-stream` format of the HTML living standard, section
// 9.2.6), parsed sans-io: bytes in, complete events out, no sockets and no clocks.
//
// What the parser does, as the standard says: lines end with CRLF, LF or a lone CR (a CR at
// the end of one `feed` and an LF at the start of the next are one line end); a leading
// UTF-8 byte order mark is skipped; a line starting with ':' is a comment; `field: value`
// loses one space after the colon; `data` lines of one event are joined with '\n'; `event`
// names the event; `id` is kept; `retry` and unknown fields are ignored; an empty line ends
// the event, and an event without any `data` line is not dispatched. An event cut off by the
// end of the stream is not dispatched either (`pending()` says one was).
//
// What it adds: a bound on the bytes one event may hold (line plus data). Past it the parser
// fails, says why in `error()`, and ignores every later byte: a server that never ends a line
// cannot exhaust the client's memory.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::transport {

/// One dispatched event.
struct sse_event {
    std::string event; ///< the `event` field; empty when none was given ("message")
    std::string data;  ///< the `data` lines joined with '\n'
    std::string id;    ///< the last `id` field seen, or empty
};

/// The incremental SSE parser.
///
/// @par Thread safety
/// None; one parser per response stream.
class sse_parser {
public:
    /// The default bound of one event: 1 MiB.
    static constexpr std::size_t default_max_event_bytes = std::size_t{1} << 20;

    explicit sse_parser(std::size_t max_event_bytes = default_max_event_bytes)
        : max_event_bytes_(max_event_bytes) {}

    /// Parses `bytes` (any split of the stream) and appends every event it completes to `out`.
    /// Returns false once the parser has failed (then `out` gets nothing more).
    bool feed(std::string_view bytes, std::vector<sse_event>& out);

    bool failed() const noexcept { return !error_.empty(); }
    /// Why the parser failed; empty while it has not.
    const std::string& error() const noexcept { return error_; }
    /// True when bytes of an unfinished event are held (a line or data not yet dispatched).
    bool pending() const noexcept { return !line_.empty() || has_data_ || !event_.empty(); }

private:
    void line_done(std::vector<sse_event>& out);

    std::size_t max_event_bytes_;
    std::string line_;
    std::string data_;
    std::string event_;
    std::string last_id_;
    bool has_data_ = false;
    bool after_cr_ = false; // the previous byte was a CR: an LF now is part of its line end
    bool at_start_ = true;  // nothing consumed yet: a BOM may come
    std::size_t bom_seen_ = 0;
    std::string error_;
};

} // namespace pacer::transport

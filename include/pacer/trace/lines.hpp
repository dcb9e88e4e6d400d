#pragma once
// `trace.jsonl` read back (docs/protocol.md §3.1): the one parser of the trace lines that
// `append_line` (trace/record.hpp) writes. Replay, serving levels, `pacer record` and the
// fuzzers read a session's trace through `parse_trace`; metrics compute on its lines.

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::trace {

/// One line of `trace.jsonl`.
struct trace_line {
    std::string direction; ///< "send", "receive", "error" or "admission"
    double time_s = 0;
    boost::json::object event;
    std::size_t line = 0; ///< 1-based line number in the file (0: built in memory)
};

/// A parsed trace: the readable lines, and one message per unreadable line.
struct parsed_trace {
    std::vector<trace_line> lines;
    std::vector<std::string> errors; ///< "trace line L: <reason>"
};

/// Parses JSONL text. A line is readable when it is a JSON object with a string `direction`,
/// a finite number `time_s` and an object `event`; anything else is reported in `errors`.
parsed_trace parse_trace(std::string_view jsonl);

} // namespace pacer::trace

#pragma once
// Internal to src/metrics: the JSON field readers, trace-walk steps and sums that serving.cpp
// and level.cpp share (defined in serving.cpp). Not installed, not part of the public API.

#include <pacer/metrics/serving.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::metrics::detail {

/// A finite JSON number as a double; nullopt for anything else (absent, NaN, a string...).
std::optional<double> number(const boost::json::value* v);
std::optional<double> number(const boost::json::object& o, std::string_view key);

/// The string at `key`, or an empty view when it is absent or not a string.
std::string_view string_field(const boost::json::object& o, std::string_view key);

/// The object at `key`, or nullptr when it is absent or not an object.
const boost::json::object* object_field(const boost::json::object& o, std::string_view key);

/// A number, or JSON null.
boost::json::value optional_json(const std::optional<double>& v);

/// A JSON array of strings.
boost::json::array string_array(std::span<const std::string> items);

/// The walks over a trace act on received events; a client `error` line on the way is an error
/// of the session (its message is appended to `errors`). Returns whether `l` is a received event.
bool received_event(const trace_line& l, std::vector<std::string>& errors);

/// D: the context's input duration, else the traced appends' decoded bytes / 32000.
double resolve_input_duration(std::span<const trace_line> trace, const session_params& c);

/// A session's two files as a level reads them: whatever could be parsed, and each missing or
/// unreadable file as an artifact error appended to `errors` ("missing trace.jsonl", ...).
struct session_files {
    parsed_trace trace;
    send_receipts receipts;
};
session_files read_session_files(std::optional<std::string_view> trace_jsonl,
                                 std::optional<std::string_view> receipts_json,
                                 std::vector<std::string>& errors);

/// Underruns summed over sessions or responses: the sums, the worst, and how many of the
/// summed had at least one.
struct underrun_tally {
    std::size_t with_underrun = 0;
    underrun_result sum;

    void add(const underrun_result& u);
    /// Writes `<prefix>underrun_sessions`, `_count`, `_total_s`, `_worst_s` and `_ratio` (total /
    /// `denominator`, null unless it is positive); all null when `present` is false.
    void write(boost::json::object& o, std::string_view prefix, double denominator,
               bool present = true) const;
};

} // namespace pacer::metrics::detail

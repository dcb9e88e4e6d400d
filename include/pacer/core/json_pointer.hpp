#pragma once
// One way to reach into a result file's JSON: a JSON Pointer (RFC 6901), as Boost.JSON's
// value::find_pointer reads it, from a summary held as an object.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace pacer {

/// The value at `pointer` ("/pacing/loop_lag_s/p99", "/levels/0/slo"; `~1` is '/' and `~0` is
/// '~' inside a key) under `root`, or nullptr when a step is missing, an index is out of range
/// or the pointer is malformed. The empty pointer names `root` itself, which is no value:
/// nullptr.
const boost::json::value* find_pointer(const boost::json::object& root, std::string_view pointer);

/// `key` as one JSON Pointer token: '~' as `~0`, '/' as `~1`.
std::string pointer_token(std::string_view key);

} // namespace pacer

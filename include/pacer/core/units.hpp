#pragma once
// Parsing of human quantities given on the command line.

#include <chrono>
#include <optional>
#include <string_view>

namespace pacer {

/// Parses a duration such as `30s`, `1.5s`, `250ms`, `2m`, `1h` or a bare number of seconds.
/// Returns nullopt for anything else, including negative, non-finite or overflowing values.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);

} // namespace pacer

#pragma once
// Human quantities: parsing those given on the command line, formatting those printed.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pacer {

/// Parses a duration such as `30s`, `1.5s`, `250ms`, `2m`, `1h`, a compound of such terms from
/// the largest unit down (`2m30s`, `1h30m`, `1m0.5s`) or a bare number of seconds (`90`).
/// Units: h, m (or min), s, ms, us. Returns nullopt for anything else: a sign, a unit given
/// twice or out of order (`1s1h`), a bare number after a term (`1s2`), or a value that does not
/// fit in 64-bit nanoseconds.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);

/// "1.2 GB", "640.0 kB": decimal units, as the tables print sizes.
std::string format_bytes(std::uint64_t bytes);

} // namespace pacer

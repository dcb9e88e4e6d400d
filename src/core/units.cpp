#include <pacer/core/units.hpp>

#include <charconv>
#include <cmath>

namespace pacer {

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
    double value = 0;
    const auto* first = text.data();
    const auto* last = text.data() + text.size();
    auto [end, ec] = std::from_chars(first, last, value, std::chars_format::fixed);
    if (ec != std::errc{} || end == first)
        return std::nullopt;
    const std::string_view unit(end, static_cast<std::size_t>(last - end));
    double scale = 0;
    if (unit.empty() || unit == "s")
        scale = 1e9;
    else if (unit == "ms")
        scale = 1e6;
    else if (unit == "us")
        scale = 1e3;
    else if (unit == "m" || unit == "min")
        scale = 60e9;
    else if (unit == "h")
        scale = 3600e9;
    else
        return std::nullopt;
    const double ns = value * scale;
    // Reject negatives, NaN and anything that does not fit comfortably in 64-bit nanoseconds.
    if (!(ns >= 0) || !std::isfinite(ns) || ns > 9.0e18)
        return std::nullopt;
    return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(ns)));
}

} // namespace pacer

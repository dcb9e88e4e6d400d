#include <pacer/core/units.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>

namespace pacer {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_lower(char c) {
    return c >= 'a' && c <= 'z';
}

// Nanoseconds per unit, or 0 for an unknown unit. Rank orders the units from the largest, so a
// compound duration must name them largest first and each at most once.
struct unit {
    double ns = 0;
    int rank = 0;
};

unit find_unit(std::string_view name) {
    if (name == "h")
        return {3600e9, 1};
    if (name == "m" || name == "min")
        return {60e9, 2};
    if (name == "s")
        return {1e9, 3};
    if (name == "ms")
        return {1e6, 4};
    if (name == "us")
        return {1e3, 5};
    return {};
}

// Anything that does not fit comfortably in 64-bit nanoseconds (about 285 years) is refused.
constexpr double max_ns = 9.0e18;

} // namespace

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
    std::size_t at = 0;
    std::int64_t total = 0;
    int last_rank = 0;
    bool any = false;
    while (at < text.size()) {
        // A term: digits, optionally '.' and more digits, then a unit (or nothing, alone).
        const std::size_t number_begin = at;
        while (at < text.size() && is_digit(text[at]))
            ++at;
        if (at == number_begin)
            return std::nullopt; // no sign, no leading '.', no junk
        if (at < text.size() && text[at] == '.') {
            ++at;
            const std::size_t fraction = at;
            while (at < text.size() && is_digit(text[at]))
                ++at;
            if (at == fraction)
                return std::nullopt;
        }
        double value = 0;
        const auto [end, ec] = std::from_chars(text.data() + number_begin, text.data() + at, value,
                                               std::chars_format::fixed);
        if (ec != std::errc{} || end != text.data() + at)
            return std::nullopt;
        const std::size_t unit_begin = at;
        while (at < text.size() && is_lower(text[at]))
            ++at;
        unit u;
        if (unit_begin == at) {
            if (any || at != text.size())
                return std::nullopt; // a bare number of seconds stands alone: "90", not "1m30"
            u = {1e9, 3};
        } else {
            u = find_unit(text.substr(unit_begin, at - unit_begin));
            if (u.rank == 0 || u.rank <= last_rank)
                return std::nullopt; // unknown, repeated or out of order ("1s1h")
        }
        const double ns = value * u.ns;
        if (!(ns >= 0) || !std::isfinite(ns) || ns > max_ns)
            return std::nullopt;
        if (static_cast<double>(total) + ns > max_ns)
            return std::nullopt; // checked before adding: the sum must never wrap
        total += static_cast<std::int64_t>(std::llround(ns));
        last_rank = u.rank;
        any = true;
    }
    if (!any)
        return std::nullopt;
    return std::chrono::nanoseconds(total);
}

std::string format_bytes(std::uint64_t bytes) {
    const auto b = static_cast<double>(bytes);
    if (b >= 1e12)
        return fmt::format("{:.1f} TB", b / 1e12);
    if (b >= 1e9)
        return fmt::format("{:.1f} GB", b / 1e9);
    if (b >= 1e6)
        return fmt::format("{:.1f} MB", b / 1e6);
    return fmt::format("{:.1f} kB", b / 1e3);
}

} // namespace pacer

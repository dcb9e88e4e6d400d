#include <pacer/core/float_repr.hpp>

#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace pacer {

namespace {

__extension__ using uint128 = unsigned __int128; // GCC's and Clang's; -Wpedantic accepts it so

constexpr std::uint64_t pow10(int d) {
    std::uint64_t s = 1;
    for (int i = 0; i < d; ++i)
        s *= 10;
    return s;
}

// x × 10^D rounded to the nearest integer (ties to even, as printf rounds), for finite
// 0 ≤ x < 2^33, exactly: x is m × 2^e with a 53-bit m, so m × 10^D (D ≤ 9: under 2^83) is exact
// in 128 bits and the division by 2^-e is a shift.
template <int D>
std::uint64_t scaled_rounded(double x) {
    static_assert(D >= 1 && D <= 9);
    constexpr std::uint64_t scale = pow10(D);
    const auto bits = std::bit_cast<std::uint64_t>(x);
    const int biased = static_cast<int>(bits >> 52);
    if (biased == 0)
        return 0; // zero or subnormal: far below half of 10^-D
    const auto m = (bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
    const int shift = 1075 - biased; // x = m / 2^shift; x < 2^33 makes shift ≥ 20
    if (shift >= 54 + static_cast<int>(std::bit_width(scale)))
        return 0; // m × 10^D < 2^(53 + bit_width) ≤ half of 2^shift
    const uint128 p = static_cast<uint128>(m) * scale;
    auto q = static_cast<std::uint64_t>(p >> shift);
    const uint128 rest = p & ((static_cast<uint128>(1) << shift) - 1);
    const uint128 half = static_cast<uint128>(1) << (shift - 1);
    if (rest > half || (rest == half && (q & 1) != 0))
        ++q;
    return q;
}

// `fmt::format("{:.Df}", x)` appended to `out`.
template <int D>
void append_fixed(std::string& out, double x) {
    // Times (CLOCK_MONOTONIC seconds) and deviations take the exact integer path: a few
    // multiplications where std::to_chars' fixed precision runs its general algorithm (~600
    // instructions a call). NaN and the infinities fail the comparison and take the general path.
    if (std::fabs(x) < 0x1p33) {
        constexpr std::uint64_t scale = pow10(D);
        const std::uint64_t q = scaled_rounded<D>(std::fabs(x));
        char buf[32];
        char* p = buf;
        if (std::signbit(x))
            *p++ = '-'; // printf keeps the sign of a negative that rounds to zero, and of -0.0
        p = std::to_chars(p, buf + sizeof buf, q / scale).ptr;
        *p++ = '.';
        auto frac = q % scale;
        for (int i = D - 1; i >= 0; --i, frac /= 10)
            p[i] = static_cast<char>('0' + frac % 10);
        out.append(buf, p + D);
        return;
    }
    char buf[48];
    const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, D);
    if (res.ec == std::errc())
        out.append(buf, res.ptr);
    else // beyond 1e37: never a time, but still the same text
        fmt::format_to(std::back_inserter(out), "{:.{}f}", x, D);
}

} // namespace

void append_fixed9(std::string& out, double x) {
    append_fixed<9>(out, x);
}

void append_fixed6(std::string& out, double x) {
    append_fixed<6>(out, x);
}

namespace {

// The shortest digits that read back as `x`, in fixed notation for decimal exponents from
// `min_fixed` to 15 and in scientific notation outside them.
std::string shortest_float_text(double x, int min_fixed) {
    if (std::isnan(x))
        return "nan";
    if (std::isinf(x))
        return x < 0 ? "-inf" : "inf";
    // The shortest round-trip digits, as d[.ddd]e±XX; Python's repr uses the same digits and
    // only lays them out differently.
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
    std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
    std::string out;
    if (sci.front() == '-') {
        out += '-';
        sci.remove_prefix(1);
    }
    const auto e_pos = sci.find('e');
    const int exponent = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
    std::string digits(1, sci.front());
    if (e_pos > 1)
        digits.append(sci.substr(2, e_pos - 2)); // skip the '.'
    const int n = static_cast<int>(digits.size());
    if (exponent < min_fixed || exponent >= 16) {
        out += digits.front();
        if (n > 1) {
            out += '.';
            out.append(digits, 1);
        }
        out += exponent < 0 ? "e-" : "e+";
        const int magnitude = std::abs(exponent);
        if (magnitude < 10)
            out += '0';
        out += std::to_string(magnitude);
    } else if (exponent < 0) {
        out += "0.";
        out.append(static_cast<std::size_t>(-exponent - 1), '0');
        out += digits;
    } else {
        const int integer_digits = exponent + 1;
        if (n <= integer_digits) {
            out += digits;
            out.append(static_cast<std::size_t>(integer_digits - n), '0');
            out += ".0";
        } else {
            out.append(digits, 0, static_cast<std::size_t>(integer_digits));
            out += '.';
            out.append(digits, static_cast<std::size_t>(integer_digits));
        }
    }
    return out;
}

} // namespace

std::string python_float_repr(double x) {
    return shortest_float_text(x, -4);
}

std::string plain_float_text(double x) {
    return shortest_float_text(x, std::numeric_limits<int>::min());
}

} // namespace pacer

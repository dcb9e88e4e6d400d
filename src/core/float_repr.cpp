#include <pacer/core/float_repr.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace pacer {

void append_fixed9(std::string& out, double x) {
    char buf[48];
    const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, 9);
    if (res.ec == std::errc())
        out.append(buf, res.ptr);
    else // beyond 1e37: never a time, but still the same text
        fmt::format_to(std::back_inserter(out), "{:.9f}", x);
}

std::string python_float_repr(double x) {
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
    if (exponent < -4 || exponent >= 16) {
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

} // namespace pacer

#pragma once
// Floats written the way the reference harness (Python) prints them, for messages that must
// match its text exactly.

#include <string>

namespace pacer {

/// `repr(x)` of a Python float: the shortest digits that read back as `x`, always with a
/// decimal point or an exponent (`90.0`, `4.5`, `0.25`, `1e-05`, `1e+16`, `nan`, `-inf`).
/// Fixed notation for decimal exponents -4..15, scientific (at least two exponent digits)
/// outside them.
std::string python_float_repr(double x);

/// The same digits as python_float_repr, in plain decimal whatever the magnitude below 1e16:
/// `0.000084`, not `8.4e-05` (the result files: json_text). Scientific only from 1e16.
std::string plain_float_text(double x);

/// Appends `x` with nine decimals, exactly as `fmt::format("{:.9f}", x)` and printf's `%.9f`
/// print it (correctly rounded, exact ties to even): the trace lines' and receipts' seconds, at
/// nanosecond resolution. Below 2^33 (any clock reading) in exact integer arithmetic; beyond,
/// through `std::to_chars`.
void append_fixed9(std::string& out, double x);
/// The same with six decimals (`{:.6f}`, `%.6f`): samples.json's deviations, at microseconds.
void append_fixed6(std::string& out, double x);

} // namespace pacer

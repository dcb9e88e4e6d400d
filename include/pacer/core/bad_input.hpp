#pragma once
// Bad input, in one type for every module: a flag's value, a file the user named, an address, a
// schedule or scenario that cannot be used as asked. A module that finds bad input throws
// `bad_input` with the one line the user sees; it never translates another module's bad_input.
// `pacer`'s main is the one place that maps it: the line on stderr, exit 2
// (runtime::exit_usage), nothing written. Errors that are bad input only in some commands (a
// merge part that cannot be read, a telemetry source that fails at startup) stay their own
// module's type and are turned into bad_input where the command knows which they are.

#include <stdexcept>

namespace pacer {

/// Bad input: the message is the one line the user sees. A std::invalid_argument, so code
/// that checks arguments and catches std::invalid_argument (to add where the value came from)
/// keeps working.
struct bad_input : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

} // namespace pacer

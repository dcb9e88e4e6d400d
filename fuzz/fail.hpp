#pragma once
// The fuzz targets' one way to report a broken promise: a line naming the target, then abort,
// which libFuzzer records as a crash with its input.

#include <cerrno> // program_invocation_short_name (glibc)
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace pacer::fuzz {

[[noreturn]] inline void fail(const char* what, std::string_view detail = {}) {
    std::fprintf(stderr, "%s: %s: %.*s\n", program_invocation_short_name, what,
                 static_cast<int>(detail.size()), detail.data());
    std::abort();
}

} // namespace pacer::fuzz

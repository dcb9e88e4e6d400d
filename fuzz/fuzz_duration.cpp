// `parse_duration` reads --duration, --timeout and friends: any text gives either nullopt or a
// non-negative duration.

#include <pacer/core/units.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto d = pacer::parse_duration(text);
    if (d && d->count() < 0) {
        std::fprintf(stderr, "fuzz_duration: negative duration %lld ns\n",
                     static_cast<long long>(d->count()));
        std::abort();
    }
    return 0;
}

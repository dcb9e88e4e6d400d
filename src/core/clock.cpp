#include <pacer/core/clock.hpp>

namespace pacer {

clock_pair read_clock_pair() {
    const auto mono = clock::now();
    const auto real = std::chrono::system_clock::now();
    return {to_seconds(mono), std::chrono::duration<double>(real.time_since_epoch()).count()};
}

} // namespace pacer

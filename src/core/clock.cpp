#include <pacer/core/clock.hpp>

#include <sys/timex.h>

namespace pacer {

clock_pair read_clock_pair() {
    const auto mono = clock::now();
    const auto real = std::chrono::system_clock::now();
    return {to_seconds(mono), std::chrono::duration<double>(real.time_since_epoch()).count()};
}

clock_sync read_clock_sync() {
    timex t{}; // modes = 0: read only, no privilege needed
    const int state = ::adjtimex(&t);
    return {state != TIME_ERROR && state >= 0, static_cast<double>(t.maxerror) / 1e6,
            static_cast<double>(t.esterror) / 1e6};
}

} // namespace pacer

#include <pacer/trace/disk_estimate.hpp>

#include <algorithm>
#include <cmath>

namespace pacer::trace {

std::uint64_t trace_bytes_estimate(std::size_t sessions, double input_duration_s,
                                   std::string_view protocol) {
    return static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(sessions) * std::max(input_duration_s, 0.0) *
                  trace_bytes_per_session_second(protocol)));
}

std::uint64_t receipt_bytes_estimate(std::size_t sessions, double input_duration_s) {
    // One receipt an 80 ms packet (about 150 bytes of JSON), and a few kB of per-session files.
    const double appends = std::ceil(std::max(input_duration_s, 0.0) / 0.080);
    return static_cast<std::uint64_t>(static_cast<double>(sessions) * (appends * 150.0 + 4096.0));
}

} // namespace pacer::trace

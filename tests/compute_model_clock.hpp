#pragma once
// The manual clock of the compute model's tests (unit and async): an origin far from the epoch,
// and offsets from it. Nothing waits.

#include <pacer/server/detail/compute_model.hpp>

#include <chrono>

namespace pacer::server::detail::test_clock {

using ms = std::chrono::milliseconds;

inline const time_point t0 = time_point(std::chrono::hours(1000));

inline time_point at(ms offset) {
    return t0 + offset;
}

} // namespace pacer::server::detail::test_clock

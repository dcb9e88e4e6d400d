#pragma once
// Module `core` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns the one
// clock, distributions and percentiles, units and durations, base64, SHA-256, the float repr, the
// `use_tuple` completion token. It may include no other module; it may not include schedule, trace,
// runtime, protocol, transport, session, metrics, server, telemetry, report, record, sweep, run,
// http, cli, console, capacity_search (the build fails if it does).
//
// The one clock of pacer: CLOCK_MONOTONIC (std::chrono::steady_clock on Linux), shared by
// every process of a host. Artifacts store its readings as seconds in a double.

#include <chrono>
#include <cstdint>

namespace pacer {

using clock = std::chrono::steady_clock;
using time_point = clock::time_point;
using duration = clock::duration;

/// Seconds since the clock's epoch, as written in every artifact (`time_s`, `start_s`, ...).
inline double to_seconds(time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
}

/// A duration in seconds.
inline double to_seconds(duration d) {
    return std::chrono::duration<double>(d).count();
}

/// The inverse of `to_seconds(duration)`, rounded to the clock's tick.
inline duration from_seconds(double s) {
    return std::chrono::duration_cast<duration>(std::chrono::duration<double>(s));
}

/// One (monotonic, realtime) pair, read back to back, so results of different hosts can be
/// aligned on wall-clock time.
struct clock_pair {
    double monotonic_s;
    double realtime_s;
};
clock_pair read_clock_pair();

/// How far this host's realtime clock may be off, as the kernel's NTP state says
/// (`adjtimex`, read-only): whether it is synchronised and its maximum and estimated error.
struct clock_sync {
    bool synchronized = false;
    double max_error_s = 0;
    double est_error_s = 0;
};
clock_sync read_clock_sync();

} // namespace pacer

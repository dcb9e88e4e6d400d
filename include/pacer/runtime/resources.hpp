#pragma once
// Module `runtime` (module table: cmake/PacerModules.cmake, docs/architecture.md) owns the loop
// monitor, CPU, memory, descriptor limits, WAV input, shards, launchers, reading a whole file. It
// may include core; it may not include schedule, trace, protocol, transport, session, console,
// capacity_search, metrics, server, telemetry, report, record, sweep, run, http, cli (or fails).
//
// CPU, memory and descriptor facts of this process.

#include <cstddef>
#include <cstdint>

namespace pacer::runtime {

struct process_usage {
    double cpu_s = 0; ///< user + system CPU seconds of the whole process
    std::uint64_t peak_rss_bytes = 0;
};

/// `getrusage(RUSAGE_SELF)`.
process_usage read_process_usage();

/// CPU seconds of the calling thread (`CLOCK_THREAD_CPUTIME_ID`).
double thread_cpu_seconds();

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and checks that `needed` descriptors fit.
/// Throws bad_input (the request cannot be met as asked) saying how many are needed and how to
/// raise the limit otherwise.
void ensure_descriptors(std::size_t needed);

/// The current soft limit on descriptors.
std::size_t descriptor_limit();

} // namespace pacer::runtime

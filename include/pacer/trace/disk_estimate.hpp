#pragma once
// What a run's trace files take on disk, estimated before anything is written (the refusal of
// a run its disk cannot hold, and summary.json's `disk`).

#include <cstddef>
#include <cstdint>

namespace pacer::trace {

/// A full trace costs about this many bytes per second of input and session (mostly base64
/// audio, both ways), whether or not it is kept at the end: it is written while streaming.
inline constexpr double trace_bytes_per_session_second = 110e3;

/// What `sessions` sessions of `input_duration_s` seconds of input each write: their traces,
/// and their receipts and other small files (about 150 bytes an append, 4 kB a session).
std::uint64_t trace_bytes_estimate(std::size_t sessions, double input_duration_s);
std::uint64_t receipt_bytes_estimate(std::size_t sessions, double input_duration_s);

} // namespace pacer::trace

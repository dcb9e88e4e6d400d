#pragma once
// What a run's trace files take on disk, estimated before anything is written (the refusal of
// a run its disk cannot hold, and summary.json's `disk`).

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pacer::trace {

/// A full trace costs about this many bytes per second of input and session, by protocol
/// (mostly base64 audio, both ways), whether or not it is kept at the end: it is written while
/// streaming. Each is what the protocol's wire carries with audio both ways at its rates, with a
/// margin over what was measured against `pacer native-mock` (docs/serving.md, 116.7 kB/s):
/// - native: 16 kHz in (42.7 kB/s of base64), up to 24 kHz out (64 kB/s), and a receipt event
///   per append and unit (measured 116.7 kB/s with the 22,050 Hz default profile);
/// - openai-realtime: 24 kHz both ways (64 kB/s each; measured 135.1 kB/s);
/// - vllm-realtime: 16 kHz in and text out (measured 46.3 kB/s).
inline constexpr double native_trace_bytes_per_session_second = 125e3;
inline constexpr double openai_realtime_trace_bytes_per_session_second = 145e3;
inline constexpr double vllm_realtime_trace_bytes_per_session_second = 50e3;

/// The rate of `protocol` (`--protocol`'s words; any other: the largest, openai-realtime's).
constexpr double trace_bytes_per_session_second(std::string_view protocol) {
    if (protocol == "native")
        return native_trace_bytes_per_session_second;
    if (protocol == "vllm-realtime")
        return vllm_realtime_trace_bytes_per_session_second;
    return openai_realtime_trace_bytes_per_session_second;
}

/// What `sessions` sessions of `input_duration_s` seconds of input each write: their traces
/// (speaking `protocol`), and their receipts and other small files (about 150 bytes an append,
/// 4 kB a session).
std::uint64_t trace_bytes_estimate(std::size_t sessions, double input_duration_s,
                                   std::string_view protocol);
std::uint64_t receipt_bytes_estimate(std::size_t sessions, double input_duration_s);

} // namespace pacer::trace

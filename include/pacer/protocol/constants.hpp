#pragma once
// Module `protocol` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns the
// wire protocols' constants, event builders and parsers, profiles, and the sans-io session machines
// (native, openai-realtime, vllm-realtime). It may include core, schedule, runtime; it may not
// include trace, transport, session, metrics, server, telemetry, report, record, sweep, run, http,
// cli, console, capacity_search (the build fails if it does).
//
// The native protocol's constants (docs/protocol.md §1 and §2), defined once: every other
// header and source file names these instead of restating the numbers.

#include <pacer/schedule/constants.hpp>

#include <chrono>
#include <cstddef>

namespace pacer::protocol {

/// The packet and its thresholds belong to the packet grid (schedule/constants.hpp).
using schedule::input_bytes_per_second;
using schedule::input_sample_rate;
using schedule::late_threshold_s;
using schedule::packet_bytes;
using schedule::packet_period;
using schedule::packet_period_s;
using schedule::send_stall_threshold;

/// §1.5 step 4: how long the other task may still run once one task has ended normally.
inline constexpr std::chrono::milliseconds post_close{200};
/// §1.2: an HTTP 503 is retried this many times, this long apart.
inline constexpr int admission_retries = 3;
inline constexpr std::chrono::milliseconds admission_backoff{250};
/// The session deadline when none is given (`timeout_s`).
inline constexpr std::chrono::seconds session_timeout{90};
/// Largest inbound message accepted (`MAX_MESSAGE_BYTES`).
inline constexpr std::size_t max_message_bytes = 8 * 1024 * 1024;
/// The close handshake at a session's end is bounded by this.
inline constexpr std::chrono::milliseconds close_timeout{1000};

} // namespace pacer::protocol

#pragma once
// The native protocol's constants (docs/protocol.md §1 and §2), defined once: every other
// header and source file names these instead of restating the numbers.

#include <chrono>
#include <cstddef>

namespace pacer::protocol {

/// One packet of input: 80 ms of 16 kHz mono PCM16 (2560 bytes).
inline constexpr std::chrono::milliseconds packet_period{80};
inline constexpr double packet_period_s = 0.080;
inline constexpr std::size_t input_sample_rate = 16000;
inline constexpr std::size_t input_bytes_per_second = input_sample_rate * 2;
inline constexpr std::size_t packet_bytes = 2560;
static_assert(packet_bytes == input_bytes_per_second * 80 / 1000);

/// A packet is late when its send started more than one packet period off its deadline.
inline constexpr double late_threshold_s = packet_period_s;
/// A socket write that takes longer than one packet period is a send stall.
inline constexpr std::chrono::milliseconds send_stall_threshold = packet_period;

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

#pragma once
// The pacing constants (docs/protocol.md §1 and §2.5), defined once: the 80 ms packet of
// 16 kHz mono PCM16 input that the packet grid paces, and the thresholds measured against it.
// `protocol/constants.hpp` names them for the wire protocol; nothing restates the numbers.

#include <chrono>
#include <cstddef>

namespace pacer::schedule {

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

} // namespace pacer::schedule

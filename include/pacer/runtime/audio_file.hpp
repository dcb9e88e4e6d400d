#pragma once
// Input audio for sessions: 16 kHz mono PCM16 WAV files (read with libsndfile) or silence.

#include <pacer/core/clock.hpp>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace pacer::runtime {

/// The PCM16 LE samples of a 16 kHz mono PCM16 WAV file. Throws std::runtime_error with one
/// line naming the file and what is wrong (missing, unreadable, another rate, channel count or
/// sample format, empty).
std::vector<std::uint8_t> read_input_wav(const std::filesystem::path& path);

/// `length` of 16 kHz mono PCM16 silence, rounded down to whole samples (at least one).
std::vector<std::uint8_t> silence(duration length);

} // namespace pacer::runtime

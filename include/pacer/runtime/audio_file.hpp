#pragma once
// Input audio for sessions: WAV files (read with libsndfile; any rate, channel count and sample
// encoding libsndfile decodes, mixed down to mono and converted with libsamplerate) or silence.

#include <pacer/core/clock.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pacer::runtime {

/// How an input file became the PCM16 mono samples a session streams.
struct audio_conversion {
    int source_rate = 0;
    int source_channels = 0;
    std::string source_encoding; ///< libsndfile's name, e.g. "Signed 16 bit PCM"
    int rate = 0;                ///< the rate of the samples returned
    /// The rate converter, "libsamplerate SRC_SINC_BEST_QUALITY", or "none" when the file is
    /// at `rate` already (its channels may still be averaged, its encoding made PCM16).
    std::string converter;
    bool mixed_down() const { return source_channels > 1; }
};

struct input_audio {
    std::vector<std::uint8_t> pcm; ///< PCM16 LE mono at `conversion.rate`
    audio_conversion conversion;
};

/// The sample rates an input file may have (a bound on how much a conversion can grow it).
inline constexpr int min_input_rate = 1000;
inline constexpr int max_input_rate = 768000;

/// A WAV file (RIFF WAV or WAVE_FORMAT_EXTENSIBLE; PCM of 8 to 32 bits, float, double, A-law
/// or mu-law; a sample rate from 1 to 768 kHz; any number of channels) as PCM16 LE mono at `rate`
/// Hz: the channels are averaged into one, the rate converted with libsamplerate's best sinc
/// converter. A 16-bit mono file already at `rate` keeps its bytes. Throws bad_input with
/// one line naming the file and what is wrong (missing, unreadable, not a WAV container, an
/// encoding libsndfile cannot decode, empty).
input_audio read_input_audio(const std::filesystem::path& path, int rate = 16000);

/// `read_input_audio(path, 16000).pcm`: the 16 kHz mono PCM16 samples pacer's grid counts.
std::vector<std::uint8_t> read_input_wav(const std::filesystem::path& path);

/// `length` of 16 kHz mono PCM16 silence, rounded down to whole samples (at least one).
std::vector<std::uint8_t> silence(duration length);

} // namespace pacer::runtime

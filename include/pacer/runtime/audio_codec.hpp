#pragma once
// Every call pacer makes to libsndfile and libsamplerate: read any WAV as mono float, write
// PCM16 WAV files, convert sample rates. Sessions (the wire's rate), `pacer record` (datasets,
// recordings) and the input of run and serve (runtime/audio_file.hpp) all convert here, with one
// converter: libsamplerate's best sinc (SRC_SINC_BEST_QUALITY).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace pacer::runtime {

/// Mono float samples in [-1, 1] at a rate.
struct mono_audio {
    int rate = 0;
    std::vector<float> samples;
    double duration_s() const { return rate ? double(samples.size()) / rate : 0.0; }
};

/// A sound file decoded by libsndfile, its channels averaged into `mono`.
struct decoded_audio {
    mono_audio mono;
    int channels = 0;
    bool pcm16 = false;   ///< the file's samples are 16-bit PCM
    std::string encoding; ///< "pcm16", "pcm24", "pcm32", "pcm_u8", "pcm_s8", "float32", ...
};

/// Reads any file libsndfile decodes; throws std::runtime_error "cannot read PATH: why".
decoded_audio read_audio_mono(const std::filesystem::path& path);

/// Interleaved frames of `channels` channels as one channel: each frame's samples averaged.
std::vector<float> mix_down(std::span<const float> interleaved, int channels);

/// `in` at `from` Hz as `to` Hz; `from == to` copies. Throws std::runtime_error on a converter
/// error.
std::vector<float> resample(std::span<const float> in, int from, int to);

/// `pcm` (PCM16 LE mono at `from` Hz) at `to` Hz; the same bytes when the rates are equal.
std::vector<std::uint8_t> resample_pcm16(std::span<const std::uint8_t> pcm, std::size_t from,
                                         std::size_t to);

/// Floats to PCM16 LE bytes: x 32768 (libsndfile's scale, so a PCM16 file read and written back
/// is bit-exact), rounded, clipped.
std::vector<std::uint8_t> to_pcm16(std::span<const float> samples);

/// Writes PCM16 LE mono bytes (or floats, through `to_pcm16`) as a WAV file at `rate`; throws
/// std::runtime_error "cannot write PATH: why".
void write_wav_pcm16(const std::filesystem::path& path, std::span<const std::uint8_t> pcm,
                     int rate);
void write_wav_float_as_pcm16(const std::filesystem::path& path, std::span<const float> samples,
                              int rate);

} // namespace pacer::runtime

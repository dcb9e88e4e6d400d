#pragma once
// Where the user's voice ends in a turn's input (docs/scenarios.md, "Voice end"), found offline
// before the run: an energy detector on the turn's 16 kHz PCM16. The audio is cut into 10 ms
// frames (160 samples; the last may be shorter); a frame is voiced when its RMS level is at
// least `threshold_db` dBFS (relative to a full-scale sample, 32768). The voice ends at the end
// of the last voiced frame plus `hangover` (never past the audio's end). Zeros are -inf dBFS:
// silence has no voice end, whatever the threshold.

#include <pacer/core/clock.hpp>
#include <pacer/protocol/pcm_input.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace pacer::session {

struct voice_settings {
    double threshold_db = -40;                        ///< `--voice-threshold-db`, within -120..0
    double hangover_ms = 0;                           ///< `--voice-hangover-ms`, within 0..10000
    static constexpr std::size_t frame_samples = 160; ///< 10 ms at 16 kHz
};

/// The end of the voice in `pcm` (16 kHz PCM16 LE mono), from the audio's start: the last voiced
/// frame's end + the hangover, at most the audio's length; nullopt when no frame is voiced.
inline std::optional<duration> find_voice_end(const protocol::pcm_input& pcm,
                                              const voice_settings& s = {}) {
    if (pcm.is_silence() || !pcm.held())
        return std::nullopt;
    const auto& bytes = *pcm.held();
    const std::size_t samples = bytes.size() / 2;
    const double floor = 32768.0 * 32768.0 * std::pow(10.0, s.threshold_db / 10);
    std::optional<std::size_t> last_end; // in samples
    for (std::size_t start = 0; start < samples; start += voice_settings::frame_samples) {
        const std::size_t end = std::min(samples, start + voice_settings::frame_samples);
        double sum = 0;
        for (std::size_t i = start; i < end; ++i) {
            const auto x = static_cast<double>(static_cast<std::int16_t>(
                static_cast<std::uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8))));
            sum += x * x;
        }
        if (sum > 0 && sum / static_cast<double>(end - start) >= floor)
            last_end = end;
    }
    if (!last_end)
        return std::nullopt;
    const auto at = std::chrono::duration_cast<duration>(
        std::chrono::nanoseconds(static_cast<std::int64_t>(*last_end) * 1'000'000'000LL / 16000));
    const auto audio = std::chrono::duration_cast<duration>(
        std::chrono::nanoseconds(static_cast<std::int64_t>(samples) * 1'000'000'000LL / 16000));
    return std::min(audio, at + std::chrono::duration_cast<duration>(
                                    std::chrono::duration<double, std::milli>(s.hangover_ms)));
}

} // namespace pacer::session

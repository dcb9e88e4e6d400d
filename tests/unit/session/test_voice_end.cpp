// The voice end of a turn's input (session/voice_end.hpp): the last voiced 10 ms frame's end,
// by an energy threshold in dBFS, plus the hangover.

#include <pacer/session/voice_end.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

namespace {

using namespace std::chrono_literals;
using pacer::duration;
using pacer::protocol::pcm_input;
using pacer::session::find_voice_end;
using pacer::session::voice_settings;

// 16 kHz PCM16: `parts` of (samples, amplitude) of a 440 Hz sine, in order.
pcm_input pcm(std::vector<std::pair<std::size_t, double>> parts) {
    std::vector<std::uint8_t> out;
    std::size_t n = 0;
    for (const auto& [samples, amplitude] : parts)
        for (std::size_t i = 0; i < samples; ++i, ++n) {
            const auto v = static_cast<std::uint16_t>(static_cast<std::int16_t>(std::lround(
                amplitude * std::sin(2 * std::numbers::pi * 440.0 * double(n) / 16000.0))));
            out.push_back(static_cast<std::uint8_t>(v & 0xff));
            out.push_back(static_cast<std::uint8_t>(v >> 8));
        }
    return pcm_input(std::move(out));
}

TEST(VoiceEnd, TheLastVoicedFrameEndsTheVoice) {
    // 0.48 s of a -6 dBFS tone, then 0.3 s of zeros: the voice ends at 0.48 s.
    EXPECT_EQ(find_voice_end(pcm({{7680, 16384}, {4800, 0}})), duration(480ms));
    // A tone that ends inside a frame: that frame is voiced, the voice ends at its end.
    EXPECT_EQ(find_voice_end(pcm({{7700, 16384}, {4800, 0}})), duration(490ms));
    // A short last frame (50 samples) that is voiced ends the voice at the audio's end.
    EXPECT_EQ(find_voice_end(pcm({{1650, 16384}})), std::chrono::microseconds(103125));
}

TEST(VoiceEnd, TheThresholdDecidesWhatIsVoice) {
    // 0.2 s of a -6 dBFS tone, then 0.2 s of a murmur at -53 dBFS RMS, then zeros.
    const auto audio = pcm({{3200, 16384}, {3200, 103.6}, {1600, 0}});
    EXPECT_EQ(find_voice_end(audio), duration(200ms)); // -40 dBFS: the murmur is no voice
    voice_settings low;
    low.threshold_db = -60;
    EXPECT_EQ(find_voice_end(audio, low), duration(400ms));
}

TEST(VoiceEnd, TheHangoverExtendsTheVoiceUpToTheAudiosEnd) {
    voice_settings s;
    s.hangover_ms = 100;
    EXPECT_EQ(find_voice_end(pcm({{3200, 16384}, {3200, 0}}), s), duration(300ms));
    EXPECT_EQ(find_voice_end(pcm({{3200, 16384}, {800, 0}}), s), duration(250ms));
}

TEST(VoiceEnd, SilenceHasNoVoiceEnd) {
    EXPECT_FALSE(find_voice_end(pcm_input::silence(32000)));
    EXPECT_FALSE(find_voice_end(pcm({{16000, 0}})));
    voice_settings any;
    any.threshold_db = -120;
    EXPECT_FALSE(find_voice_end(pcm({{16000, 0}}), any));
}

} // namespace

// Unit tests of runtime/audio_codec.hpp, the one place pacer calls libsndfile and libsamplerate:
// rate conversion of floats and of PCM16 bytes, PCM16 WAV files written and read back.

#include <pacer/runtime/audio_codec.hpp>

#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <vector>

namespace {

using namespace pacer::runtime;
using pacer::test::scratch_folder;

std::vector<float> tone(int rate, double hz, double seconds, double amplitude = 0.5) {
    std::vector<float> v(static_cast<std::size_t>(rate * seconds));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] =
            static_cast<float>(amplitude * std::sin(2 * std::numbers::pi * hz * double(i) / rate));
    return v;
}

std::int16_t sample_at(const std::vector<std::uint8_t>& pcm, std::size_t i) {
    return static_cast<std::int16_t>(pcm[2 * i] | (pcm[2 * i + 1] << 8));
}

TEST(AudioCodec, ResamplingThereAndBackKeepsATone) {
    const auto in = tone(16000, 440, 1.0);
    const auto up = resample(in, 16000, 22050);
    EXPECT_NEAR(double(up.size()), 22050.0, 2.0);
    const auto back = resample(up, 22050, 16000);
    ASSERT_NEAR(double(back.size()), 16000.0, 2.0);
    double err = 0;
    for (std::size_t i = 1000; i < 15000; ++i)
        err = std::max(err, double(std::abs(back[i] - in[i])));
    EXPECT_LT(err, 1e-3);
    EXPECT_EQ(resample(in, 16000, 16000), in);
}

TEST(AudioCodec, Pcm16At16KhzBecomes24KhzWithTheSameDurationAndTone) {
    const auto in = to_pcm16(tone(16000, 440, 1.0, 8000.0 / 32768));
    const auto out = resample_pcm16(in, 16000, 24000);
    ASSERT_NEAR(static_cast<double>(out.size()), 48000.0, 8.0); // 24,000 samples, 2 bytes each
    // Sample 1200 (50 ms) at 24 kHz is close to the tone's curve there.
    const double expect = 8000 * std::sin(2 * std::numbers::pi * 440 * 1200 / 24000.0);
    EXPECT_NEAR(sample_at(out, 1200), expect, 400.0);
    EXPECT_EQ(resample_pcm16(in, 16000, 16000), in);
}

TEST(AudioCodec, Pcm16IsRoundedAndClipped) {
    const std::vector<float> v{0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 1.0f / 32768 * 0.6f};
    const auto pcm = to_pcm16(v);
    ASSERT_EQ(pcm.size(), 12u);
    EXPECT_EQ(sample_at(pcm, 0), 0);
    EXPECT_EQ(sample_at(pcm, 1), 16384);
    EXPECT_EQ(sample_at(pcm, 2), -16384);
    EXPECT_EQ(sample_at(pcm, 3), 32767);
    EXPECT_EQ(sample_at(pcm, 4), -32768);
    EXPECT_EQ(sample_at(pcm, 5), 1);
}

TEST(AudioCodec, AWrittenWavReadsBackBitExactWithItsRateAndEncoding) {
    scratch_folder dir("pacer-audio-codec");
    std::vector<std::uint8_t> pcm; // full scale, both extremes included
    for (std::uint32_t i = 0; i < 4000; ++i) {
        const auto v = static_cast<std::uint16_t>(i == 0 ? 0x7fff : i == 1 ? 0x8000 : i * 7919u);
        pcm.push_back(static_cast<std::uint8_t>(v & 0xff));
        pcm.push_back(static_cast<std::uint8_t>(v >> 8));
    }
    write_wav_pcm16(dir.path / "a.wav", pcm, 22050);
    const auto d = read_audio_mono(dir.path / "a.wav");
    EXPECT_EQ(d.mono.rate, 22050);
    EXPECT_EQ(d.channels, 1);
    EXPECT_TRUE(d.pcm16);
    EXPECT_EQ(d.encoding, "pcm16");
    EXPECT_EQ(to_pcm16(d.mono.samples), pcm);
    EXPECT_NEAR(d.mono.duration_s(), 4000.0 / 22050, 1e-12);
}

TEST(AudioCodec, WhatCannotBeReadOrWrittenIsNamed) {
    scratch_folder dir("pacer-audio-codec");
    try {
        read_audio_mono(dir.path / "missing.wav");
        FAIL() << "a missing file was read";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot read " + (dir.path / "missing.wav").string()),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(write_wav_pcm16(dir.path / "no" / "such" / "b.wav", {}, 16000),
                 std::runtime_error);
}

} // namespace

// Unit tests of the input reader (runtime/audio_file.hpp): any WAV file becomes PCM16 mono at
// the asked rate (channels averaged, the rate converted with libsamplerate), with a record of
// the conversion; files pacer cannot use are refused in one line. The WAVs are written by hand.

#include <pacer/core/bad_input.hpp>
#include <pacer/runtime/audio_file.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pacer::runtime::read_input_audio;

struct temp_file {
    fs::path path;
    explicit temp_file(std::string name)
        : path(fs::temp_directory_path() /
               ("pacer-audio-" + std::to_string(::getpid()) + "-" + std::move(name))) {}
    ~temp_file() {
        std::error_code ec;
        fs::remove(path, ec);
    }
};

// A RIFF WAV: format tag 1 (PCM16) or 3 (float32), `frames` x `channels` samples from `at`.
template <class F>
void write_wav(const fs::path& p, int tag, int rate, int channels, std::size_t frames, F at) {
    const int bytes_per_sample = tag == 3 ? 4 : 2;
    const auto data = static_cast<std::uint32_t>(frames * channels * bytes_per_sample);
    std::ofstream f(p, std::ios::binary);
    auto u32 = [&](std::uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
    auto u16 = [&](std::uint16_t v) { f.write(reinterpret_cast<const char*>(&v), 2); };
    f << "RIFF";
    u32(36 + data);
    f << "WAVEfmt ";
    u32(16);
    u16(static_cast<std::uint16_t>(tag));
    u16(static_cast<std::uint16_t>(channels));
    u32(static_cast<std::uint32_t>(rate));
    u32(static_cast<std::uint32_t>(rate * channels * bytes_per_sample));
    u16(static_cast<std::uint16_t>(channels * bytes_per_sample));
    u16(static_cast<std::uint16_t>(bytes_per_sample * 8));
    f << "data";
    u32(data);
    for (std::size_t i = 0; i < frames; ++i)
        for (int ch = 0; ch < channels; ++ch) {
            const double v = at(i, ch, rate);
            if (tag == 3) {
                const auto x = static_cast<float>(v);
                f.write(reinterpret_cast<const char*>(&x), 4);
            } else {
                const auto x = static_cast<std::int16_t>(std::lround(v * 32767));
                f.write(reinterpret_cast<const char*>(&x), 2);
            }
        }
}

double tone(std::size_t i, int rate) {
    return 0.5 * std::sin(2 * std::numbers::pi * 440.0 * double(i) / rate);
}

std::vector<std::int16_t> samples(const std::vector<std::uint8_t>& pcm) {
    std::vector<std::int16_t> s(pcm.size() / 2);
    std::memcpy(s.data(), pcm.data(), pcm.size());
    return s;
}

double peak(const std::vector<std::int16_t>& s) {
    int m = 0;
    for (auto v : s)
        m = std::max(m, std::abs(int(v)));
    return m / 32767.0;
}

TEST(InputAudio, A44kStereoWavBecomes16kMonoWithTheConversionRecorded) {
    temp_file f("stereo.wav");
    write_wav(f.path, 1, 44100, 2, 44100 / 2, [](std::size_t i, int, int r) { return tone(i, r); });
    const auto in = read_input_audio(f.path, 16000);
    const auto s = samples(in.pcm);
    EXPECT_NEAR(double(s.size()), 8000.0, 2.0); // 0.5 s at 16 kHz
    EXPECT_NEAR(peak(s), 0.5, 0.02);            // the tone kept its level
    EXPECT_EQ(in.conversion.source_rate, 44100);
    EXPECT_EQ(in.conversion.source_channels, 2);
    EXPECT_TRUE(in.conversion.mixed_down());
    EXPECT_EQ(in.conversion.rate, 16000);
    EXPECT_EQ(in.conversion.converter, "libsamplerate SRC_SINC_BEST_QUALITY");
    EXPECT_EQ(in.conversion.source_encoding, "Signed 16 bit PCM");
}

TEST(InputAudio, ChannelsAreAveraged) {
    // Left +tone, right -tone: their mean is silence. Already at 16 kHz: no rate converter.
    temp_file f("opposed.wav");
    write_wav(f.path, 1, 16000, 2, 1600,
              [](std::size_t i, int ch, int r) { return ch == 0 ? tone(i, r) : -tone(i, r); });
    const auto in = read_input_audio(f.path, 16000);
    EXPECT_EQ(in.pcm.size(), 3200u);
    EXPECT_LT(peak(samples(in.pcm)), 0.001);
    EXPECT_EQ(in.conversion.converter, "none");
}

TEST(InputAudio, AFloatWavConvertsStraightToTheProtocolsRate) {
    temp_file f("float48k.wav");
    write_wav(f.path, 3, 48000, 1, 24000, [](std::size_t i, int, int r) { return tone(i, r); });
    const auto in = read_input_audio(f.path, 24000);
    EXPECT_NEAR(double(in.pcm.size() / 2), 12000.0, 2.0);
    EXPECT_NEAR(peak(samples(in.pcm)), 0.5, 0.02);
    EXPECT_EQ(in.conversion.source_encoding, "32 bit float");
    EXPECT_FALSE(in.conversion.mixed_down());
}

TEST(InputAudio, A16kMonoPcm16FileKeepsItsBytes) {
    temp_file f("native.wav");
    write_wav(f.path, 1, 16000, 1, 800, [](std::size_t i, int, int r) { return tone(i, r); });
    const auto in = read_input_audio(f.path, 16000);
    std::ifstream raw(f.path, std::ios::binary);
    std::vector<char> file((std::istreambuf_iterator<char>(raw)), std::istreambuf_iterator<char>());
    ASSERT_EQ(in.pcm.size(), 1600u);
    EXPECT_EQ(std::memcmp(in.pcm.data(), file.data() + 44, 1600), 0);
    EXPECT_EQ(in.conversion.converter, "none");
    EXPECT_EQ(pacer::runtime::read_input_wav(f.path), in.pcm);
}

TEST(InputAudio, WhatCannotBeUsedIsRefusedInOneLine) {
    temp_file text("notes.wav");
    std::ofstream(text.path) << "not audio at all\n";
    temp_file empty("empty.wav");
    write_wav(empty.path, 1, 44100, 2, 0, [](std::size_t, int, int) { return 0.0; });
    for (const auto* p : {&text.path, &empty.path}) {
        try {
            (void)read_input_audio(*p, 16000);
            ADD_FAILURE() << *p << " was accepted";
        } catch (const pacer::bad_input& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind("--audio " + p->string() + ": ", 0), 0u) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos);
        }
    }
}

} // namespace

// The native mock's output audio is encoded once and reused while its length and value stay
// the same: every call must still return the base64 of exactly the samples asked for.

#include <pacer/core/base64.hpp>
#include <pacer/server/detail/mock_host.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

using pacer::server::detail::constant_audio;

// What the mock encoded per unit before: `samples` little-endian PCM16 samples of `value`.
std::string expected(std::size_t samples, std::int16_t value) {
    std::string pcm;
    const auto v = static_cast<std::uint16_t>(value);
    for (std::size_t i = 0; i < samples; ++i) {
        pcm += static_cast<char>(v & 0xff);
        pcm += static_cast<char>(v >> 8);
    }
    return pacer::base64_encode(pcm);
}

TEST(ConstantAudio, EncodesTheSamplesAskedFor) {
    constant_audio audio;
    EXPECT_EQ(audio.base64(1280, 1), expected(1280, 1));
    EXPECT_EQ(audio.base64(3, -2), expected(3, -2)); // 0xfffe: both bytes matter
    EXPECT_EQ(audio.base64(0, 1), "");
}

TEST(ConstantAudio, ARepeatedRequestGivesTheSameTextAndAChangedOneANewText) {
    constant_audio audio;
    const std::string first = audio.base64(1920, 1);
    EXPECT_EQ(audio.base64(1920, 1), first);
    // The length changes (the first unit's holdback, a reply's chunks), then the value
    // (silence), then both come back: each answer is that request's, not the cached one's.
    EXPECT_EQ(audio.base64(1600, 1), expected(1600, 1));
    EXPECT_EQ(audio.base64(1600, 0), expected(1600, 0));
    EXPECT_EQ(audio.base64(1920, 1), first);
    EXPECT_EQ(audio.base64(1, 1), "AQA=");
}

} // namespace

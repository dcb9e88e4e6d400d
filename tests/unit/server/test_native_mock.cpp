// The native mock's option parsing: fault names and the `--fault-sessions` list.

#include <pacer/server/detail/speech_detector.hpp>
#include <pacer/server/native_mock.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace pacer::server {
namespace {

TEST(NativeMockOptions, FaultNamesMatchTheReferencePeer) {
    EXPECT_EQ(parse_peer_fault("none"), peer_fault::none);
    EXPECT_EQ(parse_peer_fault("server_error"), peer_fault::server_error);
    EXPECT_EQ(parse_peer_fault("delayed_fatal"), peer_fault::delayed_fatal);
    EXPECT_EQ(parse_peer_fault("nonfatal_error"), peer_fault::nonfatal_error);
    EXPECT_EQ(parse_peer_fault("timeout"), peer_fault::timeout);
    EXPECT_EQ(parse_peer_fault("malformed_json"), peer_fault::malformed_json);
    EXPECT_EQ(parse_peer_fault("nonfinite"), peer_fault::nonfinite);
    EXPECT_EQ(parse_peer_fault("disconnect"), peer_fault::disconnect);
    EXPECT_EQ(parse_peer_fault("linger"), peer_fault::linger);
    EXPECT_EQ(parse_peer_fault("close_without_update"), peer_fault::close_without_update);
    try {
        parse_peer_fault("stall");
        FAIL() << "an unknown fault was accepted";
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("--fault must be one of none, server_error, ", 0), 0u) << what;
        EXPECT_NE(what.find("(got 'stall')"), std::string::npos) << what;
    }
}

TEST(NativeMockOptions, SessionListsTakeIndicesAndRanges) {
    const auto s = session_set::parse("0,2,5-7");
    for (std::size_t i : {0, 2, 5, 6, 7})
        EXPECT_TRUE(s.contains(i)) << i;
    for (std::size_t i : {1, 3, 4, 8, 100})
        EXPECT_FALSE(s.contains(i)) << i;
    EXPECT_TRUE(session_set::parse("3").contains(3));
    EXPECT_TRUE(session_set::parse("4-4").contains(4));
    EXPECT_TRUE(session_set::parse("9,1").contains(1)); // any order
}

TEST(NativeMockOptions, BadSessionListsAreRefusedWithTheFlagName) {
    for (const char* bad : {"", ",", "1,", ",1", "1,,2", "a", "1-", "-1", "5-2", "1 ,2", "1.5",
                            "99999999999999999999999"}) {
        try {
            session_set::parse(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("--fault-sessions must list", 0), 0u) << e.what();
        }
    }
}

// The mock's server VAD, fed synthetic 24 kHz PCM16: `ms` of a 440 Hz tone at `amplitude`
// (full scale 32767), or of zeros at amplitude 0.
std::string pcm(std::uint64_t ms, double amplitude) {
    std::string out;
    const std::uint64_t n = 24 * ms;
    for (std::uint64_t i = 0; i < n; ++i) {
        const auto v = static_cast<std::int16_t>(
            std::lround(amplitude * std::sin(2 * M_PI * 440 * static_cast<double>(i) / 24000)));
        const auto u = static_cast<std::uint16_t>(v);
        out += static_cast<char>(u & 0xff);
        out += static_cast<char>(u >> 8);
    }
    return out;
}

using detail::speech_detector;
using kind = speech_detector::event::kind;

TEST(SpeechDetector, ZerosNeverStartSpeech) {
    speech_detector d({-40, 500, 24000});
    std::vector<speech_detector::event> e;
    for (int i = 0; i < 20; ++i)
        d.feed(pcm(80, 0), e);
    EXPECT_TRUE(e.empty());
    EXPECT_FALSE(d.speaking());
}

TEST(SpeechDetector, AToneStartsAndSilenceAfterItStopsOnTheAudiosClock) {
    speech_detector d({-40, 500, 24000});
    std::vector<speech_detector::event> e;
    d.feed(pcm(160, 0), e);    // 2 windows of silence
    d.feed(pcm(400, 8000), e); // -15 dBFS: speech from 160 ms to 560 ms
    EXPECT_TRUE(d.speaking());
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].what, kind::started);
    EXPECT_EQ(e[0].audio_ms, 160u);
    d.feed(pcm(480, 0), e); // 6 windows: not yet 500 ms
    EXPECT_EQ(e.size(), 1u);
    d.feed(pcm(80, 0), e); // the 7th: 560 ms of silence >= 500
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[1].what, kind::stopped);
    EXPECT_EQ(e[1].audio_ms, 560u);
    EXPECT_FALSE(d.speaking());
}

TEST(SpeechDetector, AQuietToneBelowTheThresholdIsSilenceAndSplitsDoNotMatter) {
    speech_detector quiet({-40, 500, 24000});
    std::vector<speech_detector::event> e;
    quiet.feed(pcm(800, 100), e); // about -53 dBFS
    EXPECT_TRUE(e.empty());
    // The same speech fed in odd-sized pieces gives the same events as in one piece.
    const std::string audio = pcm(240, 0) + pcm(320, 8000) + pcm(640, 0);
    speech_detector whole({-40, 500, 24000}), pieces({-40, 500, 24000});
    std::vector<speech_detector::event> a, b;
    whole.feed(audio, a);
    for (std::size_t at = 0; at < audio.size(); at += 1001)
        pieces.feed(std::string_view(audio).substr(at, 1001), b);
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(a[i].what, b[i].what);
        EXPECT_EQ(a[i].audio_ms, b[i].audio_ms);
    }
    EXPECT_EQ(a[0].audio_ms, 240u);
    EXPECT_EQ(a[1].audio_ms, 560u);
}

TEST(SpeechDetector, APauseShorterThanTheSilenceKeepsOneSpeech) {
    speech_detector d({-40, 500, 24000});
    std::vector<speech_detector::event> e;
    d.feed(pcm(240, 8000) + pcm(400, 0) + pcm(240, 8000) + pcm(560, 0), e);
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[0].audio_ms, 0u);
    EXPECT_EQ(e[1].audio_ms, 880u);
}

} // namespace
} // namespace pacer::server

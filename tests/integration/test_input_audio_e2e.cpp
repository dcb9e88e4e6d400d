// End to end: any WAV as input. A 44.1 kHz stereo PCM16 file (written here by hand) streamed by
// `pacer run --protocol openai-realtime` against `pacer native-mock --protocol openai-realtime`
// and by `pacer serve` (native): mixed down, converted to 16 kHz for the grid and to 24 kHz for
// the wire, the conversion in summary.json. Never a speed (exit 0 or 3).

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <cmath>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

// `seconds` of a 440 Hz tone, 44.1 kHz, two channels, PCM16.
void write_stereo_44k(const fs::path& p, double seconds) {
    const auto frames = static_cast<std::uint32_t>(44100 * seconds);
    const std::uint32_t data = frames * 4;
    std::ofstream f(p, std::ios::binary);
    auto u32 = [&](std::uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
    auto u16 = [&](std::uint16_t v) { f.write(reinterpret_cast<const char*>(&v), 2); };
    f << "RIFF";
    u32(36 + data);
    f << "WAVEfmt ";
    u32(16), u16(1), u16(2), u32(44100), u32(44100 * 4), u16(4), u16(16);
    f << "data";
    u32(data);
    for (std::uint32_t i = 0; i < frames; ++i) {
        const auto v = static_cast<std::int16_t>(
            std::lround(16000 * std::sin(2 * std::numbers::pi * 440.0 * i / 44100.0)));
        f.write(reinterpret_cast<const char*>(&v), 2);
        f.write(reinterpret_cast<const char*>(&v), 2);
    }
}

TEST(InputAudioE2E, A44kStereoWavStreamsAsOpenAiRealtimeAt24kHz) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto wav = out / "stereo44k.wav";
    write_stereo_44k(wav, 1.0);
    mock_process mock({"--protocol", "openai-realtime"}, "native-mock");
    const auto r = run_pacer({"run", "--protocol", "openai-realtime", "--turns", "manual", "--url",
                              mock.url(), "-c", "2", "--audio", wav.string(), "--timeout", "20s",
                              "--keep-traces", "--no-report", "-o", (out / "run").string()});
    EXPECT_EQ(mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto summary = read_json(out / "run" / "summary.json");
    const auto& c = at(summary, {"config", "input_conversion"});
    EXPECT_EQ(at(c, {"source_rate"}).to_number<int>(), 44100);
    EXPECT_EQ(at(c, {"source_channels"}).to_number<int>(), 2);
    EXPECT_TRUE(at(c, {"mixed_down"}).as_bool());
    EXPECT_EQ(at(c, {"rate"}).to_number<int>(), 16000);
    EXPECT_EQ(at(c, {"wire_rate"}).to_number<int>(), 24000);
    EXPECT_EQ(at(c, {"wire_converter"}).as_string(), "libsamplerate SRC_SINC_BEST_QUALITY");
    EXPECT_NEAR(at(summary, {"config", "input_duration_s"}).to_number<double>(), 1.0, 0.001);
    // 1 s on the grid: 13 appends, each full one 3,840 bytes of 24 kHz PCM16 (5,120 base64).
    std::size_t appends = 0;
    for (const auto& l : read_jsonl(out / "run" / "session-000" / "trace.jsonl"))
        if (at(l, {"direction"}).as_string() == "send" &&
            at(l, {"event", "type"}).as_string() == "input_audio_buffer.append") {
            if (appends == 0) {
                EXPECT_EQ(at(l, {"event", "audio"}).as_string().size(), 5120u);
            }
            ++appends;
        }
    EXPECT_EQ(appends, 13u);
}

TEST(InputAudioE2E, ServeRecordsEachInputsConversion) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto wav = out / "stereo44k.wav";
    write_stereo_44k(wav, 0.5);
    const auto r = run_pacer({"serve", "-c", "1", "--audio", wav.string(), "--no-report", "-o",
                              (out / "sweep").string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto summary = read_json(out / "sweep" / "summary.json");
    const auto& c = at(summary, {"config", "input_conversion"}).as_array().at(0);
    EXPECT_EQ(at(c, {"source_rate"}).to_number<int>(), 44100);
    EXPECT_EQ(at(c, {"converter"}).as_string(), "libsamplerate SRC_SINC_BEST_QUALITY");
    EXPECT_EQ(at(c, {"wire_rate"}).to_number<int>(), 16000);
}

TEST(InputAudioE2E, ANonWavFileIsRefusedWithNothingWritten) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto bad = out / "song.wav";
    std::ofstream(bad) << "ID3 this is an mp3, say\n";
    const auto r = run_pacer({"run", "--audio", bad.string(), "-o", (out / "run").string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("pacer: --audio " + bad.string() + ": "), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out / "run"));
}

} // namespace
} // namespace pacer::test

// End to end: `pacer run --protocol vllm-omni`'s bad input (docs/protocols.md, "vllm-omni"):
// each is one line on the terminal, exit 2 and nothing written, before any connection.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <fstream>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

struct refused {
    run_result r;
    bool wrote = false;
};

refused run_bad(const std::vector<std::string>& flags) {
    temp_dir out;
    const auto dir = out / "run";
    std::vector<std::string> args{"run", "--url",     "ws://127.0.0.1:9/v1/realtime", "-d", "1s",
                                  "-o",  dir.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    refused f{run_pacer(args)};
    f.wrote = fs::exists(dir);
    return f;
}

void expect_refused(const refused& f, const std::string& words) {
    EXPECT_EQ(f.r.exit_code, 2) << f.r.out;
    EXPECT_NE(f.r.out.find("pacer: " + words), std::string::npos) << f.r.out;
    EXPECT_FALSE(f.wrote);
}

TEST(OmniCliE2E, AMissingRefAudioFileIsBadInput) {
    expect_refused(run_bad({"--protocol", "vllm-omni", "--ref-audio", "/nonexistent/voice.wav"}),
                   "--ref-audio /nonexistent/voice.wav: cannot read the file");
}

TEST(OmniCliE2E, ARefAudioThatIsNoWavIsBadInput) {
    temp_dir dir;
    fs::create_directories(dir.path());
    const auto file = dir / "voice.wav";
    std::ofstream(file) << "not a wav at all";
    expect_refused(run_bad({"--protocol", "vllm-omni", "--ref-audio", file.string()}),
                   fmt::format("--ref-audio {}: not a WAV file", file.string()));
}

TEST(OmniCliE2E, AChunkThatIsNotAMultipleOf10MsIsBadInput) {
    expect_refused(run_bad({"--protocol", "vllm-omni", "--chunk-ms", "205"}),
                   "--chunk-ms 205: must be a multiple of 10 ms");
}

TEST(OmniCliE2E, ItsOptionsWithAnotherProtocolAreBadInput) {
    expect_refused(run_bad({"--protocol", "openai-realtime", "--chunk-ms", "200"}),
                   "--chunk-ms is for --protocol vllm-omni");
    expect_refused(run_bad({"--protocol", "openai-realtime", "--ack", "never"}),
                   "--ack is for --protocol vllm-omni");
    expect_refused(run_bad({"--protocol", "openai-realtime", "--turns", "model"}),
                   "--turns model is for --protocol vllm-omni");
}

TEST(OmniCliE2E, AnUnknownAckModeAndAnAutostartOtherThanZeroAreBadInput) {
    expect_refused(run_bad({"--protocol", "vllm-omni", "--ack", "sometimes"}),
                   "--ack 'sometimes' is not known");
    temp_dir out;
    const auto dir = out / "run";
    const auto r =
        run_pacer({"run", "--protocol", "vllm-omni", "--url",
                   "ws://127.0.0.1:9/v1/realtime?autostart=1", "-d", "1s", "-o", dir.string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("autostart=1 must be 0"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir));
}

} // namespace
} // namespace pacer::test

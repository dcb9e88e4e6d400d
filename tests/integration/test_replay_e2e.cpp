// End to end: `pacer run --keep-traces` against the built-in probe mock, then `pacer replay`.
// The probe mock is deliberately simpler than the VoiceChat mock of docs/protocol.md §6 (no
// `accepted`, no response.created/done, unit.done without media_time), so the oracle must fail
// each of its sessions with exactly these violations.

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

// 1 s of input = 32000 bytes = 13 appends (the last one half a packet) = 13 units of 80 ms.
std::vector<std::string> expected_probe_mock_violations() {
    std::vector<std::string> v{"unsupported capability: output_modalities"};
    for (int i = 0; i < 13; ++i) {
        v.emplace_back("response.output_audio.delta: unknown response");
        v.emplace_back("response.output_audio_transcript.delta: unknown response");
        v.emplace_back("unit receipt missing media time");
    }
    v.emplace_back("expected 13 nonempty native units, observed 0");
    v.emplace_back("native unit durations do not account for the accepted input");
    v.emplace_back("output audio is not conserved: 0 of 45864 bytes for 13 units");
    for (int i = 0; i < 13; ++i)
        v.emplace_back("missing input acceptance receipt");
    return v;
}

TEST(ReplayE2E, ProbeMockRunFailsTheOracleWithTheExpectedViolations) {
    temp_dir dir;
    const auto run =
        run_pacer({"run", "-c", "2", "-d", "1s", "--keep-traces", "-o", dir.path().string()});
    ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 3) << run.out; // 3: a loaded CI host

    const auto replay = run_pacer({"replay", dir.path().string()});
    EXPECT_EQ(replay.exit_code, 1) << replay.out;
    ASSERT_TRUE(fs::exists(dir / "report.json")) << replay.out;
    const auto report = read_json(dir / "report.json").as_object();
    EXPECT_EQ(report.at("profile").as_string(), "nemotron-voicechat-pr2188");
    EXPECT_EQ(report.at("profile_source").as_string(), "recorded"); // run's config.profile
    EXPECT_DOUBLE_EQ(report.at("config").at("input_duration_s").to_number<double>(), 1.0);
    const auto& cases = report.at("cases").as_array();
    ASSERT_EQ(cases.size(), 2u);
    const auto expected = expected_probe_mock_violations();
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases[i].as_object();
        EXPECT_EQ(c.at("id").as_string(), "session-00" + std::to_string(i));
        EXPECT_EQ(c.at("status").as_string(), "fail");
        EXPECT_EQ(strings(c.at("violations")), expected);
        // The artifacts themselves are consistent: no unreadable line, receipts match the trace.
        for (const auto& e : strings(c.at("errors")))
            EXPECT_EQ(e.rfind("input pacing deviation", 0), 0u) << e;
        const auto& m = c.at("metrics").as_object();
        EXPECT_DOUBLE_EQ(m.at("input_audio_s").to_number<double>(), 1.0);
        EXPECT_DOUBLE_EQ(m.at("output_audio_s").to_number<double>(), 0.0);
        EXPECT_EQ(m.at("input_output_overlap"), false);
        EXPECT_TRUE(m.at("drain_after_eos_s").is_number());
        EXPECT_TRUE(m.at("close_ack_s").is_number());
        // Serving metrics see the probe mock's audio: 13 deltas of 80 ms.
        const auto& s = c.at("serving").as_object();
        EXPECT_EQ(s.at("appends_sent").to_number<std::uint64_t>(), 13u);
        EXPECT_EQ(s.at("expected_appends").to_number<std::uint64_t>(), 13u);
        EXPECT_EQ(s.at("output_samples").to_number<std::uint64_t>(), 13u * 1764u);
        EXPECT_EQ(s.at("send_lateness_s").at("n").to_number<std::uint64_t>(), 13u);
        // No response.done from the probe mock: the serving errors say so.
        EXPECT_EQ(strings(s.at("errors")),
                  std::vector<std::string>{"output response did not complete"});
    }
    const auto& summary = report.at("summary").as_object();
    EXPECT_EQ(summary.at("selected").to_number<int>(), 2);
    EXPECT_EQ(summary.at("failed").to_number<int>(), 2);
    EXPECT_EQ(summary.at("passed").to_number<int>(), 0);
    EXPECT_EQ(report.at("aggregate").at("attempted_sessions").to_number<int>(), 2);

    // The report is never overwritten.
    EXPECT_EQ(run_pacer({"replay", dir.path().string()}).exit_code, 2);

    // One session folder, report elsewhere.
    const auto single = dir / "single-report.json";
    const auto one =
        run_pacer({"replay", (dir / "session-001").string(), "--output", single.string()});
    EXPECT_EQ(one.exit_code, 1) << one.out;
    const auto one_report = read_json(single).as_object();
    ASSERT_EQ(one_report.at("cases").as_array().size(), 1u);
    EXPECT_EQ(strings(one_report.at("cases").as_array()[0].at("violations")), expected);

    // An older run recorded no profile: the default judges it, and replay says so. Nothing
    // recorded, nothing to contradict: --profile is then free.
    auto run_summary = read_json(dir / "summary.json");
    run_summary.as_object()["config"].as_object().erase("profile");
    std::ofstream(dir / "summary.json", std::ios::trunc) << boost::json::serialize(run_summary);
    const auto older = dir / "older.json";
    const auto unrecorded = run_pacer({"replay", dir.path().string(), "--output", older.string()});
    EXPECT_EQ(unrecorded.exit_code, 1) << unrecorded.out;
    EXPECT_NE(unrecorded.out.find("profile nemotron-voicechat-pr2188 (the default: no profile "
                                  "recorded)"),
              std::string::npos)
        << unrecorded.out;
    EXPECT_EQ(read_json(older).at("profile_source").as_string(), "default");
    const auto flagged = dir / "flagged.json";
    EXPECT_EQ(run_pacer({"replay", dir.path().string(), "--profile", "minicpmo", "--output",
                         flagged.string()})
                  .exit_code,
              1);
    EXPECT_EQ(read_json(flagged).at("profile").as_string(), "minicpmo-native-pr2377");
    EXPECT_EQ(read_json(flagged).at("profile_source").as_string(), "flag");

    // A session without its receipts is bad input: exit 2, nothing written.
    fs::remove(dir / "session-000" / "input-send-receipts.json");
    const auto missing_receipts = dir / "missing.json";
    EXPECT_EQ(
        run_pacer({"replay", dir.path().string(), "--output", missing_receipts.string()}).exit_code,
        2);
    EXPECT_FALSE(fs::exists(missing_receipts));
}

// Issue 33 item 3: a run recorded with another wire protocol is refused in one line, as a serve
// level is, not judged by the native oracle.
TEST(ReplayE2E, ARunOfAnotherProtocolIsRefusedInOneLine) {
    temp_dir dir;
    {
        mock_process mock({"--protocol", "openai-realtime"}, "native-mock");
        const auto run = run_pacer({"run", "--protocol", "openai-realtime", "--turns", "manual",
                                    "--url", mock.url(), "-c", "1", "-d", "1s", "--keep-traces",
                                    "--no-report", "-o", dir.path().string()});
        ASSERT_TRUE(finished(run.exit_code)) << run.out;
    }
    const auto report = dir / "replay.json";
    const auto r = run_pacer({"replay", dir.path().string(), "--output", report.string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_NE(r.out.find("was recorded with --protocol openai-realtime: replay checks the native "
                         "protocol only"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("violations"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(report));
}

TEST(ReplayE2E, RunRefusesAProfileItCannotNegotiate) {
    // The built-in probe mock serves the nemotron profile only; qwen3 is not the native
    // protocol; a bogus name is bad input. Each: one line, exit 2, no output folder.
    temp_dir dir;
    for (const std::vector<std::string>& extra : {std::vector<std::string>{"--profile", "minicpmo"},
                                                  std::vector<std::string>{"--profile", "qwen3"},
                                                  std::vector<std::string>{"--profile", "bogus"}}) {
        std::vector<std::string> args{"run", "-c", "1", "-d", "1s", "-o", dir.path().string()};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_pacer(args);
        EXPECT_EQ(r.exit_code, 2) << r.out;
        EXPECT_EQ(r.out.rfind("pacer: --profile ", 0), 0u) << r.out;
        EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
        EXPECT_FALSE(fs::exists(dir.path()));
    }
}

TEST(ReplayE2E, WorkersOfAMultiProcessRunNegotiateAndRecordTheProfile) {
    // `--processes`: each worker gets the profile, negotiates it and records it; the parent's
    // pooled summary.json records it too. A worker's folder replays as MiniCPM-o unprompted.
    mock_process mock({"--profile", "minicpmo"}, "native-mock");
    temp_dir dir;
    const auto run =
        run_pacer({"run", "--url", mock.url(), "--profile", "minicpmo", "--processes", "2", "-c",
                   "1", "-d", "1.5s", "--keep-traces", "-o", dir.path().string()});
    ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 3) << run.out; // 3: a loaded CI host
    EXPECT_EQ(read_json(dir / "summary.json").at("profile").as_string(), "minicpmo-native-pr2377");
    const auto worker = dir / "worker-1";
    EXPECT_EQ(at(read_json(worker / "summary.json"), {"config", "profile"}).as_string(),
              "minicpmo-native-pr2377");
    const auto replay = run_pacer({"replay", worker.string()});
    EXPECT_TRUE(replay.exit_code == 0 || replay.exit_code == 1) << replay.out;
    const auto report = read_json(worker / "report.json");
    EXPECT_EQ(report.at("profile").as_string(), "minicpmo-native-pr2377");
    for (const auto& c : report.at("cases").as_array())
        EXPECT_EQ(strings(c.at("violations")), std::vector<std::string>{})
            << boost::json::serialize(c);
}

TEST(ReplayE2E, MissingFolderIsBadInput) {
    temp_dir dir;
    const auto r = run_pacer({"replay", (dir / "nope").string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_FALSE(fs::exists(dir / "nope"));
}

TEST(ReplayE2E, FolderWithoutSessionsIsBadInput) {
    temp_dir dir;
    fs::create_directories(dir.path());
    EXPECT_EQ(run_pacer({"replay", dir.path().string()}).exit_code, 2);
    EXPECT_FALSE(fs::exists(dir / "report.json"));
}

} // namespace
} // namespace pacer::test

// `pacer replay`'s checks before any trace is read (metrics::replay_folder): the profile a run
// recorded in its summary.json decides, a --profile may only repeat it, and every refusal is
// one bad_input line with nothing written. The replay itself is tested end to end
// (tests/integration/test_replay_e2e.cpp).

#include <pacer/core/bad_input.hpp>
#include <pacer/metrics/replay.hpp>
#include <pacer/runtime/exit_status.hpp>

#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using pacer::metrics::replay_folder;
using pacer::metrics::replay_request;

// A run folder with one (empty) session folder and the given summary.json, removed at the end.
class run_folder {
public:
    explicit run_folder(const std::string& summary) {
        fs::create_directories(dir_.path / "session-001");
        std::ofstream(dir_.path / "summary.json") << summary;
    }
    const fs::path& path() const { return dir_.path; }

private:
    pacer::test::scratch_folder dir_{"pacer-test-replay"};
};

// The message of the bad_input `request` is refused with, or "" when it is not refused.
std::string refusal(const replay_request& request) {
    try {
        replay_folder(request);
    } catch (const pacer::bad_input& e) {
        return e.what();
    }
    return "";
}

replay_request dry_run_of(const fs::path& dir, const std::string& profile = "") {
    replay_request r;
    r.dir = dir.string();
    r.profile = profile;
    r.dry_run = true;
    return r;
}

TEST(ReplayFolder, ARecordedProfileReplayDoesNotCheckIsRefused) {
    const run_folder run(R"({"config": {"profile": "bogus"}})");
    EXPECT_EQ(refusal(dry_run_of(run.path())),
              (run.path() / "summary.json").string() +
                  R"( records the profile "bogus", which replay does not check)");
    const run_folder qwen(R"({"profile": "qwen3-omni-half-duplex"})");
    EXPECT_EQ(refusal(dry_run_of(qwen.path())),
              (qwen.path() / "summary.json").string() +
                  R"( records the profile "qwen3-omni-half-duplex", which replay does not check)");
}

TEST(ReplayFolder, ProfileMayOnlyRepeatTheRecordedOne) {
    const run_folder run(R"({"config": {"profile": "nemotron-voicechat-pr2188"}})");
    EXPECT_EQ(refusal(dry_run_of(run.path(), "minicpmo")),
              "--profile minicpmo-native-pr2377 contradicts the profile "
              "nemotron-voicechat-pr2188 recorded in " +
                  (run.path() / "summary.json").string() + ": drop --profile");
    EXPECT_EQ(refusal(dry_run_of(run.path(), "nosuch")), "--profile 'nosuch' is unknown");
    EXPECT_EQ(refusal(dry_run_of(run.path(), "qwen3")),
              "--profile qwen3 uses the legacy protocol, which replay does not check");

    // Repeating the recorded profile (by its short name) is accepted: the dry run prints the
    // plan with the recorded profile and writes nothing.
    testing::internal::CaptureStdout();
    const int status = replay_folder(dry_run_of(run.path(), "nemotron"));
    const std::string plan = testing::internal::GetCapturedStdout();
    EXPECT_EQ(status, pacer::runtime::exit_ok);
    EXPECT_NE(plan.find("(1 session(s): session-001)"), std::string::npos) << plan;
    EXPECT_NE(plan.find("profile    nemotron-voicechat-pr2188, startup reserve 80 ms"),
              std::string::npos)
        << plan;
    EXPECT_FALSE(fs::exists(run.path() / "report.json"));
}

TEST(ReplayFolder, NoRecordedProfileTakesTheFlagAndAnotherProtocolIsRefused) {
    const run_folder older(R"({"config": {}})");
    testing::internal::CaptureStdout();
    const int status = replay_folder(dry_run_of(older.path(), "minicpmo"));
    const std::string plan = testing::internal::GetCapturedStdout();
    EXPECT_EQ(status, pacer::runtime::exit_ok);
    EXPECT_NE(plan.find("profile    minicpmo-native-pr2377,"), std::string::npos) << plan;

    const run_folder other(R"({"config": {"protocol": "openai-realtime"}})");
    EXPECT_EQ(refusal(dry_run_of(other.path())),
              (other.path() / "summary.json").string() +
                  " was recorded with --protocol openai-realtime: replay checks the native "
                  "protocol only (that summary.json has the protocol's own checks)");

    auto negative = dry_run_of(older.path());
    negative.startup_reserve_ms = -1;
    EXPECT_EQ(refusal(negative), "--startup-reserve-ms must be >= 0");
}

} // namespace

// End to end: `pacer serve` against a real `pacer native-mock` process on loopback.
//
// The client-timing limits are raised in most cases (--loop-lag-limit-ms 1000): these tests
// check what the sweep records and decides, not how fast this host is (a loaded CI host or a
// sanitizer build may be slow); validity itself is checked where it is the point.

#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

const std::vector<std::string> relaxed_limits{"--loop-lag-limit-ms", "1000",
                                              "--send-lateness-limit-ms", "1000"};

std::vector<std::string> serve_args(const mock_process& mock, const temp_dir& out,
                                    std::vector<std::string> extra) {
    std::vector<std::string> a{"serve", "--url", mock.url(), "-o", out.path().string()};
    a.insert(a.end(), relaxed_limits.begin(), relaxed_limits.end());
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

double number(const json::value& v) {
    return v.to_number<double>();
}

TEST(ServeE2E, SmallSweepWritesEveryFieldAndReplaysAsPass) {
    mock_process mock({}, "native-mock");
    temp_dir out;
    const auto r = run_pacer(serve_args(mock, out, {"--concurrencies", "1,2,4", "-d", "3s"}));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("valid"), std::string::npos) << r.out;

    const auto top = read_json(out / "summary.json");
    for (const char* k : {"config", "runs", "levels", "provenance", "resources"})
        EXPECT_TRUE(top.as_object().contains(k)) << k;
    ASSERT_EQ(at(top, {"runs"}).as_array().size(), 3u);
    ASSERT_EQ(at(top, {"levels"}).as_array().size(), 3u);

    for (std::size_t c : {1u, 2u, 4u}) {
        SCOPED_TRACE("level " + std::to_string(c));
        const fs::path dir = out / ("c" + std::to_string(c));
        const auto level = read_json(dir / "summary.json");
        for (const char* k :
             {"concurrency", "repeat", "input_duration_s", "common_start_s", "configured_sessions",
              "profile", "pacing", "playback_startup_reserve_s", "stagger_s", "loop_lag_s",
              "loop_lag_limit_s", "send_lateness_limit_s", "client_timing_valid", "sessions",
              "aggregate", "resources"})
            EXPECT_TRUE(level.as_object().contains(k)) << k;
        EXPECT_EQ(at(level, {"concurrency"}).to_number<std::uint64_t>(), c);
        EXPECT_EQ(at(level, {"configured_sessions"}).to_number<std::uint64_t>(), c);
        EXPECT_TRUE(at(level, {"client_timing_valid"}).as_bool());
        EXPECT_DOUBLE_EQ(number(at(level, {"input_duration_s"})), 3.0);
        const auto& agg = at(level, {"aggregate"});
        EXPECT_EQ(at(agg, {"attempted_sessions"}).to_number<std::uint64_t>(), c);
        EXPECT_EQ(at(agg, {"admitted_sessions"}).to_number<std::uint64_t>(), c);
        EXPECT_EQ(at(agg, {"successful_sessions"}).to_number<std::uint64_t>(), c);
        for (const char* k : {"ttfa_s", "send_lateness_s", "output_gap_s", "output_gap_excess_s",
                              "output_drift_s", "output_coverage", "underrun_ratio", "units"})
            EXPECT_TRUE(agg.as_object().contains(k)) << k;
        // One common start: every session's grid starts there (no stagger by default).
        const double common = number(at(level, {"common_start_s"}));
        const auto& sessions = at(level, {"sessions"}).as_array();
        ASSERT_EQ(sessions.size(), c);
        for (std::size_t i = 0; i < c; ++i) {
            EXPECT_EQ(at(sessions[i], {"status"}).as_string(), "succeeded");
            char name[32];
            std::snprintf(name, sizeof name, "session-%03zu", i);
            const auto receipts = read_json(dir / name / "input-send-receipts.json");
            EXPECT_DOUBLE_EQ(number(at(receipts, {"session_start_s"})), common);
            const auto& appends = at(receipts, {"appends"}).as_array();
            ASSERT_EQ(appends.size(), 38u); // 3 s = 96000 bytes = 37.5 packets
            EXPECT_NEAR(number(at(appends[5], {"scheduled_s"})), common + 5 * 0.080, 1e-6);
        }
    }
    // The recorded level replays against the protocol oracle without a violation. Its verdict
    // also judges the client's own timing (an append > 80 ms off its grid fails the case), which
    // a loaded test machine does not keep (seen under TSan in CI): a case may fail for that
    // reason only, and then its input timing says so and the exit status follows the verdicts.
    const auto replay = run_pacer({"replay", (out / "c4").string()});
    const auto report = read_json(out / "c4" / "report.json");
    EXPECT_EQ(at(report, {"profile"}).as_string(), "nemotron-voicechat-pr2188");
    EXPECT_EQ(at(report, {"profile_source"}).as_string(), "recorded");
    bool all_pass = true;
    for (const auto& c : at(report, {"cases"}).as_array()) {
        SCOPED_TRACE(json::serialize(c));
        EXPECT_TRUE(at(c, {"violations"}).as_array().empty());
        if (at(c, {"status"}).as_string() == "pass")
            continue;
        all_pass = false;
        EXPECT_EQ(at(c, {"status"}).as_string(), "fail");
        EXPECT_FALSE(at(c, {"input_timing", "within_tolerance"}).as_bool());
        for (const auto& e : at(c, {"errors"}).as_array())
            EXPECT_EQ(std::string(e.as_string()).rfind("input pacing deviation ", 0), 0u);
    }
    EXPECT_EQ(replay.exit_code, all_pass ? 0 : 1) << replay.out;
}

TEST(ServeE2E, StaggerOffsetsEachSessionsGridFromTheCommonStart) {
    mock_process mock({}, "native-mock");
    temp_dir out;
    const auto r = run_pacer(serve_args(mock, out, {"-c", "2", "-d", "1s", "--stagger-ms", "80"}));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto level = read_json(out / "c2" / "summary.json");
    const double common = number(at(level, {"common_start_s"}));
    EXPECT_DOUBLE_EQ(number(at(level, {"stagger_s"})), 0.080);
    const auto s0 = read_json(out / "c2" / "session-000" / "input-send-receipts.json");
    const auto s1 = read_json(out / "c2" / "session-001" / "input-send-receipts.json");
    // S-W: offset = stagger x index / C = 80 ms x 1/2.
    EXPECT_NEAR(number(at(s0, {"session_start_s"})), common, 1e-6);
    EXPECT_NEAR(number(at(s1, {"session_start_s"})), common + 0.040, 1e-6);
}

TEST(ServeE2E, RejectedSessionsStayInTheAttemptedCount) {
    mock_process mock({"--max-sessions", "1"}, "native-mock");
    temp_dir out;
    const auto r = run_pacer(serve_args(mock, out, {"-c", "2", "-d", "1s"}));
    ASSERT_EQ(r.exit_code, 4) << r.out; // the server rejected a session
    EXPECT_NE(r.out.find("0 failed, 1 rejected; most frequent error (1 session(s), 1 distinct): "
                         "admission rejected: HTTP 503, retries exhausted"),
              std::string::npos)
        << r.out;
    const auto level = read_json(out / "c2" / "summary.json");
    const auto& agg = at(level, {"aggregate"});
    EXPECT_EQ(at(agg, {"attempted_sessions"}).to_number<std::uint64_t>(), 2u);
    EXPECT_EQ(at(agg, {"admitted_sessions"}).to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(at(agg, {"rejected_sessions"}).to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(at(agg, {"successful_sessions"}).to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(at(level, {"configured_sessions"}).to_number<std::uint64_t>(), 1u);
    std::vector<std::string> statuses;
    for (const auto& s : at(level, {"sessions"}).as_array())
        statuses.emplace_back(at(s, {"status"}).as_string());
    std::sort(statuses.begin(), statuses.end());
    EXPECT_EQ(statuses, (std::vector<std::string>{"rejected", "succeeded"}));
}

TEST(ServeE2E, FindCapacityStopsAtTheKneeOfTheCapacityModel) {
    // Each unit's reply waits 100 ms x (open sessions - 1): one session answers at once, two
    // answer every 80 ms unit 100 ms late, which misses it (lag > one unit).
    mock_process mock({"--per-session-cost-ms", "100"}, "native-mock");
    temp_dir out;
    const auto r =
        run_pacer(serve_args(mock, out,
                             {"-d", "2s", "--find-capacity", "--slo", "unit-miss-rate=0.1",
                              "--max-level", "8", "--settle", "0s", "--verify-repeats", "1"}));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("capacity   1 sessions"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("verified   boundary held"), std::string::npos) << r.out;
    const auto top = read_json(out / "summary.json");
    EXPECT_EQ(at(top, {"capacity", "sessions"}).to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(at(top, {"capacity", "first_failing_level"}).to_number<std::uint64_t>(), 2u);
    EXPECT_EQ(at(top, {"capacity", "limited_by"}).as_string(), "slo");
    EXPECT_TRUE(at(top, {"capacity", "boundary_held"}).as_bool());
    // Every run is a level entry: level 2 missed twice (search and confirmation) before it
    // counted as failing; then each side of the boundary was run once more.
    const auto& levels = at(top, {"levels"}).as_array();
    ASSERT_EQ(levels.size(), 5u);
    const std::vector<std::pair<std::string, bool>> story = {{"c1", true},
                                                             {"c2", false},
                                                             {"c2-confirm1", false},
                                                             {"c1-verify1", true},
                                                             {"c2-verify1", false}};
    for (std::size_t i = 0; i < story.size(); ++i) {
        EXPECT_EQ(at(levels[i], {"folder"}).as_string(), story[i].first) << i;
        EXPECT_EQ(at(levels[i], {"slo", "met"}).as_bool(), story[i].second) << i;
        EXPECT_TRUE(fs::exists(out / story[i].first / "summary.json")) << story[i].first;
    }
    EXPECT_EQ(at(levels[2], {"try"}).as_string(), "confirm");
    EXPECT_EQ(at(levels[4], {"try"}).as_string(), "verify");
    // The evidence: level 2 missed its units, level 1 did not.
    EXPECT_DOUBLE_EQ(number(at(levels[0], {"aggregate", "units", "unit_miss_rate"})), 0.0);
    EXPECT_GT(number(at(levels[1], {"aggregate", "units", "unit_miss_rate"})), 0.1);
}

TEST(ServeE2E, FindCapacityTriesAnInvalidLevelOnceMoreThenStopsAtTheClientLimit) {
    // Limits of 1 ns: no host keeps them, so every level's client timing is not valid.
    mock_process mock({}, "native-mock");
    temp_dir out;
    const auto r = run_pacer({"serve", "--url", mock.url(), "-o", out.path().string(), "-d", "1s",
                              "--find-capacity", "--settle", "0s", "--loop-lag-limit-ms",
                              "0.000001", "--send-lateness-limit-ms", "0.000001"});
    ASSERT_EQ(r.exit_code, 3) << r.out;
    const auto top = read_json(out / "summary.json");
    EXPECT_EQ(at(top, {"capacity", "limited_by"}).as_string(), "client");
    EXPECT_EQ(at(top, {"capacity", "sessions"}).to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(json::serialize(at(top, {"capacity", "probed_levels"})), "[1,1]");
    EXPECT_TRUE(at(top, {"capacity", "boundary_held"}).is_null()); // nothing to verify
    const auto& levels = at(top, {"levels"}).as_array();
    ASSERT_EQ(levels.size(), 2u);
    EXPECT_FALSE(at(levels[0], {"second_try"}).as_bool());
    EXPECT_TRUE(at(levels[1], {"second_try"}).as_bool());
    EXPECT_EQ(at(levels[1], {"try"}).as_string(), "confirm");
    for (const char* dir : {"c1", "c1-confirm1"}) {
        const auto level = read_json(out / dir / "summary.json");
        EXPECT_FALSE(at(level, {"client_timing_valid"}).as_bool()) << dir;
        EXPECT_TRUE(at(level, {"resources"}).as_object().contains("trace_channel_waits")) << dir;
    }
}

TEST(ServeE2E, LockstepWaitsForEveryUnitOfAPerUnitProfile) {
    mock_process mock({"--profile", "minicpmo"}, "native-mock");
    temp_dir out;
    const auto r = run_pacer(serve_args(
        mock, out, {"--profile", "minicpmo", "--pacing", "lockstep", "-c", "1", "-d", "3s"}));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto level = read_json(out / "c1" / "summary.json");
    EXPECT_EQ(at(level, {"pacing"}).as_string(), "lockstep");
    EXPECT_EQ(at(level, {"sessions"}).as_array()[0].at("status").as_string(), "succeeded");
    // Each 1 s unit's last packet (12, 24, 37) was sent only after the unit was done: the
    // next packet starts after that unit's `sglang.unit.done` arrived.
    const auto trace = read_jsonl(out / "c1" / "session-000" / "trace.jsonl");
    std::vector<double> unit_done, append_start;
    for (const auto& l : trace) {
        const auto type = at(l, {"event", "type"}).as_string();
        if (type == "sglang.unit.done")
            unit_done.push_back(number(at(l, {"time_s"})));
        if (type == "input_audio_buffer.append")
            append_start.push_back(number(at(l, {"time_s"})));
    }
    ASSERT_EQ(append_start.size(), 38u);
    ASSERT_GE(unit_done.size(), 2u);
    EXPECT_GE(append_start[13], unit_done[0]); // unit 0 ends with packet 12 (1000 ms / 80)
    EXPECT_GE(append_start[25], unit_done[1]); // unit 1 ends with packet 24
}

// Every case's protocol verdict is clean; a case may fail only for the client's own input
// timing on a loaded host (see SmallSweep).
void expect_no_violation(const json::value& report) {
    for (const auto& c : at(report, {"cases"}).as_array()) {
        SCOPED_TRACE(json::serialize(c));
        EXPECT_TRUE(at(c, {"violations"}).as_array().empty());
        if (at(c, {"status"}).as_string() == "pass")
            continue;
        for (const auto& e : at(c, {"errors"}).as_array())
            EXPECT_EQ(std::string(e.as_string()).rfind("input pacing deviation ", 0), 0u);
    }
}

TEST(ServeE2E, MiniCpmLevelReplaysAsMiniCpmWithoutProfile) {
    // `pacer native-mock --profile minicpmo` as its own process; the level's traces are kept.
    mock_process mock({"--profile", "minicpmo"}, "native-mock");
    temp_dir out;
    const auto r =
        run_pacer(serve_args(mock, out, {"--profile", "minicpmo", "-c", "2", "-d", "2.5s"}));
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out; // 3: a loaded CI host
    const fs::path level = out / "c2";
    EXPECT_EQ(at(read_json(level / "summary.json"), {"profile"}).as_string(),
              "minicpmo-native-pr2377");
    // What the client asked for and the mock granted: the profile's audio and text.
    for (const auto& l : read_jsonl(level / "session-000" / "trace.jsonl")) {
        const auto type = at(l, {"event", "type"}).as_string();
        if (type == "session.update") {
            EXPECT_EQ(json::serialize(at(l, {"event", "session"})),
                      R"({"output_modalities":["audio","text"]})");
        }
        if (type == "session.updated") {
            EXPECT_EQ(json::serialize(
                          at(l, {"event", "session", "sglang", "granted", "output_modalities"})),
                      R"(["audio","text"])");
        }
    }

    // No --profile: the level's recorded profile judges it, and the oracle finds nothing.
    const auto replay = run_pacer({"replay", level.string()});
    EXPECT_TRUE(replay.exit_code == 0 || replay.exit_code == 1) << replay.out;
    EXPECT_NE(replay.out.find("profile minicpmo-native-pr2377 (recorded in "), std::string::npos)
        << replay.out;
    const auto report = read_json(level / "report.json");
    EXPECT_EQ(at(report, {"profile"}).as_string(), "minicpmo-native-pr2377");
    EXPECT_EQ(at(report, {"profile_source"}).as_string(), "recorded");
    ASSERT_EQ(at(report, {"cases"}).as_array().size(), 2u);
    expect_no_violation(report);
    for (const auto& c : at(report, {"cases"}).as_array())
        EXPECT_TRUE(c.as_object().contains("units")) << json::serialize(c); // per-unit metrics

    // One session folder (named with a trailing slash): the profile comes from its level's
    // summary.json.
    const auto single = out / "single.json";
    const auto one =
        run_pacer({"replay", (level / "session-001").string() + "/", "--output", single.string()});
    EXPECT_TRUE(one.exit_code == 0 || one.exit_code == 1) << one.out;
    EXPECT_EQ(at(read_json(single), {"profile"}).as_string(), "minicpmo-native-pr2377");
    EXPECT_EQ(at(read_json(single), {"cases"}).as_array()[0].at("id").as_string(), "session-001");
    expect_no_violation(read_json(single));

    // --profile may repeat the recorded profile (alias or full name), never contradict it.
    const auto same = out / "same.json";
    const auto agreed =
        run_pacer({"replay", level.string(), "--profile", "minicpmo", "--output", same.string()});
    EXPECT_TRUE(agreed.exit_code == 0 || agreed.exit_code == 1) << agreed.out;
    EXPECT_EQ(at(read_json(same), {"profile"}).as_string(), "minicpmo-native-pr2377");
    const auto other = out / "other.json";
    const auto refused =
        run_pacer({"replay", level.string(), "--profile", "nemotron", "--output", other.string()});
    EXPECT_EQ(refused.exit_code, 2) << refused.out;
    EXPECT_NE(refused.out.find("pacer: --profile nemotron-voicechat-pr2188 contradicts the "
                               "profile minicpmo-native-pr2377 recorded in "),
              std::string::npos)
        << refused.out;
    EXPECT_EQ(std::count(refused.out.begin(), refused.out.end(), '\n'), 1) << refused.out;
    EXPECT_FALSE(fs::exists(other));
}

TEST(ServeE2E, WithoutUrlTheBuiltInNativeMockOfTheProfileServes) {
    temp_dir out;
    std::vector<std::string> args{"serve", "-c", "2", "-d", "1s", "-o", out.path().string()};
    args.insert(args.end(), relaxed_limits.begin(), relaxed_limits.end());
    const auto r = run_pacer(args);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("(built-in native mock)"), std::string::npos) << r.out;
    const auto top = read_json(out / "summary.json");
    EXPECT_NE(std::string(at(top, {"config", "url"}).as_string()).find("built-in native mock"),
              std::string::npos);
    EXPECT_EQ(at(top, {"mock", "sessions_seen"}).to_number<std::uint64_t>(), 2u);
    EXPECT_EQ(at(top, {"mock", "profile"}).as_string(), "nemotron-voicechat-pr2188");
    const auto level = read_json(out / "c2" / "summary.json");
    EXPECT_EQ(at(level, {"aggregate", "successful_sessions"}).to_number<std::uint64_t>(), 2u);
}

TEST(ServeE2E, BadInputIsOneLineExitTwoAndWritesNothing) {
    temp_dir out;
    fs::create_directories(out.path());
    const std::string url = "ws://127.0.0.1:9/v1/realtime";
    struct bad_case {
        std::vector<std::string> args;
        const char* says;
    };
    const std::vector<bad_case> cases{
        {{"serve", "--url", url, "-o", out.path().string()}, "already exists"},
        {{"serve", "--url", url, "--concurrencies", "1,x"}, "--concurrencies"},
        {{"serve", "--url", url, "--concurrencies", "2,2"}, "appears twice"},
        {{"serve", "--url", url, "--slo", "latency=1"}, "--slo"},
        {{"serve", "--url", url, "--pacing", "lockstep"}, "lockstep"},
        {{"serve", "--url", url, "--profile", "nope"}, "--profile"},
        {{"serve", "--url", url, "--audio", "/nonexistent.wav"}, "nonexistent.wav"},
        {{"serve", "--url", url, "-d", "5s", "--timeout", "2s"}, "--timeout"},
        {{"serve", "--url", "http://x"}, "ws://"},
        {{"serve", "--url", url, "--confirm", "2"}, "--find-capacity"},
        {{"serve", "--url", url, "--verify-repeats", "1"}, "--find-capacity"},
        {{"serve", "--url", url, "--warmup-level", "4"}, "--warmup-runs"},
        {{"serve", "--url", url, "--settle", "soon"}, "--settle"},
        {{"serve", "--url", url, "--server-stats", "https://127.0.0.1:9/stats"}, "http://"},
        {{"serve", "--url", url, "--server-stats", "http://127.0.0.1:70000/stats"}, "1..65535"},
        // serve's JSON stats were --server-metrics, which now scrapes Prometheus as run's does.
        {{"serve", "--url", url, "--server-metrics", "http://127.0.0.1:9/stats"},
         "--server-stats http://127.0.0.1:9/stats"},
    };
    for (const auto& c : cases) {
        const auto r = run_pacer(c.args);
        EXPECT_EQ(r.exit_code, 2) << json::serialize(json::value_from(c.args)) << r.out;
        EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
        EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    }
    EXPECT_TRUE(fs::is_empty(out.path())); // the existing folder was not touched
}

// A warm-up of the first level's size (the default), printed, kept out of the levels.
TEST(ServeE2E, WarmupRunsAtTheFirstLevelAndStaysOutOfTheLevels) {
    mock_process mock({}, "native-mock");
    temp_dir out;
    const auto r = run_pacer(
        serve_args(mock, out, {"--concurrencies", "3", "-d", "1s", "--warmup-runs", "1"}));
    EXPECT_NE(r.out.find("warmup 1 (3 sessions, not part of the levels): 3 of 3 succeeded"),
              std::string::npos)
        << r.out;
    for (const char* s : {"session-000", "session-001", "session-002"})
        EXPECT_TRUE(fs::exists(out / "warmup-1" / s / "trace.jsonl")) << s;
    const auto top = read_json(out / "summary.json");
    EXPECT_EQ(at(top, {"config", "warmup_level"}).to_number<std::uint64_t>(), 3u);
    EXPECT_EQ(at(top, {"levels"}).as_array().size(), 1u);
    EXPECT_EQ(at(top, {"runs"}).as_array().size(), 1u); // the warm-up is not a run of a level

    temp_dir small;
    const auto one = run_pacer(serve_args(mock, small,
                                          {"--concurrencies", "2", "-d", "1s", "--warmup-runs", "1",
                                           "--warmup-level", "1", "--settle", "0s"}));
    EXPECT_NE(one.out.find("warmup 1 (1 session, not part of the levels): 1 of 1 succeeded"),
              std::string::npos)
        << one.out;
    EXPECT_FALSE(fs::exists(small / "warmup-1" / "session-001"));
}

// Nothing listens on the port: the level says so instead of "NOT VALID (no session was
// admitted)", the sweep stops there, and the exit status is 4.
TEST(ServeE2E, UnreachableServerIsSaidAsSuch) {
    const std::string url = "ws://127.0.0.1:" + closed_port() + "/v1/realtime";
    temp_dir out;
    const auto r = run_pacer(
        {"serve", "--url", url, "--concurrencies", "1,2", "-d", "1s", "-o", out.path().string()});
    EXPECT_EQ(r.exit_code, 4) << r.out;
    EXPECT_NE(r.out.find("cannot connect to " + url + ": connection refused"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("NOT VALID"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("stopped: the server cannot be reached"), std::string::npos) << r.out;
    const auto top = read_json(out / "summary.json");
    EXPECT_EQ(at(top, {"levels"}).as_array().size(), 1u) << "the sweep stops at the first level";
    const auto level = read_json(out / "c1" / "summary.json");
    EXPECT_EQ(at(level, {"unreachable"}).as_string(),
              "cannot connect to " + url + ": connection refused");
}

// Failed sessions: the level prints its most frequent error with its session count, the level
// summary lists the errors, and the exit status is 4.
TEST(ServeE2E, FailedSessionsPrintTheMostFrequentErrorAndExitFour) {
    mock_process mock({"--fault", "disconnect", "--fault-sessions", "0,1"}, "native-mock");
    temp_dir out;
    const auto r = run_pacer(serve_args(mock, out, {"-c", "3", "-d", "1s"}));
    EXPECT_EQ(r.exit_code, 4) << r.out;
    EXPECT_NE(r.out.find("2 failed, 0 rejected; most frequent error (2 session(s), "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("ConnectionClosedError: received 1011 (internal error) deliberate "
                         "disconnect; then sent 1011 (internal error) deliberate disconnect"),
              std::string::npos)
        << r.out;
    const auto level = read_json(out / "c3" / "summary.json");
    const auto& errors = at(level, {"errors"}).as_array();
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(at(errors[0], {"sessions"}).to_number<std::uint64_t>(), 2u);
}

// --drop-traces: each level's traces go once its metrics and summary are written; the
// receipts and summaries stay, and the metrics were computed from the traces.
TEST(ServeE2E, DropTracesDeletesEachLevelsTracesOnceItsFilesAreWritten) {
    temp_dir out;
    std::vector<std::string> args{"serve", "--concurrencies", "1,2", "-d",
                                  "1s",    "--drop-traces",   "-o",  out.path().string()};
    args.insert(args.end(), relaxed_limits.begin(), relaxed_limits.end());
    const auto r = run_pacer(args);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (std::size_t c : {1u, 2u}) {
        const fs::path dir = out / ("c" + std::to_string(c));
        const auto level = read_json(dir / "summary.json");
        EXPECT_TRUE(at(level, {"traces_dropped"}).as_bool());
        EXPECT_EQ(at(level, {"aggregate", "successful_sessions"}).to_number<std::uint64_t>(), c);
        for (std::size_t i = 0; i < c; ++i) {
            char name[32];
            std::snprintf(name, sizeof name, "session-%03zu", i);
            EXPECT_FALSE(fs::exists(dir / name / "trace.jsonl")) << dir / name;
            EXPECT_TRUE(fs::exists(dir / name / "input-send-receipts.json")) << dir / name;
        }
    }
    EXPECT_TRUE(at(read_json(out / "summary.json"), {"disk", "drop_traces"}).as_bool());
}

// A plan the disk cannot hold is refused with one line before anything is created.
TEST(ServeE2E, PlanTheDiskCannotHoldIsRefusedBeforeAnythingIsCreated) {
    temp_dir out;
    const auto dir = out / "sweep";
    const auto r = run_pacer({"serve", "--url", "ws://127.0.0.1:9/v1/realtime", "-c", "1000000",
                              "-d", "10m", "--timeout", "20m", "-o", dir.string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_EQ(r.out.rfind("pacer: --output " + dir.string() + ": this run writes about ", 0), 0u)
        << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_FALSE(fs::exists(out.path()));
}

// A capacity search drives the server past its capacity on purpose: the rejections of the
// level beyond it are the evidence for the capacity it reports, not a failed command (exit 0).
TEST(ServeE2E, CapacitySearchDoesNotExitFourForTheLevelsBeyondTheCapacity) {
    mock_process mock({"--max-sessions", "1"}, "native-mock");
    temp_dir out;
    const auto r = run_pacer(serve_args(mock, out,
                                        {"-d", "1s", "--find-capacity", "--max-level", "2",
                                         "--settle", "0s", "--verify-repeats", "1"}));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("1 rejected; most frequent error"), std::string::npos) << r.out;
    const auto top = read_json(out / "summary.json");
    EXPECT_EQ(at(top, {"capacity", "sessions"}).to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(at(top, {"capacity", "limited_by"}).as_string(), "slo");
}

} // namespace
} // namespace pacer::test

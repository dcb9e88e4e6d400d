// End to end: `pacer serve --find-capacity` against a `pacer native-mock` process that stays
// degraded after an overload (docs/serving.md, "Overload and recovery"). The mock's arithmetic:
// a unit leaves 5 + 20 x (sessions - 1) ms after its input, so a fresh server keeps 4 sessions
// (65 ms) and 5 or more overload it (85 ms and up, past the 80 ms unit); after an overload every
// unit costs 60 ms more for --recovery-s, so a degraded server keeps 1 session (65 ms), and 2
// miss (85 ms). A unit's lag as the client measures it is never below the mock's model, so the
// levels above a capacity miss on any host; those below may miss on a loaded one, which can
// only lower an answer. The client-timing limits are relaxed: these tests check what the search
// decides, not how fast this host is. Each is a few runs of 1 s.

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "fakes.hpp"
#include "integration/process.hpp"
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

std::vector<std::string> degrading_server(const char* recovery_s) {
    return {"--unit-latency-ms",     "5",  "--per-session-cost-ms", "20",
            "--overload-penalty-ms", "60", "--recovery-s",          recovery_s};
}

std::vector<std::string> search_args(const mock_process& mock, const temp_dir& out,
                                     std::vector<std::string> extra) {
    std::vector<std::string> a{"serve",
                               "--url",
                               mock.url(),
                               "-o",
                               out.path().string(),
                               "-d",
                               "1s",
                               "--find-capacity",
                               "--slo",
                               "unit-miss-rate=0.5",
                               "--start-level",
                               "2",
                               "--max-level",
                               "6",
                               "--confirm",
                               "0",
                               "--verify-repeats",
                               "1",
                               "--settle",
                               "0s",
                               "--loop-lag-limit-ms",
                               "1000",
                               "--send-lateness-limit-ms",
                               "1000",
                               "--progress",
                               "never",
                               "--no-report"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

std::uint64_t whole(const json::value& v) {
    return v.to_number<std::uint64_t>();
}

// The defect, kept visible: without waiting for recovery, every run after the first overload
// measures the degraded server, and the search answers its capacity (1), not the knee (4).
TEST(RecoveryE2E, WithoutACanaryTheSearchAnswersFarBelowTheKnee) {
    mock_process mock(degrading_server("600"), "native-mock");
    temp_dir out;
    const auto r = run_pacer(search_args(mock, out, {"--recovery", "none"}));
    ASSERT_TRUE(fs::exists(out / "summary.json")) << r.out;
    const auto top = read_json(out / "summary.json");
    const auto& capacity = at(top, {"capacity"}).as_object();
    EXPECT_LE(whole(capacity.at("sessions")), 1u) << r.out;
    EXPECT_FALSE(fs::exists(out / "recovery")) << "no canary runs with --recovery none";
    const auto& recovery = capacity.at("recovery").as_object();
    EXPECT_FALSE(recovery.at("overloads").as_array().empty()) << r.out;
    EXPECT_EQ(recovery.at("verdict").as_string(),
              "the server's recovery was not watched (--recovery none)");
}

// With the canary (the default) every run waits until the server is back: the search finds the
// knee, and says how long each overload took to recover from.
TEST(RecoveryE2E, WithTheCanaryTheSearchFindsTheKneeAndReportsTheRecoveryTimes) {
    mock_process mock(degrading_server("6"), "native-mock");
    temp_dir out;
    const auto r = run_pacer(search_args(mock, out, {"--recovery-max", "30s"}));
    ASSERT_TRUE(fs::exists(out / "summary.json")) << r.out;
    const auto top = read_json(out / "summary.json");
    const auto& capacity = at(top, {"capacity"}).as_object();
    const auto sessions = whole(capacity.at("sessions"));
    EXPECT_GE(sessions, 3u) << r.out; // 4 by arithmetic; a loaded host may push 4 over
    EXPECT_LE(sessions, 4u) << r.out;
    const auto& recovery = capacity.at("recovery").as_object();
    EXPECT_TRUE(recovery.at("baseline_s").is_number()) << json::serialize(recovery);
    EXPECT_TRUE(fs::exists(out / "recovery" / "baseline" / "summary.json"));
    const auto& overloads = recovery.at("overloads").as_array();
    ASSERT_FALSE(overloads.empty()) << r.out;
    for (const auto& o : overloads) {
        const auto& after = at(o, {"recovery"});
        ASSERT_TRUE(after.is_object()) << json::serialize(o);
        EXPECT_TRUE(at(after, {"recovered"}).as_bool()) << json::serialize(o);
        // The first canary after an overload meets the degraded server (65 ms against a limit
        // of about 25 ms) for 6 s after its last overloaded unit: the wait took more than one
        // look.
        EXPECT_GE(whole(at(after, {"looks"})), 2u) << json::serialize(o);
    }
    EXPECT_EQ(
        std::string(recovery.at("verdict").as_string()).rfind("the server recovered within", 0), 0u)
        << json::serialize(recovery);
    EXPECT_NE(r.out.find("recovery   the server recovered within"), std::string::npos) << r.out;
    // report.html (`pacer report` of the folder: the search ran with --no-report) says the same:
    // the verdict, and each overload's recovery time as summary.json has it.
    const auto page = run_pacer({"report", out.path().string()});
    ASSERT_EQ(page.exit_code, 0) << page.out;
    const auto html = slurp(out / "report.html");
    EXPECT_NE(html.find("data-key=\"capacity.recovery.verdict\">" +
                        std::string(recovery.at("verdict").as_string()) + "</span>"),
              std::string::npos);
    for (std::size_t i = 0; i < overloads.size(); ++i) {
        const std::string key = "data-key=\"capacity.recovery.overloads[" + std::to_string(i) +
                                "].recovery.waited_s\" data-value=\"";
        const auto k = html.find(key);
        ASSERT_NE(k, std::string::npos) << key;
        EXPECT_EQ(std::strtod(html.c_str() + k + key.size(), nullptr),
                  at(overloads[i], {"recovery", "waited_s"}).to_number<double>())
            << key;
    }
    // Every run of a level but the first records its wait.
    const auto& runs = at(top, {"runs"}).as_array();
    ASSERT_GE(runs.size(), 2u);
    EXPECT_EQ(runs[0].as_object().count("recovery"), 0u);
    for (std::size_t i = 1; i < runs.size(); ++i)
        EXPECT_TRUE(at(runs[i], {"recovery", "waited_s"}).is_number()) << i;
}

TEST(RecoveryE2E, BadInputIsOneLineExitTwoAndWritesNothing) {
    const std::string url = "ws://127.0.0.1:9/v1/realtime";
    temp_dir out;
    const std::vector<std::pair<std::vector<std::string>, const char*>> cases{
        {{"--find-capacity", "--growth", "1"}, "--growth"},
        {{"--find-capacity", "--growth", "0.5"}, "--growth"},
        {{"--find-capacity", "--recovery-max", "1s"}, "shorter than one canary"},
        {{"--find-capacity", "--recovery", "often"}, "--recovery"},
        {{"--find-capacity", "--recovery", "stats"}, "--server-stats"},
        {{"--find-capacity", "--server-stats", "http://127.0.0.1:9/stats#pending"}, "JSON pointer"},
        {{"--growth", "1.5"}, "--find-capacity"},
    };
    for (const auto& [extra, says] : cases) {
        std::vector<std::string> args{"serve", "--url", url, "-o", out.path().string()};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_pacer(args);
        EXPECT_EQ(r.exit_code, 2) << extra.back() << r.out;
        EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
        EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
        EXPECT_FALSE(fs::exists(out.path())) << r.out;
    }
    // The mock's own bad values.
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{"--overload-penalty-ms", "-1"},
          std::vector<std::string>{"--recovery-s", "0"}}) {
        std::vector<std::string> args{"native-mock", "--port", "0", "--dry-run"};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_pacer(args);
        EXPECT_EQ(r.exit_code, 2) << r.out;
        EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    }
}

// serve's --server-metrics scrapes a Prometheus endpoint as run's does (a remote DCGM exporter:
// energy per level), and --idle-baseline takes it; the server's JSON stats are --server-stats.
TEST(RecoveryE2E, ServeScrapesAPrometheusServerMetricsEndpoint) {
    temp_dir dir;
    fs::create_directories(dir.path());
    const auto page = dir.path() / "metrics.txt";
    std::ofstream(page) << "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
                           "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 250\n";
    child fixture({metrics_fixture_program().string(), page.string()});
    const auto line = fixture.read_line();
    ASSERT_EQ(line.rfind("listening on 127.0.0.1:", 0), 0u) << line;
    const std::string url = "http://127.0.0.1:" + line.substr(line.rfind(':') + 1) + "/metrics";
    const auto out = dir.path() / "serve";
    const auto r =
        run_pacer({"serve", "-c", "1", "-d", "1s", "--server-metrics", url, "--idle-baseline",
                   "0.3s", "--progress", "never", "--no-report", "-o", out.string()});
    ASSERT_TRUE(fs::exists(out / "summary.json")) << r.out;
    const auto top = read_json(out / "summary.json");
    const auto& t = at(at(top, {"runs"}).as_array().at(0), {"telemetry"});
    EXPECT_EQ(at(t, {"energy_from"}).as_string(), "server_metrics") << json::serialize(t);
    EXPECT_DOUBLE_EQ(at(t, {"peak_power_w"}).to_number<double>(), 250);
}

} // namespace
} // namespace pacer::test

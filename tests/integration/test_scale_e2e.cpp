// Scale-out and open loop, end to end: worker processes, merge, shards, open-loop arrivals.

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <cstdlib>
#include <set>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

double num(const value& v, std::initializer_list<const char*> path) {
    const value* cur = &v;
    for (const char* k : path)
        cur = &cur->as_object().at(k);
    return cur->to_number<double>();
}

TEST(ScaleE2E, FourWorkerProcessesArePooled) {
    mock_process mock;
    temp_dir out;
    const auto r = run_pacer({"run", "--url", mock.url(), "--processes", "4", "-c", "3", "-d", "1s",
                              "-o", out.path().string()});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const auto s = read_json(out / "summary.json");
    EXPECT_EQ(num(s, {"pacing", "sessions", "requested"}), 12);
    EXPECT_EQ(num(s, {"pacing", "sessions", "complete"}), 12);
    EXPECT_EQ(num(s, {"pacing", "packets", "sent"}), 12 * 13);
    EXPECT_EQ(num(s, {"pacing", "pacing_deviation_s", "n"}), 12 * 13) << "pooled over every packet";
    EXPECT_EQ(s.at("workers").as_array().size(), 4u);
    for (int k = 0; k < 4; ++k) {
        EXPECT_TRUE(fs::exists(out / ("worker-" + std::to_string(k)) / "summary.json"));
        EXPECT_TRUE(fs::exists(out / ("worker-" + std::to_string(k) + ".log")));
    }
    // The workers shared one start deadline.
    std::vector<double> starts;
    for (int k = 0; k < 4; ++k)
        starts.push_back(num(read_json(out / ("worker-" + std::to_string(k)) / "summary.json"),
                             {"start_at_monotonic_s"}));
    EXPECT_EQ(std::set<double>(starts.begin(), starts.end()).size(), 1u);
    EXPECT_EQ(mock.stop(), 0);
}

TEST(ScaleE2E, AWorkerThatDiesIsReportedAndTheOthersKept) {
    ::setenv("PACER_TEST_ABORT_WORKER", "1", 1);
    temp_dir out;
    const auto r =
        run_pacer({"run", "--processes", "2", "-c", "2", "-d", "1s", "-o", out.path().string()});
    ::unsetenv("PACER_TEST_ABORT_WORKER");
    // 1: pacer itself failed (3 takes precedence when this host also made the client late).
    EXPECT_TRUE(r.exit_code == 1 || r.exit_code == 3) << r.out;
    const auto s = read_json(out / "summary.json");
    const auto& workers = s.at("workers").as_array();
    ASSERT_EQ(workers.size(), 2u);
    EXPECT_EQ(workers[0].at("status").as_string(), "exit 0");
    EXPECT_NE(std::string(workers[1].at("status").as_string()).find("killed by signal 6"),
              std::string::npos)
        << workers[1].at("status").as_string();
    EXPECT_FALSE(workers[1].at("merged").as_bool());
    EXPECT_FALSE(s.at("complete").as_bool());
    EXPECT_EQ(num(s, {"pacing", "sessions", "complete"}), 2) << "worker 0's sessions are kept";
}

TEST(ScaleE2E, ShardsMergeIntoTheWholeRun) {
    mock_process mock;
    temp_dir dir;
    fs::create_directories(dir.path());
    std::vector<std::string> parts;
    for (int i = 0; i < 3; ++i) {
        parts.push_back((dir / ("shard-" + std::to_string(i))).string());
        const auto r = run_pacer({"run", "--url", mock.url(), "-c", "7", "--shard",
                                  std::to_string(i) + "/3", "-d", "1s", "-o", parts.back()});
        EXPECT_EQ(r.exit_code, 0) << r.out;
        EXPECT_EQ(num(read_json(fs::path(parts.back()) / "summary.json"), {"shard", "index"}), i);
    }
    std::vector<std::string> args{"merge"};
    args.insert(args.end(), parts.begin(), parts.end());
    args.push_back("-o");
    args.push_back((dir / "merged").string());
    const auto m = run_pacer(args);
    EXPECT_EQ(m.exit_code, 0) << m.out;
    const auto s = read_json(dir / "merged" / "summary.json");
    EXPECT_EQ(num(s, {"pacing", "sessions", "requested"}), 7) << "3 + 2 + 2 sessions";
    EXPECT_EQ(num(s, {"pacing", "packets", "sent"}), 7 * 13);
    // Merging into an existing folder is refused.
    EXPECT_EQ(run_pacer(args).exit_code, 2);
    EXPECT_EQ(mock.stop(), 0);
}

TEST(ScaleE2E, MpirunLaunchesThreeShards) {
    if (std::system("command -v mpirun >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "mpirun is not installed (Debian package openmpi-bin): the launcher's "
                        "environment is covered by the shard unit tests";
    mock_process mock;
    temp_dir dir;
    fs::create_directories(dir.path());
    // Each rank takes its shard from OMPI_COMM_WORLD_RANK/SIZE and writes its own part.
    const std::string script = (dir / "rank.sh").string();
    {
        std::ofstream f(script);
        f << "#!/bin/sh\nexec " << PACER_BINARY << " run --url " << mock.url() << " -c 6 -d 1s -o "
          << (dir / "part-").string() << "$OMPI_COMM_WORLD_RANK\n";
    }
    fs::permissions(script, fs::perms::owner_all);
    child mpi(
        {"/usr/bin/env", "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "3", script});
    const std::string printed = mpi.read_all();
    EXPECT_EQ(mpi.wait(), 0) << printed;
    for (int i = 0; i < 3; ++i) {
        const auto s = read_json(dir / ("part-" + std::to_string(i)) / "summary.json");
        EXPECT_EQ(num(s, {"shard", "index"}), i);
        EXPECT_EQ(num(s, {"shard", "count"}), 3);
        EXPECT_EQ(num(s, {"pacing", "sessions", "requested"}), 2);
    }
    EXPECT_EQ(mock.stop(), 0);
}

TEST(ScaleE2E, OpenLoopRunSavesAndReplaysItsSchedule) {
    mock_process mock;
    temp_dir a, b;
    const auto r1 = run_pacer({"run", "--url", mock.url(), "--rate", "20", "--sessions", "12",
                               "--seed", "7", "-d", "1s", "-o", a.path().string()});
    EXPECT_EQ(r1.exit_code == 0 || r1.exit_code == 3, true) << r1.out;
    const auto s1 = read_json(a / "summary.json");
    EXPECT_EQ(num(s1, {"open_loop", "requests", "scheduled"}), 12);
    EXPECT_EQ(num(s1, {"open_loop", "requests", "completed"}), 12);
    EXPECT_EQ(num(s1, {"pacing", "sessions", "complete"}), 12);
    EXPECT_EQ(num(s1, {"pacing", "latency_to_first_audio_s", "n"}), 12)
        << "anchored to the schedule";
    EXPECT_TRUE(fs::exists(a / "schedule.json"));
    // Replaying the saved schedule gives the same arrivals (same hash).
    const auto r2 =
        run_pacer({"run", "--url", mock.url(), "--schedule", (a / "schedule.json").string(), "-d",
                   "1s", "-o", b.path().string()});
    EXPECT_EQ(r2.exit_code == 0 || r2.exit_code == 3, true) << r2.out;
    const auto s2 = read_json(b / "summary.json");
    EXPECT_EQ(s1.at("open_loop").at("schedule").at("sha256"),
              s2.at("open_loop").at("schedule").at("sha256"));
    EXPECT_EQ(mock.stop(), 0);
}

TEST(ScaleE2E, OpenLoopCapDropsAndDiscloses) {
    mock_process mock;
    temp_dir out;
    // 40 arrivals at 200/s, each session lasting 1 s, at most 4 in flight: the cap must bind.
    const auto r = run_pacer({"run", "--url", mock.url(), "--rate", "200", "--sessions", "40",
                              "--arrival", "constant", "--max-concurrency", "4", "--cap-policy",
                              "drop", "-d", "1s", "-o", out.path().string()});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    const auto s = read_json(out / "summary.json");
    EXPECT_TRUE(s.at("open_loop").at("cap").at("binding").as_bool());
    const double dropped = num(s, {"open_loop", "cap", "dropped"});
    EXPECT_GE(dropped, 30) << "arrivals 4..39 come within 0.2 s, while the first 4 stream for 1 s";
    EXPECT_EQ(num(s, {"open_loop", "requests", "completed"}) + dropped, 40);
    EXPECT_EQ(num(s, {"pacing", "sessions", "requested"}), 40 - dropped);
    EXPECT_LE(num(s, {"open_loop", "cap", "peak_in_flight"}), 4);
    EXPECT_EQ(mock.stop(), 0);
}

TEST(ScaleE2E, OpenLoopBadArgumentsAreRefused) {
    temp_dir out;
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"run", "--rate", "0", "--sessions", "3", "-o", out.path().string()},
             {"run", "--rate", "5", "-o", out.path().string()},
             {"run", "--rate", "5", "--sessions", "3", "-c", "4", "-o", out.path().string()},
             {"run", "--rate", "5", "--sessions", "3", "--arrival", "weibull", "-o",
              out.path().string()},
             {"run", "--rate", "5", "--sessions", "3", "--cap-policy", "maybe", "-o",
              out.path().string()},
             {"run", "--max-concurrency", "3", "-o", out.path().string()},
             {"run", "--schedule", (out / "missing.json").string(), "-o", out.path().string()},
             {"run", "--shard", "3/3", "-o", out.path().string()},
             {"run", "--start-at", "yesterday", "-o", out.path().string()},
         }) {
        EXPECT_EQ(run_pacer(args).exit_code, 2) << args[1] << " " << args[2];
        EXPECT_FALSE(fs::exists(out.path()));
    }
}

} // namespace
} // namespace pacer::test

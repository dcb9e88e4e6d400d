// Scale-out and open loop, end to end: worker processes, merge, shards, open-loop arrivals.

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
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

// A JSON integer (never a double such as 8.0).
bool is_integer(const value& v) {
    return v.is_int64() || v.is_uint64();
}

// `--start-at` this many seconds from now, in Unix seconds.
std::string start_at_from_now(double seconds) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    return std::to_string(std::chrono::duration<double>(now).count() + seconds);
}

// The lines of `text` (stdout and stderr of a run).
std::size_t count_lines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(ScaleE2E, FourWorkerProcessesArePooled) {
    mock_process mock;
    temp_dir out;
    const auto r = run_pacer({"run", "--url", mock.url(), "--processes", "4", "-c", "3", "-d", "1s",
                              "-o", out.path().string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto s = read_json(out / "summary.json");
    EXPECT_EQ(r.exit_code, exit_for_pacing(s)) << r.out;
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

// The event ids a run folder's traces hold (every session-NNN/trace.jsonl below it).
std::set<std::string> event_ids_under(const fs::path& root) {
    std::set<std::string> ids;
    std::size_t traces = 0;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.path().filename() == "trace.jsonl") {
            ++traces;
            for (auto& id : sent_event_ids(e.path()))
                EXPECT_TRUE(ids.insert(std::move(id)).second) << "a repeated id in " << e.path();
        }
    EXPECT_GT(traces, 0u) << root;
    return ids;
}

std::size_t shared(const std::set<std::string>& a, const std::set<std::string>& b) {
    std::size_t n = 0;
    for (const auto& id : a)
        n += b.count(id);
    return n;
}

// Event ids are unique beyond one session: two worker processes of one run, and two runs,
// never send the same id (a server that logs or de-duplicates by id must see no collision).
TEST(ScaleE2E, WorkersAndRunsShareNoEventId) {
    temp_dir first, second;
    const auto r1 = run_pacer({"run", "--processes", "2", "-c", "2", "-d", "1s", "--keep-traces",
                               "-o", first.path().string()});
    EXPECT_TRUE(r1.exit_code == 0 || r1.exit_code == 3) << r1.out;
    const auto worker0 = event_ids_under(first / "worker-0");
    const auto worker1 = event_ids_under(first / "worker-1");
    // 2 sessions x (session.update + 13 appends + end of input + session.close) each.
    EXPECT_EQ(worker0.size(), 32u);
    EXPECT_EQ(worker1.size(), 32u);
    EXPECT_EQ(shared(worker0, worker1), 0u);
    for (const auto& id : worker0)
        EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;

    const auto r2 =
        run_pacer({"run", "-c", "2", "-d", "1s", "--keep-traces", "-o", second.path().string()});
    EXPECT_TRUE(r2.exit_code == 0 || r2.exit_code == 3) << r2.out;
    const auto again = event_ids_under(second.path());
    EXPECT_EQ(again.size(), 32u);
    EXPECT_EQ(shared(again, worker0), 0u);
    EXPECT_EQ(shared(again, worker1), 0u);
}

// The pid a worker of `--processes` names in its live file (worker-K.live.json, beside its
// folder), once it has written it: 0 until then.
pid_t worker_pid(const fs::path& live_file) {
    try {
        return static_cast<pid_t>(at(read_json(live_file), {"pid"}).to_number<std::int64_t>());
    } catch (const std::exception&) {
        return 0; // not written yet
    }
}

TEST(ScaleE2E, AWorkerThatDiesIsReportedAndTheOthersKept) {
    temp_dir out;
    // Worker 1 is killed by a real SIGABRT while it runs: it names its pid in its live file
    // before it waits for the common start (about 1 s), then streams for 3 s.
    child run({PACER_BINARY, "run", "--processes", "2", "-c", "2", "-d", "3s", "-o",
               out.path().string()});
    pid_t victim = 0;
    ASSERT_TRUE(poll_until([&] { return (victim = worker_pid(out / "worker-1.live.json")) > 0; }));
    ASSERT_EQ(::kill(victim, SIGABRT), 0);
    const std::string printed = run.read_all();
    const int code = run.wait();
    // 1: pacer itself failed (3 takes precedence when this host also made the client late).
    EXPECT_TRUE(code == 1 || code == 3) << printed;
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

// Ctrl-C to the parent of `--processes` reaches every worker (the pool forwards it): each
// closes its sessions and writes its partial part, and the pooled run is interrupted (130).
TEST(ScaleE2E, SigintToTheParentInterruptsEveryWorker) {
    temp_dir out;
    child run({PACER_BINARY, "run", "--processes", "2", "-c", "1", "-d", "60s", "-o",
               out.path().string()});
    // Both workers are streaming once their live files count a started session.
    auto streaming = [&](int k) {
        try {
            const auto live = read_json(out / ("worker-" + std::to_string(k) + ".live.json"));
            return at(live, {"packets_sent"}).to_number<std::uint64_t>() > 0;
        } catch (const std::exception&) {
            return false; // not written yet
        }
    };
    ASSERT_TRUE(poll_until([&] { return streaming(0) && streaming(1); }));
    run.signal(SIGINT);
    const std::string printed = run.read_all();
    EXPECT_EQ(run.wait(), 130) << printed;
    const auto s = read_json(out / "summary.json");
    EXPECT_TRUE(s.at("interrupted").as_bool());
    const auto& workers = s.at("workers").as_array();
    ASSERT_EQ(workers.size(), 2u);
    for (const auto& w : workers) {
        EXPECT_EQ(w.at("status").as_string(), "exit 130") << printed;
        EXPECT_TRUE(w.at("merged").as_bool());
    }
}

// SIGTERM sent straight to one worker of a `--trace none` run (its receipts spooled by the
// writer), while its sessions stream and receive: the worker stops its sessions, writes its
// files and exits 130 on its own, while the other worker goes on (until the parent's SIGINT).
// (A session whose read completed with a frame just as the stop came used to read again and
// never end; session_stop_race.* makes that race certain, this guards the whole path.)
TEST(ScaleE2E, SigtermToOneWorkerOfATraceNoneRunEndsItWithItsFiles) {
    temp_dir out;
    child run({PACER_BINARY, "run", "--processes", "2", "-c", "32", "-d", "60s", "--trace", "none",
               "--no-report", "--progress", "never", "-o", out.path().string()});
    auto live = [&](int k) -> std::optional<value> {
        try {
            return read_json(out / ("worker-" + std::to_string(k) + ".live.json"));
        } catch (const std::exception&) {
            return std::nullopt; // not written yet
        }
    };
    auto streaming = [&](int k) {
        const auto l = live(k);
        return l && at(*l, {"packets_sent"}).to_number<std::uint64_t>() > 0;
    };
    ASSERT_TRUE(poll_until([&] { return streaming(0) && streaming(1); }));
    const auto pid = static_cast<pid_t>(at(*live(0), {"pid"}).to_number<std::int64_t>());
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    // The parent reaps worker 0 first: once reaped, its pid is gone.
    const bool ended = poll_until([&] { return ::kill(pid, 0) != 0; });
    if (!ended)
        ::kill(pid, SIGKILL); // a hang: end it so the test can report
    EXPECT_TRUE(ended) << "worker 0 did not end after SIGTERM";
    run.signal(SIGINT); // ends worker 1 too
    const std::string printed = run.read_all();
    EXPECT_EQ(run.wait(), 130) << printed;
    const auto s = read_json(out / "summary.json");
    const auto& workers = s.at("workers").as_array();
    ASSERT_EQ(workers.size(), 2u);
    EXPECT_EQ(workers[0].at("status").as_string(), "exit 130") << printed;
    EXPECT_TRUE(workers[0].at("merged").as_bool());
    const auto w0 = read_json(out / "worker-0" / "summary.json");
    EXPECT_TRUE(w0.at("interrupted").as_bool());
    EXPECT_TRUE(fs::exists(out / "worker-0" / "samples.json"));
    EXPECT_FALSE(fs::exists(out / "worker-0" / "session-000")); // --trace none: no session files
}

TEST(ScaleE2E, ShardsMergeIntoTheWholeRun) {
    mock_process mock;
    temp_dir dir;
    fs::create_directories(dir.path());
    // The shards stream at the same time, as on several hosts: one --start-at for all.
    const std::string start = start_at_from_now(3);
    std::vector<std::string> parts;
    std::vector<std::unique_ptr<child>> shards;
    for (int i = 0; i < 3; ++i) {
        parts.push_back((dir / ("shard-" + std::to_string(i))).string());
        shards.push_back(std::make_unique<child>(std::vector<std::string>{
            PACER_BINARY, "run", "--url", mock.url(), "-c", "7", "--shard",
            std::to_string(i) + "/3", "-d", "1s", "--start-at", start, "-o", parts.back()}));
    }
    for (int i = 0; i < 3; ++i) {
        const std::string printed = shards[i]->read_all();
        const int code = shards[i]->wait();
        EXPECT_TRUE(finished(code)) << printed;
        EXPECT_EQ(num(read_json(fs::path(parts[i]) / "summary.json"), {"shard", "index"}), i);
    }
    std::vector<std::string> args{"merge"};
    args.insert(args.end(), parts.begin(), parts.end());
    args.push_back("-o");
    args.push_back((dir / "merged").string());
    const auto m = run_pacer(args);
    ASSERT_TRUE(finished(m.exit_code)) << m.out;
    const auto s = read_json(dir / "merged" / "summary.json");
    EXPECT_EQ(m.exit_code, exit_for_pacing(s)) << m.out;
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

// Three ranks of a launcher that only sets variables (no cluster): each `pacer run` takes its
// shard from `env(i)`, as it would under srun or in a Kubernetes Indexed Job, and the parts are
// the whole run's 6 sessions, 2 each.
void expect_launcher_shards(const std::function<std::vector<std::string>(int)>& env,
                            const std::vector<std::string>& extra, const std::string& source) {
    mock_process mock;
    temp_dir dir;
    fs::create_directories(dir.path());
    std::vector<std::unique_ptr<child>> ranks;
    for (int i = 0; i < 3; ++i) {
        std::vector<std::string> argv{"/usr/bin/env"};
        for (const auto& v : env(i))
            argv.push_back(v);
        argv.insert(argv.end(),
                    {PACER_BINARY, "run", "--url", mock.url(), "-c", "6", "-d", "1s", "--no-report",
                     "-o", (dir / ("part-" + std::to_string(i))).string()});
        argv.insert(argv.end(), extra.begin(), extra.end());
        ranks.push_back(std::make_unique<child>(argv));
    }
    for (int i = 0; i < 3; ++i) {
        const std::string printed = ranks[i]->read_all();
        EXPECT_TRUE(finished(ranks[i]->wait())) << printed;
        const auto s = read_json(dir / ("part-" + std::to_string(i)) / "summary.json");
        EXPECT_EQ(num(s, {"shard", "index"}), i);
        EXPECT_EQ(num(s, {"shard", "count"}), 3);
        EXPECT_EQ(at(s, {"shard", "source"}).as_string(), source);
        EXPECT_EQ(num(s, {"pacing", "sessions", "requested"}), 2);
    }
    EXPECT_EQ(mock.stop(), 0);
}

TEST(ScaleE2E, SlurmLikeEnvironmentGivesEachTaskItsShard) {
    expect_launcher_shards(
        [](int i) {
            return std::vector<std::string>{"SLURM_PROCID=" + std::to_string(i), "SLURM_NTASKS=3",
                                            "SLURM_JOB_ID=41"};
        },
        {}, "SLURM_PROCID");
}

TEST(ScaleE2E, KubernetesIndexedJobEnvironmentGivesEachPodItsShard) {
    // An Indexed Job sets only the pod's index: the count comes from --shards.
    expect_launcher_shards(
        [](int i) { return std::vector<std::string>{"JOB_COMPLETION_INDEX=" + std::to_string(i)}; },
        {"--shards", "3"}, "JOB_COMPLETION_INDEX");
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
             {"run", "--rate", "5", "--sessions", "3", "--processes", "4", "-o",
              out.path().string()},
         }) {
        EXPECT_EQ(run_pacer(args).exit_code, 2) << args[1] << " " << args[2];
        EXPECT_FALSE(fs::exists(out.path()));
    }
}

TEST(ScaleE2E, OpenLoopProcessesSplitTheOneSchedule) {
    temp_dir out;
    const auto r = run_pacer({"run", "--rate", "20", "--sessions", "8", "--seed", "3", "-d", "1s",
                              "--processes", "2", "-o", out.path().string()});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    const auto s = read_json(out / "summary.json");
    const auto schedule = read_json(out / "schedule.json");
    const auto& offsets = schedule.at("offsets_ns").as_array();
    ASSERT_EQ(offsets.size(), 8u);
    // Pooled: every arrival of the one schedule, counted as integers.
    EXPECT_EQ(num(s, {"open_loop", "requests", "scheduled"}), 8);
    EXPECT_EQ(num(s, {"open_loop", "dispatch_lag_s", "n"}), 8) << "lag pooled over all arrivals";
    EXPECT_EQ(num(s, {"pacing", "sessions", "requested"}), 8);
    EXPECT_TRUE(is_integer(at(s, {"pacing", "sessions", "requested"})));
    EXPECT_TRUE(is_integer(at(s, {"pacing", "packets", "sent"})));
    EXPECT_EQ(at(s, {"open_loop", "schedule", "sha256"}), schedule.at("sha256"));
    EXPECT_TRUE(at(s, {"open_loop", "schedule", "covered"}).as_bool());
    EXPECT_TRUE(at(s, {"open_loop", "schedule_kept"}).is_bool());
    // Each worker ran its shard (arrivals k, k+2, ...) of the parent's one schedule file, from
    // the one start instant.
    std::map<std::uint64_t, std::int64_t> ran; // schedule index -> offset
    std::set<double> starts;
    for (std::uint64_t k = 0; k < 2; ++k) {
        const auto dir = out / ("worker-" + std::to_string(k));
        EXPECT_FALSE(fs::exists(dir / "schedule.json")) << "the schedule is written once";
        const auto w = read_json(dir / "summary.json");
        EXPECT_EQ(at(w, {"shard", "index"}).to_number<std::uint64_t>(), k);
        EXPECT_EQ(at(w, {"shard", "count"}).to_number<std::uint64_t>(), 2u);
        EXPECT_EQ(at(w, {"open_loop", "schedule", "sha256"}), schedule.at("sha256"));
        EXPECT_EQ(num(w, {"open_loop", "requests", "scheduled"}), 4);
        starts.insert(num(w, {"start_at_monotonic_s"}));
        const auto samples = read_json(dir / "samples.json");
        EXPECT_NEAR(num(samples, {"open_loop", "start_s"}), num(w, {"start_at_monotonic_s"}), 1e-6)
            << "the schedule's origin is the common start";
        for (const auto& a : at(samples, {"open_loop", "arrivals"}).as_array()) {
            const auto index = at(a, {"index"}).to_number<std::uint64_t>();
            EXPECT_EQ(index % 2, k) << "worker " << k << " ran arrival " << index;
            EXPECT_TRUE(ran.emplace(index, at(a, {"offset_ns"}).to_number<std::int64_t>()).second)
                << "arrival " << index << " ran twice";
        }
    }
    EXPECT_EQ(starts.size(), 1u);
    ASSERT_EQ(ran.size(), 8u);
    for (std::uint64_t i = 0; i < 8; ++i)
        EXPECT_EQ(ran[i], offsets[i].to_number<std::int64_t>()) << "arrival " << i;

    // `pacer merge` of the two workers pools the same open-loop section.
    const auto m = run_pacer({"merge", (out / "worker-0").string(), (out / "worker-1").string(),
                              "-o", (out / "merged").string()});
    EXPECT_TRUE(m.exit_code == 0 || m.exit_code == 3) << m.out;
    const auto merged = read_json(out / "merged" / "summary.json");
    EXPECT_EQ(num(merged, {"open_loop", "requests", "scheduled"}), 8);
    EXPECT_EQ(at(merged, {"open_loop", "dispatch_lag_s"}), at(s, {"open_loop", "dispatch_lag_s"}));
    EXPECT_EQ(at(merged, {"open_loop", "latency_s"}), at(s, {"open_loop", "latency_s"}));
}

TEST(ScaleE2E, MergeRefusesAPartGivenTwice) {
    mock_process mock;
    temp_dir dir;
    fs::create_directories(dir.path());
    const auto a = dir / "a";
    const auto r = run_pacer({"run", "--url", mock.url(), "-c", "1", "-d", "1s", "-o", a.string()});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    fs::create_directory_symlink(a, dir / "link");
    fs::copy(a, dir / "copy", fs::copy_options::recursive);
    for (const auto& second : {a, dir.path() / "." / "a", dir / "link", dir / "copy"}) {
        const auto m =
            run_pacer({"merge", a.string(), second.string(), "-o", (dir / "merged").string()});
        EXPECT_EQ(m.exit_code, 2) << second << ": " << m.out;
        EXPECT_EQ(m.out.rfind("pacer: ", 0), 0u) << m.out;
        EXPECT_EQ(count_lines(m.out), 1u) << m.out;
        EXPECT_FALSE(fs::exists(dir / "merged"));
    }
    EXPECT_EQ(mock.stop(), 0);
}

TEST(ScaleE2E, MergeRefusesPartsThatDidNotStreamTogether) {
    mock_process mock;
    temp_dir dir;
    fs::create_directories(dir.path());
    // One run after the other.
    for (const char* name : {"a", "b"}) {
        const auto r = run_pacer(
            {"run", "--url", mock.url(), "-c", "1", "-d", "1s", "-o", (dir / name).string()});
        ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    }
    const auto refused = run_pacer(
        {"merge", (dir / "a").string(), (dir / "b").string(), "-o", (dir / "m1").string()});
    EXPECT_EQ(refused.exit_code, 2) << refused.out;
    EXPECT_NE(refused.out.find("did not stream at the same time"), std::string::npos)
        << refused.out;
    EXPECT_EQ(count_lines(refused.out), 1u) << refused.out;
    EXPECT_FALSE(fs::exists(dir / "m1"));
    const auto allowed = run_pacer({"merge", (dir / "a").string(), (dir / "b").string(),
                                    "--allow-disjoint", "-o", (dir / "m2").string()});
    EXPECT_TRUE(allowed.exit_code == 0 || allowed.exit_code == 3) << allowed.out;
    EXPECT_NE(allowed.out.find("warning"), std::string::npos) << allowed.out;
    const auto s = read_json(dir / "m2" / "summary.json");
    ASSERT_EQ(s.at("warnings").as_array().size(), 1u);
    EXPECT_NE(std::string(s.at("warnings").as_array()[0].as_string()).find("did not stream"),
              std::string::npos);
    EXPECT_EQ(boost::json::serialize(at(s, {"pacing", "sessions", "requested"})), "2");
    EXPECT_EQ(mock.stop(), 0);
}

TEST(ScaleE2E, MergeNamesInterruptedAndIncompleteParts) {
    mock_process mock;
    mock_process faulty({"--fault", "huge_frame"});
    temp_dir dir;
    fs::create_directories(dir.path());
    const auto a = dir / "interrupted";
    const auto b = dir / "incomplete";
    // A long run, interrupted once the short, failing run beside it has finished.
    child long_run({PACER_BINARY, "run", "--url", mock.url(), "-c", "1", "-d", "60s", "-o",
                    a.string(), "--keep-traces"});
    ASSERT_TRUE(poll_until([&] {
        std::error_code ec;
        return fs::file_size(a / "session-000" / "trace.jsonl", ec) > 0 && !ec;
    }));
    const auto r = run_pacer(
        {"run", "--url", faulty.url(), "-c", "1", "-d", "1s", "--timeout", "5s", "-o", b.string()});
    EXPECT_PRED1(server_failed_exit, r.exit_code) << r.out;
    long_run.signal(SIGINT);
    const std::string printed = long_run.read_all();
    EXPECT_EQ(long_run.wait(), 130) << printed;

    const auto m = run_pacer({"merge", a.string(), b.string(), "-o", (dir / "merged").string()});
    EXPECT_EQ(m.exit_code, 1) << m.out;
    // One line (on stderr) names them.
    const auto from = m.out.find("pacer merge: incomplete parts: ");
    ASSERT_NE(from, std::string::npos) << m.out;
    const auto line = m.out.substr(from, m.out.find('\n', from) - from);
    EXPECT_NE(line.find(a.string() + " (interrupted"), std::string::npos) << line;
    EXPECT_NE(line.find(b.string() + " (1 of 1 sessions incomplete)"), std::string::npos) << line;
    const auto s = read_json(dir / "merged" / "summary.json");
    EXPECT_FALSE(s.at("complete").as_bool());
    EXPECT_TRUE(s.at("interrupted").as_bool());
    const auto& parts = s.at("incomplete_parts").as_array();
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0].at("dir").as_string(), a.string());
    EXPECT_TRUE(parts[0].at("interrupted").as_bool());
    EXPECT_EQ(parts[1].at("dir").as_string(), b.string());
    EXPECT_EQ(parts[1].at("sessions_incomplete").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(mock.stop(), 0);
    EXPECT_EQ(faulty.stop(), 0);
}

} // namespace
} // namespace pacer::test

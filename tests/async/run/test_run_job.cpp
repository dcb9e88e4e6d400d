// run::execute_run, the library entry point of `pacer run`, called without the command line:
// one process of sessions against the built-in mock, and the parent of `--processes` whose
// workers are the real pacer binary (worker_program), pooled into one folder.

#include <pacer/cli/client_options.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/run/live_file.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/runtime/audio_file.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/server/probe_mock.hpp>
#include <pacer/session/scenario_plan.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include "async/built_in_mock.hpp"
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace pacer;

boost::json::value read_json(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return boost::json::parse(s.str());
}

std::uint64_t count(const boost::json::value& v, std::initializer_list<const char*> path) {
    const boost::json::value* cur = &v;
    for (const char* k : path)
        cur = &cur->as_object().at(k);
    return cur->to_number<std::uint64_t>();
}

using pacer::testing::with_built_in_mock;

class RunJob : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("pacer-run-job-" + std::to_string(::getpid()));
        fs::remove_all(root_);
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }

    // A closed batch of `sessions` sessions of 0.4 s of silence against the built-in mock, as
    // `pacer run -c N -d 0.4s --progress never --no-report` resolves it.
    run::run_job job(std::size_t sessions, const std::string& name) const {
        run::run_job j;
        j.options.concurrency = sessions;
        j.options.duration = "0.4s";
        j.options.progress = "never";
        j.options.no_report = true;
        j.sessions = sessions;
        j.pcm = runtime::silence(std::chrono::milliseconds(400));
        j.input_length = schedule::input_duration(j.pcm.size());
        j.timeout = std::chrono::seconds(60);
        j.out = root_ / name;
        j.profile = &protocol::default_profile();
        with_built_in_mock(j);
        return j;
    }
    fs::path root_;
};

TEST_F(RunJob, OneProcessAgainstTheBuiltInMockWritesItsFolder) {
    const int code = run::execute_run(job(2, "one"));
    EXPECT_TRUE(code == 0 || code == 3) << code;
    const auto s = read_json(root_ / "one" / "summary.json");
    EXPECT_EQ(count(s, {"pacing", "sessions", "requested"}), 2u);
    EXPECT_EQ(count(s, {"pacing", "sessions", "complete"}), 2u);
    EXPECT_EQ(count(s, {"pacing", "packets", "sent"}), 2u * 5);
    EXPECT_TRUE(fs::exists(root_ / "one" / "samples.json"));
    EXPECT_FALSE(fs::exists(root_ / "one" / "report.html")) << "no_report";
}

TEST_F(RunJob, ProcessesRunTheWorkerProgramAndPoolTheirParts) {
    auto j = job(1, "pooled");
    j.options.processes = 2;
    j.options.worker_program = PACER_BINARY;
    const int code = run::execute_run(std::move(j));
    EXPECT_TRUE(code == 0 || code == 3) << code;
    const auto s = read_json(root_ / "pooled" / "summary.json");
    EXPECT_EQ(s.at("workers").as_array().size(), 2u);
    EXPECT_EQ(count(s, {"pacing", "sessions", "requested"}), 2u) << "1 session x 2 workers";
    EXPECT_EQ(count(s, {"pacing", "packets", "sent"}), 2u * 5);
    for (int k = 0; k < 2; ++k) {
        // Each worker left its final live totals, with its own pid.
        const auto live =
            run::read_live_file(root_ / "pooled" / ("worker-" + std::to_string(k) + ".live.json"));
        ASSERT_TRUE(live) << k;
        EXPECT_NE(live->pid, ::getpid());
        EXPECT_EQ(live->totals.done + live->totals.failed, 1u);
        EXPECT_EQ(live->totals.packets_sent, 5u);
    }
}

// The open loop with a conversation (`pacer run --scenario F --rate R --sessions N`): each
// arrival plays the scenario on its own grid from its own start, the barge-in included, and
// every session's turns reach summary.json's `turns` and turns.jsonl. Two arrivals 0.1 s apart,
// turns of 0.24 s, a pause of 0.4 s cut 0.1 s into the reply: about 1 s.
TEST_F(RunJob, OpenLoopArrivalsEachPlayTheConversation) {
    const auto scenario = root_ / "talk.json";
    std::ofstream(scenario) << R"({"turns":[{"audio":"input","pause":"0.4s",)"
                               R"("interrupt_after":"0.1s"},{"audio":"input"}]})";
    auto j = job(2, "open-loop");
    j.pcm = runtime::silence(std::chrono::milliseconds(240));
    j.conversation = session::load_scenario(scenario.string(), 16000, true); // as the command does
    ASSERT_TRUE(j.conversation);
    j.input_length = j.conversation.length(j.pcm.size());
    schedule::schedule_spec spec;
    spec.process = schedule::arrival_process::constant;
    spec.rate = 10;
    spec.count = 2;
    const auto offsets = schedule::make_schedule(spec);
    j.open_loop = schedule::schedule_document{spec, offsets, schedule::schedule_sha256(offsets)};
    j.arrivals = offsets;
    j.options.arrivals.rate = spec.rate;
    j.options.arrivals.count = 2;
    const int code = run::execute_run(std::move(j));
    EXPECT_TRUE(code == 0 || code == 3) << code;
    const auto s = read_json(root_ / "open-loop" / "summary.json");
    EXPECT_EQ(count(s, {"open_loop", "requests", "scheduled"}), 2u);
    EXPECT_EQ(count(s, {"pacing", "sessions", "complete"}), 2u);
    EXPECT_EQ(s.at("config").at("scenario").as_string(), scenario.string());
    EXPECT_EQ(s.at("turns").at("by_turn").as_array().size(), 2u);
    EXPECT_EQ(count(s, {"turns", "all", "turns"}), 4u);
    // turns.jsonl: a line per session and turn, numbered as the sessions are.
    std::ifstream rows(root_ / "open-loop" / "turns.jsonl");
    std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
    for (std::string line; std::getline(rows, line);) {
        const auto row = boost::json::parse(line).as_object();
        seen.insert({row.at("session").to_number<std::uint64_t>(),
                     row.at("turn").to_number<std::uint64_t>()});
        if (row.at("turn").to_number<int>() == 0) {
            EXPECT_FALSE(row.at("barge_in").as_bool()); // the first turn interrupts nothing
        }
    }
    EXPECT_EQ(seen,
              (std::set<std::pair<std::uint64_t, std::uint64_t>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
}

} // namespace

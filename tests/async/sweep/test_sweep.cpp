// sweep::run_sweep, the library entry point of `pacer serve`, called without the command line
// against the native mock in this process (the command starts the same one without --url):
// the order in which the observer hears of the warm-up and the levels, the folders written,
// and the sweep's summary. No pacing outcome is asserted.

#include <pacer/cli/mock_process.hpp>
#include <pacer/runtime/audio_file.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/server/native_mock.hpp>
#include <pacer/sweep/sweep.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace pacer;

// Records what the sweep says, in order; hands out live totals and notes how many sessions
// began in each phase.
struct recording_observer final : sweep::sweep_observer {
    std::vector<std::string> events;
    std::vector<std::uint64_t> started;
    session::live_counters counters;

    session::live_counters* level_starting(const std::string& label, double expected_s) override {
        events.push_back("start " + label);
        EXPECT_GT(expected_s, 0.4);
        counters.reset();
        return &counters;
    }
    void level_ended() override {
        events.emplace_back("end");
        started.push_back(counters.started.load());
    }
    void warmup_done(std::size_t index, const sweep::level_run& run) override {
        events.push_back("warmup " + std::to_string(index));
        EXPECT_EQ(run.sessions.size(), 1u);
    }
    void levels_starting() override { events.emplace_back("levels"); }
    void settling(double) override { events.emplace_back("settle"); }
    void run_done(const sweep::level_run& run) override {
        events.push_back("row c" + std::to_string(run.concurrency));
    }
    void stopped_unreachable() override { events.emplace_back("stopped"); }
};

class SweepRun : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("pacer-sweep-run-" + std::to_string(::getpid()));
        fs::remove_all(root_);
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }
    fs::path root_;
};

TEST_F(SweepRun, WarmupThenEachLevelWritesItsFolderAndTheSummaryRecordsThePlan) {
    cli::local_mock mock([](boost::asio::io_context& io) {
        return std::make_unique<server::native_mock>(io, server::native_mock_options{});
    });
    sweep::sweep_options o;
    o.endpoint = transport::parse_ws_url(mock.url());
    const std::string url = mock.url();
    o.url = url;
    o.inputs.push_back(runtime::silence(std::chrono::milliseconds(400)));
    o.input_duration_s.push_back(to_seconds(schedule::input_duration(o.inputs[0].size())));
    o.silence = "0.4s";
    o.timeout = std::chrono::seconds(60);
    o.levels = {1, 2};
    o.warmup_runs = 1;
    o.settle = std::chrono::milliseconds(1); // before every run but the first (the warm-up)
    recording_observer observer;
    const auto result = sweep::run_sweep(o, root_, observer);

    EXPECT_EQ(observer.events,
              (std::vector<std::string>{"start warmup c1", "end", "warmup 1", "levels", "settle",
                                        "start level c1", "end", "row c1", "settle",
                                        "start level c2", "end", "row c2"}));
    EXPECT_EQ(observer.started, (std::vector<std::uint64_t>{1, 1, 2}));
    ASSERT_EQ(result.levels.size(), 2u);
    EXPECT_EQ(result.levels[1].concurrency, 2u);
    ASSERT_EQ(result.levels[1].runs.size(), 1u);
    EXPECT_EQ(result.levels[1].runs[0].sessions.size(), 2u);
    EXPECT_FALSE(result.capacity);
    EXPECT_FALSE(result.interrupted);
    for (const char* level : {"warmup-1", "c1", "c2"})
        EXPECT_TRUE(fs::exists(root_ / level / "summary.json")) << level;
    EXPECT_TRUE(fs::exists(root_ / "c2" / "session-001" / "trace.jsonl"));

    sweep::summary_extras extras;
    extras.mock = mock.stop();
    const auto summary = sweep::summary_json(o, result, std::move(extras));
    EXPECT_EQ(summary.at("command").as_string(), "serve");
    EXPECT_EQ(summary.at("runs").as_array().size(), 2u) << "the warm-up is not a run of the plan";
    EXPECT_EQ(summary.at("levels").as_array().size(), 2u);
    EXPECT_EQ(summary.at("config").as_object().at("levels").as_array().size(), 2u);
    EXPECT_EQ(summary.at("config").as_object().at("url").as_string(), url);
    EXPECT_EQ(summary.at("config").as_object().at("silence").as_string(), "0.4s");
    EXPECT_FALSE(summary.contains("capacity"));
    EXPECT_TRUE(summary.contains("mock"));
    EXPECT_EQ(summary.at("client_timing_valid").as_bool(), result.all_valid);
}

} // namespace

// `pacer run --trace full|receipts|none` end to end through run::execute_run against the
// built-in mock: each mode writes what it says, and the summary's figures (which come from the
// receipts) are complete in every mode, also from the workers of --processes.

#include <pacer/cli/client_options.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/runtime/audio_file.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/server/probe_mock.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include "async/built_in_mock.hpp"
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace pacer;

boost::json::value read_json_file(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return boost::json::parse(s.str());
}

const boost::json::value& at(const boost::json::value& v, std::initializer_list<const char*> path) {
    const boost::json::value* cur = &v;
    for (const char* k : path)
        cur = &cur->as_object().at(k);
    return *cur;
}

using pacer::testing::with_built_in_mock;

class TraceModesRun : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("pacer-trace-modes-" + std::to_string(::getpid()));
        fs::remove_all(root_);
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }

    // 2 sessions of 0.4 s of silence (5 packets each), as `pacer run -c 2 -d 0.4s --trace MODE
    // --keep-traces --progress never --no-report` resolves it (traces kept, so that what a
    // mode writes is still there to check).
    run::run_job job(const std::string& mode) const {
        run::run_job j;
        j.options.concurrency = 2;
        j.options.duration = "0.4s";
        j.options.progress = "never";
        j.options.no_report = true;
        j.options.trace = mode;
        j.options.keep_traces = mode == "full";
        j.sessions = 2;
        j.pcm = runtime::silence(std::chrono::milliseconds(400));
        j.input_length = schedule::input_duration(j.pcm.size());
        j.timeout = std::chrono::seconds(60);
        j.out = root_ / mode;
        j.profile = &protocol::default_profile();
        with_built_in_mock(j);
        return j;
    }

    // The figures that come from the receipts: every packet sent, and a deviation for each.
    static void expect_complete(const fs::path& summary, std::uint64_t packets) {
        const auto s = read_json_file(summary);
        EXPECT_EQ(at(s, {"pacing", "packets", "sent"}).to_number<std::uint64_t>(), packets);
        EXPECT_EQ(at(s, {"pacing", "pacing_abs_deviation_s", "n"}).to_number<std::uint64_t>(),
                  packets);
        EXPECT_EQ(at(s, {"pacing", "sessions", "complete"}).to_number<std::uint64_t>(),
                  packets / 5);
    }
    fs::path root_;
};

TEST_F(TraceModesRun, FullWritesTracesAndReceipts) {
    const int code = run::execute_run(job("full"));
    EXPECT_TRUE(code == 0 || code == 3) << code;
    expect_complete(root_ / "full" / "summary.json", 10);
    for (const char* session : {"session-000", "session-001"}) {
        EXPECT_GT(fs::file_size(root_ / "full" / session / "trace.jsonl"), 0u) << session;
        EXPECT_TRUE(fs::exists(root_ / "full" / session / "input-send-receipts.json"));
    }
    EXPECT_EQ(at(read_json_file(root_ / "full" / "summary.json"), {"trace", "mode"}).as_string(),
              "full");
}

TEST_F(TraceModesRun, ReceiptsWritesNoTraceAndTheSummaryIsComplete) {
    const int code = run::execute_run(job("receipts"));
    EXPECT_TRUE(code == 0 || code == 3) << code;
    expect_complete(root_ / "receipts" / "summary.json", 10);
    for (const char* session : {"session-000", "session-001"}) {
        EXPECT_FALSE(fs::exists(root_ / "receipts" / session / "trace.jsonl")) << session;
        EXPECT_GT(fs::file_size(root_ / "receipts" / session / "input-send-receipts.json"), 0u);
    }
    const auto s = read_json_file(root_ / "receipts" / "summary.json");
    EXPECT_EQ(at(s, {"trace", "lines"}).to_number<std::uint64_t>(), 0u);
}

TEST_F(TraceModesRun, NoneWritesNoSessionFileAndTheSummaryIsComplete) {
    const int code = run::execute_run(job("none"));
    EXPECT_TRUE(code == 0 || code == 3) << code;
    expect_complete(root_ / "none" / "summary.json", 10);
    EXPECT_FALSE(fs::exists(root_ / "none" / "session-000"));
    EXPECT_FALSE(fs::exists(root_ / "none" / "session-001"));
    // Every packet's deviation is in samples.json, as with the other modes, and the spool
    // they came from left nothing behind.
    const auto samples = read_json_file(root_ / "none" / "samples.json");
    for (const auto& session : at(samples, {"sessions"}).as_array())
        EXPECT_EQ(session.at("deviation_s").as_array().size(), 5u);
    for (const auto& entry : fs::directory_iterator(root_ / "none"))
        EXPECT_NE(entry.path().filename().string().rfind(".receipts-spool", 0), 0u) << entry.path();
}

TEST_F(TraceModesRun, TheWorkersOfProcessesGetTheMode) {
    auto j = job("none");
    j.sessions = 1;
    j.options.concurrency = 1;
    j.options.processes = 2;
    j.options.worker_program = PACER_BINARY;
    const int code = run::execute_run(std::move(j));
    EXPECT_TRUE(code == 0 || code == 3) << code;
    expect_complete(root_ / "none" / "summary.json", 10);
    for (const char* worker : {"worker-0", "worker-1"}) {
        EXPECT_TRUE(fs::exists(root_ / "none" / worker / "summary.json")) << worker;
        EXPECT_FALSE(fs::exists(root_ / "none" / worker / "session-000")) << worker;
    }
    // The parent folded the workers' samples as it read them (quantiles from histograms).
    const auto s = read_json_file(root_ / "none" / "summary.json");
    EXPECT_TRUE(at(s, {"pacing"}).as_object().contains("quantile_precision"));
}

} // namespace

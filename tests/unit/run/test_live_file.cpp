// The live file of a `--processes` worker: its format, the pooling of several workers' totals
// for the parent's one progress line, and the writer (its first and last versions).

#include <pacer/run/live_file.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace pacer::run;

TEST(LiveFile, TextRoundTrips) {
    live_file f;
    f.pid = 4242;
    f.totals = {5, 3, 1, 400, 2, 7, 0.0125};
    const auto text = live_file_text(f);
    EXPECT_EQ(text.back(), '\n');
    const auto back = parse_live_file(text);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->pid, 4242);
    EXPECT_EQ(back->totals.started, 5u);
    EXPECT_EQ(back->totals.done, 3u);
    EXPECT_EQ(back->totals.failed, 1u);
    EXPECT_EQ(back->totals.packets_sent, 400u);
    EXPECT_EQ(back->totals.late_packets, 2u);
    EXPECT_EQ(back->totals.errors, 7u);
    EXPECT_DOUBLE_EQ(back->totals.loop_lag_max_s, 0.0125);
}

TEST(LiveFile, AnythingElseIsNotALiveFile) {
    for (const char* text : {"", "{", "[]", "{\"pid\":1}",
                             "{\"pid\":1,\"started\":-1,\"done\":0,\"failed\":0,\"packets_sent\":0,"
                             "\"late_packets\":0,\"errors\":0,\"loop_lag_max_s\":0}",
                             "{\"pid\":1,\"started\":0,\"done\":0,\"failed\":0,\"packets_sent\":0,"
                             "\"late_packets\":0,\"errors\":0,\"loop_lag_max_s\":\"x\"}"})
        EXPECT_FALSE(parse_live_file(text)) << text;
}

TEST(LiveFile, PoolingSumsCountsAndKeepsTheLargestLoopLag) {
    const std::vector<progress_snapshot> parts{{2, 1, 0, 100, 1, 0, 0.004},
                                               {3, 0, 2, 50, 0, 4, 0.009}};
    const auto p = pool_snapshots(parts);
    EXPECT_EQ(p.started, 5u);
    EXPECT_EQ(p.done, 1u);
    EXPECT_EQ(p.failed, 2u);
    EXPECT_EQ(p.packets_sent, 150u);
    EXPECT_EQ(p.late_packets, 1u);
    EXPECT_EQ(p.errors, 4u);
    EXPECT_DOUBLE_EQ(p.loop_lag_max_s, 0.009);
    EXPECT_EQ(pool_snapshots({}).started, 0u);
}

class LiveFileOnDisk : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("pacer-live-file-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

TEST_F(LiveFileOnDisk, WrittenWholeAndReadBack) {
    const auto path = dir_ / "worker-0.live.json";
    EXPECT_FALSE(read_live_file(path)) << "not written yet";
    ASSERT_TRUE(write_live_file(path, {7, {1, 0, 0, 13, 0, 0, 0}}));
    ASSERT_TRUE(write_live_file(path, {7, {1, 1, 0, 25, 0, 0, 0}}));
    const auto f = read_live_file(path);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->totals.packets_sent, 25u) << "the newer version replaced the older";
    EXPECT_FALSE(fs::exists(dir_ / "worker-0.live.json.tmp"));
    EXPECT_FALSE(write_live_file(dir_ / "missing" / "x.live.json", {}));
}

TEST_F(LiveFileOnDisk, TheWriterNamesItsPidAtOnceAndLeavesTheFinalTotals) {
    const auto path = dir_ / "w.live.json";
    pacer::session::live_counters counters;
    live_file_writer writer(path, counters);
    const auto first = read_live_file(path);
    ASSERT_TRUE(first) << "written by the constructor, before any session";
    EXPECT_EQ(first->pid, ::getpid());
    EXPECT_EQ(first->totals.started, 0u);
    counters.bump(&pacer::session::live_counters::started);
    counters.bump(&pacer::session::live_counters::done);
    counters.bump(&pacer::session::live_counters::packets_sent);
    writer.stop();
    const auto last = read_live_file(path);
    ASSERT_TRUE(last);
    EXPECT_EQ(last->totals.started, 1u);
    EXPECT_EQ(last->totals.done, 1u);
    EXPECT_EQ(last->totals.packets_sent, 1u);
    writer.stop(); // idempotent
}

} // namespace

// The live file of a `--processes` worker on disk: written whole and read back, and the writer
// thread's first and last versions (the format and pooling: tests/unit/run/test_live_file.cpp).
// The counters are bumped here while the writer's thread reads them (TSan in CI).

#include <pacer/run/live_file.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace pacer::run;

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

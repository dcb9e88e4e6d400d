// The live file of a `--processes` worker: its format and the pooling of several workers' totals
// for the parent's one progress line (the file on disk and its writer thread: tests/async/run/
// test_live_file_writer.cpp).

#include <pacer/run/live_file.hpp>

#include <gtest/gtest.h>

namespace {

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
    const std::vector<pacer::console::progress_snapshot> parts{{2, 1, 0, 100, 1, 0, 0.004},
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

} // namespace

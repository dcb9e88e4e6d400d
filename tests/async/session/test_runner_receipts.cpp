// The end of a run reads no receipt back: the sessions fold each receipt, as they send it,
// into their counters and their context's histograms, and the runner hands over those (and,
// with --trace none, the writer's kept receipts text for samples.json), never the receipts
// themselves. Runs the native mock in-process on loopback; nothing here is timed.

#include <pacer/protocol/constants.hpp>
#include <pacer/server/native_mock.hpp>
#include <pacer/session/runner.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include "async/mock_thread.hpp"
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

using pacer::testing::mock_thread;

pacer::session::run_outcome run(const fs::path& root, pacer::trace::mode mode) {
    mock_thread mock({});
    auto o = mock.run_options(4, 5, root);
    o.threads = 2;
    o.trace = mode;
    return pacer::session::run_duplex(o);
}

TEST(RunnerReceipts, ARunFoldsEveryReceiptAndReadsNoneBack) {
    const fs::path root =
        fs::temp_directory_path() / ("pacer-runner-receipts-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    const auto out = run(root, pacer::trace::mode::full);
    ASSERT_EQ(out.sessions.size(), 4u);
    for (const auto& s : out.sessions) {
        SCOPED_TRACE(s.index);
        ASSERT_EQ(s.appends_sent, 5u);
        EXPECT_TRUE(s.appends.empty()) << "the receipts were read back";
        ASSERT_TRUE(s.first_append_start_s && s.last_append_start_s && s.last_append_completed_s);
        EXPECT_LE(*s.first_append_start_s, *s.last_append_start_s);
        EXPECT_LE(*s.last_append_start_s, *s.last_append_completed_s);
    }
    // Every append of both contexts, in the merged histograms.
    EXPECT_EQ(out.receipts.deviation_s.count(), 20u);
    EXPECT_EQ(out.receipts.send_time_s.count(), 20u);
    EXPECT_GE(*out.receipts.send_time_s.min(), 0.0);
    EXPECT_FALSE(out.kept_receipts) << "the receipts are in their files";
    fs::remove_all(root);
}

TEST(RunnerReceipts, TraceNoneHandsOverTheWritersKeptReceiptsForSamples) {
    const fs::path root =
        fs::temp_directory_path() / ("pacer-runner-receipts-none-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    const auto out = run(root, pacer::trace::mode::none);
    ASSERT_TRUE(out.kept_receipts);
    EXPECT_TRUE(out.kept_receipts->error().empty()) << out.kept_receipts->error();
    EXPECT_TRUE(fs::is_empty(root)) << "no session file, and the spool has no name";
    for (const auto& s : out.sessions) {
        EXPECT_TRUE(s.appends.empty());
        pacer::trace::session_result r;
        ASSERT_EQ(pacer::trace::read_receipts_text(r, out.kept_receipts->take(s.index), "kept"),
                  "");
        EXPECT_EQ(r.appends.size(), 5u);
    }
    EXPECT_EQ(out.receipts.deviation_s.count(), 20u);
    fs::remove_all(root);
}

} // namespace

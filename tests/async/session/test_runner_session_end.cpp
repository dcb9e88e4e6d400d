// run_options::on_session_end (what `pacer record --postprocess inline` post-processes in): the
// runner calls it once per session, on that session's own context thread, after the session's
// files are on disk. Runs the native mock in-process on loopback; nothing here is timed.

#include <pacer/protocol/constants.hpp>
#include <pacer/server/native_mock.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include "async/mock_thread.hpp"
#include "async/threads.hpp"
#include "unit/scratch_folder.hpp"
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

using pacer::testing::mock_thread;
using pacer::testing::thread_named;

TEST(RunnerSessionEnd, IsCalledOncePerSessionOnItsContextThreadWithItsFilesWritten) {
    const pacer::test::scratch_folder scratch("pacer-session-end");
    const fs::path& root = scratch.path;
    mock_thread mock({});
    auto o = mock.run_options(4, 5, root);
    o.threads = 2;
    o.start_gate_lead = std::chrono::milliseconds(50);
    std::mutex m;
    std::map<std::size_t, int> calls;
    std::map<std::size_t, std::string> thread_names;
    std::map<std::size_t, std::uintmax_t> trace_bytes, receipt_bytes;
    o.on_session_end = [&](std::size_t i, const pacer::session::session_result& r) {
        char name[32] = {};
        ::pthread_getname_np(::pthread_self(), name, sizeof name);
        const fs::path dir =
            root / pacer::trace::session_folder_name(static_cast<std::uint32_t>(i));
        std::error_code ec;
        const auto t = fs::file_size(dir / "trace.jsonl", ec);
        const auto rc = fs::file_size(dir / "input-send-receipts.json", ec);
        std::lock_guard lock(m);
        ++calls[i];
        thread_names[i] = name;
        trace_bytes[i] = t;
        receipt_bytes[i] = rc;
        EXPECT_EQ(r.index, i);
    };
    const auto out = pacer::session::run_duplex(o);
    ASSERT_EQ(calls.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(calls[i], 1);
        // Sessions are dealt round-robin over the contexts: session i runs on context i mod 2.
        EXPECT_EQ(thread_names[i], "pacer-ctx-" + std::to_string(i % 2));
        // Its files were complete when it was called: what the run reads back afterwards.
        EXPECT_EQ(
            trace_bytes[i],
            fs::file_size(root / pacer::trace::session_folder_name(static_cast<std::uint32_t>(i)) /
                          "trace.jsonl"));
        EXPECT_GT(receipt_bytes[i], 0u);
        EXPECT_EQ(out.sessions[i].appends_sent, 5u);
    }
}

// The trace writer gives way to the sessions: SCHED_IDLE (a waking session thread preempts it
// at once) at nice 10, while the session contexts keep the normal policy. Read from the run's
// own threads while it runs (in on_session_end, when the writer is still up).
TEST(RunnerSessionEnd, TheWriterThreadRunsAtIdlePolicyAndTheContextsDoNot) {
    const pacer::test::scratch_folder scratch("pacer-writer-policy");
    mock_thread mock({});
    auto o = mock.run_options(1, 2, scratch.path);
    o.start_gate_lead = std::chrono::milliseconds(50);
    std::optional<pid_t> writer;
    int writer_policy = -1, writer_nice = -100, context_policy = -1;
    o.on_session_end = [&](std::size_t, const pacer::session::session_result&) {
        context_policy = ::sched_getscheduler(0); // this is the session's context thread
        writer = thread_named("pacer-writer");
        if (writer) {
            writer_policy = ::sched_getscheduler(*writer);
            writer_nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(*writer));
        }
    };
    (void)pacer::session::run_duplex(o);
    ASSERT_TRUE(writer.has_value());
    EXPECT_EQ(writer_policy, SCHED_IDLE);
    EXPECT_EQ(writer_nice, 10);
    EXPECT_EQ(context_policy, SCHED_OTHER);
}

} // namespace

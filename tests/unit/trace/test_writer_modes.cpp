// `pacer run --trace full|receipts|none` in the trace writer's sans-io core: `receipts` drops
// the lines and writes only input-send-receipts.json; `none` creates nothing visible and spools the
// receipts for samples.json (take_receipts).

#include <pacer/trace/writer.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace trace = pacer::trace;
using pacer::time_point;

const time_point mode_t0 = time_point{} + 1000s;

trace::writer_options options(const fs::path& root, trace::mode what) {
    trace::writer_options o;
    o.root = root;
    o.what = what;
    return o;
}

trace::record record(trace::record::kind what, std::uint32_t session, std::string payload) {
    trace::record r;
    r.what = what;
    r.session = session;
    r.time_s = 1.5;
    r.payload = std::move(payload);
    return r;
}

// One session as it goes: a line, a receipt piece, another line, then its end (the tail).
void feed(trace::writer_core& core, boost::asio::io_context& io,
          std::shared_ptr<trace::done_channel>& done) {
    done = std::make_shared<trace::done_channel>(io.get_executor(), 1);
    core.on_record(mode_t0, record(trace::record::kind::line, 3, R"({"type":"a"})"));
    core.on_record(mode_t0 + 1ms, record(trace::record::kind::receipt, 3, "{\"appends\":[1"));
    core.flush_due(mode_t0 + 600ms); // the flush interval passes mid-session
    core.on_record(mode_t0 + 700ms, record(trace::record::kind::line, 3, R"({"type":"b"})"));
    auto end = record(trace::record::kind::end, 3, ",2]}\n");
    end.done = done;
    core.on_record(mode_t0 + 800ms, std::move(end));
    core.flush_due(mode_t0 + 900ms);
}

bool reported_ok(trace::done_channel& done) {
    bool ok = false;
    done.try_receive(
        [&](boost::system::error_code ec, std::string message) { ok = !ec && message.empty(); });
    return ok;
}

TEST(TraceModes, ParseAndNameEveryMode) {
    for (const auto* name : {"full", "receipts", "none"})
        EXPECT_EQ(trace::to_string(*trace::parse_mode(name)), name);
    EXPECT_FALSE(trace::parse_mode("all"));
    EXPECT_FALSE(trace::parse_mode(""));
}

TEST(TraceModes, FullWritesTheLinesAndTheReceipts) {
    pacer::test::scratch_folder dir("pacer-trace-modes");
    boost::asio::io_context io;
    trace::writer_core core(options(dir.path, trace::mode::full));
    std::shared_ptr<trace::done_channel> done;
    feed(core, io, done);
    const auto folder = dir.path / "session-003";
    EXPECT_EQ(pacer::test::read_text(folder / "input-send-receipts.json"), "{\"appends\":[1,2]}\n");
    const auto lines = pacer::test::read_text(folder / "trace.jsonl");
    EXPECT_NE(lines.find(R"("event":{"type":"a"})"), std::string::npos) << lines;
    EXPECT_NE(lines.find(R"("event":{"type":"b"})"), std::string::npos) << lines;
    EXPECT_EQ(core.stats().lines, 2u);
    EXPECT_TRUE(reported_ok(*done));
    EXPECT_EQ(core.take_receipts(3), "") << "full keeps nothing in memory";
}

TEST(TraceModes, ReceiptsWritesOnlyTheReceiptsFile) {
    pacer::test::scratch_folder dir("pacer-trace-modes");
    boost::asio::io_context io;
    trace::writer_core core(options(dir.path, trace::mode::receipts));
    std::shared_ptr<trace::done_channel> done;
    feed(core, io, done);
    const auto folder = dir.path / "session-003";
    EXPECT_EQ(pacer::test::read_text(folder / "input-send-receipts.json"), "{\"appends\":[1,2]}\n");
    EXPECT_FALSE(fs::exists(folder / "trace.jsonl"));
    EXPECT_EQ(core.stats().lines, 0u);
    EXPECT_TRUE(reported_ok(*done));
}

TEST(TraceModes, NoneCreatesNothingAndKeepsTheReceiptsInMemory) {
    pacer::test::scratch_folder dir("pacer-trace-modes");
    boost::asio::io_context io;
    trace::writer_core core(options(dir.path, trace::mode::none));
    std::shared_ptr<trace::done_channel> done;
    feed(core, io, done);
    EXPECT_TRUE(fs::is_empty(dir.path)) << "no session folder";
    EXPECT_EQ(core.stats().lines, 0u);
    EXPECT_EQ(core.stats().bytes, 0u);
    EXPECT_TRUE(reported_ok(*done)) << "the session still learns that it is finished";
    EXPECT_EQ(core.take_receipts(3), "{\"appends\":[1,2]}\n");
    EXPECT_EQ(core.take_receipts(3), "") << "taken once";
    EXPECT_EQ(core.next_due(), time_point::max()) << "nothing left to write";
}

} // namespace

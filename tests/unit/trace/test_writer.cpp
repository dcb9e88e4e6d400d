// Unit tests of the trace writer's sans-io core (docs/protocol.md §3.1, 3.2; a sans-io core):
// `writer_core` is driven by hand with explicit time points. There is no io_context running
// and no sleep; the only real effect is the files, in a fresh temporary directory.

#include <pacer/trace/writer.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace json = boost::json;
namespace trace = pacer::trace;
using pacer::time_point;

// An arbitrary fixed instant: every time in these tests is derived from it.
const time_point t0 = time_point{} + 1000s;

// A time point as "t0+500ms" (or "max"), so that a failed comparison prints something useful.
std::string rel(time_point t) {
    if (t == time_point::max())
        return "max";
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t - t0).count();
    return ns % 1000000 == 0 ? "t0+" + std::to_string(ns / 1000000) + "ms"
                             : "t0+" + std::to_string(ns) + "ns";
}

std::vector<std::string> read_lines(const fs::path& path) {
    const std::string text = pacer::test::read_text(path);
    std::vector<std::string> lines;
    std::size_t begin = 0;
    while (begin < text.size()) {
        const auto end = text.find('\n', begin);
        if (end == std::string::npos) {
            lines.push_back(text.substr(begin) + "<no newline>");
            break;
        }
        lines.push_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    return lines;
}

// The size of a file, or 0 when it does not exist: "nothing written" either way.
std::uintmax_t size_or_zero(const fs::path& path) {
    std::error_code ec;
    const auto n = fs::file_size(path, ec);
    return ec ? 0 : n;
}

// An event as a session would hand it over: the exact bytes, with deliberately unusual
// spacing so that re-serialization would be noticed.
std::string event_json(std::uint32_t session, int i) {
    return R"({"type": "input_audio_buffer.append", "event_id":"s)" + std::to_string(session) +
           "-" + std::to_string(i) + R"(",  "n":)" + std::to_string(i) + R"(, "x":1.50})";
}

double time_of(std::uint32_t session, int i) {
    return 100.0 + session + i * 0.25;
}

trace::record line(std::uint32_t session, int i, trace::direction dir = trace::direction::send) {
    trace::record r;
    r.what = trace::record::kind::line;
    r.dir = dir;
    r.session = session;
    r.time_s = time_of(session, i);
    r.payload = event_json(session, i);
    return r;
}

std::string receipts_json(std::uint32_t session) {
    return "{\n  \"session_start_s\": " + std::to_string(100 + session) +
           ".0,\n  \"admitted\": true,\n  \"appends\": []\n}\n";
}

trace::record end(std::uint32_t session, std::shared_ptr<trace::done_channel> done) {
    trace::record r;
    r.what = trace::record::kind::end;
    r.session = session;
    r.payload = receipts_json(session);
    r.done = std::move(done);
    return r;
}

// What a session's done channel reported, if anything.
struct done_result {
    boost::system::error_code ec;
    std::string message;
};
std::optional<done_result> take_done(trace::done_channel& ch) {
    std::optional<done_result> got;
    ch.try_receive([&](boost::system::error_code ec, std::string message) {
        got = done_result{ec, std::move(message)};
    });
    return got;
}

// Checks that `path` holds exactly the lines `indexes` of `session`, in this order, each a
// JSON object {"direction","time_s","event"} with the event embedded verbatim.
void expect_trace(const fs::path& path, std::uint32_t session, const std::vector<int>& indexes,
                  const char* direction = "send") {
    const auto lines = read_lines(path);
    ASSERT_EQ(lines.size(), indexes.size()) << path << ":\n" << pacer::test::read_text(path);
    for (std::size_t k = 0; k < lines.size(); ++k) {
        const int i = indexes[k];
        SCOPED_TRACE(path.string() + " line " + std::to_string(k + 1));
        boost::system::error_code ec;
        const json::value v = json::parse(lines[k], ec);
        ASSERT_FALSE(ec) << lines[k];
        ASSERT_TRUE(v.is_object());
        const auto& o = v.as_object();
        EXPECT_EQ(o.size(), 3u) << lines[k];
        EXPECT_EQ(o.at("direction").as_string(), direction);
        EXPECT_NEAR(o.at("time_s").to_number<double>(), time_of(session, i), 1e-9);
        EXPECT_EQ(o.at("event").at("n").to_number<int>(), i);
        // Verbatim: the line ends with the event's exact bytes and the closing brace.
        const std::string tail = "\"event\":" + event_json(session, i) + "}";
        ASSERT_GE(lines[k].size(), tail.size());
        EXPECT_EQ(lines[k].substr(lines[k].size() - tail.size()), tail);
    }
}

class trace_writer : public ::testing::Test {
protected:
    trace::writer_options options() const {
        trace::writer_options o;
        o.root = dir_.path;
        o.flush_interval = 500ms;
        o.end_grouping = 50ms;
        return o;
    }
    fs::path folder(std::uint32_t session) const {
        return dir_.path / trace::session_folder_name(session);
    }
    fs::path trace_file(std::uint32_t session) const { return folder(session) / "trace.jsonl"; }
    fs::path receipts_file(std::uint32_t session) const {
        return folder(session) / "input-send-receipts.json";
    }
    std::shared_ptr<trace::done_channel> make_done() {
        return std::make_shared<trace::done_channel>(ctx_.get_executor(), 1);
    }

    pacer::test::scratch_folder dir_{"pacer-trace-writer"};
    boost::asio::io_context ctx_; // only an executor for the done channels; never run
};

TEST(trace_writer_names, session_folder_name) {
    EXPECT_EQ(trace::session_folder_name(0), "session-000");
    EXPECT_EQ(trace::session_folder_name(7), "session-007");
    EXPECT_EQ(trace::session_folder_name(42), "session-042");
    EXPECT_EQ(trace::session_folder_name(999), "session-999");
    EXPECT_EQ(trace::session_folder_name(1234), "session-1234");
}

TEST(trace_writer_names, default_timing_is_500ms_batches_and_50ms_end_grouping) {
    const trace::writer_options o;
    EXPECT_EQ(o.flush_interval, pacer::duration(500ms));
    EXPECT_EQ(o.end_grouping, pacer::duration(50ms));
}

TEST_F(trace_writer, batches_lines_until_the_flush_interval) {
    trace::writer_core core(options());
    EXPECT_EQ(rel(core.next_due()), rel(time_point::max())); // nothing buffered

    // Session 1 gets two lines, sessions 2 and 3 one each, over 300 ms.
    core.on_record(t0, line(1, 0));
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 500ms));
    core.on_record(t0 + 100ms, line(1, 1, trace::direction::send));
    core.on_record(t0 + 200ms, line(2, 0));
    core.on_record(t0 + 300ms, line(3, 0));
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 500ms)); // the oldest pending line decides

    // Just before the interval has elapsed for the oldest line, nothing is written.
    EXPECT_EQ(core.flush_due(t0 + 499ms), 0u);
    for (std::uint32_t s : {1u, 2u, 3u})
        EXPECT_EQ(size_or_zero(trace_file(s)), 0u) << s;
    EXPECT_EQ(core.stats().writes, 0u);

    // At +500 ms, session 1's batch is due: both its lines, in order, one per line.
    EXPECT_EQ(core.flush_due(t0 + 500ms), 1u);
    expect_trace(trace_file(1), 1, {0, 1});
    EXPECT_EQ(size_or_zero(trace_file(2)), 0u);
    EXPECT_EQ(size_or_zero(trace_file(3)), 0u);
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 700ms));

    // Later lines of session 1 start a new batch.
    core.on_record(t0 + 600ms, line(1, 2));
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 700ms));
    EXPECT_EQ(core.flush_due(t0 + 700ms), 1u); // session 2 only
    expect_trace(trace_file(2), 2, {0});
    expect_trace(trace_file(1), 1, {0, 1});
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 800ms));
    EXPECT_EQ(core.flush_due(t0 + 800ms), 1u); // session 3
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 1100ms));
    EXPECT_EQ(core.flush_due(t0 + 1100ms), 1u); // session 1's second batch
    expect_trace(trace_file(1), 1, {0, 1, 2});
    expect_trace(trace_file(3), 3, {0});
    EXPECT_EQ(rel(core.next_due()), rel(time_point::max()));
    EXPECT_EQ(core.flush_due(t0 + 10s), 0u);

    EXPECT_EQ(core.stats().lines, 5u);
    EXPECT_EQ(core.stats().writes, 4u);
    EXPECT_EQ(core.stats().write_errors, 0u);
}

TEST_F(trace_writer, every_direction_is_written) {
    trace::writer_core core(options());
    core.on_record(t0, line(5, 0, trace::direction::send));
    core.on_record(t0, line(5, 1, trace::direction::receive));
    core.on_record(t0, line(5, 2, trace::direction::error));
    core.on_record(t0, line(5, 3, trace::direction::admission));
    core.flush_all();
    const auto lines = read_lines(trace_file(5));
    ASSERT_EQ(lines.size(), 4u);
    const char* expected[] = {"send", "receive", "error", "admission"};
    for (std::size_t i = 0; i < 4; ++i)
        EXPECT_EQ(json::parse(lines[i]).at("direction").as_string(), expected[i]);
}

TEST_F(trace_writer, ends_within_the_grouping_are_finished_in_one_call) {
    trace::writer_core core(options());
    auto done1 = make_done();
    auto done2 = make_done();
    auto done3 = make_done();

    core.on_record(t0, line(1, 0));
    core.on_record(t0, line(2, 0));
    core.on_record(t0, line(3, 0));
    core.on_record(t0 + 10ms, line(1, 1));

    // Session 1 ends at t1, session 2 30 ms later: within the 50 ms grouping.
    const time_point t1 = t0 + 100ms;
    core.on_record(t1, end(1, done1));
    EXPECT_EQ(rel(core.next_due()), rel(t1 + 50ms));
    core.on_record(t1 + 30ms, end(2, done2));
    EXPECT_EQ(rel(core.next_due()), rel(t1 + 50ms));

    // Before the grouping has elapsed, neither session is finished.
    EXPECT_EQ(core.flush_due(t1 + 49ms), 0u);
    EXPECT_FALSE(fs::exists(receipts_file(1)));
    EXPECT_FALSE(fs::exists(receipts_file(2)));
    EXPECT_FALSE(take_done(*done1).has_value());
    EXPECT_FALSE(take_done(*done2).has_value());

    // One call finishes both: their lines and receipts are on disk, and both are told so.
    EXPECT_EQ(core.flush_due(t1 + 50ms), 2u);
    ASSERT_TRUE(fs::exists(receipts_file(1)));
    ASSERT_TRUE(fs::exists(receipts_file(2)));
    EXPECT_EQ(pacer::test::read_text(receipts_file(1)), receipts_json(1));
    EXPECT_EQ(pacer::test::read_text(receipts_file(2)), receipts_json(2));
    expect_trace(trace_file(1), 1, {0, 1});
    expect_trace(trace_file(2), 2, {0});
    for (auto* done : {done1.get(), done2.get()}) {
        const auto got = take_done(*done);
        ASSERT_TRUE(got.has_value());
        EXPECT_FALSE(got->ec) << got->ec.message();
        EXPECT_EQ(got->message, "");
        EXPECT_FALSE(take_done(*done).has_value()); // exactly one message
    }
    EXPECT_EQ(core.stats().sessions_closed, 2u);

    // Session 3 is still open: its line waits for its own interval.
    EXPECT_FALSE(fs::exists(receipts_file(3)));
    EXPECT_EQ(size_or_zero(trace_file(3)), 0u);
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 500ms));
    core.on_record(t0 + 400ms, end(3, done3));
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 450ms));
    EXPECT_EQ(core.flush_due(t0 + 450ms), 1u);
    expect_trace(trace_file(3), 3, {0});
    EXPECT_EQ(pacer::test::read_text(receipts_file(3)), receipts_json(3));
    ASSERT_TRUE(take_done(*done3).has_value());
    EXPECT_EQ(rel(core.next_due()), rel(time_point::max()));
}

TEST_F(trace_writer, an_end_outside_the_grouping_waits_for_its_own) {
    trace::writer_core core(options());
    auto done1 = make_done();
    auto done2 = make_done();
    core.on_record(t0, end(1, done1));
    EXPECT_EQ(core.flush_due(t0 + 50ms), 1u); // session 1 alone
    ASSERT_TRUE(take_done(*done1).has_value());
    core.on_record(t0 + 60ms, end(2, done2));
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 110ms));
    EXPECT_EQ(core.flush_due(t0 + 109ms), 0u);
    EXPECT_FALSE(fs::exists(receipts_file(2)));
    EXPECT_EQ(core.flush_due(t0 + 110ms), 1u);
    EXPECT_TRUE(fs::exists(receipts_file(2)));
    ASSERT_TRUE(take_done(*done2).has_value());
}

TEST_F(trace_writer, next_due_covers_pending_lines_of_an_ended_session) {
    // A session with a line buffered since t0 ends at t0 + 480 ms. flush_due writes that line
    // at t0 + 500 ms (its flush interval), so that is the earliest time a batch becomes due.
    trace::writer_core core(options());
    core.on_record(t0, line(1, 0));
    core.on_record(t0 + 480ms, end(1, make_done()));
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 500ms))
        << "next_due() ignores the pending lines of an ended session";
    EXPECT_EQ(core.flush_due(t0 + 500ms), 1u); // the line is written here
    expect_trace(trace_file(1), 1, {0});
    EXPECT_FALSE(fs::exists(receipts_file(1)));
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 530ms));
}

TEST_F(trace_writer, flush_all_writes_everything) {
    trace::writer_core core(options());
    auto done1 = make_done();
    auto done2 = make_done();
    for (int i = 0; i < 100; ++i)
        for (std::uint32_t s : {1u, 2u, 3u})
            core.on_record(t0 + i * 1ms, line(s, i));
    core.on_record(t0 + 100ms, end(1, done1));
    core.on_record(t0 + 101ms, end(2, done2));
    // Nothing is due yet ...
    EXPECT_EQ(core.flush_due(t0 + 101ms), 0u);
    // ... but the channel closed: everything goes to disk now.
    core.flush_all();
    std::vector<int> all(100);
    for (int i = 0; i < 100; ++i)
        all[static_cast<std::size_t>(i)] = i;
    for (std::uint32_t s : {1u, 2u, 3u})
        expect_trace(trace_file(s), s, all);
    EXPECT_EQ(pacer::test::read_text(receipts_file(1)), receipts_json(1));
    EXPECT_EQ(pacer::test::read_text(receipts_file(2)), receipts_json(2));
    EXPECT_FALSE(fs::exists(receipts_file(3))); // session 3 never ended: no receipts given
    for (auto* done : {done1.get(), done2.get()}) {
        const auto got = take_done(*done);
        ASSERT_TRUE(got.has_value());
        EXPECT_FALSE(got->ec);
        EXPECT_EQ(got->message, "");
    }
    EXPECT_EQ(rel(core.next_due()), rel(time_point::max()));
    EXPECT_EQ(core.stats().lines, 300u);
    EXPECT_EQ(core.stats().write_errors, 0u);
}

TEST_F(trace_writer, a_failing_write_affects_only_its_own_session) {
    // Session 2's trace.jsonl is /dev/full: every write fails with ENOSPC.
    auto opts = options();
    opts.open_file = [](const fs::path& path) {
        if (path.filename() == "trace.jsonl" &&
            path.parent_path().filename() == trace::session_folder_name(2))
            return ::open("/dev/full", O_WRONLY | O_CLOEXEC);
        return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    };
    trace::writer_core core(opts);
    std::shared_ptr<trace::done_channel> done[4] = {nullptr, make_done(), make_done(), make_done()};
    for (int i = 0; i < 10; ++i)
        for (std::uint32_t s : {1u, 2u, 3u})
            core.on_record(t0 + i * 10ms, line(s, i));
    // An intermediate flush: session 2's write fails here already.
    EXPECT_EQ(core.flush_due(t0 + 500ms), 3u);
    for (int i = 10; i < 20; ++i)
        for (std::uint32_t s : {1u, 2u, 3u})
            core.on_record(t0 + 600ms + i * 10ms, line(s, i));
    for (std::uint32_t s : {1u, 2u, 3u})
        core.on_record(t0 + 900ms, end(s, done[s]));
    EXPECT_EQ(core.flush_due(t0 + 950ms), 3u);

    // Session 2 is told which file failed and why.
    const auto failed = take_done(*done[2]);
    ASSERT_TRUE(failed.has_value());
    EXPECT_TRUE(failed->ec);
    EXPECT_NE(failed->message.find(trace_file(2).string()), std::string::npos) << failed->message;
    EXPECT_NE(failed->message.find("No space left on device"), std::string::npos)
        << failed->message;
    EXPECT_EQ(core.stats().write_errors, 1u);

    // Sessions 1 and 3 are intact and complete.
    std::vector<int> all(20);
    for (int i = 0; i < 20; ++i)
        all[static_cast<std::size_t>(i)] = i;
    for (std::uint32_t s : {1u, 3u}) {
        const auto got = take_done(*done[s]);
        ASSERT_TRUE(got.has_value()) << s;
        EXPECT_FALSE(got->ec) << s << ": " << got->message;
        EXPECT_EQ(got->message, "");
        expect_trace(trace_file(s), s, all);
        EXPECT_EQ(pacer::test::read_text(receipts_file(s)), receipts_json(s));
    }
}

TEST_F(trace_writer, an_existing_session_folder_is_a_clear_error) {
    // A rerun into the same folder must never overwrite (or append to) old artifacts.
    fs::create_directory(folder(4));
    { std::ofstream(folder(4) / "trace.jsonl") << "old\n"; }
    trace::writer_core core(options());
    auto done4 = make_done();
    auto done5 = make_done();
    core.on_record(t0, line(4, 0));
    core.on_record(t0, line(5, 0));
    core.on_record(t0 + 10ms, end(4, done4));
    core.on_record(t0 + 10ms, end(5, done5));
    EXPECT_EQ(core.flush_due(t0 + 60ms), 2u);

    const auto got = take_done(*done4);
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(got->ec);
    EXPECT_NE(got->message.find(folder(4).string()), std::string::npos) << got->message;
    EXPECT_NE(got->message.find("File exists"), std::string::npos) << got->message;
    // The old files are untouched, and no receipts were added.
    EXPECT_EQ(pacer::test::read_text(folder(4) / "trace.jsonl"), "old\n");
    EXPECT_FALSE(fs::exists(receipts_file(4)));

    // The other session is not affected.
    const auto ok = take_done(*done5);
    ASSERT_TRUE(ok.has_value());
    EXPECT_FALSE(ok->ec) << ok->message;
    expect_trace(trace_file(5), 5, {0});
    EXPECT_EQ(pacer::test::read_text(receipts_file(5)), receipts_json(5));
}

TEST_F(trace_writer, default_open_never_overwrites_an_existing_file) {
    // The folder is new but a receipts file appears in it before the session ends.
    trace::writer_core core(options());
    auto done = make_done();
    core.on_record(t0, line(6, 0));
    ASSERT_TRUE(fs::exists(folder(6)));
    { std::ofstream(receipts_file(6)) << "foreign"; }
    core.on_record(t0 + 10ms, end(6, done));
    core.flush_all();
    const auto got = take_done(*done);
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(got->ec);
    EXPECT_NE(got->message.find(receipts_file(6).string()), std::string::npos) << got->message;
    EXPECT_EQ(pacer::test::read_text(receipts_file(6)), "foreign");
}

} // namespace

namespace {

trace::record receipt_piece(std::uint32_t session, std::string text) {
    trace::record r;
    r.what = trace::record::kind::receipt;
    r.session = session;
    r.payload = std::move(text);
    return r;
}

TEST_F(trace_writer, receipts_stream_to_disk_with_the_lines_and_end_with_the_tail) {
    trace::writer_core core(options());
    auto done = make_done();
    core.on_record(t0, line(1, 0));
    core.on_record(
        t0 + 1ms,
        receipt_piece(1, R"({"session_start_s":1.0,"admitted":true,"appends":[{"seq":0})"));
    core.on_record(t0 + 2ms, receipt_piece(1, R"(,{"seq":1})"));
    // Before the flush interval nothing is on disk; at it, the receipts so far are, so a long
    // session holds neither its lines nor its receipts in memory.
    EXPECT_EQ(core.flush_due(t0 + 499ms), 0u);
    EXPECT_FALSE(fs::exists(receipts_file(1)));
    EXPECT_EQ(core.flush_due(t0 + 500ms), 1u);
    EXPECT_EQ(pacer::test::read_text(receipts_file(1)),
              R"({"session_start_s":1.0,"admitted":true,"appends":[{"seq":0},{"seq":1})");
    EXPECT_EQ(rel(core.next_due()), rel(time_point::max())); // nothing buffered any more
    // A receipt alone (no line) is due one flush interval after it arrived.
    core.on_record(t0 + 600ms, receipt_piece(1, R"(,{"seq":2})"));
    EXPECT_EQ(rel(core.next_due()), rel(t0 + 1100ms));
    trace::record e;
    e.what = trace::record::kind::end;
    e.session = 1;
    e.payload = "]}\n";
    e.done = done;
    core.on_record(t0 + 700ms, std::move(e));
    EXPECT_EQ(core.flush_due(t0 + 750ms), 1u);
    EXPECT_EQ(pacer::test::read_text(receipts_file(1)),
              R"({"session_start_s":1.0,"admitted":true,"appends":[{"seq":0},{"seq":1},{"seq":2}]})"
              "\n");
    const auto got = take_done(*done);
    ASSERT_TRUE(got.has_value());
    EXPECT_FALSE(got->ec) << got->message;
    EXPECT_EQ(core.stats().write_errors, 0u);
}

} // namespace

namespace {

// A run prepares every session before its sessions start: the folder and both files exist at
// once, and the records that follow open nothing more (counted through the open hook).
TEST_F(trace_writer, prepared_sessions_open_no_file_while_they_stream) {
    auto opts = options();
    int opens = 0;
    opts.open_file = [&opens](const fs::path& path) {
        ++opens;
        return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    };
    trace::writer_core core(opts);
    for (std::uint32_t s : {1u, 2u})
        core.prepare(s, t0);
    EXPECT_EQ(opens, 4);
    for (std::uint32_t s : {1u, 2u}) {
        EXPECT_TRUE(fs::exists(trace_file(s)));
        EXPECT_TRUE(fs::exists(receipts_file(s)));
    }
    EXPECT_EQ(rel(core.next_due()), rel(time_point::max())); // nothing buffered: nothing due

    std::shared_ptr<trace::done_channel> done[3] = {nullptr, make_done(), make_done()};
    for (int i = 0; i < 4; ++i)
        for (std::uint32_t s : {1u, 2u}) {
            core.on_record(t0 + i * 10ms, line(s, i));
            core.on_record(t0 + i * 10ms, receipt_piece(s, "[" + std::to_string(i) + "]"));
        }
    EXPECT_EQ(core.flush_due(t0 + 500ms), 2u);
    for (std::uint32_t s : {1u, 2u})
        core.on_record(t0 + 600ms, end(s, done[s]));
    EXPECT_EQ(core.flush_due(t0 + 650ms), 2u);
    EXPECT_EQ(opens, 4); // no file opened after the start
    for (std::uint32_t s : {1u, 2u}) {
        expect_trace(trace_file(s), s, {0, 1, 2, 3});
        EXPECT_EQ(pacer::test::read_text(receipts_file(s)), "[0][1][2][3]" + receipts_json(s));
        const auto got = take_done(*done[s]);
        ASSERT_TRUE(got.has_value());
        EXPECT_FALSE(got->ec) << got->message;
    }
    EXPECT_EQ(core.stats().write_errors, 0u);
}

// --trace none prepares nothing on disk.
TEST_F(trace_writer, preparing_with_trace_none_creates_nothing) {
    auto opts = options();
    opts.what = trace::mode::none;
    trace::writer_core core(opts);
    core.prepare(1, t0);
    EXPECT_FALSE(fs::exists(folder(1)));
}

// Write-behind: each window's writeback starts once it is written, and a window is dropped
// from the page cache one window later (its writeback had a window's time to finish).
TEST(trace_write_behind, starts_each_window_and_drops_the_one_before) {
    using step = trace::write_behind::step;
    trace::write_behind wb(100, 30);
    EXPECT_EQ(wb.wrote(20), std::nullopt);
    EXPECT_EQ(wb.wrote(20), (step{{0, 40}, {0, 0}}));   // the first window, 30 bytes, is full
    EXPECT_EQ(wb.wrote(50), std::nullopt);              // 90 of the next 100
    EXPECT_EQ(wb.wrote(60), (step{{40, 110}, {0, 0}})); // nothing written back a window ago yet
    EXPECT_EQ(wb.wrote(100), (step{{150, 100}, {0, 40}}));
    EXPECT_EQ(wb.wrote(100), (step{{250, 100}, {40, 110}}));
    EXPECT_EQ(wb.wrote(99), std::nullopt);
    EXPECT_EQ(wb.wrote(1), (step{{350, 100}, {150, 100}}));
}

// Whatever the write sizes: the writeback ranges and the drops each tile the file from 0
// without a gap, nothing is dropped before its writeback was started a call earlier, and
// the bytes still cached stay within two windows.
TEST(trace_write_behind, ranges_tile_the_file_and_the_cache_stays_bounded) {
    std::mt19937 rng(7);
    constexpr std::uint64_t largest_write = 70'000;
    std::uniform_int_distribution<std::uint64_t> size(1, largest_write);
    constexpr std::uint64_t window = 64 * 1024;
    trace::write_behind wb(window, 5'000);
    std::uint64_t written = 0, behind = 0, dropped = 0, previous_behind = 0;
    int steps = 0;
    for (int i = 0; i < 5'000; ++i) {
        const std::uint64_t n = size(rng);
        written += n;
        const auto s = wb.wrote(n);
        if (!s)
            continue;
        ++steps;
        EXPECT_EQ(s->start_writeback.offset, behind);
        EXPECT_EQ(s->start_writeback.offset + s->start_writeback.length, written);
        EXPECT_EQ(s->drop.offset, dropped);
        EXPECT_LE(s->drop.offset + s->drop.length, previous_behind);
        previous_behind = behind;
        behind = written;
        dropped = s->drop.offset + s->drop.length;
        // Two windows, each overshooting by at most one write.
        EXPECT_LE(written - dropped, 2 * (window + largest_write)) << "at write " << i;
    }
    EXPECT_GT(steps, 1000); // ~2,700 windows of 64 kB in ~175 MB
}

// The first windows of 1,024 files are spread evenly over (0, window]: no two sessions'
// write-behind calls need to fall together.
TEST(trace_write_behind, first_windows_are_spread_over_one_window) {
    constexpr std::uint64_t window = 1024 * 1024;
    std::vector<std::uint64_t> first;
    for (std::size_t n = 0; n < 1024; ++n) {
        first.push_back(trace::write_behind::first_window(window, n));
        EXPECT_GE(first.back(), 1u);
        EXPECT_LE(first.back(), window);
    }
    std::sort(first.begin(), first.end());
    std::uint64_t widest_gap = first.front();
    for (std::size_t i = 1; i < first.size(); ++i)
        widest_gap = std::max(widest_gap, first[i] - first[i - 1]);
    widest_gap = std::max(widest_gap, window - first.back());
    EXPECT_LT(widest_gap, window / 256); // a uniform spread's gap is window / 1,024
    EXPECT_EQ(trace::write_behind::first_window(0, 5), 1u);
}

TEST(trace_writer_names, write_behind_defaults_to_1_mib_windows) {
    EXPECT_EQ(trace::writer_options{}.write_behind_window, 1024u * 1024u);
}

} // namespace

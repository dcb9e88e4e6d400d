// Fault injection, end to end on loopback: real processes, bounded in count and time. Each
// case asserts what the user gets: the documented error line, an incomplete session, a run
// that still finishes with a valid summary, and files that survive.

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <cstring>
#include <sys/mount.h>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

// Polls a filesystem predicate until it holds; the 60 s bound only guards against a hang.
template <class Pred>
bool poll_until(Pred pred) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > give_up)
            return false;
        ::usleep(10'000); // polling interval of a condition, not a synchronisation by sleep
    }
    return true;
}

struct single_fault {
    int exit_code;
    std::vector<std::string> errors;
    value summary;
};

single_fault run_fault(const std::string& fault, const std::string& timeout = "5s") {
    mock_process mock({"--fault", fault});
    temp_dir out;
    const auto r = run_pacer({"run", "--url", mock.url(), "-c", "1", "-d", "1s", "--timeout",
                              timeout, "-o", out.path().string(), "--keep-traces"});
    single_fault f{r.exit_code, error_lines(out / "session-000" / "trace.jsonl"),
                   read_json(out / "summary.json")};
    EXPECT_EQ(mock.stop(), 0);
    return f;
}

TEST(FaultsE2E, NaNInAFrameIsMalformed) {
    const auto f = run_fault("nonfinite");
    EXPECT_EQ(f.exit_code, 1);
    // The receive loop ends on the bad frame; the driver then gets 0.2 s and is reported as
    // stalled (PROTOCOL.md 1.5 step 4), as the reference client does.
    ASSERT_EQ(f.errors.size(), 2u);
    EXPECT_EQ(f.errors[1], "RuntimeError: driver stalled after the receive loop");
    EXPECT_EQ(f.errors[0].rfind("ValueError: malformed server frame ", 0), 0u) << f.errors[0];
    EXPECT_NE(f.errors[0].find("NaN"), std::string::npos) << f.errors[0];
}

TEST(FaultsE2E, BinaryFrameIsMalformed) {
    const auto f = run_fault("binary");
    EXPECT_EQ(f.exit_code, 1);
    ASSERT_EQ(f.errors.size(), 2u);
    EXPECT_EQ(f.errors[0].rfind("ValueError: malformed server frame ", 0), 0u) << f.errors[0];
    EXPECT_NE(f.errors[0].find(": binary frame"), std::string::npos) << f.errors[0];
}

TEST(FaultsE2E, FrameOverTheEightMebibyteLimitClosesTheSession) {
    const auto f = run_fault("huge_frame");
    EXPECT_EQ(f.exit_code, 1);
    ASSERT_FALSE(f.errors.empty());
    EXPECT_EQ(f.errors[0].rfind("ConnectionClosedError: sent 1009 (message too big)", 0), 0u)
        << f.errors[0];
    EXPECT_EQ(at(f.summary, {"pacing", "sessions", "incomplete"}).to_number<int>(), 1);
}

TEST(FaultsE2E, ServerThatNeverCreatesTheSessionTimesOut) {
    const auto f = run_fault("no_created", "2s");
    EXPECT_EQ(f.exit_code, 1);
    ASSERT_EQ(f.errors.size(), 1u);
    EXPECT_EQ(f.errors[0], "Session timeout after 2s");
    EXPECT_EQ(at(f.summary, {"pacing", "packets", "sent"}).to_number<int>(), 0);
}

// The server process dies (SIGKILL) while half the sessions are still open: those end with an
// error line; the finished ones keep intact, parseable files; the summary is written.
TEST(FaultsE2E, ServerKilledMidRun) {
    auto mock = std::make_unique<mock_process>(
        std::vector<std::string>{"--fault", "stall", "--fault-every", "2"});
    temp_dir out;
    child run({PACER_BINARY, "run", "--url", mock->url(), "-c", "4", "-d", "1s", "--timeout", "60s",
               "-o", out.path().string(), "--keep-traces"});
    // Sessions 1 and 3 (accept order may differ) finish normally; wait until two sessions'
    // receipts are complete on disk (receipts stream as a session goes; its end closes the
    // list), then kill the server.
    auto finished = [&] {
        int n = 0;
        for (int i = 0; i < 4; ++i) {
            const auto text =
                slurp(out / ("session-00" + std::to_string(i)) / "input-send-receipts.json");
            n += text.size() >= 3 && text.compare(text.size() - 3, 3, "]}\n") == 0;
        }
        return n;
    };
    ASSERT_TRUE(poll_until([&] { return finished() >= 2; }));
    mock->kill();
    run.read_all();
    EXPECT_EQ(run.wait(), 1);
    const auto summary = read_json(out / "summary.json");
    EXPECT_EQ(at(summary, {"pacing", "sessions", "complete"}).to_number<int>(), 2);
    EXPECT_EQ(at(summary, {"pacing", "sessions", "incomplete"}).to_number<int>(), 2);
    int with_error = 0;
    for (int i = 0; i < 4; ++i) {
        const auto dir = out / ("session-00" + std::to_string(i));
        const auto receipts = read_json(dir / "input-send-receipts.json"); // parses
        const auto errors = error_lines(dir / "trace.jsonl");              // every line parses
        if (!errors.empty()) {
            ++with_error;
            EXPECT_EQ(errors[0].rfind("ConnectionClosedError: ", 0), 0u) << errors[0];
        } else {
            EXPECT_EQ(at(receipts, {"appends"}).as_array().size(), 13u);
        }
    }
    EXPECT_EQ(with_error, 2);
}

// SIGINT to `pacer run`: sessions stop cleanly, every recorded line reaches disk, a partial
// summary marked `interrupted` is written, and the exit status is 130.
TEST(FaultsE2E, SigintStopsTheRunCleanly) {
    mock_process mock;
    temp_dir out;
    child run({PACER_BINARY, "run", "--url", mock.url(), "-c", "4", "-d", "60s", "-o",
               out.path().string(), "--keep-traces"});
    // Wait until streaming has begun (the first trace batch is on disk), then interrupt.
    ASSERT_TRUE(poll_until([&] {
        std::error_code ec;
        return fs::file_size(out / "session-000" / "trace.jsonl", ec) > 0 && !ec;
    }));
    run.signal(SIGINT);
    const std::string printed = run.read_all();
    EXPECT_EQ(run.wait(), 130) << printed;
    const auto summary = read_json(out / "summary.json");
    EXPECT_TRUE(at(summary, {"interrupted"}).as_bool());
    for (int i = 0; i < 4; ++i) {
        const auto dir = out / ("session-00" + std::to_string(i));
        const auto receipts = read_json(dir / "input-send-receipts.json");
        const auto trace = read_jsonl(dir / "trace.jsonl");
        std::size_t traced_appends = 0;
        for (const auto& l : trace)
            traced_appends += at(l, {"direction"}).as_string() == "send" &&
                              at(l, {"event", "type"}).as_string() == "input_audio_buffer.append";
        EXPECT_EQ(traced_appends, at(receipts, {"appends"}).as_array().size())
            << "nothing recorded is lost";
        const auto errors = error_lines(dir / "trace.jsonl");
        ASSERT_FALSE(errors.empty());
        EXPECT_EQ(errors.back(), "Interrupted: the run was stopped by a signal");
    }
    EXPECT_EQ(mock.stop(), 0);
}

// The trace disk fills: a 256 kB tmpfs (root only; skipped with the reason otherwise). The
// run ends with a clear error naming the file, no crash, and sessions that were written keep
// parseable files.
TEST(FaultsE2E, FullTraceDiskIsReportedNotCrashed) {
    temp_dir dir;
    fs::create_directories(dir.path());
    if (::mount("pacer-test", dir.path().c_str(), "tmpfs", 0, "size=256k") != 0)
        GTEST_SKIP() << "cannot mount a small tmpfs here (needs root): " << std::strerror(errno);
    struct unmount {
        fs::path p;
        ~unmount() { ::umount2(p.c_str(), MNT_DETACH); }
    } guard{dir.path()};
    mock_process mock;
    child run({PACER_BINARY, "run", "--url", mock.url(), "-c", "8", "-d", "2s", "-o",
               (dir / "run").string(), "--keep-traces"});
    const std::string printed = run.read_all();
    const int code = run.wait();
    EXPECT_TRUE(code == 1 || code == 3) << "a failed run, not a crash: " << code << "\n" << printed;
    EXPECT_NE(printed.find("No space left on device"), std::string::npos) << printed;
    EXPECT_EQ(mock.stop(), 0);
}

} // namespace
} // namespace pacer::test

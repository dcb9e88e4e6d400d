// The live progress line of run and serve: its text (terminal and plain forms) and when a line is
// due, without a clock of their own. The reporter and its thread: tests/async/run/
// test_progress_reporter.cpp.

#include <pacer/console/progress.hpp>

#include <gtest/gtest.h>

#include <string>

namespace pacer::run {
namespace {

console::progress_snapshot some_figures() {
    console::progress_snapshot s;
    s.started = 10;
    s.done = 3;
    s.failed = 1;
    s.packets_sent = 1234;
    s.late_packets = 5;
    s.errors = 2;
    s.loop_lag_max_s = 0.0123;
    return s;
}

TEST(ProgressLine, PlainFormIsOneLineWithEveryFigure) {
    const auto line =
        console::format_progress(some_figures(), {65.4, 90.0, "", std::nullopt}, false);
    EXPECT_EQ(line, "progress 1m05s (ETA 25s)  sessions 6 active, 3 done, 1 failed  packets 1234 "
                    "sent, 5 late  loop lag max 12.3 ms  errors 2\n");
}

TEST(ProgressLine, TerminalFormRewritesTheLineInPlace) {
    const auto line = console::format_progress(some_figures(),
                                               {5.0, std::nullopt, "level c8", std::nullopt}, true);
    EXPECT_EQ(line, "\r\033[Kprogress level c8  5s  sessions 6 active, 3 done, 1 failed  packets "
                    "1234 sent, 5 late  loop lag max 12.3 ms  errors 2");
    EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(ProgressLine, TerminalFormFitsTheTerminalWidth) {
    const auto line =
        console::format_progress(some_figures(), {5.0, std::nullopt, "", std::nullopt}, true, 21);
    EXPECT_EQ(line, "\r\033[Kprogress 5s  session"); // 20 columns
    // Plain lines are never cut.
    EXPECT_EQ(
        console::format_progress(some_figures(), {5.0, std::nullopt, "", std::nullopt}, false, 21)
            .back(),
        '\n');
}

TEST(ProgressLine, NoEtaOnceTheExpectedLengthIsPassedAndActiveNeverWraps) {
    console::progress_snapshot s; // a torn read: ends counted before their starts
    s.started = 2;
    s.done = 3;
    const auto line = console::format_progress(s, {3725.0, 60.0, "", std::nullopt}, false);
    EXPECT_EQ(line.rfind("progress 1h02m05s  sessions 0 active, 3 done", 0), 0u) << line;
    EXPECT_EQ(line.find("ETA"), std::string::npos) << line;
}

// Issue 33 item 15: once the input is sent, sessions still open are waiting for the server;
// the line says so, with the time left to their --timeout when it is known.
TEST(ProgressLine, AfterTheInputTheLineSaysTheSessionsWaitForTheServerAndWhenTheyGiveUp) {
    EXPECT_EQ(console::format_progress(some_figures(), {65.4, 60.0, "", 100.0}, false),
              "progress 1m05s (input sent; waiting for the server, timeout in 35s; ETA at most "
              "35s)  sessions 6 active, 3 done, 1 failed  packets 1234 sent, 5 late  loop lag max "
              "12.3 ms  errors 2\n");
    EXPECT_NE(console::format_progress(some_figures(), {65.4, 60.0, "", std::nullopt}, false)
                  .find("(input sent; waiting for the server)  sessions"),
              std::string::npos);
    // Before the end of the input: the ETA, as before.
    EXPECT_NE(
        console::format_progress(some_figures(), {30.0, 60.0, "", 100.0}, false).find("(ETA 30s)"),
        std::string::npos);
}

// A manual clock through a run whose server stalls after the input: 60 s of input, sessions
// that give up 40 s later. Before the end of the input the ETA counts down to it; after, the
// line says the sessions wait for the server, with the time left to their timeout as the ETA,
// counting down to it; past the timeout (sessions still closing) no time is promised.
TEST(ProgressLine, WhileSessionsWaitForAStalledServerTheEtaIsTheirTimeout) {
    const auto at = [](double elapsed_s) {
        return console::format_progress(some_figures(), {elapsed_s, 60.0, "", 100.0}, true);
    };
    const auto eta_of = [](const std::string& line) {
        const auto p = line.find('(');
        return line.substr(p, line.find(')') - p + 1);
    };
    EXPECT_EQ(eta_of(at(0)), "(ETA 1m00s)");
    EXPECT_EQ(eta_of(at(59.2)), "(ETA 1s)");
    EXPECT_EQ(eta_of(at(60.0)),
              "(input sent; waiting for the server, timeout in 40s; ETA at most 40s)");
    EXPECT_EQ(eta_of(at(75.5)),
              "(input sent; waiting for the server, timeout in 25s; ETA at most 25s)");
    EXPECT_EQ(eta_of(at(99.9)),
              "(input sent; waiting for the server, timeout in 1s; ETA at most 1s)");
    EXPECT_EQ(at(100.0).find("ETA"), std::string::npos);
    EXPECT_NE(at(100.0).find("(input sent; waiting for the server)"), std::string::npos);
    // No session open: nothing waits, no ETA once the input is over.
    console::progress_snapshot idle;
    idle.started = 4;
    idle.done = 4;
    EXPECT_EQ(console::format_progress(idle, {75.5, 60.0, "", 100.0}, false).find('('),
              std::string::npos);
}

TEST(ProgressLine, SnapshotReadsTheCounters) {
    session::live_counters c;
    c.bump(&session::live_counters::started);
    c.bump(&session::live_counters::started);
    c.bump(&session::live_counters::failed);
    c.bump(&session::live_counters::packets_sent);
    c.loop_lag_max_ns = 2'500'000;
    const auto s = console::take_snapshot(c);
    EXPECT_EQ(s.started, 2u);
    EXPECT_EQ(s.failed, 1u);
    EXPECT_EQ(s.done, 0u);
    EXPECT_EQ(s.packets_sent, 1u);
    EXPECT_DOUBLE_EQ(s.loop_lag_max_s, 0.0025);
    c.reset();
    EXPECT_EQ(console::take_snapshot(c).started, 0u);
}

TEST(ProgressPolicy, ModeFromTheOptionAndTheTerminal) {
    EXPECT_EQ(console::resolve_progress("auto", true), console::progress_mode::terminal);
    EXPECT_EQ(console::resolve_progress("auto", false), console::progress_mode::off);
    EXPECT_EQ(console::resolve_progress("always", true), console::progress_mode::terminal);
    EXPECT_EQ(console::resolve_progress("always", false), console::progress_mode::plain);
    EXPECT_EQ(console::resolve_progress("never", true), console::progress_mode::off);
    EXPECT_EQ(console::resolve_progress("sometimes", true), std::nullopt);
}

TEST(ProgressPolicy, TerminalAtOnceThenAtMostFourTimesASecond) {
    EXPECT_TRUE(console::progress_due(console::progress_mode::terminal, std::nullopt, 0.0));
    EXPECT_FALSE(console::progress_due(console::progress_mode::terminal, 1.0, 1.1));
    EXPECT_FALSE(console::progress_due(console::progress_mode::terminal, 1.0, 1.249));
    EXPECT_TRUE(console::progress_due(console::progress_mode::terminal, 1.0, 1.25));
    EXPECT_TRUE(console::progress_due(console::progress_mode::terminal, 1.0, 7.0));
}

TEST(ProgressPolicy, PlainEveryTenSecondsAndOffNever) {
    EXPECT_FALSE(console::progress_due(console::progress_mode::plain, std::nullopt, 0.0));
    EXPECT_FALSE(console::progress_due(console::progress_mode::plain, std::nullopt, 9.99));
    EXPECT_TRUE(console::progress_due(console::progress_mode::plain, std::nullopt, 10.0));
    EXPECT_FALSE(console::progress_due(console::progress_mode::plain, 10.0, 19.9));
    EXPECT_TRUE(console::progress_due(console::progress_mode::plain, 10.0, 20.0));
    EXPECT_FALSE(console::progress_due(console::progress_mode::off, std::nullopt, 100.0));
    EXPECT_FALSE(console::progress_due(console::progress_mode::off, 0.0, 100.0));
}

} // namespace
} // namespace pacer::run

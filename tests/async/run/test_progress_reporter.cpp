// The progress reporter of run and serve with its own thread drawing the line: what a phase
// leaves on screen when it ends (the line's text and when one is due: tests/unit/run/
// test_progress.cpp). The counters are bumped here while the thread reads them (TSan in CI).

#include <pacer/console/progress.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace pacer::run {
namespace {

std::string contents(std::FILE* f) {
    std::fflush(f);
    std::rewind(f);
    std::string s;
    for (int c; (c = std::fgetc(f)) != EOF;)
        s += static_cast<char>(c);
    return s;
}

// A phase shorter than the 10 s period still leaves its last plain line, with the totals.
TEST(ProgressReporter, PlainModePrintsALastLineWhenThePhaseEnds) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    {
        console::progress_reporter r(console::progress_mode::plain, f);
        r.begin("level c2", std::nullopt);
        r.counters().bump(&session::live_counters::started);
        r.counters().bump(&session::live_counters::packets_sent);
        r.end();
    }
    const auto text = contents(f);
    std::fclose(f);
    EXPECT_EQ(text.rfind("progress level c2  0s  sessions 1 active, 0 done, 0 failed  packets 1 "
                         "sent",
                         0),
              0u)
        << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

TEST(ProgressReporter, TerminalModeLeavesACleanLineAndOffPrintsNothing) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    {
        console::progress_reporter r(console::progress_mode::terminal, f);
        r.begin("", 1.0);
        r.end();
    }
    const auto text = contents(f);
    // Whether the thread drew a line before the end is timing; the end leaves none on screen.
    EXPECT_TRUE(text.empty() || text.ends_with("\r\033[K")) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos);
    std::rewind(f);
    std::FILE* g = std::tmpfile();
    {
        console::progress_reporter r(console::progress_mode::off, g);
        r.begin("", 1.0);
        r.end();
    }
    EXPECT_EQ(contents(g), "");
    std::fclose(f);
    std::fclose(g);
}

} // namespace
} // namespace pacer::run

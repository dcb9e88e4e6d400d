// The live progress line (--progress) and the report.html that run and serve leave at the end
// (--no-report), as a user sees them. Here stderr is a pipe: `always` prints the plain form.

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <cstdlib>
#include <sstream>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> progress_lines(const std::string& out) {
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("progress ", 0) == 0)
            lines.push_back(line);
    return lines;
}

TEST(ProgressE2E, RunAlwaysPrintsTheLastPlainLineBeforeTheTableAndLeavesAReport) {
    temp_dir t;
    const auto out = t / "run";
    const auto r =
        run_pacer({"run", "-c", "4", "-d", "2s", "--progress", "always", "-o", out.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto lines = progress_lines(r.out);
    ASSERT_FALSE(lines.empty()) << r.out;
    // The last line comes when the run ends: every session has ended, 25 packets each.
    EXPECT_NE(lines.back().find("sessions 0 active, 4 done, 0 failed  packets 100 sent"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("\033["), std::string::npos) << "no terminal control into a pipe";
    // Issue 33 item 15: the header comes when the run starts, above the progress lines (on a
    // terminal it used to appear only once the run was over).
    ASSERT_NE(r.out.find("pacer run: 4 sessions x 2s of silence against "), std::string::npos)
        << r.out;
    EXPECT_LT(r.out.find("pacer run: 4 sessions"), r.out.find(lines.front())) << r.out;
    EXPECT_LT(r.out.find(lines.back()), r.out.find("  sessions   ")) << r.out;
    // report.html beside summary.json, named in the results line.
    EXPECT_TRUE(fs::exists(out / "summary.json"));
    const auto html = slurp(out / "report.html");
    EXPECT_NE(html.find("<svg id=\"plot-deviation-cdf\""), std::string::npos);
    EXPECT_NE(r.out.find((out / "report.html").string()), std::string::npos) << r.out;
}

TEST(ProgressE2E, RunNeverPrintsNoProgressAndNoReportWritesNone) {
    temp_dir t;
    const auto out = t / "run";
    const auto r = run_pacer(
        {"run", "-c", "2", "-d", "1s", "--progress", "never", "--no-report", "-o", out.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    EXPECT_TRUE(progress_lines(r.out).empty()) << r.out;
    EXPECT_TRUE(fs::exists(out / "summary.json"));
    EXPECT_FALSE(fs::exists(out / "report.html"));
    EXPECT_EQ(r.out.find("report.html"), std::string::npos) << r.out;
    // auto with stderr a pipe: no progress either.
    const auto a = run_pacer({"run", "-c", "1", "-d", "0.4s", "-o", (t / "auto").string()});
    ASSERT_TRUE(finished(a.exit_code)) << a.out;
    EXPECT_TRUE(progress_lines(a.out).empty()) << a.out;
    EXPECT_TRUE(fs::exists(t / "auto" / "report.html"));
}

// --processes: the parent writes the pooled folder's report; its workers (whose stderr is their
// log) write none and print no progress line (the parent prints the one line, below).
TEST(ProgressE2E, ProcessesParentWritesThePooledReportOnly) {
    temp_dir t;
    const auto out = t / "pooled";
    const auto r = run_pacer({"run", "--processes", "2", "-c", "1", "-d", "0.4s", "--progress",
                              "always", "-o", out.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    EXPECT_TRUE(fs::exists(out / "report.html"));
    EXPECT_FALSE(fs::exists(out / "worker-0" / "report.html"));
    EXPECT_FALSE(fs::exists(out / "worker-1" / "report.html"));
    EXPECT_TRUE(progress_lines(slurp(out / "worker-0.log")).empty());
    EXPECT_TRUE(progress_lines(slurp(out / "worker-1.log")).empty());
}

// --processes: the parent's one line pools its workers' live totals; its last line, printed
// when every worker has ended and before the table, counts every session of every worker.
TEST(ProgressE2E, ProcessesParentPrintsOneLinePoolingItsWorkers) {
    temp_dir t;
    const auto out = t / "pooled";
    const auto r = run_pacer({"run", "--processes", "2", "-c", "2", "-d", "1s", "--progress",
                              "always", "-o", out.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto lines = progress_lines(r.out);
    ASSERT_FALSE(lines.empty()) << r.out;
    EXPECT_EQ(lines.back().rfind("progress 2 processes  ", 0), 0u) << lines.back();
    // 2 workers x 2 sessions, 13 packets each.
    EXPECT_NE(lines.back().find("sessions 0 active, 4 done, 0 failed  packets 52 sent"),
              std::string::npos)
        << r.out;
    EXPECT_LT(r.out.find(lines.back()), r.out.find("pacer run: 2 processes")) << r.out;
    EXPECT_EQ(r.out.find("\033["), std::string::npos) << "no terminal control into a pipe";
    const auto s = read_json(out / "summary.json");
    EXPECT_EQ(at(s, {"pacing", "packets", "sent"}).to_number<std::uint64_t>(), 52u);
}

TEST(ProgressE2E, OpenLoopProcessesParentPoolsItsWorkers) {
    temp_dir t;
    const auto out = t / "open";
    const auto r = run_pacer({"run", "--processes", "2", "--rate", "20", "--sessions", "5", "-d",
                              "1s", "--progress", "always", "-o", out.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto lines = progress_lines(r.out);
    ASSERT_FALSE(lines.empty()) << r.out;
    // Arrivals 0, 2, 4 in worker 0 and 1, 3 in worker 1: five sessions, 13 packets each.
    EXPECT_NE(lines.back().find("sessions 0 active, 5 done, 0 failed  packets 65 sent"),
              std::string::npos)
        << r.out;
}

TEST(ProgressE2E, ServeLeavesOneReportForTheSweepAndShowsTheLevel) {
    temp_dir t;
    const auto out = t / "sweep";
    const auto r = run_pacer({"serve", "--concurrencies", "1,2", "-d", "1s", "--progress", "always",
                              "-o", out.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto lines = progress_lines(r.out);
    ASSERT_EQ(lines.size() >= 2, true) << r.out; // at least the last line of each level
    EXPECT_NE(r.out.find("progress level c1 "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("progress level c2 "), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(out / "report.html"));
    EXPECT_FALSE(fs::exists(out / "c1" / "report.html"));
    EXPECT_FALSE(fs::exists(out / "c2" / "report.html"));
    EXPECT_NE(r.out.find((out / "report.html").string()), std::string::npos) << r.out;

    const auto n =
        run_pacer({"serve", "-c", "1", "-d", "0.4s", "--no-report", "-o", (t / "none").string()});
    ASSERT_TRUE(finished(n.exit_code)) << n.out;
    EXPECT_TRUE(fs::exists(t / "none" / "summary.json"));
    EXPECT_FALSE(fs::exists(t / "none" / "report.html"));
    EXPECT_TRUE(progress_lines(n.out).empty()) << n.out;
}

} // namespace
} // namespace pacer::test

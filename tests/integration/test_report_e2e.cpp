// `pacer report` and `pacer export` as a user runs them: on the folder of a real `pacer run`,
// and on bad input (one line, exit 2, nothing written).

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <cstdlib>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

std::size_t lines_of(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(ReportE2E, ARunsFolderGetsItsReportAndTables) {
    temp_dir t;
    const auto out = t / "run";
    // The built-in mock; the pacing verdict depends on the loaded CI machine: 0 or 3.
    const auto r = run_pacer({"run", "-c", "3", "-d", "1s", "--no-report", "-o", out.string()});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    const auto summary = read_json(out / "summary.json");

    const auto rep = run_pacer({"report", out.string()});
    ASSERT_EQ(rep.exit_code, 0) << rep.out;
    const auto html = slurp(out / "report.html");
    // The page prints the summary's p99 as written.
    const auto& p99 = at(summary, {"pacing", "pacing_abs_deviation_s", "p99"});
    const std::string key = "data-key=\"pacing.pacing_abs_deviation_s.p99\" data-value=\"";
    const auto k = html.find(key);
    ASSERT_NE(k, std::string::npos);
    EXPECT_EQ(std::strtod(html.c_str() + k + key.size(), nullptr), p99.to_number<double>());
    // The loop lag over time: one maximum per second of the monitors (the run is 1 s of input
    // plus connecting and closing).
    EXPECT_GE(at(summary, {"loop_lag_over_time", "max_s"}).as_array().size(), 1u);
    for (const char* id :
         {"plot-deviation-cdf", "plot-heat-strip", "plot-send-time", "plot-loop-lag-over-time"})
        EXPECT_NE(html.find(std::string("<svg id=\"") + id + "\""), std::string::npos) << id;
    for (const char* banned : {"http://", "https://", "<script", "<link"})
        EXPECT_EQ(html.find(banned), std::string::npos) << banned;

    const auto ex =
        run_pacer({"export", out.string(), "--format", "csv", "-o", (t / "csv").string()});
    ASSERT_EQ(ex.exit_code, 0) << ex.out;
    const auto sent = at(summary, {"pacing", "packets", "sent"}).to_number<std::uint64_t>();
    EXPECT_EQ(lines_of(slurp(t / "csv" / "packets.csv")), 1 + sent);
    EXPECT_EQ(lines_of(slurp(t / "csv" / "sessions.csv")), 1u + 3u);
    const auto jl =
        run_pacer({"export", out.string(), "--format", "jsonl", "-o", (t / "jl").string()});
    ASSERT_EQ(jl.exit_code, 0) << jl.out;
    EXPECT_EQ(lines_of(slurp(t / "jl" / "packets.jsonl")), sent);
}

// --export: run and serve write the tables into their folder at the end, as `pacer export` does.
TEST(ReportE2E, RunAndServeExportTheirTablesAtTheEnd) {
    temp_dir t;
    const auto run = t / "run";
    const auto r = run_pacer(
        {"run", "-c", "2", "-d", "1s", "--no-report", "--export", "csv", "-o", run.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    EXPECT_NE(r.out.find("  tables     " + (run / "tables-csv").string()), std::string::npos)
        << r.out;
    const auto sent = at(read_json(run / "summary.json"), {"pacing", "packets", "sent"})
                          .to_number<std::uint64_t>();
    EXPECT_EQ(lines_of(slurp(run / "tables-csv" / "packets.csv")), 1 + sent);
    EXPECT_EQ(lines_of(slurp(run / "tables-csv" / "sessions.csv")), 1u + 2u);
    EXPECT_FALSE(fs::exists(run / "report.html"));
    // The same tables as `pacer export` writes afterwards.
    ASSERT_EQ(run_pacer({"export", run.string(), "-o", (t / "again").string()}).exit_code, 0);
    EXPECT_EQ(slurp(run / "tables-csv" / "sessions.csv"), slurp(t / "again" / "sessions.csv"));

    // --processes: the parent writes the pooled folder's tables, its workers none.
    const auto pooled = t / "pooled";
    const auto m = run_pacer({"run", "--processes", "2", "-c", "1", "-d", "0.4s", "--export", "csv",
                              "-o", pooled.string()});
    ASSERT_TRUE(finished(m.exit_code)) << m.out;
    EXPECT_EQ(lines_of(slurp(pooled / "tables-csv" / "sessions.csv")), 1u + 2u);
    EXPECT_FALSE(fs::exists(pooled / "worker-0" / "tables-csv"));
    EXPECT_FALSE(fs::exists(pooled / "worker-1" / "tables-csv"));

    const auto sweep = t / "sweep";
    const auto s = run_pacer({"serve", "--concurrencies", "1,2", "-d", "0.5s", "--export", "jsonl",
                              "-o", sweep.string()});
    ASSERT_TRUE(finished(s.exit_code)) << s.out;
    EXPECT_NE(s.out.find("tables     " + (sweep / "tables-jsonl").string()), std::string::npos)
        << s.out;
    EXPECT_TRUE(fs::exists(sweep / "report.html"));
    EXPECT_EQ(lines_of(slurp(sweep / "tables-jsonl" / "levels.jsonl")), 2u);
    EXPECT_EQ(lines_of(slurp(sweep / "tables-jsonl" / "sessions.jsonl")), 1u + 2u);

    // A format it does not know: refused before anything runs.
    for (const char* cmd : {"run", "serve"}) {
        const auto bad = run_pacer(
            {cmd, "-c", "1", "-d", "0.4s", "--export", "xlsx", "-o", (t / "bad").string()});
        EXPECT_EQ(bad.exit_code, 2) << bad.out;
        EXPECT_NE(bad.out.find("xlsx"), std::string::npos) << bad.out;
        EXPECT_FALSE(fs::exists(t / "bad"));
    }
}

// Every refusal is one "pacer: ..." line, exit 2, and leaves the file system as it was.
void expect_refused(std::vector<std::string> args, const std::string& says) {
    const auto r = run_pacer(args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_EQ(lines_of(r.out), 1u) << r.out;
    EXPECT_EQ(r.out.rfind("pacer: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
}

TEST(ReportE2E, BadInputIsOneLineExitTwoAndNothingWritten) {
    temp_dir t;
    fs::create_directories(t / "empty");
    expect_refused({"report", (t / "missing").string()}, "does not exist");
    expect_refused({"report", (t / "empty").string()}, "is not a pacer result folder");
    expect_refused({"export", (t / "empty").string(), "-o", (t / "tables").string()},
                   "is not a pacer result folder");
    EXPECT_TRUE(fs::is_empty(t / "empty"));
    EXPECT_FALSE(fs::exists(t / "tables"));
    expect_refused({"export", (t / "empty").string(), "--format", "xlsx"}, "xlsx");

    // A result folder (a summary is enough to be one) and an existing output.
    fs::create_directories(t / "run");
    {
        std::ofstream(t / "run" / "summary.json")
            << R"({"command":"run","pacing":{"packets":{"sent":0,"late":0}},"pacing_qualified":true})";
        std::ofstream(t / "run" / "report.html") << "keep me";
    }
    // An explicit -o is never overwritten (the folder's own page is: see below).
    expect_refused({"report", (t / "run").string(), "-o", (t / "run" / "report.html").string()},
                   "already exists");
    EXPECT_EQ(slurp(t / "run" / "report.html"), "keep me");
    expect_refused({"report", (t / "run").string(), "-o", (t / "no" / "such" / "r.html").string()},
                   "does not exist");
    EXPECT_FALSE(fs::exists(t / "no"));
    fs::create_directories(t / "out");
    expect_refused({"export", (t / "run").string(), "-o", (t / "out").string()}, "already exists");
    EXPECT_TRUE(fs::is_empty(t / "out"));
    // A run compared with a serve sweep.
    fs::create_directories(t / "sweep");
    std::ofstream(t / "sweep" / "summary.json") << R"({"command":"serve","levels":[]})";
    expect_refused(
        {"report", (t / "run").string(), (t / "sweep").string(), "-o", (t / "cmp.html").string()},
        "cannot compare");
    EXPECT_FALSE(fs::exists(t / "cmp.html"));
    expect_refused({"report", (t / "run").string(), (t / "sweep").string(), (t / "run").string()},
                   "At Most 2");
}

// Issue 33 item 7: `pacer report DIR` makes the folder's own page again: it replaces the
// report.html the run wrote (or an earlier one), where it used to refuse and exit 2.
TEST(ReportE2E, ReportOfAFolderReplacesItsOwnPage) {
    temp_dir t;
    const auto run = run_pacer({"run", "-c", "1", "-d", "0.5s", "-o", (t / "run").string()});
    ASSERT_TRUE(finished(run.exit_code)) << run.out;
    const auto page = t / "run" / "report.html";
    ASSERT_TRUE(fs::exists(page));
    std::ofstream(page) << "an old page";
    const auto r = run_pacer({"report", (t / "run").string()});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const auto html = slurp(page);
    EXPECT_NE(html.find("<h1>pacer report"), std::string::npos);
    EXPECT_FALSE(fs::exists(t / "run" / "report.html.tmp"));
    // Again: still one page, no leftover.
    EXPECT_EQ(run_pacer({"report", (t / "run").string()}).exit_code, 0);
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(t / "run"))
        files += e.path().filename().string().rfind("report", 0) == 0;
    EXPECT_EQ(files, 1u);
}

} // namespace
} // namespace pacer::test

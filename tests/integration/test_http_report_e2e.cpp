// End to end: `pacer http` against `pacer llm-mock` leaves report.html (and, with --export,
// the tables) and prints its progress line (--progress always: plain, stderr a pipe);
// `pacer report` and `pacer export` read its folder, and a --find-capacity folder gets a page of
// its probes. No pacing outcome is asserted: a run exits 0 or 3.

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

// `pacer http ARGS -o OUT` against a fresh `pacer llm-mock MOCK_FLAGS`.
run_result http_against_mock(const fs::path& out, std::vector<std::string> args,
                             std::vector<std::string> mock_flags = {"--ttft-ms", "2", "--itl-ms",
                                                                    "1"}) {
    mock_process mock(mock_flags, "llm-mock");
    std::vector<std::string> a{"http", "--base-url", mock.http_url(), "--model",
                               "m",    "-o",         out.string()};
    a.insert(a.end(), args.begin(), args.end());
    auto r = run_pacer(a);
    EXPECT_EQ(mock.stop(), 0);
    return r;
}

std::vector<std::string> progress_lines(const std::string& out) {
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("progress ", 0) == 0)
            lines.push_back(line);
    return lines;
}

std::size_t line_count(const fs::path& p) {
    const auto text = slurp(p);
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The data-value of the cell whose data-key is `key`.
std::string data_value(const std::string& html, const std::string& key) {
    const auto k = html.find("data-key=\"" + key + "\" data-value=\"");
    if (k == std::string::npos)
        return "";
    const auto start = html.find("data-value=\"", k) + 12;
    return html.substr(start, html.find('"', start) - start);
}

TEST(HttpReportE2E, RunLeavesReportTablesAndAFinalProgressLine) {
    temp_dir t;
    const auto out = t / "run";
    const auto r = http_against_mock(out, {"--rate", "50", "--requests", "20", "--output-len", "4",
                                           "--goodput", "ttft:60000", "--progress", "always",
                                           "--export", "csv"});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    // The last plain line comes when the run ends, before the table.
    const auto lines = progress_lines(r.out);
    ASSERT_FALSE(lines.empty()) << r.out;
    EXPECT_NE(lines.back().find(
                  "requests 20/20 due, 20 dispatched, 0 in flight, 20 done, 0 failed  dispatch "
                  "lag p99 "),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("\033["), std::string::npos) << "no terminal control into a pipe";
    EXPECT_LT(r.out.find(lines.back()), r.out.find("pacer http: 20 requests")) << r.out;
    // report.html with the summary's numbers, named in the results line.
    const auto html = slurp(out / "report.html");
    const auto summary = read_json(out / "summary.json");
    for (const char* id : {"plot-arrivals", "plot-dispatch-lag", "plot-ttft", "plot-e2el",
                           "plot-tpot-itl", "plot-goodput", "plot-errors"})
        EXPECT_NE(html.find(std::string("<svg id=\"") + id + "\""), std::string::npos) << id;
    EXPECT_EQ(std::strtod(data_value(html, "p99_ttft_ms").c_str(), nullptr),
              at(summary, {"p99_ttft_ms"}).to_number<double>());
    EXPECT_EQ(data_value(html, "completed"), "20");
    EXPECT_NE(r.out.find((out / "report.html").string()), std::string::npos) << r.out;
    EXPECT_EQ(at(summary, {"command"}).as_string(), "http");
    EXPECT_NE(html.find("<code>"), std::string::npos); // the command line
    // --export csv: one row per request, one per token.
    EXPECT_EQ(line_count(out / "tables-csv" / "requests.csv"), 21u);
    EXPECT_EQ(line_count(out / "tables-csv" / "tokens.csv"), 81u);
    EXPECT_NE(r.out.find((out / "tables-csv").string()), std::string::npos) << r.out;

    // pacer export and pacer report read the folder again.
    const auto e = run_pacer({"export", out.string(), "--format", "jsonl"});
    ASSERT_EQ(e.exit_code, 0) << e.out;
    EXPECT_EQ(read_jsonl(out / "tables-jsonl" / "requests.jsonl").size(), 20u);
    EXPECT_NE(e.out.find("pacer export: http run as jsonl"), std::string::npos) << e.out;
    const auto again = t / "again.html";
    const auto p = run_pacer({"report", out.string(), "-o", again.string()});
    ASSERT_EQ(p.exit_code, 0) << p.out;
    EXPECT_NE(p.out.find("http run (20 requests)"), std::string::npos) << p.out;
    EXPECT_TRUE(fs::exists(again));
    // Two http runs are not compared: one line, exit 2, nothing written.
    const auto c = run_pacer({"report", out.string(), out.string(), "-o", (t / "c.html").string()});
    EXPECT_EQ(c.exit_code, 2) << c.out;
    EXPECT_NE(c.out.find("does not compare http runs"), std::string::npos) << c.out;
    EXPECT_FALSE(fs::exists(t / "c.html"));
}

TEST(HttpReportE2E, NoReportAndProgressNeverLeaveNeither) {
    temp_dir t;
    const auto out = t / "run";
    const auto r = http_against_mock(out, {"--rate", "50", "--requests", "5", "--output-len", "2",
                                           "--no-report", "--progress", "never"});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    EXPECT_TRUE(fs::exists(out / "summary.json"));
    EXPECT_FALSE(fs::exists(out / "report.html"));
    EXPECT_TRUE(progress_lines(r.out).empty()) << r.out;
    EXPECT_EQ(r.out.find("report.html"), std::string::npos) << r.out;
    // auto with stderr a pipe: no line either, the report is written.
    const auto a = http_against_mock(t / "auto", {"--rate", "50", "--requests", "3"});
    ASSERT_TRUE(a.exit_code == 0 || a.exit_code == 3) << a.out;
    EXPECT_TRUE(progress_lines(a.out).empty()) << a.out;
    EXPECT_TRUE(fs::exists(t / "auto" / "report.html"));
}

// Every probe misses a 1 ms E2EL SLO: the search halves the rate until --duration holds no
// arrival. The folder gets a page of its probes; each probe's folder its own page.
TEST(HttpReportE2E, CapacitySearchLeavesAPageOfItsProbes) {
    temp_dir t;
    const auto out = t / "search";
    const auto r =
        http_against_mock(out,
                          {"--rate", "4", "--duration", "1s", "--output-len", "2", "--goodput",
                           "e2el:1", "--find-capacity", "--capacity-steps", "1", "--export", "csv"},
                          {"--ttft-ms", "30", "--itl-ms", "1"});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    const auto html = slurp(out / "report.html");
    EXPECT_NE(html.find("<svg id=\"plot-capacity-goodput\""), std::string::npos);
    EXPECT_NE(html.find("no probed rate met the SLOs"), std::string::npos);
    const auto doc = read_json(out / "capacity.json");
    const auto& probes = at(doc, {"probes"}).as_array();
    ASSERT_FALSE(probes.empty());
    EXPECT_EQ(data_value(html, "probes[0].rate"), "4");
    for (const auto& p : probes)
        EXPECT_TRUE(fs::exists(out / std::string(at(p, {"folder"}).as_string()) / "report.html"));
    EXPECT_EQ(line_count(out / "tables-csv" / "probes.csv"), probes.size() + 1);
}

} // namespace
} // namespace pacer::test

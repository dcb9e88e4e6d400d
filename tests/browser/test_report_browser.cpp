// report.html in a real browser: headless Chromium opens each kind of report that real pacer
// processes wrote (closed-loop run, open-loop run, merged --processes run, serve sweep, and a
// comparison of two runs). The page must log nothing to the console (it has no script: any
// console line is a fault, e.g. an uncaught error), every plot the kind has must be in the
// rendered DOM with drawn marks, and a screenshot must hold far more than a blank page's.
//
// Skipped, with the reason, when no `chromium` is on PATH; `scripts/test.sh` installs it for
// the plain build (ctest label `browser`). The pacing verdicts of the runs are not asserted.

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "fakes.hpp"
#include "integration/process.hpp"
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

/// The first `chromium` (or `chromium-browser`) on PATH, or "".
std::string find_chromium() {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');)
        for (const char* name : {"chromium", "chromium-browser"}) {
            const fs::path p = fs::path(dir) / name;
            if (!dir.empty() && ::access(p.c_str(), X_OK) == 0)
                return p.string();
        }
    return "";
}

std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

struct browser_run {
    int exit_code = -1;
    std::string log; ///< Chromium's stderr (its log, with the page's console lines)
};

/// The page's console messages in Chromium's log ("...:CONSOLE:...] "message", source: ...").
std::vector<std::string> console_lines(const std::string& log) {
    std::vector<std::string> out;
    std::stringstream in(log);
    for (std::string line; std::getline(in, line);)
        if (line.find(":CONSOLE") != std::string::npos ||
            line.find("Uncaught") != std::string::npos)
            out.push_back(line);
    return out;
}

std::vector<std::string> plot_ids(const std::string& dom) {
    std::vector<std::string> ids;
    const std::string open = "<svg id=\"";
    for (auto p = dom.find(open); p != std::string::npos; p = dom.find(open, p + 1)) {
        const auto b = p + open.size();
        ids.push_back(dom.substr(b, dom.find('"', b) - b));
    }
    return ids;
}

/// The rendered `<svg id="ID">` element, or "".
std::string svg_of(const std::string& dom, const std::string& id) {
    const auto b = dom.find("<svg id=\"" + id + "\"");
    if (b == std::string::npos)
        return "";
    const auto e = dom.find("</svg>", b);
    return e == std::string::npos ? "" : dom.substr(b, e - b);
}

/// The x-axis tick labels of an xy plot (the centred texts under its frame, y 269 of 300).
std::vector<std::string> x_ticks(const std::string& svg) {
    std::vector<std::string> out;
    const std::string tick = "y=\"269.0\" font-size=\"11\" text-anchor=\"middle\">";
    for (auto p = svg.find(tick); p != std::string::npos; p = svg.find(tick, p + 1)) {
        const auto b = p + tick.size();
        out.push_back(svg.substr(b, svg.find('<', b) - b));
    }
    return out;
}

/// Data marks: points, bars, cells and lines that carry their value as a hover title.
std::size_t marks(const std::string& svg) {
    std::size_t n = 0;
    for (const char* end : {"</title></rect>", "</title></circle>", "</title></polyline>"})
        for (auto p = svg.find(end); p != std::string::npos; p = svg.find(end, p + 1))
            ++n;
    return n;
}

struct png_info {
    bool valid = false;
    std::uint32_t width = 0, height = 0;
    std::uintmax_t bytes = 0;
};

png_info read_png(const fs::path& file) {
    png_info info;
    const std::string data = slurp(file);
    static const std::string signature = "\x89PNG\r\n\x1a\n";
    if (data.size() < 24 || data.compare(0, 8, signature) != 0 || data.compare(12, 4, "IHDR") != 0)
        return info;
    auto be32 = [&](std::size_t at) {
        std::uint32_t v = 0;
        for (std::size_t i = 0; i < 4; ++i)
            v = (v << 8) | static_cast<unsigned char>(data[at + i]);
        return v;
    };
    info.valid = true;
    info.width = be32(16);
    info.height = be32(20);
    info.bytes = data.size();
    return info;
}

class ReportBrowser : public ::testing::Test {
protected:
    static constexpr int width = 1280, height = 4000;

    void SetUp() override {
        chromium_ = find_chromium();
        if (chromium_.empty())
            GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium; "
                            "scripts/test.sh installs it): the reports are not opened in a browser";
    }

    /// Chromium, headless, on a fresh profile; stdout to `stdout_file`, its log kept.
    browser_run open(const fs::path& page, const std::string& mode, const fs::path& stdout_file) {
        const fs::path profile = work_ / ("profile-" + std::to_string(runs_++));
        const fs::path log = work_ / "chromium.log";
        std::string cmd = "timeout -k 5 90 " + quote(chromium_) +
                          " --headless --no-sandbox --disable-gpu --disable-background-networking"
                          " --disable-component-update --disable-sync --no-first-run"
                          " --hide-scrollbars --enable-logging=stderr --v=0 --user-data-dir=" +
                          quote(profile.string()) + " " + mode + " " +
                          quote("file://" + fs::absolute(page).string()) + " >" +
                          quote(stdout_file.string()) + " 2>" + quote(log.string());
        child sh({"/bin/sh", "-c", cmd});
        sh.read_all();
        browser_run r;
        r.exit_code = sh.wait();
        r.log = slurp(log);
        fs::remove_all(profile);
        return r;
    }

    /// The rendered DOM of `page` (--dump-dom); fails the test on any console line.
    std::string rendered_dom(const fs::path& page) {
        const fs::path dom = work_ / (page.stem().string() + "-dom.html");
        const auto r = open(page, "--dump-dom", dom);
        EXPECT_EQ(r.exit_code, 0) << r.log;
        for (const auto& line : console_lines(r.log))
            ADD_FAILURE() << page << " logged on the console: " << line;
        return slurp(dom);
    }

    png_info screenshot(const fs::path& page, const fs::path& png) {
        const auto r = open(page,
                            "--window-size=" + std::to_string(width) + "," +
                                std::to_string(height) + " --screenshot=" + quote(png.string()),
                            work_ / "screenshot.out");
        EXPECT_EQ(r.exit_code, 0) << r.log;
        for (const auto& line : console_lines(r.log))
            ADD_FAILURE() << page << " logged on the console: " << line;
        return read_png(png);
    }

    /// The size of a screenshot of an empty page: what "nothing drawn" compresses to.
    std::uintmax_t blank_bytes() {
        const fs::path blank = work_ / "blank.html";
        std::ofstream(blank) << "<!DOCTYPE html><html><body></body></html>\n";
        const auto png = screenshot(blank, work_ / "blank.png");
        EXPECT_TRUE(png.valid);
        return png.bytes;
    }

    /// Opens `page`: no console line, each of `expected` plots drawn, a screenshot with far
    /// more in it than a blank page. Returns the screenshot's size.
    std::uintmax_t expect_renders(const fs::path& page, const std::vector<std::string>& expected) {
        EXPECT_TRUE(fs::exists(page)) << page;
        const auto dom = rendered_dom(page);
        last_dom_ = dom;
        EXPECT_NE(dom.find("<h1>pacer report"), std::string::npos) << dom.substr(0, 300);
        const auto ids = plot_ids(dom);
        for (const auto& id : expected) {
            EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id << " missing";
            EXPECT_GT(marks(svg_of(dom, id)), 0u) << id << " has nothing drawn";
        }
        const auto png = screenshot(page, work_ / (page.stem().string() + ".png"));
        EXPECT_TRUE(png.valid) << page;
        EXPECT_EQ(png.width, static_cast<std::uint32_t>(width));
        EXPECT_EQ(png.height, static_cast<std::uint32_t>(height));
        // Text, tables and plots compress far worse than one colour.
        EXPECT_GT(png.bytes, 5 * blank_bytes()) << page;
        return png.bytes;
    }

    static std::vector<std::string> run_plots() {
        return {"plot-deviation-cdf", "plot-deviation-over-time", "plot-heat-strip",
                "plot-loop-lag",      "plot-loop-lag-over-time",  "plot-send-time"};
    }

    /// Issue 33 item 17: the late-packets plot draws the late packets, or says there were none
    /// (no empty 0-1 chart); and the "stall: 80 ms" label of the send-time plot stays inside
    /// the plot, clear of the legend right of it (x 72..590 of the 800-wide plot).
    void expect_late_and_stall_plots(const fs::path& folder) {
        const auto dom = rendered_dom(folder / "report.html");
        const auto late = at(read_json(folder / "summary.json"), {"pacing", "packets", "late"})
                              .to_number<std::uint64_t>();
        const auto late_svg = svg_of(dom, "plot-late-over-time");
        ASSERT_FALSE(late_svg.empty());
        if (late == 0) {
            EXPECT_NE(late_svg.find("no late packets"), std::string::npos) << late_svg;
            EXPECT_EQ(marks(late_svg), 0u) << late_svg;
        } else {
            EXPECT_GT(marks(late_svg), 0u) << late_svg;
        }
        const auto send = svg_of(dom, "plot-send-time");
        const auto label = send.find(">stall: 80 ms</text>");
        ASSERT_NE(label, std::string::npos) << send;
        const auto open = send.rfind("<text", label);
        const std::string tag = send.substr(open, label - open);
        const auto x_at = tag.find("x=\"") + 3;
        const double x = std::strtod(tag.c_str() + x_at, nullptr);
        if (tag.find("text-anchor=\"end\"") != std::string::npos) {
            EXPECT_LE(x, 590) << tag;
        } else {
            EXPECT_LE(x + 6.5 * 12, 590) << tag << ": the label runs into the legend";
        }
    }

    fs::path dir(const std::string& name) const { return work_ / name; }

    static void expect_ran(const run_result& r) {
        // The pacing verdict depends on the loaded machine: 0 or 3.
        EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    }

    std::string chromium_;
    std::string last_dom_; ///< the rendered DOM of expect_renders' page
    temp_dir tmp_;
    fs::path work_ = [this] {
        fs::create_directories(tmp_.path());
        return tmp_.path();
    }();
    int runs_ = 0;
};

// The harness itself: a page that throws is caught by the console scan.
TEST_F(ReportBrowser, AConsoleErrorIsCaught) {
    const fs::path page = dir("throws.html");
    std::ofstream(page) << "<!DOCTYPE html><html><body><p>x</p>"
                           "<script>throw new Error('planted')</script></body></html>\n";
    const auto r = open(page, "--dump-dom", dir("throws.out"));
    EXPECT_EQ(r.exit_code, 0) << r.log;
    const auto lines = console_lines(r.log);
    ASSERT_FALSE(lines.empty()) << r.log;
    EXPECT_NE(lines[0].find("planted"), std::string::npos) << lines[0];
}

// With telemetry from the tests' fake NVML (one GPU at a constant 100 W, 40 % busy), the page
// also plots power and utilisation, and prints the summary's energy.
TEST_F(ReportBrowser, ClosedLoopRun) {
    const fs::path script = dir("nvml-script");
    std::ofstream(script) << "devices 1\npower_mw 0 const 100000\nutil_gpu 0 const 40\n";
    ::setenv("PACER_FAKE_NVML_SCRIPT", script.c_str(), 1); // the pacer child inherits it
    const auto r =
        run_pacer({"run", "-c", "4", "-d", "2s", "--gpu-telemetry", "nvml", "--nvml-library",
                   fake_nvml_library().string(), "--telemetry-interval", "50ms", "--idle-baseline",
                   "0", "-o", dir("run").string()});
    ::unsetenv("PACER_FAKE_NVML_SCRIPT");
    expect_ran(r);
    auto plots = run_plots();
    plots.insert(plots.end(), {"plot-power", "plot-utilization"});
    expect_renders(dir("run") / "report.html", plots);
    const auto& dom = last_dom_;
    EXPECT_NE(svg_of(dom, "plot-power").find("GPU power over time"), std::string::npos);
    EXPECT_NE(svg_of(dom, "plot-power").find(", 100 W"), std::string::npos);
    EXPECT_NE(svg_of(dom, "plot-utilization").find(", 40 %"), std::string::npos);
    const std::string key = "data-key=\"telemetry.energy_j\" data-value=\"";
    const auto at = dom.find(key);
    ASSERT_NE(at, std::string::npos);
    const double shown = std::strtod(dom.c_str() + at + key.size(), nullptr);
    const auto summary = read_json(dir("run") / "summary.json");
    EXPECT_DOUBLE_EQ(shown, summary.at("telemetry").at("energy_j").to_number<double>());
    EXPECT_GT(shown, 0);
    expect_late_and_stall_plots(dir("run"));
}

// An open loop in stages (issue 33): a constant 4/s for 0.5 s, then a ramp from 4 to 12/s over
// 0.5 s; constant arrivals, so exactly 2 and 4 of them. The page has the offered-vs-achieved
// plot per stage, and its rows are summary.json's.
TEST_F(ReportBrowser, OpenLoopRun) {
    expect_ran(run_pacer({"run", "--arrival", "constant", "--stages", "0.5s:4/s,0.5s:4-12/s",
                          "--max-concurrency", "3", "-d", "1s", "-o", dir("open").string()}));
    auto plots = run_plots();
    plots.insert(plots.end(),
                 {"plot-arrivals", "plot-stages", "plot-dispatch-lag", "plot-latency"});
    expect_renders(dir("open") / "report.html", plots);
    expect_late_and_stall_plots(dir("open"));
    const auto summary = read_json(dir("open") / "summary.json");
    EXPECT_EQ(at(summary, {"open_loop", "schedule", "stages"}).as_string(),
              "500ms:4/s,500ms:4-12/s");
    const auto& rows = at(summary, {"open_loop", "stages"}).as_array();
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].at("offered").to_number<int>(), 2);
    EXPECT_EQ(rows[1].at("offered").to_number<int>(), 4);
    const auto dom = rendered_dom(dir("open") / "report.html");
    const auto stages = svg_of(dom, "plot-stages");
    for (const char* words : {"1: 500ms:4/s", "2: 500ms:4-12/s", "offered (scheduled in the stage)",
                              "achieved (dispatched in the stage)"})
        EXPECT_NE(stages.find(words), std::string::npos) << words;
    for (std::size_t i = 0; i < rows.size(); ++i)
        for (const char* key : {"offered", "achieved", "completed"}) {
            const auto cell = "data-key=\"open_loop.stages[" + std::to_string(i) + "]." + key +
                              "\" data-value=\"" + boost::json::serialize(rows[i].at(key)) + "\"";
            EXPECT_NE(dom.find(cell), std::string::npos) << cell;
        }
    // 2 arrivals in 0.5 s, then 4 in 0.5 s.
    EXPECT_NE(dom.find("data-key=\"open_loop.stages[0].offered_per_s\" data-value=\"4\""),
              std::string::npos);
    EXPECT_NE(dom.find("data-key=\"open_loop.stages[1].offered_per_s\" data-value=\"8\""),
              std::string::npos);
    EXPECT_NE(svg_of(dom, "plot-arrivals").find("stage 1 ends"), std::string::npos);
    // Issue 33 item 17: the open loop's plots over time share one time axis.
    const auto axis = x_ticks(svg_of(dom, "plot-deviation-over-time"));
    EXPECT_GE(axis.size(), 2u);
    for (const char* id : {"plot-loop-lag-over-time", "plot-arrivals"})
        EXPECT_EQ(x_ticks(svg_of(dom, id)), axis) << id;
    if (marks(svg_of(dom, "plot-late-over-time")) > 0) {
        EXPECT_EQ(x_ticks(svg_of(dom, "plot-late-over-time")), axis);
    }
}

TEST_F(ReportBrowser, MergedRunOfProcesses) {
    expect_ran(run_pacer(
        {"run", "--processes", "2", "-c", "2", "-d", "1s", "-o", dir("merged").string()}));
    expect_renders(dir("merged") / "report.html", run_plots());
}

TEST_F(ReportBrowser, ServeSweep) {
    mock_process mock({}, "native-mock");
    const auto r = run_pacer({"serve", "--url", mock.url(), "--concurrencies", "1,2", "-d", "1s",
                              "--slo", "ttfa-p95=1.5s", "-o", dir("sweep").string()});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    expect_renders(dir("sweep") / "report.html",
                   {"plot-ttfa", "plot-underrun", "plot-unit-miss", "plot-gap-excess",
                    "plot-deviation-cdf", "plot-send-time"});
    // Issue 33 item 17: the TTFA scale is the data's; an SLO more than twice above the data is
    // named above the scale rather than flattening the data into a line at the bottom.
    const auto dom = rendered_dom(dir("sweep") / "report.html");
    const auto ttfa = svg_of(dom, "plot-ttfa");
    double worst_ms = 0;
    const auto summary = read_json(dir("sweep") / "summary.json"); // outlives the loop
    for (const auto& level : at(summary, {"levels"}).as_array())
        if (const auto* p95 = level.as_object().if_contains("aggregate"))
            if (const auto* v = p95->as_object().if_contains("ttfa_s"); v && v->is_object())
                if (const auto* x = v->as_object().if_contains("p95"); x && x->is_number())
                    worst_ms = std::max(worst_ms, x->to_number<double>() * 1e3);
    if (worst_ms > 0 && 2 * worst_ms < 1500) {
        EXPECT_NE(ttfa.find("SLO ttfa-p95 ≤ 1500 (above the scale)"), std::string::npos) << ttfa;
    } else {
        EXPECT_NE(ttfa.find("SLO ttfa-p95 ≤ 1500"), std::string::npos) << ttfa;
    }
    // The environment table wraps: the page is no wider than the window (measured by a copy of
    // the page with one line of script that writes the document's scroll width into the DOM).
    std::string html = slurp(dir("sweep") / "report.html");
    html.insert(html.rfind("</body>"), "<script>document.body.setAttribute('data-scroll-width', "
                                       "document.documentElement.scrollWidth)</script>");
    std::ofstream(dir("measured.html")) << html;
    const auto measured = rendered_dom(dir("measured.html"));
    const auto attr = measured.find("data-scroll-width=\"");
    ASSERT_NE(attr, std::string::npos);
    const double scroll_width = std::strtod(measured.c_str() + attr + 19, nullptr);
    EXPECT_GT(scroll_width, 0);
    EXPECT_LE(scroll_width, 800) << "the page runs off an 800 px window (headless default)";
    EXPECT_NE(dom.find("<table class=\"env\">"), std::string::npos);
}

// Issue 39: a conversation's per-turn figures in the page of a run and of a sweep, against the
// native mock (its native protocol answers every turn, speech or not): the bars per turn, and
// the per-turn cells holding summary.json's numbers; the sweep's turn table with the SLO's value.
TEST_F(ReportBrowser, ConversationRunAndSweep) {
    mock_process mock({}, "native-mock");
    expect_ran(run_pacer({"run", "--url", mock.url(), "-c", "2", "-d", "0.5s", "--scenario",
                          "barge-in", "-o", dir("talk").string()}));
    auto plots = run_plots();
    plots.push_back("plot-turn-v2v");
    expect_renders(dir("talk") / "report.html", plots);
    const auto dom = last_dom_;
    EXPECT_NE(dom.find("<section id=\"conversation\">"), std::string::npos);
    const auto summary = read_json(dir("talk") / "summary.json");
    const auto& turns = at(summary, {"turns", "by_turn"}).as_array();
    ASSERT_FALSE(turns.empty());
    for (std::size_t j = 0; j < turns.size(); ++j) {
        const std::string key = "turns.by_turn[" + std::to_string(j) + "].answered";
        const auto cell = "data-key=\"" + key + "\" data-value=\"" +
                          boost::json::serialize(turns[j].at("answered")) + "\"";
        EXPECT_NE(dom.find(cell), std::string::npos) << cell;
    }
    const auto r = run_pacer({"serve", "--url", mock.url(), "--concurrencies", "1,2", "-d", "0.5s",
                              "--scenario", "multi-turn", "--slo", "turn-ttfa-p95=5s", "-o",
                              dir("talks").string()});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    expect_renders(dir("talks") / "report.html",
                   {"plot-ttfa", "plot-underrun", "plot-unit-miss", "plot-gap-excess",
                    "plot-turn-v2v", "plot-deviation-cdf", "plot-send-time"});
    EXPECT_NE(svg_of(last_dom_, "plot-turn-v2v").find("SLO turn-ttfa-p95"), std::string::npos);
    EXPECT_NE(last_dom_.find("<table class=\"turn-levels\">"), std::string::npos);
    EXPECT_NE(last_dom_.find("turn-ttfa-p95 "), std::string::npos);
}

TEST_F(ReportBrowser, ComparisonOfTwoRuns) {
    expect_ran(run_pacer({"run", "-c", "2", "-d", "1s", "--no-report", "-o", dir("a").string()}));
    expect_ran(run_pacer({"run", "-c", "4", "-d", "1s", "--no-report", "-o", dir("b").string()}));
    const auto cmp = dir("a-vs-b.html");
    const auto r = run_pacer({"report", dir("a").string(), dir("b").string(), "-o", cmp.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto cmp_bytes =
        expect_renders(cmp, {"plot-deviation-cdf", "plot-loop-lag", "plot-send-time"});
    // A different page draws a different picture.
    const auto r2 = run_pacer({"report", dir("a").string()});
    ASSERT_EQ(r2.exit_code, 0) << r2.out;
    EXPECT_NE(expect_renders(dir("a") / "report.html", run_plots()), cmp_bytes);
}

// A `pacer record` folder (needs espeak-ng for its synthetic dataset).
TEST_F(ReportBrowser, Recording) {
    if (std::system("command -v espeak-ng >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "espeak-ng is not installed (apt-get install espeak-ng): no synthetic "
                        "dataset to record";
    const auto d = run_pacer({"dataset", "synth", "--subsets", "1", "--per-subset", "2", "--min-s",
                              "2", "--max-s", "3", "--seed", "3", "-o", dir("dataset").string()});
    ASSERT_EQ(d.exit_code, 0) << d.out;
    expect_ran(run_pacer({"record", "--dataset", dir("dataset").string(), "-c", "2", "-o",
                          dir("recording").string()}));
    const auto page = dir("recording") / "report.html";
    expect_renders(page, {"plot-deviation-cdf", "plot-deviation-over-time", "plot-heat-strip",
                          "plot-send-time"});
    const auto dom = rendered_dom(page);
    EXPECT_NE(dom.find("id=\"variants\""), std::string::npos);
    EXPECT_NE(dom.find("id=\"statuses\""), std::string::npos);
}

// A `pacer http` run against `pacer llm-mock`, and a --find-capacity folder's page of probes.
TEST_F(ReportBrowser, HttpRunAndCapacitySearch) {
    mock_process mock({"--ttft-ms", "2", "--itl-ms", "1"}, "llm-mock");
    const std::string ws = mock.url(); // ws://127.0.0.1:PORT/...: only the port is the mock's
    const auto colon = ws.rfind(':');
    const std::string base =
        "http://127.0.0.1:" + ws.substr(colon + 1, ws.find('/', colon) - colon - 1);
    expect_ran(run_pacer({"http", "--base-url", base, "--model", "m", "--rate", "40", "--requests",
                          "30", "--output-len", "4", "--max-concurrency", "4", "--goodput",
                          "ttft:50,e2el:100", "-o", dir("http").string()}));
    expect_renders(dir("http") / "report.html",
                   {"plot-arrivals", "plot-dispatch-lag", "plot-ttft", "plot-e2el", "plot-tpot-itl",
                    "plot-goodput", "plot-errors"});
    const auto r =
        run_pacer({"http", "--base-url", base, "--model", "m", "--rate", "20", "--duration", "0.5s",
                   "--output-len", "2", "--goodput", "e2el:1", "--find-capacity",
                   "--capacity-steps", "1", "-o", dir("search").string()});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    expect_renders(dir("search") / "report.html",
                   {"plot-capacity-goodput", "plot-capacity-latency"});
}

// The text of a rendered page's verdict spans, in order.
std::vector<std::string> verdicts(const std::string& dom) {
    std::vector<std::string> out;
    const std::string open = "<span class=\"verdict ";
    for (auto p = dom.find(open); p != std::string::npos; p = dom.find(open, p + 1)) {
        const auto b = dom.find('>', p) + 1;
        out.push_back(
            dom.substr(p + open.size(), dom.find('"', p + open.size()) - p - open.size()) + ": " +
            dom.substr(b, dom.find("</span>", b) - b));
    }
    return out;
}

// Issue 33 item 1: a server nobody reached is said as such; no client verdict, no figure.
TEST_F(ReportBrowser, AnUnreachableServerIsNamedAndNothingIsJudged) {
    const std::string url = "ws://127.0.0.1:" + closed_port() + "/v1/realtime";
    const auto r =
        run_pacer({"run", "--url", url, "-c", "2", "-d", "1s", "-o", dir("run").string()});
    EXPECT_EQ(r.exit_code, 4) << r.out;
    const auto dom = rendered_dom(dir("run") / "report.html");
    const auto v = verdicts(dom);
    ASSERT_EQ(v.size(), 1u) << dom;
    EXPECT_EQ(v[0], "bad: SERVER UNREACHABLE: cannot connect to " + url +
                        ": connection refused. Nothing was measured: no session reached the "
                        "server, no packet was sent.");
    EXPECT_EQ(dom.find("PACING"), std::string::npos) << "a client verdict on nothing measured";
    EXPECT_EQ(dom.find("id=\"figures\""), std::string::npos) << "figures of nothing measured";
    EXPECT_NE(dom.find("id=\"errors-table\""), std::string::npos);

    const auto sweep = run_pacer(
        {"serve", "--url", url, "--concurrencies", "1,2", "-d", "1s", "-o", dir("sweep").string()});
    EXPECT_EQ(sweep.exit_code, 4) << sweep.out;
    const auto page = rendered_dom(dir("sweep") / "report.html");
    const auto sv = verdicts(page);
    ASSERT_FALSE(sv.empty()) << page;
    EXPECT_EQ(sv[0], "bad: SERVER UNREACHABLE: cannot connect to " + url +
                         ": connection refused. Nothing was measured.");
    EXPECT_EQ(page.find("NOT VALID"), std::string::npos) << "a client verdict on nothing measured";
    EXPECT_NE(page.find("server unreachable: nothing measured"), std::string::npos);
    // No serving figure of the level: no unit miss, no underrun.
    EXPECT_EQ(page.find("aggregate.units.unit_miss_rate"), std::string::npos);
    EXPECT_EQ(page.find("aggregate.underrun_ratio"), std::string::npos);
}

// Issue 33 item 2: sessions the server failed or rejected are never shown green, and the page
// has their errors by kind with counts and an example.
TEST_F(ReportBrowser, FailedSessionsAreNeverGreenAndTheirErrorsAreListed) {
    {
        mock_process mock({"--fault", "huge_frame"});
        const auto r = run_pacer(
            {"run", "--url", mock.url(), "-c", "2", "-d", "1s", "-o", dir("huge").string()});
        EXPECT_TRUE(server_failed_exit(r.exit_code)) << r.out;
    }
    const auto summary = read_json(dir("huge") / "summary.json");
    const auto complete = at(summary, {"pacing", "sessions", "complete"}).to_number<int>();
    ASSERT_LT(complete, 2) << "the fault must fail a session";
    const auto dom = rendered_dom(dir("huge") / "report.html");
    const auto v = verdicts(dom);
    ASSERT_EQ(v.size(), 2u) << dom;
    EXPECT_EQ(v[0].rfind("bad: SESSIONS FAILED: " + std::to_string(2 - complete) +
                             " of 2 sessions did not complete",
                         0),
              0u)
        << v[0];
    for (const auto& x : v)
        EXPECT_EQ(x.rfind("good", 0), std::string::npos) << x;
    const auto& kinds = at(summary, {"server", "errors_by_kind"}).as_array();
    ASSERT_FALSE(kinds.empty());
    EXPECT_NE(dom.find("id=\"errors-table\""), std::string::npos);
    for (const auto& k : kinds)
        EXPECT_NE(dom.find("<td>" + std::string(k.at("kind").as_string()) +
                           "</td><td class=\"num\">" +
                           std::to_string(k.at("sessions").to_number<int>()) + "</td>"),
                  std::string::npos)
            << k;
    // Each message the summary has is an example of its kind on the page.
    const auto& messages = at(summary, {"pacing", "errors"}).as_array();
    ASSERT_FALSE(messages.empty());
    EXPECT_NE(dom.find(std::string(messages[0].at("message").as_string()).substr(0, 20)),
              std::string::npos);

    {
        mock_process mock({"--max-sessions", "2"}, "native-mock");
        const auto r = run_pacer({"run", "--url", mock.url(), "-c", "4", "-d", "1s", "--stagger-ms",
                                  "0", "-o", dir("rejected").string()});
        EXPECT_TRUE(server_failed_exit(r.exit_code)) << r.out;
    }
    const auto rs = read_json(dir("rejected") / "summary.json");
    const auto rejected = at(rs, {"pacing", "sessions", "rejected"}).to_number<int>();
    ASSERT_GT(rejected, 0);
    const auto page = rendered_dom(dir("rejected") / "report.html");
    const auto rv = verdicts(page);
    ASSERT_EQ(rv.size(), 2u) << page;
    EXPECT_NE(rv[0].find(std::to_string(rejected) + " rejected by the server"), std::string::npos)
        << rv[0];
    for (const auto& x : rv)
        EXPECT_EQ(x.rfind("good", 0), std::string::npos) << x;
    EXPECT_NE(page.find("<td>admission rejected</td><td class=\"num\">" + std::to_string(rejected) +
                        "</td>"),
              std::string::npos);
}

} // namespace
} // namespace pacer::test

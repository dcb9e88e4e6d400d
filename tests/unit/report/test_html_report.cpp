// report.html and the export tables, built from small result folders written here: the page
// prints the summary's own numbers, draws every plot, references nothing outside itself, and
// the tables have one row per packet and per session.

#include <pacer/report/html_report.hpp>
#include <pacer/report/result_folder.hpp>
#include <pacer/report/svg.hpp>
#include <pacer/report/tables.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "unit/report/page_fixture.hpp"
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace pacer::report;
using namespace pacer::test::page;

// Deviations (seconds) of each session's appends; session i starts at 100 + i x 0.01 s.
using deviations = std::vector<std::vector<double>>;

// samples.json and every session's receipts (send time 0.2 ms, 5 ms for the last append).
void write_sessions(const fs::path& dir, const deviations& devs, double base = 100) {
    json::array samples;
    for (std::size_t i = 0; i < devs.size(); ++i) {
        const double start = base + 0.01 * static_cast<double>(i);
        json::array appends, dev;
        for (std::size_t k = 0; k < devs[i].size(); ++k) {
            const double scheduled = start + 0.080 * static_cast<double>(k);
            const double send = k + 1 == devs[i].size() ? 0.005 : 0.0002;
            appends.push_back(json::object{{"event_id", fmt::format("e{}", k)},
                                           {"seq", k},
                                           {"scheduled_s", scheduled},
                                           {"start_s", scheduled + devs[i][k]},
                                           {"completed_s", scheduled + devs[i][k] + send}});
            dev.push_back(devs[i][k]);
        }
        write(dir / fmt::format("session-{:03}", i) / "input-send-receipts.json",
              json::serialize(json::object{
                  {"session_start_s", start}, {"admitted", true}, {"appends", appends}}));
        samples.push_back(
            json::object{{"index", i}, {"session_start_s", start}, {"deviation_s", dev}});
    }
    write(dir / "samples.json",
          json::serialize(
              json::object{{"schema_version", 1}, {"unit", "seconds"}, {"sessions", samples}}));
}

// A closed-loop run's summary: the figures are made up (the page must print them as written,
// not recompute them). The host name tries to inject markup.
json::object run_summary(double p99, std::uint64_t late) {
    auto dist = [](double p50, double p99_, double max) {
        return json::object{{"n", 15},     {"p50", p50},          {"p90", p50 * 2},
                            {"p99", p99_}, {"p99.9", p99_ * 1.1}, {"max", max},
                            {"mean", p50}};
    };
    return json::object{
        {"schema_version", 1},
        {"command", "run"},
        {"config", json::object{{"concurrency", 3}, {"url", "ws://127.0.0.1:1/v1/realtime"}}},
        {"clock", json::object{{"monotonic_s", 99.5}, {"realtime_s", 1796000000.25}}},
        {"host", "<script>alert(1)</script>"},
        {"pacing", json::object{{"sessions", json::object{{"requested", 3},
                                                          {"admitted", 3},
                                                          {"rejected", 0},
                                                          {"complete", 3},
                                                          {"incomplete", 0},
                                                          {"with_late_packet", late ? 1 : 0}}},
                                {"packets", json::object{{"expected", 15},
                                                         {"sent", 15},
                                                         {"late", late},
                                                         {"late_threshold_s", 0.08}}},
                                {"pacing_qualified", late == 0},
                                {"pacing_deviation_s", dist(0.0001234, p99, 0.12)},
                                {"pacing_abs_deviation_s", dist(0.0001234, p99, 0.12)},
                                {"ws_send_time_s", dist(0.0002, 0.00487654321, 0.005)},
                                {"loop_lag_s", json::object{{"n", 100},
                                                            {"p50", 0.00004},
                                                            {"p90", 0.003},
                                                            {"p99", 0.0123456789},
                                                            {"p99.9", 0.02},
                                                            {"max", 0.025},
                                                            {"over_80ms", 0},
                                                            {"contexts", 1}}},
                                {"trace_channel", json::object{{"waits", 0}, {"wait_s", 0.0}}},
                                {"peak_overlapping_input_streams", 3}}},
        {"pacing_qualified", late == 0},
        // The monitors started 0.2 s before the first append (100 s); a 90 ms stall in second 1.
        {"loop_lag_over_time", json::object{{"interval_s", 1},
                                            {"start_s", 99.8},
                                            {"max_s", json::array{0.001, 0.09, 0.002}}}},
        {"resources", json::object{{"client_cpu_cores", 0.0123}, {"peak_rss_bytes", 10485760}}}};
}

// Three sessions of five appends; session 1's fourth append is 120 ms late.
const deviations three_sessions = {{0.0001, 0.0002, 0.0001, 0.0003, 0.0001},
                                   {0.0001, 0.002, 0.001, 0.120, 0.0005},
                                   {0.00002, 0.00001, 0.004, 0.0001, 0.0002}};

void make_run(const fs::path& dir, double p99 = 0.0456789, std::uint64_t late = 1) {
    write(dir / "summary.json", json::serialize(run_summary(p99, late)));
    write_sessions(dir, three_sessions);
}

std::size_t lines_of(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(report, run_page_prints_the_summary_figures) {
    temp_folder t;
    make_run(t.path());
    const auto folder = read_result_folder(t.path());
    EXPECT_EQ(folder.kind, folder_kind::run);
    ASSERT_EQ(folder.sessions.size(), 3u);
    EXPECT_EQ(folder.packet_count(), 15u);
    const auto html = render_report(folder);
    const auto summary = run_summary(0.0456789, 1);
    for (const auto& key : {std::vector<const char*>{"pacing", "pacing_abs_deviation_s", "p99"},
                            {"pacing", "pacing_abs_deviation_s", "max"},
                            {"pacing", "ws_send_time_s", "p99"},
                            {"pacing", "loop_lag_s", "p99"},
                            {"pacing", "packets", "late"},
                            {"pacing", "packets", "sent"}}) {
        std::string k;
        for (const char* p : key)
            k += (k.empty() ? "" : ".") + std::string(p);
        const auto v = data_value(html, k);
        ASSERT_TRUE(v) << k;
        const json::value* cur = &summary.at(key[0]);
        for (std::size_t i = 1; i < key.size(); ++i)
            cur = &cur->as_object().at(key[i]);
        EXPECT_EQ(std::strtod(v->c_str(), nullptr), cur->to_number<double>()) << k;
    }
    // The displayed text is the same number in milliseconds.
    EXPECT_EQ(cell_text(html, "pacing.pacing_abs_deviation_s.p99"), "45.68 ms");
    EXPECT_EQ(cell_text(html, "pacing.loop_lag_s.p99"), "12.35 ms");
    EXPECT_EQ(cell_text(html, "pacing.packets.late"), "1");
    EXPECT_NE(html.find("PACING UNQUALIFIED"), std::string::npos);
}

TEST(report, run_page_draws_every_plot) {
    temp_folder t;
    make_run(t.path());
    const auto html = render_report(read_result_folder(t.path()));
    for (const char* id : {"plot-deviation-cdf", "plot-deviation-over-time", "plot-late-over-time",
                           "plot-heat-strip", "plot-loop-lag", "plot-send-time"}) {
        const auto svg = svg_of(html, id);
        ASSERT_FALSE(svg.empty()) << id;
        EXPECT_GT(marks(svg), 0u) << id;
    }
    // The 80 ms line, the late interval, every session's row of the heat strip.
    EXPECT_NE(svg_of(html, "plot-deviation-cdf").find("late: 80 ms"), std::string::npos);
    EXPECT_NE(svg_of(html, "plot-deviation-over-time").find("1 late packets"), std::string::npos);
    const auto heat = svg_of(html, "plot-heat-strip");
    for (const char* s : {"session 0", "session 1", "session 2"})
        EXPECT_NE(heat.find(s), std::string::npos) << s;
    EXPECT_EQ(svg_of(html, "plot-arrivals"), ""); // open loop only
}

TEST(report, loop_lag_over_time_is_on_the_packets_time_axis) {
    temp_folder t;
    make_run(t.path());
    const auto html = render_report(read_result_folder(t.path()));
    const auto svg = svg_of(html, "plot-loop-lag-over-time");
    ASSERT_FALSE(svg.empty());
    EXPECT_EQ(marks(svg), 5u); // the line, its three points and one red dot:
    // second 1 of the monitors is 0.8-1.8 s after the first append (100.0001 s), over 80 ms.
    EXPECT_NE(svg.find("<title>0.7999–1.8 s: max loop lag 90 ms</title></circle>"),
              std::string::npos)
        << svg;
    EXPECT_NE(svg.find("<title>-0.2001–0.7999 s: max loop lag 1 ms</title>"), std::string::npos)
        << svg;
    EXPECT_NE(svg.find("80 ms"), std::string::npos);

    // A folder written before the series existed says so instead.
    temp_folder old;
    auto s = run_summary(0.0456789, 1);
    s.erase("loop_lag_over_time");
    write(old.path() / "summary.json", json::serialize(s));
    write_sessions(old.path(), three_sessions);
    const auto old_svg =
        svg_of(render_report(read_result_folder(old.path())), "plot-loop-lag-over-time");
    EXPECT_NE(old_svg.find("no loop lag over time"), std::string::npos) << old_svg;
}

TEST(report, page_references_nothing_outside_itself_and_escapes_text) {
    temp_folder t;
    make_run(t.path());
    const auto html = render_report(read_result_folder(t.path()));
    for (const char* banned :
         {"http://", "https://", "<script", "<link", "src=", "href=", "url(", "@import"})
        EXPECT_EQ(html.find(banned), std::string::npos) << banned;
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST(report, open_loop_page_shows_arrivals_dispatch_lag_and_both_latencies) {
    temp_folder t;
    auto s = run_summary(0.001, 0);
    auto dist = [](double p50) {
        return json::object{
            {"n", 3},           {"p50", p50},       {"p75", p50 * 1.1},   {"p90", p50 * 1.2},
            {"p95", p50 * 1.3}, {"p99", p50 * 1.4}, {"p99.9", p50 * 1.5}, {"max", p50 * 1.6},
            {"mean", p50}};
    };
    s["open_loop"] =
        json::object{{"requests", json::object{{"scheduled", 3},
                                               {"dispatched", 3},
                                               {"completed", 3},
                                               {"failed", 0},
                                               {"dropped", 0},
                                               {"not_dispatched", 0}}},
                     {"latency_s", dist(1.25)},
                     {"uncorrected_latency_s", dist(1.0625)},
                     {"dispatch_lag_s", dist(0.0004)},
                     {"deadline_missed", 0},
                     {"schedule_kept", true},
                     {"schedule_kept_thresholds_s",
                      json::object{{"dispatch_lag_p99", 0.005}, {"dispatch_lag_max", 0.08}}},
                     {"cap", json::object{{"max_concurrency", 2},
                                          {"policy", "queue"},
                                          {"binding", true},
                                          {"delayed", 1},
                                          {"delay_s", dist(0.3)},
                                          {"dropped", 0},
                                          {"peak_in_flight", 2}}}};
    write(t.path() / "summary.json", json::serialize(s));
    write_sessions(t.path(), {{0.0001, 0.0002}, {0.0001, 0.0001}, {0.0003, 0.0001}});
    write(t.path() / "schedule.json",
          R"({"arrival":"poisson","rate":10,"offsets_ns":[100000000,250000000,700000000]})");
    const auto folder = read_result_folder(t.path());
    EXPECT_EQ(folder.kind, folder_kind::open_loop);
    EXPECT_EQ(folder.schedule_offsets_s, (std::vector<double>{0.1, 0.25, 0.7}));
    // Shard 1 of 2 ran the schedule's arrivals 1, 3, 5...: its sessions are those.
    {
        temp_folder shard;
        auto sharded = s;
        sharded["shard"] = json::object{{"index", 1}, {"count", 2}};
        write(shard.path() / "summary.json", json::serialize(sharded));
        write(shard.path() / "schedule.json", R"({"offsets_ns":[100000000,250000000,700000000]})");
        EXPECT_EQ(read_result_folder(shard.path()).schedule_offsets_s, (std::vector<double>{0.25}));
    }
    const auto html = render_report(folder);
    for (const char* id : {"plot-arrivals", "plot-dispatch-lag", "plot-latency"}) {
        const auto svg = svg_of(html, id);
        ASSERT_FALSE(svg.empty()) << id;
        EXPECT_GT(marks(svg), 0u) << id;
    }
    for (const auto& [key, value] :
         {std::pair<std::string, double>{"open_loop.latency_s.p99", 1.25 * 1.4},
          {"open_loop.uncorrected_latency_s.p99", 1.0625 * 1.4},
          {"open_loop.dispatch_lag_s.p99", 0.0004 * 1.4},
          {"open_loop.cap.delayed", 1}}) {
        const auto v = data_value(html, key);
        ASSERT_TRUE(v) << key;
        EXPECT_EQ(std::strtod(v->c_str(), nullptr), value) << key;
    }
    EXPECT_NE(html.find("the cap bound"), std::string::npos);
    EXPECT_NE(svg_of(html, "plot-latency").find("uncorrected (from dispatch)"), std::string::npos);
    EXPECT_NE(svg_of(html, "plot-dispatch-lag").find("p99 bound 5 ms"), std::string::npos);
}

// A serve sweep: level 1 valid and within its SLOs, level 2 not valid with TTFA p95 over it.
json::object serve_summary() {
    auto level = [](int c, bool valid, double ttfa_p95, double miss) {
        json::object agg{
            {"attempted_sessions", c},
            {"successful_sessions", c},
            {"rejected_sessions", 0},
            {"ttfa_s", json::object{{"n", c}, {"p50", ttfa_p95 / 2}, {"p95", ttfa_p95}}},
            {"underrun_ratio", 0.001 * c},
            {"output_gap_excess_s", json::object{{"p99", 0.004 * c}}},
            {"units", json::object{{"unit_miss_rate", miss}}}};
        const bool met = ttfa_p95 <= 0.5;
        return json::object{
            {"concurrency", c},
            {"second_try", false},
            {"try", "search"},
            {"attempt", 1},
            {"repeats", 1},
            {"client_timing_valid", valid},
            {"loop_lag_p99_s", valid ? 0.004 : 0.09},
            {"slo", json::object{{"met", met},
                                 {"checks", json::array{json::object{{"name", "ttfa-p95"},
                                                                     {"bound", 0.5},
                                                                     {"value", ttfa_p95},
                                                                     {"met", met}},
                                                        json::object{{"name", "unit-miss-rate"},
                                                                     {"bound", 0.01},
                                                                     {"value", miss},
                                                                     {"met", true}}}}}},
            {"aggregate", agg}};
    };
    auto run = [](int c) {
        json::array sessions;
        for (int i = 0; i < c; ++i)
            sessions.push_back(json::object{{"index", i},
                                            {"status", "succeeded"},
                                            {"admitted", true},
                                            {"ttfa_s", 0.1 * (i + 1)},
                                            {"underrun_ratio", 0.0},
                                            {"units", json::object{{"unit_miss_rate", 0.0}}},
                                            {"errors", json::array{}}});
        return json::object{
            {"concurrency", c}, {"repeat", 1}, {"warmup", false}, {"sessions", sessions}};
    };
    return json::object{
        {"command", "serve"},
        {"config", json::object{{"repeats", 1}, {"profile", "test"}}},
        {"runs", json::array{run(1), run(2)}},
        {"levels", json::array{level(1, true, 0.25, 0.0), level(2, false, 0.75, 0.005)}},
        {"capacity", json::object{{"sessions", 1},
                                  {"first_failing_level", 2},
                                  {"limited_by", "slo"},
                                  {"slo", "ttfa-p95=0.5s"}}},
        {"client_timing_valid", false}};
}

void make_serve(const fs::path& dir) {
    write(dir / "summary.json", json::serialize(serve_summary()));
    write_sessions(dir / "c1", {{0.0001, 0.0002, 0.0003}});
    write_sessions(dir / "c2", {{0.0001, 0.0002, 0.0003}, {0.001, 0.002, 0.003}});
}

TEST(report, serve_page_shows_levels_against_their_slos) {
    temp_folder t;
    make_serve(t.path());
    const auto folder = read_result_folder(t.path());
    EXPECT_EQ(folder.kind, folder_kind::serve);
    ASSERT_EQ(folder.sessions.size(), 3u);
    EXPECT_EQ(folder.packet_count(), 9u);
    const auto html = render_report(folder);
    for (const char* id : {"plot-ttfa", "plot-underrun", "plot-unit-miss", "plot-gap-excess",
                           "plot-deviation-cdf"}) {
        const auto svg = svg_of(html, id);
        ASSERT_FALSE(svg.empty()) << id;
        EXPECT_GT(marks(svg), 0u) << id;
    }
    const auto v = data_value(html, "levels[1].aggregate.ttfa_s.p95");
    ASSERT_TRUE(v);
    EXPECT_EQ(std::strtod(v->c_str(), nullptr), 0.75);
    EXPECT_EQ(cell_text(html, "levels[1].aggregate.ttfa_s.p95"), "750 ms");
    EXPECT_EQ(*data_value(html, "levels[0].aggregate.units.unit_miss_rate"), "0");
    EXPECT_EQ(*data_value(html, "capacity.sessions"), "1");
    const auto ttfa = svg_of(html, "plot-ttfa");
    EXPECT_NE(ttfa.find("SLO ttfa-p95 ≤ 500"), std::string::npos);
    EXPECT_NE(ttfa.find("capacity 1"), std::string::npos);
    EXPECT_NE(ttfa.find("NOT VALID"), std::string::npos); // level 2's verdict on hover
    EXPECT_NE(svg_of(html, "plot-unit-miss").find("SLO unit-miss-rate ≤ 0.01"), std::string::npos);
    EXPECT_NE(html.find("<td class=\"verdict bad\">NOT VALID</td>"), std::string::npos);
}

TEST(report, a_capacity_whose_boundary_did_not_hold_says_so_with_the_searchs_notes) {
    temp_folder t;
    auto summary = serve_summary();
    auto& cap = summary["capacity"].as_object();
    cap["boundary_held"] = false;
    cap["notes"] = json::array{"level 2 met its SLOs on verification <try 2>"};
    write(t.path() / "summary.json", json::serialize(summary));
    write_sessions(t.path() / "c1", {{0.0001, 0.0002, 0.0003}});
    write_sessions(t.path() / "c2", {{0.0001, 0.0002, 0.0003}, {0.001, 0.002, 0.003}});
    const auto html = render_report(read_result_folder(t.path()));
    EXPECT_EQ(*data_value(html, "capacity.boundary_held"), "false");
    EXPECT_NE(html.find("The boundary did not hold when it was run again"), std::string::npos);
    EXPECT_NE(html.find("<li>level 2 met its SLOs on verification &lt;try 2&gt;</li>"),
              std::string::npos)
        << "the note, escaped";
    // A boundary that held gets no warning; a summary without the field (an older search), no row.
    cap["boundary_held"] = true;
    write(t.path() / "summary.json", json::serialize(summary));
    const auto held = render_report(read_result_folder(t.path()));
    EXPECT_EQ(*data_value(held, "capacity.boundary_held"), "true");
    EXPECT_EQ(held.find("did not hold"), std::string::npos);
    temp_folder old;
    make_serve(old.path());
    EXPECT_FALSE(
        data_value(render_report(read_result_folder(old.path())), "capacity.boundary_held"));
}

// Issue 43: the page of a capacity search says how the server held up, from summary.json's
// capacity.recovery: the verdict, each overload (a missed level) with the recovery that followed
// it, and the runs that support the capacity.
TEST(report, a_capacity_search_shows_each_overloads_recovery_and_the_runs_behind_it) {
    temp_folder t;
    auto summary = serve_summary();
    auto& levels = summary["levels"].as_array();
    levels[0].as_object()["folder"] = "c1";
    levels[0].as_object()["server_recovered"] = true;
    levels[1].as_object()["folder"] = "c2";
    levels[1].as_object()["server_recovered"] = true;
    const auto recovery = [](bool recovered, double waited, double canary) {
        return json::object{
            {"recovered", recovered}, {"waited_s", waited},   {"looks", 3},
            {"canary_s", canary},     {"baseline_s", 0.0051}, {"canary_limit_s", 0.0251},
            {"pending", nullptr}};
    };
    auto& cap = summary["capacity"].as_object();
    cap["recovery"] = json::object{
        {"checks", json::array{"canary"}},
        {"max_s", 120.0},
        {"canary_input_s", 2.0},
        {"baseline_s", 0.0051},
        {"canary_limit_s", 0.0251},
        {"stats_pointer", nullptr},
        {"overloads", json::array{json::object{{"level", 2},
                                               {"folder", "c2"},
                                               {"recovery", recovery(true, 18.7, 0.0062)}},
                                  json::object{{"level", 3},
                                               {"folder", "c3"},
                                               {"recovery", recovery(true, 22.04, 0.007)}}}},
        {"verdict", "the server recovered within 23 s after every overload (2 overloads)"}};
    write(t.path() / "summary.json", json::serialize(summary));
    write_sessions(t.path() / "c1", {{0.0001, 0.0002, 0.0003}});
    write_sessions(t.path() / "c2", {{0.0001, 0.0002, 0.0003}, {0.001, 0.002, 0.003}});
    const auto verdict = [](const std::string& html) {
        const std::string k = "data-key=\"capacity.recovery.verdict\">";
        const auto a = html.find(k);
        if (a == std::string::npos)
            return std::string();
        const auto b = a + k.size();
        return html.substr(b, html.find("</span>", b) - b);
    };
    const auto html = render_report(read_result_folder(t.path()));
    EXPECT_EQ(verdict(html), "the server recovered within 23 s after every overload (2 overloads)");
    EXPECT_NE(html.find("<span class=\"verdict good\" data-key=\"capacity.recovery.verdict\">"),
              std::string::npos);
    EXPECT_NE(html.find("(checks: canary, baseline 5.1 ms, limit 25.1 ms; at most 120 s)"),
              std::string::npos);
    // Each overload with the recovery time that followed it, as summary.json has it.
    EXPECT_EQ(cell_text(html, "capacity.recovery.overloads[0].level"), "2");
    EXPECT_EQ(cell_text(html, "capacity.recovery.overloads[0].folder"), "c2");
    EXPECT_EQ(cell_text(html, "capacity.recovery.overloads[0].recovery.waited_s"), "18.7 s");
    EXPECT_EQ(*data_value(html, "capacity.recovery.overloads[1].recovery.waited_s"), "22.04");
    EXPECT_EQ(cell_text(html, "capacity.recovery.overloads[1].recovery.canary_s"), "7 ms");
    EXPECT_EQ(cell_text(html, "capacity.recovery.overloads[1].recovery.recovered"), "yes");
    // The runs behind the answer: the capacity level's and the first failing level's folders.
    const auto support = html.substr(html.find("The runs behind the answer"));
    EXPECT_NE(support.find("data-key=\"levels[0].folder\" data-value=\"c1\""), std::string::npos);
    EXPECT_NE(support.find("data-key=\"levels[1].folder\" data-value=\"c2\""), std::string::npos);

    // A server that stayed degraded: the verdict in red, with the canary against the baseline.
    auto& rec = cap["recovery"].as_object();
    rec["overloads"].as_array()[1].as_object()["recovery"] = recovery(false, 120.4, 0.045);
    rec["verdict"] = "the server stayed degraded after level 3 (canary lag 45 ms vs baseline 5 ms, "
                     "120 s waited)";
    write(t.path() / "summary.json", json::serialize(summary));
    const auto degraded = render_report(read_result_folder(t.path()));
    EXPECT_EQ(verdict(degraded), "the server stayed degraded after level 3 (canary lag 45 ms vs "
                                 "baseline 5 ms, 120 s waited)");
    EXPECT_NE(degraded.find("<span class=\"verdict bad\" data-key=\"capacity.recovery.verdict\">"),
              std::string::npos);
    EXPECT_EQ(cell_text(degraded, "capacity.recovery.overloads[1].recovery.recovered"), "no");
    // A search without recovery (--recovery none) says so; a sweep without a search, nothing.
    rec["checks"] = json::array{};
    rec["overloads"].as_array()[1].as_object()["recovery"] = nullptr;
    rec["verdict"] = "the server's recovery was not watched (--recovery none)";
    write(t.path() / "summary.json", json::serialize(summary));
    const auto unwatched = render_report(read_result_folder(t.path()));
    EXPECT_NE(unwatched.find("did not wait for the server to recover"), std::string::npos);
    EXPECT_NE(unwatched.find("not watched (--recovery none)</td>"), std::string::npos);
    temp_folder old;
    make_serve(old.path());
    EXPECT_EQ(render_report(read_result_folder(old.path())).find("How the server held up"),
              std::string::npos);
}

TEST(report, merged_run_reads_its_parts_where_they_were_moved) {
    temp_folder t;
    // The parts were recorded at paths that no longer exist; they sit in the folder now.
    make_run(t.path() / "worker-0");
    make_run(t.path() / "worker-1");
    // The pooled figures differ from each part's (p99 0.0456789, 1 late): the page prints the
    // pooled summary's, not a part's nor a recomputation.
    auto s = run_summary(0.0321, 2);
    // As `pacer merge` writes it: the loop lag is not poolable, only the worst part's p99.
    s["pacing"].as_object()["loop_lag_s"] =
        json::object{{"worst_part_p99", 0.0234}, {"max", 0.03}, {"over_80ms", 0}};
    s["workers"] = json::array{
        json::object{{"index", 0}, {"dir", "/nonexistent/old/worker-0"}, {"merged", true}},
        json::object{{"index", 1}, {"dir", "/nonexistent/old/worker-1"}, {"merged", true}}};
    write(t.path() / "summary.json", json::serialize(s));
    const auto folder = read_result_folder(t.path());
    EXPECT_EQ(folder.kind, folder_kind::merged);
    EXPECT_EQ(folder.parts.size(), 2u);
    EXPECT_EQ(folder.sessions.size(), 6u);
    EXPECT_EQ(folder.packet_count(), 30u);
    EXPECT_TRUE(folder.notes.empty());
    const auto html = render_report(folder);
    EXPECT_EQ(*data_value(html, "pacing.pacing_abs_deviation_s.p99"), "0.0321");
    EXPECT_EQ(cell_text(html, "pacing.pacing_abs_deviation_s.p99"), "32.1 ms");
    EXPECT_EQ(*data_value(html, "pacing.packets.late"), "2");
    EXPECT_EQ(*data_value(html, "pacing.packets.sent"), "15");
    EXPECT_EQ(*data_value(html, "pacing.loop_lag_s.worst_part_p99"), "0.0234");
    EXPECT_FALSE(data_value(html, "pacing.loop_lag_s.p99"));
    EXPECT_NE(svg_of(html, "plot-heat-strip").find("part 1 session 2"), std::string::npos);
    const auto tables = build_tables(folder);
    EXPECT_EQ(tables[0].columns[0], "part");
}

TEST(report, comparison_puts_both_runs_side_by_side) {
    temp_folder a, b, c;
    make_run(a.path(), 0.0456789, 1);
    make_run(b.path(), 0.0011, 0);
    make_serve(c.path());
    const auto fa = read_result_folder(a.path()), fb = read_result_folder(b.path());
    const auto html = render_comparison(fa, fb);
    EXPECT_EQ(*data_value(html, "A:pacing.pacing_abs_deviation_s.p99"), "0.0456789");
    EXPECT_EQ(*data_value(html, "B:pacing.pacing_abs_deviation_s.p99"), "0.0011");
    EXPECT_NE(html.find("-44.58 ms"), std::string::npos); // B - A, in the delta column
    const auto cdf = svg_of(html, "plot-deviation-cdf");
    EXPECT_NE(cdf.find("<title>A </title>"), std::string::npos);
    EXPECT_NE(cdf.find("<title>B </title>"), std::string::npos);
    EXPECT_THROW(render_comparison(fa, read_result_folder(c.path())), folder_error);
    // Two sweeps: both level tables, each figure keyed by its side.
    const auto serve =
        render_comparison(read_result_folder(c.path()), read_result_folder(c.path()));
    EXPECT_EQ(*data_value(serve, "A:levels[1].aggregate.ttfa_s.p95"), "0.75");
    EXPECT_EQ(*data_value(serve, "B:levels[1].aggregate.ttfa_s.p95"), "0.75");
}

TEST(report, tables_have_units_in_their_columns_and_a_row_per_packet_and_session) {
    temp_folder t;
    make_run(t.path());
    const auto tables = build_tables(read_result_folder(t.path()));
    ASSERT_EQ(tables.size(), 2u);
    const auto& packets = tables[0];
    EXPECT_EQ(packets.name, "packets");
    EXPECT_EQ(packets.columns,
              (std::vector<std::string>{"session", "seq", "scheduled_s", "start_s", "completed_s",
                                        "deviation_s", "send_time_s", "late"}));
    const auto csv = to_csv(packets);
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "session,seq,scheduled_s,start_s,completed_s,deviation_s,send_time_s,late");
    EXPECT_EQ(lines_of(csv), 1u + 15u);
    std::size_t late = 0;
    for (auto p = csv.find(",true\n"); p != std::string::npos; p = csv.find(",true\n", p + 1))
        ++late;
    EXPECT_EQ(late, 1u);
    const auto& sessions = tables[1];
    EXPECT_EQ(lines_of(to_csv(sessions)), 1u + 3u);
    EXPECT_EQ(lines_of(to_jsonl(sessions)), 3u);
    const auto first = json::parse(to_jsonl(sessions).substr(0, to_jsonl(sessions).find('\n')));
    EXPECT_EQ(first.at("packets").as_int64(), 5);
    EXPECT_EQ(first.at("late_packets").as_int64(), 0);
    EXPECT_TRUE(first.at("admitted").as_bool());

    temp_folder s;
    make_serve(s.path());
    const auto st = build_tables(read_result_folder(s.path()));
    ASSERT_EQ(st.size(), 3u);
    EXPECT_EQ(st[0].rows.size(), 9u);
    EXPECT_EQ(st[1].rows.size(), 3u);
    EXPECT_EQ(st[2].name, "levels");
    EXPECT_EQ(st[2].rows.size(), 2u);
    const auto levels_csv = to_csv(st[2]);
    EXPECT_NE(levels_csv.find("ttfa_p95_s"), std::string::npos);
    EXPECT_NE(levels_csv.find("\n2,false,search,1,1,false,false,2,,2,0,0.375,0.75,"),
              std::string::npos)
        << levels_csv;
}

TEST(report, csv_quotes_text_that_needs_it) {
    table t{"x", {"a", "b"}, {{cell(std::string("plain")), cell(std::string("say \"hi\", then"))}}};
    EXPECT_EQ(to_csv(t), "a,b\nplain,\"say \"\"hi\"\", then\"\n");
    EXPECT_EQ(to_jsonl(t), "{\"a\":\"plain\",\"b\":\"say \\\"hi\\\", then\"}\n");
}

TEST(report, bad_folders_are_refused_with_one_line) {
    temp_folder t;
    auto one_line = [](const fs::path& dir) {
        try {
            (void)read_result_folder(dir);
        } catch (const folder_error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(one_line(t.path() / "missing"), (t.path() / "missing").string() + " does not exist");
    EXPECT_NE(one_line(t.path()).find("is not a pacer result folder"), std::string::npos);
    write(t.path() / "summary.json", "{not json");
    EXPECT_NE(one_line(t.path()).find("is not valid JSON"), std::string::npos);
    write(t.path() / "summary.json", R"({"command":"replay"})");
    EXPECT_NE(one_line(t.path()).find("was not written by pacer run, merge, serve or http"),
              std::string::npos);
    for (const auto& m : {one_line(t.path() / "missing"), one_line(t.path())})
        EXPECT_EQ(m.find('\n'), std::string::npos);
}

// Issue 33 item 17: a vertical line's label near the right edge ends left of its line instead
// of running into the legend (the plot area ends at x 590 of 800); a log concurrency axis is
// labelled at every power of two.
TEST(report, reference_labels_stay_clear_of_the_legend_and_log2_ticks_are_labelled) {
    xy_plot p;
    p.id = "p";
    p.x = log_axis("ms", 0.01, 95); // 0.01 .. 100: 80 ms sits near the right edge
    p.y = linear_axis("n", 0, 5);
    series entry;
    entry.name = "a legend entry";
    entry.points = {{1, 1}, {2, 2}};
    p.lines.push_back(entry);
    p.refs.push_back({80, "stall: 80 ms", true, true});
    p.refs.push_back({0.02, "left: 0.02", true, false});
    const auto svg = render(p);
    const auto label = svg.find(">stall: 80 ms</text>");
    ASSERT_NE(label, std::string::npos) << svg;
    const auto tag = svg.substr(svg.rfind("<text", label), label - svg.rfind("<text", label));
    EXPECT_NE(tag.find("text-anchor=\"end\""), std::string::npos) << tag;
    const double x = std::strtod(tag.c_str() + tag.find("x=\"") + 3, nullptr);
    EXPECT_LT(x, 590) << tag;
    // Room on the right: the label starts right of its line, as before.
    const auto left = svg.find(">left: 0.02</text>");
    ASSERT_NE(left, std::string::npos);
    EXPECT_EQ(
        svg.substr(svg.rfind("<text", left), left - svg.rfind("<text", left)).find("text-anchor"),
        std::string::npos);

    auto c = log_axis("concurrent sessions (log)", 1, 64);
    c.powers_of_two = true;
    EXPECT_EQ(c.ticks(), (std::vector<double>{1, 2, 4, 8, 16, 32, 64}));
    xy_plot q;
    q.id = "q";
    q.x = c;
    q.y = linear_axis("ms", 0, 60);
    const auto qs = render(q);
    for (const char* t : {">1</text>", ">2</text>", ">4</text>", ">8</text>", ">16</text>",
                          ">32</text>", ">64</text>"})
        EXPECT_NE(qs.find(t), std::string::npos) << t;
}

TEST(report, log_axis_and_numbers_are_readable) {
    const auto a = log_axis("x", 0.0012, 95);
    EXPECT_DOUBLE_EQ(a.lo, 0.001);
    EXPECT_DOUBLE_EQ(a.hi, 100);
    EXPECT_EQ(a.ticks().size(), 6u);
    EXPECT_DOUBLE_EQ(a.fraction(1), 0.6);
    EXPECT_EQ(format_number(45.6789), "45.68");
    EXPECT_EQ(format_number(0.000123), "0.000123");
    EXPECT_EQ(format_number(1500), "1500");
    EXPECT_EQ(escape("<a href='x'>&</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;");
    // A reference line beyond the axis is said in words, never drawn at the edge.
    xy_plot p;
    p.id = "p";
    p.x = linear_axis("t", 0, 10);
    p.y = linear_axis("ms", 0, 5);
    p.refs.push_back({80, "late: 80 ms", false, true});
    const auto svg = render(p);
    EXPECT_NE(svg.find("late: 80 ms (above the scale)"), std::string::npos);
    EXPECT_EQ(svg.find("<title>late: 80 ms</title></line>"), std::string::npos);
}

} // namespace

// ------------------------------------------------------------------------- a recording

// run.json of a `pacer record` folder with two samples of two variants; the figures are made
// up (the page must print them as written). s1/overlap is still pending: no folder.
json::object recording_run_json() {
    auto variant = [](const char* sample, const char* name, const char* status, bool verdict) {
        return json::object{{"directory", fmt::format("samples/{}/{}", sample, name)},
                            {"source", "audio.wav"},
                            {"status", status},
                            {"qualified", std::string(status) == "pass"},
                            {"protocol_verdict", verdict},
                            {"errors", json::array{}},
                            {"violations", json::array{}},
                            {"session", json::object{{"admitted", true}}}};
    };
    json::object s0{
        {"id", "s0"},
        {"subset", "subset-0"},
        {"text", "hello"},
        {"variants", json::object{{"clean", variant("s0", "clean", "pass", true)},
                                  {"overlap", variant("s0", "overlap", "fail", false)}}}};
    json::object s1{{"id", "s1"},
                    {"subset", "subset-1"},
                    {"text", "world"},
                    {"variants", json::object{{"clean", variant("s1", "clean", "pass", true)}}}};
    auto pending = variant("s1", "overlap", "pending", false);
    s1["variants"].as_object()["overlap"] = pending;
    return json::object{
        {"schema_version", 1},
        {"kind", "pacer-record"},
        {"status", "interrupted"},
        {"config", json::object{{"concurrency", 2}, {"profile", "nemotron"}}},
        {"summary",
         json::object{{"samples_selected", 2},
                      {"variants_selected", 4},
                      {"variants", json::object{{"pass", 2}, {"fail", 1}, {"pending", 1}}},
                      {"pairs_qualified", 0},
                      {"per_subset",
                       json::object{{"subset-0", json::object{{"pass", 1}, {"fail", 1}}},
                                    {"subset-1", json::object{{"pending", 1}, {"fail", 0}}}}}}},
        {"load",
         json::object{{"concurrency", 2},
                      {"batches", 2},
                      {"sessions", 3},
                      {"recording_wall_s", 12.5},
                      {"client_loop",
                       json::object{{"max_lag_s", 0.0123456}, {"over_80ms", 0}, {"samples", 777}}},
                      {"pacing", json::object{{"admitted", 3},
                                              {"deviation_s", json::object{{"p99", 0.0034567}}},
                                              {"packets_sent", 15},
                                              {"late_packets", 1},
                                              {"sessions_with_late_packet", 1},
                                              {"max_abs_deviation_s", 0.0954321},
                                              {"pacing_qualified", false}}}}},
        {"samples", json::array{s0, s1}}};
}

// The run.json above, and receipts and report.json for the three recorded variants (the
// second has one late packet, 95 ms).
void make_recording(const fs::path& dir) {
    write(dir / "run.json", json::serialize(recording_run_json()));
    const deviations devs = {{0.001, 0.002, 0.0005, 0.003, 0.001},
                             {0.002, 0.0954321, 0.001, 0.0004, 0.002},
                             {0.0001, 0.0002, 0.0003, 0.0004, 0.0005}};
    const char* names[] = {"samples/s0/clean", "samples/s0/overlap", "samples/s1/clean"};
    for (std::size_t i = 0; i < devs.size(); ++i) {
        const fs::path tmp = dir / ".tmp";
        write_sessions(tmp, {devs[i]}, 100 + 10 * static_cast<double>(i));
        fs::create_directories(dir / names[i]);
        fs::rename(tmp / "session-000" / "input-send-receipts.json",
                   dir / names[i] / "input-send-receipts.json");
        fs::remove_all(tmp);
        write(dir / names[i] / "report.json",
              json::serialize(json::object{
                  {"cases", json::array{json::object{
                                {"id", "continuous"},
                                {"serving", json::object{{"ttfa_s", 0.25 + 0.5 * i},
                                                         {"output_duration_s", 3.5}}}}}}}));
    }
}

TEST(report_recording, page_prints_run_json_figures_and_a_row_per_variant) {
    temp_folder t;
    make_recording(t.path());
    const auto folder = read_result_folder(t.path());
    EXPECT_EQ(folder.kind, folder_kind::recording);
    ASSERT_EQ(folder.sessions.size(), 4u); // the pending variant too, without packets
    EXPECT_EQ(folder.packet_count(), 15u);
    EXPECT_TRUE(folder.notes.empty());
    const auto html = render_report(folder);
    const auto run = recording_run_json();
    for (const auto& key : {std::vector<const char*>{"load", "pacing", "late_packets"},
                            {"load", "pacing", "packets_sent"},
                            {"load", "pacing", "max_abs_deviation_s"},
                            {"load", "pacing", "admitted"},
                            {"load", "pacing", "deviation_s", "p99"},
                            {"load", "client_loop", "max_lag_s"},
                            {"load", "client_loop", "samples"},
                            {"load", "recording_wall_s"},
                            {"summary", "variants", "pass"},
                            {"summary", "variants", "fail"},
                            {"summary", "variants", "pending"},
                            {"summary", "pairs_qualified"}}) {
        std::string k;
        for (const char* p : key)
            k += (k.empty() ? "" : ".") + std::string(p);
        const auto v = data_value(html, k);
        ASSERT_TRUE(v) << k;
        const json::value* cur = &run.at(key[0]);
        for (std::size_t i = 1; i < key.size(); ++i)
            cur = &cur->as_object().at(key[i]);
        EXPECT_EQ(std::strtod(v->c_str(), nullptr), cur->to_number<double>()) << k;
    }
    EXPECT_EQ(cell_text(html, "load.pacing.max_abs_deviation_s"), "95.43 ms");
    EXPECT_NE(html.find("PACING UNQUALIFIED"), std::string::npos);
    EXPECT_NE(html.find("<b>interrupted</b>"), std::string::npos);
    EXPECT_NE(html.find("<td>subset-0</td><td>pass 1, fail 1</td>"), std::string::npos);
    EXPECT_NE(html.find("<td>subset-1</td><td>pending 1</td>"), std::string::npos);
    // The variants table: status, verdict, late packets, max |deviation|, TTFA from report.json.
    EXPECT_NE(html.find("<tr class=\"status-fail\"><td>s0</td><td>subset-0</td><td>overlap</td>"
                        "<td>fail</td><td>false</td><td>false</td><td class=\"num\">5</td>"
                        "<td class=\"num\">1</td><td class=\"num\">95.43</td>"
                        "<td class=\"num\">0.75</td><td class=\"num\">3.5</td></tr>"),
              std::string::npos)
        << html;
    EXPECT_NE(html.find("<tr class=\"status-pending\"><td>s1</td><td>subset-1</td><td>overlap"),
              std::string::npos);
    // The run's plots, the heat strip one row per recorded variant.
    for (const char* id : {"plot-deviation-cdf", "plot-deviation-over-time", "plot-late-over-time",
                           "plot-heat-strip", "plot-send-time"}) {
        const auto svg = svg_of(html, id);
        ASSERT_FALSE(svg.empty()) << id;
        EXPECT_GT(marks(svg), 0u) << id;
    }
    EXPECT_NE(svg_of(html, "plot-deviation-cdf").find("late: 80 ms"), std::string::npos);
    const auto heat = svg_of(html, "plot-heat-strip");
    for (const char* s : {"s0/clean", "s0/overlap", "s1/clean"})
        EXPECT_NE(heat.find(s), std::string::npos) << s;
    EXPECT_EQ(heat.find("s1/overlap"), std::string::npos);
    EXPECT_NE(html.find("id=\"environment\""), std::string::npos);
}

TEST(report_recording, export_has_a_row_per_packet_and_per_variant) {
    temp_folder t;
    make_recording(t.path());
    const auto tables = build_tables(read_result_folder(t.path()));
    ASSERT_EQ(tables.size(), 2u);
    EXPECT_EQ(tables[0].columns[0], "sample");
    EXPECT_EQ(lines_of(to_csv(tables[0])), 1u + 15u);
    const auto csv = to_csv(tables[1]);
    EXPECT_EQ(lines_of(csv), 1u + 4u);
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "sample,subset,variant,session_start_s,admitted,packets,late_packets,"
              "max_abs_deviation_s,max_send_time_s,status,protocol_verdict,qualified,ttfa_s,"
              "output_duration_s,errors,violations");
    const auto jl = to_jsonl(tables[1]);
    std::istringstream in(jl);
    std::string line;
    std::getline(in, line);
    std::getline(in, line);
    const auto second = json::parse(line);
    EXPECT_EQ(second.at("variant").as_string(), "overlap");
    EXPECT_EQ(second.at("late_packets").as_int64(), 1);
    EXPECT_EQ(second.at("status").as_string(), "fail");
    EXPECT_EQ(second.at("ttfa_s").as_double(), 0.75);
}

TEST(report_recording, a_run_json_of_something_else_is_refused_and_recordings_not_compared) {
    temp_folder t;
    write(t.path() / "run.json", R"({"kind":"other"})");
    try {
        (void)read_result_folder(t.path());
        ADD_FAILURE() << "accepted";
    } catch (const folder_error& e) {
        EXPECT_NE(std::string(e.what()).find("was not written by pacer record"), std::string::npos);
    }
    temp_folder r;
    make_recording(r.path());
    const auto f = read_result_folder(r.path());
    EXPECT_THROW((void)render_comparison(f, f), folder_error);
}

// Conversations in report.html and `pacer export` (issue 39): a multi-turn run's page shows its
// voice-to-voice latency per turn (bars and a table), the interruption latency and the replies
// no turn asked for; a serve sweep's the same against concurrency with the SLO values beside
// their bounds and the capacity's answer first; the export has a turns table. Also the plots'
// labels (reference lines close together, long legend names) and small numbers. The summaries
// are made up here: the page must print them as written.

#include <pacer/report/html_report.hpp>
#include <pacer/report/result_folder.hpp>
#include <pacer/report/svg.hpp>
#include <pacer/report/tables.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "unit/report/page_fixture.hpp"
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace pacer::report;
using namespace pacer::test::page;

// samples.json of `n` sessions of three appends on time.
void write_samples(const fs::path& dir, int n) {
    json::array sessions;
    for (int i = 0; i < n; ++i)
        sessions.push_back(json::object{{"index", i},
                                        {"session_start_s", 100 + 0.01 * i},
                                        {"deviation_s", json::array{0.0001, 0.0002, 0.0001}}});
    write(dir / "samples.json",
          json::serialize(
              json::object{{"schema_version", 1}, {"unit", "seconds"}, {"sessions", sessions}}));
}

json::object fig(double p50, double p95) {
    return json::object{{"count", 4}, {"p50", p50}, {"p95", p95}, {"max", p95 * 1.25}};
}

// summary.json `turns` of two turns: turn 1 interrupted; voice-to-voice where `voice`.
json::object turns_json(bool voice) {
    const auto turn = [&](int j) {
        json::object t{{"turns", 4},
                       {"answered", 4},
                       {"interrupted", j == 1 ? 2 : 0},
                       {"underruns", j},
                       {"ttfa_from_speech_end_s", fig(0.0004, 0.001)},
                       {"ttfa_from_speech_stopped_s", fig(0.0011 + j, 0.0021 + j)},
                       {"response_duration_s", fig(0.72, 0.75)},
                       {"interrupt_latency_s", j == 1 ? json::value(fig(0.04, 0.08)) : nullptr}};
        if (voice)
            t["ttfa_from_voice_end_s"] = fig(0.48 + 0.1 * j, 0.52 + 0.1 * j);
        return t;
    };
    auto all = turn(1);
    all["turns"] = 8;
    all["answered"] = 8;
    all["unsolicited_responses"] = 1;
    if (voice)
        all["ttfa_from_voice_end_s"] = fig(0.5, 0.62);
    return json::object{{"by_turn", json::array{turn(0), turn(1)}}, {"all", all}};
}

json::object run_summary(bool conversation, bool voice = true) {
    json::object s{
        {"schema_version", 1},
        {"command", "run"},
        {"config", json::object{{"concurrency", 4}, {"url", "ws://127.0.0.1:1/v1/realtime"}}},
        {"clock", json::object{{"monotonic_s", 99.5}, {"realtime_s", 1796000000.25}}},
        {"pacing", json::object{{"sessions", json::object{{"requested", 4}, {"complete", 4}}},
                                {"time_to_first_audio_s", fig(2.56, 2.6)}}},
        {"pacing_qualified", true}};
    if (conversation)
        s["turns"] = turns_json(voice);
    return s;
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1))
        ++n;
    return n;
}

TEST(report_conversation, run_page_shows_voice_to_voice_per_turn) {
    temp_folder t;
    write(t.path() / "summary.json", json::serialize(run_summary(true)));
    write_samples(t.path(), 4);
    const auto html = render_report(read_result_folder(t.path()));
    ASSERT_NE(html.find("<section id=\"conversation\">"), std::string::npos);
    // Bars: p50 and p95 of each turn, and the interrupted turn's interruption latency.
    const auto svg = svg_of(html, "plot-turn-v2v");
    ASSERT_FALSE(svg.empty());
    EXPECT_EQ(count_of(svg, "</title></rect>"), 5u) << svg;
    EXPECT_NE(svg.find("voice-to-voice p95 turn 1: 620 ms"), std::string::npos) << svg;
    EXPECT_NE(svg.find("interruption latency p95 turn 1: 80 ms"), std::string::npos) << svg;
    // The per-turn table prints the summary's numbers, and the all-turns figures.
    EXPECT_EQ(data_value(html, "turns.by_turn[1].ttfa_from_voice_end_s.p95"), "0.62");
    EXPECT_EQ(cell_text(html, "turns.by_turn[1].ttfa_from_voice_end_s.p95"), "620 ms");
    EXPECT_EQ(cell_text(html, "turns.by_turn[0].response_duration_s.p50"), "720 ms");
    EXPECT_EQ(cell_text(html, "turns.by_turn[1].interrupt_latency_s.p95"), "80 ms");
    EXPECT_EQ(cell_text(html, "turns.by_turn[0].interrupt_latency_s.p95"), "–");
    EXPECT_EQ(cell_text(html, "turns.all.unsolicited_responses"), "1");
    EXPECT_EQ(cell_text(html, "turns.all.ttfa_from_voice_end_s.p95"), "620 ms");
    // Shown, not folded; the stream-start TTFA named for what it is.
    const auto section = html.substr(html.find("<section id=\"conversation\">"));
    EXPECT_NE(section.find("<details open>"), std::string::npos);
    EXPECT_NE(html.find("first audio from the stream start (turn 0&#39;s reply, not a turn "
                        "latency) p50"),
              std::string::npos);
}

TEST(report_conversation, an_older_summary_names_the_input_end_and_a_single_turn_run_has_none) {
    temp_folder old;
    write(old.path() / "summary.json", json::serialize(run_summary(true, false)));
    write_samples(old.path(), 4);
    const auto html = render_report(read_result_folder(old.path()));
    EXPECT_NE(
        svg_of(html, "plot-turn-v2v").find("first audio after the turn&#39;s input ended p50"),
        std::string::npos);
    EXPECT_EQ(html.find("voice-to-voice p"), std::string::npos); // no figure so named
    EXPECT_NE(html.find("<th>after the input&#39;s end p95</th>"), std::string::npos);
    EXPECT_EQ(cell_text(html, "turns.by_turn[0].ttfa_from_speech_end_s.p95"), "1 ms");
    // Turns of silence have no voice's end: a null figure, and the input's end leads again.
    auto silent = run_summary(true, false);
    silent["turns"].as_object()["all"].as_object()["ttfa_from_voice_end_s"] = nullptr;
    write(old.path() / "summary.json", json::serialize(silent));
    EXPECT_NE(render_report(read_result_folder(old.path()))
                  .find("<th>first audio after the turn&#39;s input ended p95</th>"),
              std::string::npos);

    temp_folder single;
    write(single.path() / "summary.json", json::serialize(run_summary(false)));
    write_samples(single.path(), 4);
    const auto one = render_report(read_result_folder(single.path()));
    EXPECT_EQ(one.find("id=\"conversation\""), std::string::npos);
    EXPECT_NE(one.find("<th>time to first audio p50</th>"), std::string::npos);
}

// A capacity search with a multi-turn scenario: level 1 meets turn-v2v-p95 ≤ 500 ms, level 2
// misses it (twice: its verification too), so the capacity is 1 session.
json::object conversation_serve_summary() {
    auto level = [](int c, double v2v_p95, const char* kind) {
        const bool met = v2v_p95 <= 0.5;
        auto turns = turns_json(true);
        turns["all"].as_object()["ttfa_from_voice_end_s"] = fig(v2v_p95 / 2, v2v_p95);
        json::object agg{{"attempted_sessions", c},
                         {"successful_sessions", c},
                         {"ttfa_s", json::object{{"p50", 0.1}, {"p95", 0.2}}},
                         {"underrun_ratio", 0.0000975},
                         {"turns", turns}};
        return json::object{
            {"concurrency", c},
            {"try", kind},
            {"attempt", 1},
            {"client_timing_valid", true},
            {"slo", json::object{{"met", met},
                                 {"checks", json::array{json::object{{"name", "turn-v2v-p95"},
                                                                     {"bound", 0.5},
                                                                     {"at_least", false},
                                                                     {"value", v2v_p95},
                                                                     {"met", met}}}}}},
            {"aggregate", agg}};
    };
    auto run = [](int c, const char* folder) {
        return json::object{{"concurrency", c},
                            {"repeat", 1},
                            {"warmup", false},
                            {"folder", folder},
                            {"sessions", json::array{json::object{{"index", 0}}}}};
    };
    return json::object{{"command", "serve"},
                        {"config", json::object{{"repeats", 1}}},
                        {"runs", json::array{run(1, "c1"), run(2, "c2"), run(2, "c2-verify1")}},
                        {"levels", json::array{level(1, 0.25, "search"), level(2, 0.612, "search"),
                                               level(2, 0.7, "verify")}},
                        {"capacity", json::object{{"sessions", 1},
                                                  {"first_failing_level", 2},
                                                  {"limited_by", "slo"},
                                                  {"boundary_held", true}}}};
}

TEST(report_conversation, serve_page_shows_turn_figures_against_concurrency_with_slo_values) {
    temp_folder t;
    write(t.path() / "summary.json", json::serialize(conversation_serve_summary()));
    const auto html = render_report(read_result_folder(t.path()));
    // The answer first.
    EXPECT_NE(html.find("capacity 1 session, limited by turn-v2v-p95 at 2 sessions, boundary "
                        "held"),
              std::string::npos);
    // The SLO's value beside its bound, in the level table and the turn table.
    EXPECT_NE(html.find("missed: turn-v2v-p95 612 ms (bound ≤ 500 ms)"), std::string::npos);
    EXPECT_NE(html.find("<td>turn-v2v-p95 250 ms (bound ≤ 500 ms)</td>"), std::string::npos);
    EXPECT_EQ(cell_text(html, "levels[1].aggregate.turns.all.ttfa_from_voice_end_s.p95"), "612 ms");
    EXPECT_EQ(cell_text(html, "levels[0].aggregate.turns.all.unsolicited_responses"), "1");
    const auto svg = svg_of(html, "plot-turn-v2v");
    ASSERT_FALSE(svg.empty());
    EXPECT_NE(svg.find("SLO turn-v2v-p95 ≤ 500"), std::string::npos);
    EXPECT_FALSE(svg_of(html, "plot-interrupt-latency").empty());
    // One point per level on the line (level 2's two runs: their mean, 656 ms), every run a dot.
    const auto p95 = svg.find("<title>voice-to-voice p95</title></polyline>");
    ASSERT_NE(p95, std::string::npos) << svg;
    const auto line = svg.substr(svg.rfind("<polyline", p95), p95 - svg.rfind("<polyline", p95));
    EXPECT_EQ(count_of(line, ","), 2u) << line;
    EXPECT_NE(svg.find("voice-to-voice p95 at 2 sessions (verify 1): 700 ms"), std::string::npos);
    // Plain decimals in the level table.
    EXPECT_EQ(cell_text(html, "levels[0].aggregate.underrun_ratio"), "0.0000975");
}

TEST(report_conversation, export_has_a_row_per_turn) {
    temp_folder t;
    write(t.path() / "summary.json", json::serialize(run_summary(true)));
    write_samples(t.path(), 1);
    write(
        t.path() / "turns.jsonl",
        R"({"session":0,"turn":0,"voice_end_s":100.5,"ttfa_from_voice_end_s":0.48,"response_id":"resp_1"})"
        "\n"
        R"({"session":0,"turn":1,"voice_end_s":103.25,"ttfa_from_voice_end_s":null,"output_stopped_s":104.5})"
        "\nnot json\n");
    const auto tables = build_tables(read_result_folder(t.path()));
    const auto it = std::find_if(tables.begin(), tables.end(),
                                 [](const table& x) { return x.name == "turns"; });
    ASSERT_NE(it, tables.end());
    ASSERT_EQ(it->rows.size(), 2u);
    const auto col = [&](const std::string& c) {
        return static_cast<std::size_t>(std::find(it->columns.begin(), it->columns.end(), c) -
                                        it->columns.begin());
    };
    ASSERT_LT(col("ttfa_from_voice_end_s"), it->columns.size());
    EXPECT_EQ(it->rows[0][col("ttfa_from_voice_end_s")].number, 0.48);
    EXPECT_EQ(it->rows[0][col("response_id")].text, "resp_1");
    EXPECT_EQ(it->rows[1][col("turn")].count, 1);
    EXPECT_EQ(it->rows[1][col("ttfa_from_voice_end_s")].kind, cell::type::null);
    EXPECT_EQ(it->rows[1][col("first_audio_s")].kind, cell::type::null); // absent field
    ASSERT_LT(col("output_stopped_s"), it->columns.size()); // vllm-omni's listener stop
    EXPECT_EQ(it->rows[1][col("output_stopped_s")].number, 104.5);
    EXPECT_NE(to_csv(*it).find("\n0,1,,,,103.25,"), std::string::npos) << to_csv(*it);

    // A serve sweep: each run's turns under its level and folder; no turns.jsonl, no table.
    temp_folder s;
    write(s.path() / "summary.json", json::serialize(conversation_serve_summary()));
    write(s.path() / "c2-verify1" / "turns.jsonl", R"({"session":0,"turn":0})"
                                                   "\n");
    const auto st = build_tables(read_result_folder(s.path()));
    const auto turns =
        std::find_if(st.begin(), st.end(), [](const table& x) { return x.name == "turns"; });
    ASSERT_NE(turns, st.end());
    ASSERT_EQ(turns->rows.size(), 1u);
    EXPECT_EQ(turns->rows[0][0].count, 2);
    EXPECT_EQ(turns->rows[0][2].text, "c2-verify1");
    temp_folder single;
    write(single.path() / "summary.json", json::serialize(run_summary(false)));
    write_samples(single.path(), 1);
    for (const auto& x : build_tables(read_result_folder(single.path())))
        EXPECT_NE(x.name, "turns");
}

// The baseline of the text at `label` in `svg` (its y attribute).
double text_y(const std::string& svg, const std::string& label) {
    const auto at = svg.find(">" + label + "</text>");
    EXPECT_NE(at, std::string::npos) << label;
    const auto tag = svg.substr(svg.rfind("<text", at), at - svg.rfind("<text", at));
    return std::strtod(tag.c_str() + tag.find(" y=\"") + 4, nullptr);
}

TEST(report_conversation, labels_of_close_reference_lines_and_long_legends_stay_readable) {
    xy_plot p;
    p.id = "p";
    p.x = linear_axis("s", 0, 10);
    p.y = linear_axis("ms", 0, 100);
    series s;
    s.name = "achieved (dispatched in the stage, from the schedule)";
    s.points = {{1, 1}, {2, 2}};
    p.lines.push_back(s);
    p.refs.push_back({5, "p99 bound 5 ms", false, true});
    p.refs.push_back({8, "max bound 80 ms", false, true}); // 2.4 px apart
    p.refs.push_back({3, "idle baseline ends", true, false});
    p.refs.push_back({3.05, "run starts", true, false});
    const auto svg = render(p);
    EXPECT_GE(std::abs(text_y(svg, "p99 bound 5 ms") - text_y(svg, "max bound 80 ms")), 12) << svg;
    EXPECT_GE(std::abs(text_y(svg, "idle baseline ends") - text_y(svg, "run starts")), 12) << svg;
    // The legend name wraps at a space instead of being cut; the next entry starts below it.
    EXPECT_NE(svg.find(">achieved (dispatched in<tspan"), std::string::npos) << svg;
    EXPECT_NE(svg.find(">the stage, from the</tspan>"), std::string::npos) << svg;
    EXPECT_NE(svg.find(">schedule)</tspan></text>"), std::string::npos) << svg;

    EXPECT_EQ(format_number(9.75e-05), "0.0000975");
    EXPECT_EQ(format_number(3.67e-05), "0.0000367");
    EXPECT_EQ(format_number(-0.00002), "-0.00002");
}

} // namespace

// Telemetry in `pacer export` and report.html, from small result folders written here: a row
// per sample of telemetry.jsonl labelled with the window it fell in, a row per measured
// window, and the power and utilisation plots with the summary's energy figures.

#include <pacer/report/html_report.hpp>
#include <pacer/report/result_folder.hpp>
#include <pacer/report/tables.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "unit/report/page_fixture.hpp"
#include "unit/scratch_folder.hpp"
#include <fstream>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace pacer::report;
using namespace pacer::test::page;
using pacer::test::scratch_folder;

// One session of three appends from 100 s (the run's clock; realtime = monotonic + 1000).
void write_session(const fs::path& dir) {
    json::array appends, dev;
    for (int k = 0; k < 3; ++k) {
        const double at = 100 + 0.08 * k;
        appends.push_back(json::object{{"event_id", "e"},
                                       {"seq", k},
                                       {"scheduled_s", at},
                                       {"start_s", at},
                                       {"completed_s", at + 0.0002}});
        dev.push_back(0.0);
    }
    write(dir / "session-000" / "input-send-receipts.json",
          json::serialize(
              json::object{{"session_start_s", 100.0}, {"admitted", true}, {"appends", appends}}));
    write(dir / "samples.json",
          json::serialize(json::object{
              {"schema_version", 1},
              {"unit", "seconds"},
              {"sessions", json::array{json::object{
                               {"index", 0}, {"session_start_s", 100.0}, {"deviation_s", dev}}}}}));
}

json::object window_telemetry(double t0, double t1, double energy, double per_input) {
    return json::object{{"window", json::object{{"start_s", t0}, {"end_s", t1}}},
                        {"energy_from", "nvml"},
                        {"energy_j", energy},
                        {"mean_power_w", energy / (t1 - t0)},
                        {"peak_power_w", 250.0},
                        {"input_audio_s", 0.24},
                        {"j_per_input_audio_s", per_input},
                        {"j_per_request", nullptr},
                        {"utilization_pct", json::object{{"p50", 40.0}, {"max", 90.0}}}};
}

// A closed-loop run with an idle baseline 98-99 s and its window 100-100.5 s; samples at
// 98.5 (baseline), 99.5 (neither), 100.1 and 100.4 (the run) from GPU 0, one from GPU 1, and
// a line that is not a sample.
void make_run_with_telemetry(const fs::path& dir) {
    auto t = window_telemetry(100, 100.5, 62.5, 260.4166);
    t["idle_baseline"] = json::object{{"start_s", 98.0}, {"end_s", 99.0}, {"power_w", 70.0}};
    t["energy_above_idle_j"] = 27.5;
    write(dir / "summary.json",
          json::serialize(json::object{
              {"schema_version", 1},
              {"command", "run"},
              {"config", json::object{{"concurrency", 1}}},
              {"clock", json::object{{"monotonic_s", 99.9}, {"realtime_s", 1099.9}}},
              {"pacing", json::object{{"packets", json::object{{"sent", 3}, {"late", 0}}}}},
              {"telemetry", t}}));
    write_session(dir);
    write(dir / "telemetry.jsonl",
          "{\"monotonic_s\":98.5,\"realtime_s\":1098.5,\"source\":\"nvml:0\",\"energy_mj\":1000,"
          "\"power_w\":70,\"utilization_pct\":0,\"temperature_c\":40}\n"
          "{\"monotonic_s\":99.5,\"realtime_s\":1099.5,\"source\":\"nvml:0\",\"energy_mj\":1070,"
          "\"power_w\":71,\"utilization_pct\":1}\n"
          "{\"monotonic_s\":100.1,\"realtime_s\":1100.1,\"source\":\"nvml:0\",\"energy_mj\":1200,"
          "\"power_w\":212.5,\"utilization_pct\":40}\n"
          "not json\n"
          "{\"monotonic_s\":100.4,\"realtime_s\":1100.4,\"source\":\"nvml:0\",\"energy_mj\":1260,"
          "\"power_w\":250,\"utilization_pct\":90}\n"
          "{\"monotonic_s\":100.2,\"realtime_s\":1100.2,\"source\":\"nvml:1\","
          "\"error\":\"GPU is lost\"}\n");
}

const table* find_table(const std::vector<table>& ts, const std::string& name) {
    for (const auto& t : ts)
        if (t.name == name)
            return &t;
    return nullptr;
}

std::size_t column(const table& t, const std::string& name) {
    for (std::size_t i = 0; i < t.columns.size(); ++i)
        if (t.columns[i] == name)
            return i;
    ADD_FAILURE() << "no column " << name;
    return 0;
}

TEST(report_telemetry, export_has_a_row_per_sample_labelled_by_its_window) {
    scratch_folder dir("pacer-report-telemetry");
    make_run_with_telemetry(dir.path);
    const auto folder = read_result_folder(dir.path);
    ASSERT_EQ(folder.telemetry.size(), 5u);
    ASSERT_EQ(folder.notes.size(), 1u);
    EXPECT_NE(folder.notes[0].find("1 line(s) are not telemetry samples"), std::string::npos);
    const auto tables = build_tables(folder);
    const auto* samples = find_table(tables, "telemetry");
    ASSERT_NE(samples, nullptr);
    ASSERT_EQ(samples->rows.size(), 5u);
    const auto w = column(*samples, "window");
    EXPECT_EQ(samples->rows[0][w].text, "idle_baseline");
    EXPECT_EQ(samples->rows[1][w].kind, cell::type::null); // between the baseline and the run
    EXPECT_EQ(samples->rows[2][w].text, "run");
    EXPECT_EQ(samples->rows[3][w].text, "run");
    EXPECT_DOUBLE_EQ(samples->rows[2][column(*samples, "power_w")].number, 212.5);
    EXPECT_DOUBLE_EQ(samples->rows[3][column(*samples, "energy_mj")].number, 1260);
    EXPECT_EQ(samples->rows[0][column(*samples, "temperature_c")].number, 40);
    EXPECT_EQ(samples->rows[1][column(*samples, "temperature_c")].kind, cell::type::null);
    EXPECT_EQ(samples->rows[4][column(*samples, "source")].text, "nvml:1");
    EXPECT_EQ(samples->rows[4][column(*samples, "error")].text, "GPU is lost");
    const auto csv = to_csv(*samples);
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "source,monotonic_s,realtime_s,window,energy_mj,power_w,utilization_pct,"
              "memory_utilization_pct,memory_used_bytes,memory_total_bytes,sm_clock_mhz,"
              "temperature_c,error");
    EXPECT_NE(csv.find("\nnvml:0,100.1,1100.1,run,1200,212.5,40,,,,,,\n"), std::string::npos)
        << csv;

    const auto* energy = find_table(tables, "energy");
    ASSERT_NE(energy, nullptr);
    ASSERT_EQ(energy->rows.size(), 1u); // the run's window (the baseline has no row of its own)
    const auto& r = energy->rows[0];
    EXPECT_EQ(r[column(*energy, "window")].text, "run");
    EXPECT_DOUBLE_EQ(r[column(*energy, "duration_s")].number, 0.5);
    EXPECT_DOUBLE_EQ(r[column(*energy, "energy_j")].number, 62.5);
    EXPECT_DOUBLE_EQ(r[column(*energy, "idle_power_w")].number, 70);
    EXPECT_DOUBLE_EQ(r[column(*energy, "energy_above_idle_j")].number, 27.5);
    EXPECT_DOUBLE_EQ(r[column(*energy, "j_per_input_audio_s")].number, 260.4166);
    EXPECT_EQ(r[column(*energy, "j_per_request")].kind, cell::type::null);
    EXPECT_DOUBLE_EQ(r[column(*energy, "utilization_max_pct")].number, 90);
}

TEST(report_telemetry, a_run_without_telemetry_has_no_telemetry_table_nor_plot) {
    scratch_folder dir("pacer-report-telemetry");
    make_run_with_telemetry(dir.path);
    fs::remove(dir.path / "telemetry.jsonl");
    auto s = json::parse("{\"schema_version\":1,\"command\":\"run\",\"pacing\":{}}");
    write(dir.path / "summary.json", json::serialize(s));
    const auto folder = read_result_folder(dir.path);
    EXPECT_TRUE(folder.telemetry.empty());
    EXPECT_EQ(find_table(build_tables(folder), "telemetry"), nullptr);
    EXPECT_EQ(find_table(build_tables(folder), "energy"), nullptr);
    const auto html = render_report(folder);
    EXPECT_EQ(html.find("id=\"plot-power\""), std::string::npos);
}

// A sweep: each run's samples carry its level and repeat; a sample of the settle pause
// between two runs belongs to no run; the energy table has a row per run and the sweep's.
TEST(report_telemetry, serve_samples_carry_their_level_and_repeat) {
    scratch_folder dir("pacer-report-telemetry");
    auto run = [](int c, int repeat, bool warmup, double t0, double t1) {
        return json::object{{"concurrency", c},
                            {"repeat", repeat},
                            {"warmup", warmup},
                            {"sessions", json::array{}},
                            {"telemetry", window_telemetry(t0, t1, 100 * (t1 - t0), 1.5 * c)}};
    };
    auto whole = window_telemetry(10, 16, 600, 2.0);
    write(dir.path / "summary.json",
          json::serialize(
              json::object{{"command", "serve"},
                           {"config", json::object{{"repeats", 1}}},
                           {"runs", json::array{run(1, 1, true, 10, 11), run(1, 1, false, 12, 13),
                                                run(2, 1, false, 14, 16)}},
                           {"levels", json::array{}},
                           {"telemetry", whole}}));
    std::string lines;
    for (double t : {10.5, 11.5, 12.5, 15.0})
        lines += "{\"monotonic_s\":" + std::to_string(t) +
                 ",\"realtime_s\":0,\"source\":\"nvml:0\",\"power_w\":100}\n";
    write(dir.path / "telemetry.jsonl", lines);
    const auto tables = build_tables(read_result_folder(dir.path));
    const auto* samples = find_table(tables, "telemetry");
    ASSERT_NE(samples, nullptr);
    ASSERT_EQ(samples->rows.size(), 4u);
    const auto w = column(*samples, "window"), level = column(*samples, "level"),
               repeat = column(*samples, "repeat");
    EXPECT_EQ(samples->rows[0][w].text, "warmup");
    EXPECT_EQ(samples->rows[1][w].kind, cell::type::null);
    EXPECT_EQ(samples->rows[1][level].kind, cell::type::null);
    EXPECT_EQ(samples->rows[2][w].text, "level");
    EXPECT_EQ(samples->rows[2][level].count, 1);
    EXPECT_EQ(samples->rows[3][level].count, 2);
    EXPECT_EQ(samples->rows[3][repeat].count, 1);
    const auto* energy = find_table(tables, "energy");
    ASSERT_NE(energy, nullptr);
    ASSERT_EQ(energy->rows.size(), 4u);
    EXPECT_EQ(energy->rows[3][column(*energy, "window")].text, "sweep");
    EXPECT_DOUBLE_EQ(energy->rows[2][column(*energy, "energy_j")].number, 200);
    EXPECT_DOUBLE_EQ(energy->rows[2][column(*energy, "j_per_input_audio_s")].number, 3);
}

TEST(report_telemetry, page_plots_power_and_utilisation_on_the_packets_time_axis) {
    scratch_folder dir("pacer-report-telemetry");
    make_run_with_telemetry(dir.path);
    const auto html = render_report(read_result_folder(dir.path));
    const auto power = svg_of(html, "plot-power");
    ASSERT_FALSE(power.empty()) << html;
    EXPECT_NE(power.find("GPU power over time"), std::string::npos);
    // 100.1 s on pacer's clock is 0.1 s after the first append (100 s).
    EXPECT_NE(power.find("<title>nvml:0: 0.1 s, 212.5 W</title>"), std::string::npos) << power;
    EXPECT_NE(power.find("<title>nvml:0: -1.5 s, 70 W</title>"), std::string::npos) << power;
    EXPECT_NE(power.find("run starts"), std::string::npos);
    EXPECT_NE(power.find("idle baseline ends"), std::string::npos);
    const auto util = svg_of(html, "plot-utilization");
    EXPECT_NE(util.find("<title>nvml:0: 0.4 s, 90 %</title>"), std::string::npos) << util;
    // The energy figures, as the summary has them.
    EXPECT_NE(html.find("data-key=\"telemetry.energy_j\" data-value=\"62.5\">62.5</td>"),
              std::string::npos);
    EXPECT_NE(html.find("data-key=\"telemetry.j_per_input_audio_s\" data-value=\"260.4166\""),
              std::string::npos);
    EXPECT_NE(html.find("data-key=\"telemetry.idle_baseline.power_w\" data-value=\"70\""),
              std::string::npos);
}

} // namespace

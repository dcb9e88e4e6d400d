// report.html and the export tables of `pacer http` folders, built from small folders written
// here: the page prints the summary's own numbers (data-value), draws its plots from
// requests.jsonl, refuses to compare; a --find-capacity folder gets a page of its probes.

#include <pacer/report/html_report.hpp>
#include <pacer/report/result_folder.hpp>
#include <pacer/report/tables.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "unit/report/page_fixture.hpp"
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace pacer::report;
using namespace pacer::test::page;

// A `pacer http` summary with made-up figures: the page must print them as written.
json::object http_summary() {
    json::object s{{"duration", 2.5},
                   {"scheduled", 4},
                   {"completed", 2},
                   {"failed", 1},
                   {"dropped", 1},
                   {"errors", json::object{{"connect", 0},
                                           {"http_status", 0},
                                           {"timeout", 1},
                                           {"disconnect", 0},
                                           {"malformed_sse", 0},
                                           {"server_error", 0}}},
                   {"total_input_tokens", 256},
                   {"total_output_tokens", 8},
                   {"request_throughput", 0.8},
                   {"output_throughput", 3.2},
                   {"total_token_throughput", 105.6},
                   {"request_goodput", 0.4},
                   {"goodput_requests", 1},
                   {"goodput_slo",
                    json::object{{"ttft_ms", 50.0}, {"tpot_ms", nullptr}, {"e2el_ms", nullptr}}},
                   {"schedule_kept", true},
                   {"command", "http"},
                   {"command_line", json::array{"pacer", "http", "--rate", "2"}},
                   {"host", "<b>host</b>"},
                   {"interrupted", false}};
    const char* ms[] = {"ttft", "tpot", "itl", "e2el"};
    json::object u;
    for (std::size_t i = 0; i < 4; ++i)
        for (const char* st : {"mean", "median", "std", "p99"}) {
            s[fmt::format("{}_{}_ms", st, ms[i])] = 12.345678 * static_cast<double>(i + 1);
            u[fmt::format("{}_{}_ms", st, ms[i])] = 7.25 * static_cast<double>(i + 1);
        }
    s["uncorrected"] = std::move(u);
    s["open_loop"] =
        json::object{{"requests", json::object{{"scheduled", 4},
                                               {"dispatched", 3},
                                               {"completed", 3},
                                               {"failed", 0},
                                               {"dropped", 1},
                                               {"not_dispatched", 0}}},
                     {"dispatch_lag_s", json::object{{"n", 3},
                                                     {"p50", 0.0001},
                                                     {"p90", 0.0002},
                                                     {"p99", 0.00031234},
                                                     {"p99.9", 0.0004},
                                                     {"max", 0.0005},
                                                     {"mean", 0.0002}}},
                     {"deadline_missed", 0},
                     {"schedule_kept", true},
                     {"schedule_kept_thresholds_s",
                      json::object{{"dispatch_lag_p99", 0.001}, {"dispatch_lag_max", 0.01}}},
                     {"cap", json::object{{"max_concurrency", 2},
                                          {"policy", "drop"},
                                          {"binding", true},
                                          {"delayed", 0},
                                          {"dropped", 1},
                                          {"peak_in_flight", 2}}}};
    s["schedule"] = json::object{{"arrival", "poisson"}, {"rate", 2.0}, {"seed", 0}};
    s["config"] = json::object{{"model", "m"}, {"endpoint", "/v1/completions"}};
    s["connections"] = json::object{{"opened", 2}, {"reused", 1}};
    return s;
}

// Four arrivals: two complete (4 tokens each), one timed out, one dropped by the cap.
std::string requests_jsonl() {
    std::string out;
    for (int i = 0; i < 4; ++i) {
        const double sch = 0.5 * i;
        json::object o{{"index", i}, {"scheduled_s", sch}};
        if (i < 3) {
            o["dispatched_s"] = sch + 0.0001;
            o["completed_s"] = sch + 0.05;
        } else {
            o["dispatched_s"] = nullptr;
            o["completed_s"] = nullptr;
            o["dropped"] = true;
        }
        if (i < 2) {
            o["first_byte_s"] = sch + 0.01;
            o["first_token_s"] = sch + 0.02 + 0.04 * i;
            o["token_times_s"] = json::array{sch + 0.02, sch + 0.03, sch + 0.04, sch + 0.05};
            o["ttft_ms"] = 20.0 + 40 * i;
            o["ttft_uncorrected_ms"] = 19.9 + 40 * i;
            o["e2el_ms"] = 50.0;
            o["e2el_uncorrected_ms"] = 49.9;
            o["tpot_ms"] = 10.0;
            o["status"] = 200;
            o["output_tokens"] = 4;
            o["error"] = nullptr;
        } else if (i == 2) {
            o["error"] = "timeout";
            o["error_message"] = "no complete answer within --timeout";
            o["token_times_s"] = json::array{};
        }
        o["input_len"] = 128;
        o["output_len"] = 4;
        out += json::serialize(o) + "\n";
    }
    return out;
}

void make_http(const fs::path& dir) {
    write(dir / "summary.json", json::serialize(http_summary()));
    write(dir / "requests.jsonl", requests_jsonl());
}

TEST(report_http, page_prints_the_summary_figures_as_written) {
    temp_folder t;
    make_http(t.path());
    const auto folder = read_result_folder(t.path());
    EXPECT_EQ(folder.kind, folder_kind::http);
    ASSERT_EQ(folder.requests.size(), 4u);
    const auto html = render_report(folder);
    const auto s = http_summary();
    for (const char* k :
         {"p99_ttft_ms", "median_e2el_ms", "mean_tpot_ms", "p99_itl_ms", "request_throughput",
          "request_goodput", "goodput_requests", "failed", "dropped", "completed", "duration"}) {
        const auto v = data_value(html, k);
        ASSERT_TRUE(v) << k;
        EXPECT_EQ(std::strtod(v->c_str(), nullptr), s.at(k).to_number<double>()) << k;
    }
    for (const char* k : {"p99_ttft_ms", "mean_e2el_ms"}) {
        const auto v = data_value(html, std::string("uncorrected.") + k);
        ASSERT_TRUE(v) << k;
        EXPECT_EQ(std::strtod(v->c_str(), nullptr),
                  s.at("uncorrected").as_object().at(k).to_number<double>());
    }
    EXPECT_EQ(data_value(html, "errors.timeout"), "1");
    EXPECT_EQ(data_value(html, "open_loop.dispatch_lag_s.p99"), "0.00031234");
    EXPECT_EQ(data_value(html, "goodput_slo.ttft_ms"), "50");
    EXPECT_EQ(data_value(html, "open_loop.cap.binding"), "true");
    // The summary's ms are shown as ms; its seconds too.
    EXPECT_EQ(cell_text(html, "p99_ttft_ms"), "12.35 ms");
    EXPECT_EQ(cell_text(html, "open_loop.dispatch_lag_s.p99"), "0.3123 ms");
    EXPECT_NE(html.find("SCHEDULE KEPT"), std::string::npos);
    EXPECT_NE(html.find("1 request(s) failed"), std::string::npos);
    // Environment: the command line; markup in the host name is escaped.
    EXPECT_NE(html.find("<code>pacer http --rate 2</code>"), std::string::npos);
    EXPECT_NE(html.find("&lt;b&gt;host&lt;/b&gt;"), std::string::npos);
    EXPECT_NE(html.find("schedule.rate"), std::string::npos);
    for (const char* banned : {"<script", "<link", "src=", "href=", "url(", "@import"})
        EXPECT_EQ(html.find(banned), std::string::npos) << banned;
}

TEST(report_http, page_draws_every_plot_from_the_requests) {
    temp_folder t;
    make_http(t.path());
    const auto html = render_report(read_result_folder(t.path()));
    for (const char* id : {"plot-arrivals", "plot-dispatch-lag", "plot-ttft", "plot-e2el",
                           "plot-tpot-itl", "plot-goodput", "plot-errors"}) {
        const auto svg = svg_of(html, id);
        ASSERT_FALSE(svg.empty()) << id;
        EXPECT_GT(marks(svg), 0u) << id;
    }
    // TTFT from the schedule beside the uncorrected view, with the SLO line.
    const auto ttft = svg_of(html, "plot-ttft");
    EXPECT_NE(ttft.find("from the schedule"), std::string::npos);
    EXPECT_NE(ttft.find("uncorrected (from dispatch)"), std::string::npos);
    EXPECT_NE(ttft.find("SLO ttft ≤ 50 ms"), std::string::npos) << ttft;
    // Goodput: 1 of the 4 scheduled requests met the TTFT SLO of 50 ms (20 ms; 60 ms did not).
    EXPECT_NE(html.find("<td>TTFT</td><td class=\"num\">50 ms</td><td class=\"num\">1</td>"
                        "<td class=\"num\">25</td>"),
              std::string::npos);
    // The distinct error message with its kind and count.
    EXPECT_NE(html.find("<td>timeout</td><td>no complete answer within --timeout</td><td "
                        "class=\"num\">1</td>"),
              std::string::npos);
}

TEST(report_http, export_has_a_row_per_request_and_per_token_with_units) {
    temp_folder t;
    make_http(t.path());
    const auto tables = build_tables(read_result_folder(t.path()));
    ASSERT_EQ(tables.size(), 2u);
    EXPECT_EQ(tables[0].name, "requests");
    EXPECT_EQ(tables[0].rows.size(), 4u);
    const auto& cols = tables[0].columns;
    for (const char* c : {"scheduled_s", "dispatched_s", "first_token_s", "completed_s",
                          "dispatch_lag_ms", "ttft_ms", "ttft_uncorrected_ms", "tpot_ms", "e2el_ms",
                          "e2el_uncorrected_ms", "error", "status", "dropped"})
        EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << c;
    const auto csv = to_csv(tables[0]);
    EXPECT_NE(csv.find("\n3,1.5,,,,,,,,,,,true,"), std::string::npos) << csv; // the dropped one
    EXPECT_NE(csv.find(",timeout,no complete answer within --timeout,"), std::string::npos);
    EXPECT_EQ(tables[1].name, "tokens");
    EXPECT_EQ(tables[1].rows.size(), 8u);
    EXPECT_EQ(tables[1].columns,
              (std::vector<std::string>{"request", "token", "arrival_s", "itl_ms"}));
}

TEST(report_http, a_summary_written_before_it_named_its_command_is_read_too) {
    temp_folder t;
    auto s = http_summary();
    s.erase("command");
    write(t.path() / "summary.json", json::serialize(s));
    write(t.path() / "requests.jsonl", requests_jsonl());
    EXPECT_EQ(read_result_folder(t.path()).kind, folder_kind::http);
}

TEST(report_http, http_runs_are_not_compared) {
    temp_folder a, b;
    make_http(a.path());
    make_http(b.path());
    try {
        (void)render_comparison(read_result_folder(a.path()), read_result_folder(b.path()));
        FAIL() << "compared";
    } catch (const folder_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("does not compare http runs"), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos);
    }
}

TEST(report_http, capacity_search_page_shows_every_probe_and_the_capacity) {
    temp_folder t;
    json::array probes;
    const double rates[] = {20, 40, 30};
    const bool passed[] = {true, false, true};
    for (int i = 0; i < 3; ++i) {
        const auto folder = fmt::format("probe-{:02}-rate-{}", i + 1, rates[i]);
        probes.push_back(json::object{{"rate", rates[i]},
                                      {"schedule_kept", true},
                                      {"goodput_fraction", passed[i] ? 0.99 : 0.5},
                                      {"failed", 0},
                                      {"passed", passed[i]},
                                      {"folder", folder}});
        auto s = http_summary();
        s["p99_ttft_ms"] = 10.5 * (i + 1);
        make_http(t.path() / folder);
        write(t.path() / folder / "summary.json", json::serialize(s));
    }
    write(t.path() / "capacity.json",
          json::serialize(json::object{
              {"capacity_rps", 30.0},
              {"first_failing_rps", 40.0},
              {"criterion", json::object{{"goodput", "ttft:50"}, {"goodput_fraction", 0.95}}},
              {"client_limited", false},
              {"interrupted", false},
              {"probes", probes}}));
    const auto folder = read_result_folder(t.path());
    EXPECT_EQ(folder.kind, folder_kind::http_capacity);
    EXPECT_EQ(folder.parts.size(), 3u);
    const auto html = render_report(folder);
    EXPECT_EQ(data_value(html, "capacity_rps"), "30");
    EXPECT_EQ(data_value(html, "probes[1].rate"), "40");
    EXPECT_EQ(data_value(html, "probes[1].passed"), "false");
    EXPECT_NE(html.find("CAPACITY 30 requests/s"), std::string::npos);
    const auto good = svg_of(html, "plot-capacity-goodput");
    EXPECT_EQ(marks(good), 4u); // the line and one dot per probe
    EXPECT_NE(good.find("capacity 30/s"), std::string::npos);
    const auto lat = svg_of(html, "plot-capacity-latency");
    EXPECT_NE(lat.find("TTFT p99 31.5 ms"), std::string::npos) << lat; // probe 3, from its folder
    const auto tables = build_tables(folder);
    ASSERT_EQ(tables.size(), 1u);
    EXPECT_EQ(tables[0].name, "probes");
    EXPECT_EQ(tables[0].rows.size(), 3u);
    EXPECT_NE(to_csv(tables[0]).find("3,30,true,true,0.99,0,31.5,"), std::string::npos)
        << to_csv(tables[0]);
}

} // namespace

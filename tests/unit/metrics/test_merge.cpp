// Merging parts pools every packet: the percentiles are those of the union, never averages.

#include <pacer/core/bad_input.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/metrics/merge.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/session/open_loop.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <unistd.h>

namespace {

using namespace pacer::metrics;

run_part make_part(double monotonic, double realtime, std::vector<session_samples> sessions) {
    run_part p;
    p.dir = "part";
    std::size_t sent = 0;
    for (const auto& s : sessions)
        sent += s.deviation_s.size();
    p.summary =
        boost::json::parse(
            R"({"pacing":{"sessions":{"requested":)" + std::to_string(sessions.size()) +
            R"(,"admitted":1,"rejected":0,"complete":)" + std::to_string(sessions.size()) +
            R"(},"packets":{"expected":)" + std::to_string(sent) + R"(,"sent":)" +
            std::to_string(sent) +
            R"(},"loop_lag_s":{"p99":0.001,"max":0.002,"over_80ms":0}},"clock":{"monotonic_s":)" +
            std::to_string(monotonic) + R"(,"realtime_s":)" + std::to_string(realtime) + "}}")
            .as_object();
    p.sessions = std::move(sessions);
    return p;
}

TEST(merge, pooled_percentiles_are_those_of_all_packets) {
    // Part A: deviations 0, 1, 2 ms; part B: 3, 100 ms (one late packet).
    const auto a = make_part(100, 1000, {{10.0, {0.000, 0.001, 0.002}}});
    const auto b = make_part(100, 1000, {{10.0, {0.003, 0.100}}});
    const auto m = merge_parts({a, b});
    const auto& dev = m.at("pacing").at("pacing_deviation_s").as_object();
    std::vector<double> all{0.000, 0.001, 0.002, 0.003, 0.100};
    EXPECT_EQ(dev.at("n").as_uint64(), 5u);
    EXPECT_DOUBLE_EQ(dev.at("p50").as_double(), *pacer::percentile(all, 0.5)); // 0.002
    EXPECT_DOUBLE_EQ(dev.at("p90").as_double(), *pacer::percentile(all, 0.9));
    EXPECT_DOUBLE_EQ(dev.at("max").as_double(), 0.100);
    EXPECT_EQ(m.at("pacing").at("packets").at("late").as_uint64(), 1u);
    EXPECT_EQ(m.at("pacing").at("sessions").at("with_late_packet").as_uint64(), 1u);
    EXPECT_FALSE(m.at("pacing_qualified").as_bool());
    EXPECT_EQ(m.at("parts").as_array().size(), 2u);
}

TEST(merge, overlap_is_counted_on_the_wall_clock) {
    // Two hosts whose monotonic clocks differ by 5000 s but whose streams overlap on the wall
    // clock: A streams wall 1000..1000.16, B streams wall 1000.08..1000.24.
    const auto a = make_part(0, 1000, {{0.0, {0.0, 0.0, 0.0}}});
    const auto b = make_part(5000, 1000.08, {{5000.0, {0.0, 0.0, 0.0}}});
    EXPECT_EQ(merge_parts({a, b}).at("pacing").at("peak_overlapping_input_streams").as_uint64(),
              2u);
    // Shift B by a further second of wall clock: no overlap.
    const auto c = make_part(5000, 1001.0, {{5000.0, {0.0, 0.0, 0.0}}});
    EXPECT_EQ(merge_parts({a, c}).at("pacing").at("peak_overlapping_input_streams").as_uint64(),
              1u);
}

TEST(merge, a_stream_spans_its_parts_own_chunk) {
    // Three appends from wall 1000: at 80 ms they end at 1000.16, at vllm-omni's 200 ms chunk
    // (config.packet_ms) at 1000.40, over B's start at 1000.30.
    auto a = make_part(0, 1000, {{0.0, {0.0, 0.0, 0.0}}});
    const auto b = make_part(5000, 1000.30, {{5000.0, {0.0, 0.0, 0.0}}});
    EXPECT_DOUBLE_EQ(append_period_s(a.summary), 0.080);
    EXPECT_EQ(merge_parts({a, b}).at("pacing").at("peak_overlapping_input_streams").as_uint64(),
              1u);
    a.summary["config"] = boost::json::object{{"packet_ms", 200}};
    EXPECT_DOUBLE_EQ(append_period_s(a.summary), 0.200);
    EXPECT_EQ(merge_parts({a, b}).at("pacing").at("peak_overlapping_input_streams").as_uint64(),
              2u);
}

TEST(merge, no_parts_is_an_empty_unqualified_summary) {
    const auto m = merge_parts({});
    EXPECT_EQ(m.at("pacing").at("pacing_deviation_s").at("n").as_uint64(), 0u);
    EXPECT_FALSE(m.at("pacing_qualified").as_bool());
}

} // namespace

namespace {

run_part host_part(const char* host, bool synced, double max_error) {
    auto p = make_part(0, 1000, {{0.0, {0.0}}});
    p.summary["host"] = host;
    p.summary["clock"].as_object()["sync"] = boost::json::object{
        {"synchronized", synced}, {"max_error_s", max_error}, {"est_error_s", 0.0}};
    return p;
}

TEST(merge, clocks_of_several_hosts_must_be_trustworthy) {
    // One host: its parts share their clocks, nothing to check even when unsynchronised.
    EXPECT_NO_THROW(
        check_clocks({host_part("a", false, 16), host_part("a", false, 16)}, 0.010, false));
    // Two hosts, both synchronised within the bound.
    EXPECT_NO_THROW(
        check_clocks({host_part("a", true, 0.002), host_part("b", true, 0.004)}, 0.010, false));
    // An unsynchronised or too uncertain clock is refused, naming the part...
    EXPECT_THROW(
        check_clocks({host_part("a", true, 0.002), host_part("b", false, 0.004)}, 0.010, false),
        pacer::bad_input);
    EXPECT_THROW(
        check_clocks({host_part("a", true, 0.002), host_part("b", true, 0.5)}, 0.010, false),
        pacer::bad_input);
    // ...unless the user accepts the skew.
    EXPECT_NO_THROW(
        check_clocks({host_part("a", true, 0.002), host_part("b", false, 16)}, 0.010, true));
}

} // namespace

// Scale-out gaps: integer counts, parts given twice, parts that did not stream together,
// open-loop shards, and parts that did not finish.

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

bool is_integer(const json::value& v) {
    return v.is_int64() || v.is_uint64();
}

TEST(merge, counts_stay_json_integers) {
    const auto a = make_part(100, 1000, {{10.0, {0.000, 0.001}}, {10.0, {0.1}}});
    const auto b = make_part(100, 1000, {{10.0, {0.003}}});
    const auto m = merge_parts({a, b});
    const auto& p = m.at("pacing").as_object();
    for (const char* k :
         {"requested", "admitted", "rejected", "complete", "incomplete", "with_late_packet"})
        EXPECT_TRUE(is_integer(p.at("sessions").at(k)))
            << "sessions." << k << " is " << json::serialize(p.at("sessions").at(k));
    for (const char* k : {"expected", "sent", "late"})
        EXPECT_TRUE(is_integer(p.at("packets").at(k))) << "packets." << k;
    EXPECT_TRUE(is_integer(p.at("loop_lag_s").at("over_80ms")));
    EXPECT_TRUE(is_integer(p.at("trace_channel").at("waits")));
    for (const char* k : {"sessions", "stalled_sends", "sessions_ended_with_send_pending"})
        EXPECT_TRUE(is_integer(p.at("send_stalls").at(k))) << "send_stalls." << k;
    EXPECT_TRUE(is_integer(p.at("peak_overlapping_input_streams")));
    for (const auto& part : m.at("parts").as_array()) {
        EXPECT_TRUE(is_integer(part.at("sessions")));
        EXPECT_TRUE(is_integer(part.at("peak_rss_bytes")));
    }
    EXPECT_EQ(json::serialize(p.at("sessions").at("requested")), "3");
    EXPECT_EQ(json::serialize(p.at("packets").at("sent")), "4");
}

run_part named(run_part p, const std::string& dir, const std::string& run_id) {
    p.dir = dir;
    if (!run_id.empty())
        p.summary["run_id"] = run_id;
    return p;
}

TEST(merge, the_same_folder_twice_is_refused) {
    const auto p = make_part(100, 1000, {{10.0, {0.0}}});
    EXPECT_NO_THROW(check_distinct({named(p, "runs/a", "1"), named(p, "runs/b", "2")}));
    // Another spelling of one path.
    EXPECT_THROW(check_distinct({named(p, "runs/a", "1"), named(p, "runs/../runs/./a", "2")}),
                 pacer::bad_input);
    // A symlink to it.
    const auto root =
        fs::temp_directory_path() / ("pacer-test-merge-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(std::random_device{}()));
    fs::create_directories(root / "a");
    fs::create_directory_symlink(root / "a", root / "link");
    EXPECT_THROW(check_distinct({named(p, (root / "a").string(), "1"),
                                 named(p, (root / "link").string(), "2")}),
                 pacer::bad_input);
    fs::remove_all(root);
}

TEST(merge, the_same_run_copied_is_refused) {
    const auto p = make_part(100, 1000, {{10.0, {0.0}}});
    try {
        check_distinct({named(p, "runs/a", "f00d"), named(p, "copy/a", "f00d")});
        ADD_FAILURE() << "a copy of one run was accepted";
    } catch (const pacer::bad_input& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("runs/a"), std::string::npos) << what;
        EXPECT_NE(what.find("copy/a"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << "one line";
    }
    // Runs written before the run id: the host and the clock pair read at the start.
    EXPECT_THROW(check_distinct({named(p, "runs/a", ""), named(p, "copy/a", "")}),
                 pacer::bad_input);
    const auto later = make_part(100.5, 1000.5, {{10.0, {0.0}}});
    EXPECT_NO_THROW(check_distinct({named(p, "runs/a", ""), named(later, "runs/b", "")}));
}

TEST(merge, the_same_shard_twice_is_refused) {
    auto shard = [](std::size_t index, const std::string& dir, const std::string& id) {
        auto p = named(make_part(100, 1000, {{10.0, {0.0}}}), dir, id);
        p.summary["shard"] = json::object{
            {"index", index}, {"count", 3}, {"source", "--shard"}, {"sessions_total", 7}};
        return p;
    };
    EXPECT_NO_THROW(check_distinct({shard(0, "s0", "1"), shard(1, "s1", "2")}));
    EXPECT_THROW(check_distinct({shard(1, "s1", "1"), shard(1, "s1-again", "2")}),
                 pacer::bad_input);
}

run_part windowed(double realtime, double wall_s, const std::string& dir) {
    auto p = make_part(50, realtime, {{50.0, {0.0}}});
    p.dir = dir;
    p.summary["resources"] = json::object{{"wall_s", wall_s}};
    return p;
}

TEST(merge, parts_that_did_not_stream_together_are_refused) {
    // Overlapping runs on the wall clock: 1000..1010 and 1005..1012.
    EXPECT_EQ(check_overlap({windowed(1000, 10, "a"), windowed(1005, 7, "b")}, false),
              std::nullopt);
    // One after the other: 1000..1010, then 1020..1030.
    const std::vector<run_part> disjoint{windowed(1000, 10, "a"), windowed(1005, 7, "b"),
                                         windowed(1020, 10, "c")};
    try {
        (void)check_overlap(disjoint, false);
        ADD_FAILURE() << "disjoint parts were accepted";
    } catch (const pacer::bad_input& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("a and c"), std::string::npos) << what;
        EXPECT_NE(what.find("--allow-disjoint"), std::string::npos) << what;
    }
    // --allow-disjoint: merged, with the warning to record.
    const auto warning = check_overlap(disjoint, true);
    ASSERT_TRUE(warning);
    EXPECT_NE(warning->find("did not stream at the same time"), std::string::npos) << *warning;
    // A part with no clock pair cannot be placed.
    auto unknown = windowed(1000, 10, "u");
    unknown.summary.erase("clock");
    EXPECT_THROW((void)check_overlap({windowed(1000, 10, "a"), unknown}, false), pacer::bad_input);
}

// An open-loop shard: arrival i of `lags` is arrival first + i * stride of a schedule of
// `total`, scheduled every 100 ms, dispatched `lag` late and completed 1 s after its schedule.
run_part open_loop_part(const std::string& dir, std::size_t first, std::size_t stride,
                        std::vector<double> lags, std::size_t total,
                        const std::string& sha = "abc123", std::uint64_t cap = 0) {
    auto p = named(make_part(100, 1000, {{10.0, {0.0}}}), dir, dir);
    p.summary["open_loop"] = json::object{
        {"requests", json::object{{"scheduled", lags.size()}}},
        {"cap", json::object{{"max_concurrency", cap}, {"policy", "queue"}, {"peak_in_flight", 2}}},
        {"schedule_kept_thresholds_s",
         json::object{{"dispatch_lag_p99", 0.005}, {"dispatch_lag_max", 0.080}}},
        {"errors", json::array{}},
        {"interrupted", false},
        {"schedule", json::object{{"arrivals", total}, {"sha256", sha}, {"file", "x"}}}};
    std::vector<arrival_sample> arrivals;
    for (std::size_t i = 0; i < lags.size(); ++i) {
        arrival_sample a;
        a.index = first + i * stride;
        a.offset_ns = static_cast<std::int64_t>(a.index) * 100'000'000;
        a.dispatched_s = static_cast<double>(a.offset_ns) / 1e9 + lags[i];
        a.completed_s = static_cast<double>(a.offset_ns) / 1e9 + 1.0;
        arrivals.push_back(a);
    }
    p.arrivals = std::move(arrivals);
    return p;
}

TEST(merge, open_loop_shards_pool_dispatch_lag_and_latency) {
    // Shard 0/2 takes arrivals 0, 2; shard 1/2 takes 1, 3 (whose dispatch was 100 ms late).
    const auto a = open_loop_part("w0", 0, 2, {0.001, 0.003}, 4, "abc123", 2);
    const auto b = open_loop_part("w1", 1, 2, {0.002, 0.100}, 4, "abc123", 2);
    const auto m = merge_parts({a, b});
    ASSERT_TRUE(m.contains("open_loop")) << json::serialize(m);
    const auto& ol = m.at("open_loop").as_object();
    EXPECT_EQ(ol.at("requests").at("scheduled").as_uint64(), 4u);
    EXPECT_EQ(ol.at("requests").at("completed").as_uint64(), 4u);
    const auto& lag = ol.at("dispatch_lag_s").as_object();
    EXPECT_EQ(lag.at("n").as_uint64(), 4u);
    EXPECT_NEAR(lag.at("max").as_double(), 0.100, 1e-6);
    const std::vector<double> lags{0.001, 0.002, 0.003, 0.100};
    EXPECT_NEAR(lag.at("p50").as_double(), *pacer::percentile(lags, 0.5), 1e-6);
    // Recomputed on the pooled lags: the 100 ms dispatch breaks the 80 ms bound.
    EXPECT_FALSE(ol.at("schedule_kept").as_bool());
    EXPECT_EQ(ol.at("deadline_missed").as_uint64(), 1u);
    const auto& lat = ol.at("latency_s").as_object();
    EXPECT_EQ(lat.at("n").as_uint64(), 4u);
    EXPECT_NEAR(lat.at("max").as_double(), 1.0, 1e-6);
    EXPECT_EQ(ol.at("cap").at("max_concurrency").as_uint64(), 4u) << "summed over the parts";
    EXPECT_EQ(ol.at("cap").at("peak_in_flight").as_uint64(), 4u);
    EXPECT_EQ(ol.at("schedule").at("sha256").as_string(), "abc123");
    EXPECT_TRUE(ol.at("schedule").at("covered").as_bool());
    // One shard alone does not cover the schedule.
    EXPECT_FALSE(merge_parts({a}).at("open_loop").at("schedule").at("covered").as_bool());
    // Shards without a binding problem keep the schedule.
    const auto c = open_loop_part("w1", 1, 2, {0.002, 0.002}, 4);
    EXPECT_TRUE(merge_parts({a, c}).at("open_loop").at("schedule_kept").as_bool());
}

TEST(merge, open_loop_shards_pool_the_rows_of_a_staged_schedule) {
    // Arrivals every 100 ms: 0-3 fall in the first 0.35 s stage, 4-7 in the second; shard 0/2
    // takes the even ones, shard 1/2 the odd ones, whose arrival 5 failed.
    auto a = open_loop_part("w0", 0, 2, {0.001, 0.001, 0.001, 0.001}, 8);
    auto b = open_loop_part("w1", 1, 2, {0.002, 0.002, 0.002, 0.002}, 8);
    (*b.arrivals)[2].failed = true;
    for (auto* p : {&a, &b})
        p->summary["open_loop"].as_object()["schedule"].as_object()["stages"] =
            "350ms:10/s,450ms:10/s";
    const auto m = merge_parts({a, b});
    const auto& rows = m.at("open_loop").at("stages").as_array();
    ASSERT_EQ(rows.size(), 2u) << json::serialize(m);
    EXPECT_EQ(rows[0].at("offered").as_uint64(), 4u);
    EXPECT_EQ(rows[0].at("completed").as_uint64(), 4u);
    EXPECT_EQ(rows[1].at("offered").as_uint64(), 4u);
    EXPECT_EQ(rows[1].at("completed").as_uint64(), 3u);
    EXPECT_EQ(rows[1].at("failed").as_uint64(), 1u);
    EXPECT_EQ(rows[1].at("latency_s").at("n").as_uint64(), 3u);
    EXPECT_NEAR(rows[1].at("from_s").as_double(), 0.35, 1e-9);
    // A schedule without stages has no rows, in a part or pooled.
    EXPECT_FALSE(merge_parts({open_loop_part("w0", 0, 2, {0.001}, 2),
                              open_loop_part("w1", 1, 2, {0.001}, 2)})
                     .at("open_loop")
                     .as_object()
                     .contains("stages"));
}

TEST(merge, open_loop_parts_must_share_one_schedule) {
    const auto a = open_loop_part("w0", 0, 2, {0.001}, 2, "abc123");
    EXPECT_NO_THROW(check_compatible({a, open_loop_part("w1", 1, 2, {0.001}, 2, "abc123")}));
    EXPECT_THROW(check_compatible({a, open_loop_part("w1", 1, 2, {0.001}, 2, "def456")}),
                 pacer::bad_input);
    EXPECT_THROW(check_compatible({a, make_part(100, 1000, {{10.0, {0.0}}})}), pacer::bad_input);
}

TEST(merge, samples_json_carries_the_open_loop_arrivals) {
    // Shard 1/3 of a schedule: its records 0, 1 are arrivals 1, 4.
    pacer::session::open_loop_result r;
    r.start = pacer::time_point(std::chrono::seconds(500));
    r.records.resize(2);
    r.records[0].scheduled = r.start + std::chrono::nanoseconds(123'456'789);
    r.records[0].dispatched = r.records[0].scheduled + std::chrono::milliseconds(2);
    r.records[0].completed = r.records[0].scheduled + std::chrono::seconds(1);
    r.records[1].scheduled = r.start + std::chrono::seconds(2);
    r.records[1].dropped = true;
    const auto root =
        fs::temp_directory_path() / ("pacer-test-samples-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(std::random_device{}()));
    fs::create_directories(root);
    std::ofstream(root / "samples.json") << samples_json({}, {&r, 1, 3});
    std::ofstream(root / "summary.json") << R"({"pacing":{}})";
    const auto part = read_run_part(root);
    fs::remove_all(root);
    ASSERT_TRUE(part.arrivals);
    ASSERT_EQ(part.arrivals->size(), 2u);
    const auto& a = (*part.arrivals)[0];
    EXPECT_EQ(a.index, 1u);
    EXPECT_EQ(a.offset_ns, 123'456'789);
    ASSERT_TRUE(a.dispatched_s);
    EXPECT_NEAR(*a.dispatched_s, 0.125456789, 1e-9);
    ASSERT_TRUE(a.completed_s);
    EXPECT_NEAR(*a.completed_s, 1.123456789, 1e-9);
    const auto& b = (*part.arrivals)[1];
    EXPECT_EQ(b.index, 4u);
    EXPECT_TRUE(b.dropped);
    EXPECT_FALSE(b.dispatched_s);
    // A closed-loop samples.json has none.
    EXPECT_NE(samples_json({}).find("\"sessions\":[]}"), std::string::npos);
}

TEST(merge, interrupted_or_incomplete_parts_are_named) {
    auto ok = make_part(100, 1000, {{10.0, {0.0}}});
    ok.dir = "ok";
    auto short_part = make_part(100, 1000, {{10.0, {0.0}}, {10.0, {}}});
    short_part.dir = "short";
    short_part.summary["pacing"].as_object()["sessions"].as_object()["complete"] = 1;
    auto stopped = make_part(100, 1000, {{10.0, {0.0}}});
    stopped.dir = "stopped";
    stopped.summary["interrupted"] = true;
    EXPECT_TRUE(merge_parts({ok}).at("complete").as_bool());
    EXPECT_TRUE(merge_parts({ok}).at("incomplete_parts").as_array().empty());
    const auto m = merge_parts({ok, short_part, stopped});
    EXPECT_FALSE(m.at("complete").as_bool());
    EXPECT_TRUE(m.at("interrupted").as_bool());
    const auto& inc = m.at("incomplete_parts").as_array();
    ASSERT_EQ(inc.size(), 2u);
    EXPECT_EQ(inc[0].at("dir").as_string(), "short");
    EXPECT_EQ(inc[0].at("sessions_incomplete").as_uint64(), 1u);
    EXPECT_FALSE(inc[0].at("interrupted").as_bool());
    EXPECT_EQ(inc[1].at("dir").as_string(), "stopped");
    EXPECT_TRUE(inc[1].at("interrupted").as_bool());
}

} // namespace

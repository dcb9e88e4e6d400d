// Merging parts pools every packet: the percentiles are those of the union, never averages.

#include <pacer/core/stats.hpp>
#include <pacer/metrics/merge.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

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
        std::runtime_error);
    EXPECT_THROW(
        check_clocks({host_part("a", true, 0.002), host_part("b", true, 0.5)}, 0.010, false),
        std::runtime_error);
    // ...unless the user accepts the skew.
    EXPECT_NO_THROW(
        check_clocks({host_part("a", true, 0.002), host_part("b", false, 16)}, 0.010, true));
}

} // namespace

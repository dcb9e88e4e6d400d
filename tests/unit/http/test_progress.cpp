// The progress line of `pacer http`: its text from a snapshot, the snapshot from the live
// totals and the histogram behind its percentiles. No clock of its own: every instant is given.

#include <pacer/core/live_histogram.hpp>
#include <pacer/http/progress.hpp>
#include <pacer/telemetry/exposition.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace pacer::http {
namespace {

using namespace std::chrono_literals;

http_progress_snapshot some_figures() {
    http_progress_snapshot s;
    s.total = 3000;
    s.due = 600;
    s.dispatched = 598;
    s.done = 580;
    s.failed[2] = 4; // timeout
    s.failed[1] = 2; // http_status
    s.dispatch_lag_p99_s = 0.000213;
    s.ttft_p50_s = 0.0351;
    return s;
}

TEST(HttpProgressLine, PlainFormHasEveryFigure) {
    const auto line = format_http_progress(some_figures(), {12.2, 60.0, "", {}}, false);
    EXPECT_EQ(line, "progress 12s (ETA 48s)  requests 600/3000 due, 598 dispatched, 12 in flight, "
                    "580 done, 6 failed (http_status 2, timeout 4)  dispatch lag p99 0.213 ms  "
                    "TTFT p50 35.1 ms\n");
}

// --metrics-listen: the same figures, read back by pacer's own exposition parser.
TEST(HttpMetricsText, ServesEveryFigureWithFailuresByKind) {
    const auto text = http_metrics_text(some_figures(), 50.0);
    const auto e = telemetry::parse_exposition(text);
    EXPECT_TRUE(e.warnings.empty()) << text;
    std::map<std::string, double> v; // by `name{labels}`
    for (const auto& x : e.samples) {
        const auto line = telemetry::format_sample({x.name, x.labels, 0, {}});
        v[line.substr(0, line.rfind(' '))] = x.value;
    }
    EXPECT_EQ(v["pacer_http_requests_scheduled"], 3000);
    EXPECT_EQ(v["pacer_http_requests_due"], 600);
    EXPECT_EQ(v["pacer_http_requests_dispatched_total"], 598);
    EXPECT_EQ(v["pacer_http_requests_done_total"], 580);
    EXPECT_EQ(v["pacer_http_requests_failed_total{kind=\"timeout\"}"], 4);
    EXPECT_EQ(v["pacer_http_requests_failed_total{kind=\"http_status\"}"], 2);
    EXPECT_EQ(v["pacer_http_requests_failed_total{kind=\"other\"}"], 0);
    EXPECT_EQ(v["pacer_http_requests_in_flight"], 12);
    EXPECT_EQ(v["pacer_http_offered_rate"], 50);
    EXPECT_DOUBLE_EQ(v["pacer_http_dispatch_lag_p99_seconds"], 0.000213);
    EXPECT_DOUBLE_EQ(v["pacer_http_ttft_p50_seconds"], 0.0351);
    EXPECT_EQ(v.count("pacer_http_max_concurrency"), 0u); // no cap
    EXPECT_EQ(e.type_of("pacer_http_requests_done_total"), telemetry::metric_type::counter);
    EXPECT_EQ(e.type_of("pacer_http_requests_in_flight"), telemetry::metric_type::gauge);
    // Figures not yet known are absent, not zero.
    const auto empty = telemetry::parse_exposition(http_metrics_text({}, 0));
    for (const auto& x : empty.samples)
        EXPECT_TRUE(x.name != "pacer_http_ttft_p50_seconds" &&
                    x.name != "pacer_http_dispatch_lag_p99_seconds")
            << x.name;
}

TEST(HttpProgressLine, CapBindingSaysWhatItHeldAndDropped) {
    auto s = some_figures();
    s.max_concurrency = 12;
    EXPECT_NE(format_http_progress(s, {1, std::nullopt, "", {}}, false)
                  .find("cap 12/12 binding: 2 "
                        "held, 0 delayed, 0 "
                        "dropped\n"),
              std::string::npos);
    s.due = 598;
    EXPECT_NE(format_http_progress(s, {1, std::nullopt, "", {}}, false).find("  cap 12/12\n"),
              std::string::npos);
}

TEST(HttpProgressLine, TerminalFormIsOneLineCutToTheWidthAndUnknownFiguresAreDashes) {
    http_progress_snapshot s;
    s.total = 5;
    const auto line = format_http_progress(s, {0, 1.0, "probe 2", {}}, true);
    EXPECT_EQ(line, "\r\033[Kprogress probe 2  0s (ETA 1s)  requests 0/5 due, 0 dispatched, 0 in "
                    "flight, 0 done, 0 failed  dispatch lag p99 –  TTFT p50 –");
    EXPECT_EQ(format_http_progress(s, {0, 1.0, "", {}}, true, 21), "\r\033[Kprogress 0s (ETA 1s)");
}

TEST(HttpProgressSnapshot, DueFollowsTheScheduleFromTheDispatchersStart) {
    session::open_loop_live d;
    http_live q;
    const std::vector<std::chrono::nanoseconds> offsets{0ns, 1s, 2s, 3s};
    const auto t0 = clock::now();
    // Before the dispatcher started, nothing is due.
    EXPECT_EQ(take_http_snapshot(d, q, offsets, 0, t0).due, 0u);
    d.start_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(t0.time_since_epoch()).count();
    d.dispatched = 3;
    d.dispatch_lag_ns.record(1'000'000);
    q.done = 1;
    q.failed.back() = 1;
    const auto s = take_http_snapshot(d, q, offsets, 2, t0 + 2500ms);
    EXPECT_EQ(s.due, 3u);
    EXPECT_EQ(s.total, 4u);
    EXPECT_EQ(s.in_flight(), 1u);
    EXPECT_EQ(s.failed_total(), 1u);
    EXPECT_EQ(s.max_concurrency, 2u);
    ASSERT_TRUE(s.dispatch_lag_p99_s);
    EXPECT_NEAR(*s.dispatch_lag_p99_s, 0.001, 0.000125);
    EXPECT_FALSE(s.ttft_p50_s);
}

TEST(LiveHistogram, QuantilesAreWithinOneBucketAndNeverBelow) {
    live_histogram h;
    EXPECT_FALSE(h.quantile(0.5));
    for (std::int64_t v = 1; v <= 1000; ++v)
        h.record(v * 1000); // 1 µs ... 1 ms
    EXPECT_EQ(h.count(), 1000u);
    for (double q : {0.5, 0.9, 0.99, 1.0}) {
        const auto exact = static_cast<double>(q * 1000) * 1000;
        const auto got = static_cast<double>(*h.quantile(q));
        EXPECT_GE(got, exact) << q;
        EXPECT_LE(got, exact * 1.125) << q;
    }
    // Buckets cover every value once, in order.
    for (std::int64_t v : {0L, 7L, 8L, 15L, 16L, 1000L, 123456789L, INT64_MAX}) {
        const auto b = live_histogram::bucket_of(v);
        EXPECT_LT(b, live_histogram::buckets);
        EXPECT_GE(live_histogram::upper_of(b), v);
        if (b > 0) {
            EXPECT_LT(live_histogram::upper_of(b - 1), v);
        }
    }
    EXPECT_EQ(live_histogram::bucket_of(-5), 0u);
}

} // namespace
} // namespace pacer::http

// core/histogram.hpp: the log-linear histogram a run folds its appends into. Its quantiles must
// stay within the documented precision (1/2,048 of the exact order statistics' magnitude, plus
// 1 ns of rounding) of the exact percentiles of the same sample; count, max and mean are exact;
// merging two histograms gives the histogram of the union.

#include <pacer/core/histogram.hpp>
#include <pacer/core/stats.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

using pacer::log_histogram;

// The exact order statistics `percentile_sorted` interpolates at fraction f, and the bound.
double tolerance(const std::vector<double>& sorted, double f) {
    const double pos = static_cast<double>(sorted.size() - 1) * f;
    const double a = sorted[static_cast<std::size_t>(std::floor(pos))];
    const double b = sorted[static_cast<std::size_t>(std::ceil(pos))];
    return std::max(std::abs(a), std::abs(b)) * log_histogram::relative_precision + 1e-9;
}

void expect_within_precision(std::vector<double> values, const log_histogram& h) {
    std::sort(values.begin(), values.end());
    ASSERT_EQ(h.count(), values.size());
    for (double f : {0.0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0}) {
        SCOPED_TRACE(f);
        const double exact = *pacer::percentile_sorted(values, f);
        EXPECT_NEAR(*h.quantile(f), exact, tolerance(values, f));
    }
}

TEST(log_histogram, quantiles_are_within_the_stated_precision_of_exact_ones) {
    std::mt19937_64 rng(20261201);
    // Deviations of both signs around a few ms, and send times spread over five decades.
    std::normal_distribution<double> deviation(0.0005, 0.004);
    std::lognormal_distribution<double> send_time(std::log(50e-6), 2.0);
    std::vector<double> d, s;
    log_histogram hd, hs;
    for (int i = 0; i < 200000; ++i) {
        d.push_back(deviation(rng));
        hd.record(d.back());
        s.push_back(send_time(rng));
        hs.record(s.back());
    }
    expect_within_precision(d, hd);
    expect_within_precision(s, hs);
    // |x| from the signed histogram
    std::vector<double> a;
    for (double x : d)
        a.push_back(std::abs(x));
    expect_within_precision(a, hd.absolute());
}

TEST(log_histogram, count_max_min_and_mean_are_exact) {
    std::vector<double> v{0.0123456789, -0.000987654321, 0.08, 1e-9, 3.5};
    log_histogram h;
    for (double x : v)
        h.record(x);
    auto copy = v;
    const auto exact = pacer::summarize(copy, pacer::pacing_fractions);
    const auto approx = h.summarize(pacer::pacing_fractions);
    EXPECT_EQ(approx.n, exact.n);
    EXPECT_EQ(*approx.max, *exact.max);
    EXPECT_EQ(*h.min(), -0.000987654321);
    EXPECT_DOUBLE_EQ(*approx.mean, *exact.mean);
    EXPECT_DOUBLE_EQ(*h.absolute().max(), 3.5);
    EXPECT_DOUBLE_EQ(*h.absolute().mean(), (0.0123456789 + 0.000987654321 + 0.08 + 1e-9 + 3.5) / 5);
    // Values below 2,048 ns have a bucket of their own: exact to the nanosecond.
    log_histogram small;
    for (int ns : {3, 1000, 2047, 5})
        small.record(ns * 1e-9);
    EXPECT_NEAR(*small.quantile(0.5), 502.5e-9, 1e-15);
}

TEST(log_histogram, an_empty_histogram_has_no_figures) {
    const log_histogram h;
    EXPECT_EQ(h.count(), 0u);
    EXPECT_FALSE(h.quantile(0.5));
    EXPECT_FALSE(h.max());
    EXPECT_FALSE(h.mean());
    const auto d = h.summarize(pacer::pacing_fractions);
    EXPECT_EQ(d.n, 0u);
    EXPECT_FALSE(d.at(0.99));
}

TEST(log_histogram, merge_equals_the_histogram_of_the_union) {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> x(0.0, 0.02);
    log_histogram a, b, both;
    for (int i = 0; i < 50000; ++i) {
        const double v = x(rng);
        (i % 3 == 0 ? a : b).record(v);
        both.record(v);
    }
    log_histogram merged = a;
    merged.merge(b);
    EXPECT_EQ(merged.count(), both.count());
    EXPECT_EQ(merged.min(), both.min());
    EXPECT_EQ(merged.max(), both.max());
    EXPECT_NEAR(*merged.mean(), *both.mean(), 1e-15);
    for (double f : {0.0, 0.5, 0.9, 0.99, 0.999, 1.0})
        EXPECT_EQ(merged.quantile(f), both.quantile(f)) << f;
    log_histogram empty;
    empty.merge(a);
    EXPECT_EQ(empty, a);
}

TEST(log_histogram, buckets_are_monotonic_and_their_midpoints_within_precision) {
    std::size_t last = 0;
    for (std::uint64_t ns = 1; ns < (std::uint64_t{1} << 40); ns = ns * 3 / 2 + 1) {
        const auto i = log_histogram::index_of(ns);
        EXPECT_GE(i, last);
        last = i;
        EXPECT_NEAR(log_histogram::midpoint_of(i), static_cast<double>(ns),
                    static_cast<double>(ns) * log_histogram::relative_precision + 0.5)
            << ns;
    }
}

} // namespace

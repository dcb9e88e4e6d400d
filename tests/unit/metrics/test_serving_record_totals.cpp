// `pacer record`'s run totals fold every append's deviation into a histogram batch by batch
// (memory bounded whatever the recording's length): `load.pacing.deviation_s` keeps its keys,
// n and max exact, the percentiles within the histogram's stated precision.

#include <pacer/core/histogram.hpp>
#include <pacer/metrics/serving.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

TEST(RecordTotals, FoldedDeviationsGiveTheExactDistributionWithinTheBound) {
    std::mt19937_64 rng(5);
    std::normal_distribution<double> dev(0.0003, 0.002);
    std::vector<double> all;
    pacer::log_histogram folded;
    for (int batch = 0; batch < 7; ++batch)
        for (int k = 0; k < 3000; ++k) {
            const double d = std::round(dev(rng) * 1e9) / 1e9; // whole ns, as receipts record
            all.push_back(d);
            folded.record(d);
        }
    const auto exact = pacer::metrics::distribution_json(all);
    const auto approx = pacer::metrics::histogram_distribution_json(folded);
    ASSERT_EQ(exact.size(), approx.size());
    for (const auto& [key, value] : exact)
        ASSERT_TRUE(approx.contains(key)) << key;
    EXPECT_EQ(approx.at("n"), exact.at("n"));
    EXPECT_DOUBLE_EQ(approx.at("max").as_double(), exact.at("max").as_double());
    for (const char* q : {"p50", "p75", "p95", "p99"}) {
        const double e = exact.at(q).as_double();
        EXPECT_NEAR(approx.at(q).as_double(), e,
                    2 * std::abs(e) * pacer::log_histogram::relative_precision + 2e-9)
            << q;
    }
    const auto empty = pacer::metrics::histogram_distribution_json(pacer::log_histogram{});
    EXPECT_EQ(empty.at("n").as_uint64(), 0u);
    EXPECT_TRUE(empty.at("p50").is_null());
}

} // namespace

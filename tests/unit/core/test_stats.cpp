// Unit tests of percentiles and distributions (docs/protocol.md §4, "Percentiles").

#include <pacer/core/stats.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace {

using pacer::percentile;
using pacer::percentile_sorted;
using pacer::summarize;

TEST(stats, protocol_check_p75_of_0_1_2_3_is_2_25) {
    const std::vector<double> v{0, 1, 2, 3};
    const auto p75 = percentile(v, 0.75);
    ASSERT_TRUE(p75.has_value());
    EXPECT_DOUBLE_EQ(*p75, 2.25);
}

TEST(stats, linear_interpolation_between_closest_ranks) {
    // pos = (n-1)*f; a[lo] + (a[hi]-a[lo])*(pos-lo): NumPy's default.
    const std::vector<double> v{10, 20, 30, 40, 50};
    EXPECT_DOUBLE_EQ(*percentile(v, 0.0), 10.0);
    EXPECT_DOUBLE_EQ(*percentile(v, 0.5), 30.0);
    EXPECT_DOUBLE_EQ(*percentile(v, 0.1), 14.0);  // pos 0.4
    EXPECT_DOUBLE_EQ(*percentile(v, 0.9), 46.0);  // pos 3.6
    EXPECT_DOUBLE_EQ(*percentile(v, 0.99), 49.6); // pos 3.96
    EXPECT_DOUBLE_EQ(*percentile(v, 1.0), 50.0);
    // Two values: the median is their mean.
    EXPECT_DOUBLE_EQ(*percentile(std::vector<double>{1, 2}, 0.5), 1.5);
}

TEST(stats, percentile_sorts_a_copy_and_leaves_the_input_alone) {
    const std::vector<double> v{3, 0, 2, 1};
    EXPECT_DOUBLE_EQ(*percentile(v, 0.75), 2.25);
    EXPECT_EQ(v, (std::vector<double>{3, 0, 2, 1}));
    // percentile_sorted trusts its input to be sorted.
    const std::vector<double> sorted{0, 1, 2, 3};
    EXPECT_DOUBLE_EQ(*percentile_sorted(sorted, 0.75), 2.25);
}

TEST(stats, empty_sample_has_no_percentile) {
    const std::vector<double> none;
    EXPECT_FALSE(percentile(none, 0.5).has_value());
    EXPECT_FALSE(percentile_sorted(none, 0.0).has_value());
    EXPECT_FALSE(percentile_sorted(none, 1.0).has_value());

    std::vector<double> values;
    const auto d = summarize(values, pacer::protocol_fractions);
    EXPECT_EQ(d.n, 0u);
    EXPECT_FALSE(d.max.has_value());
    EXPECT_FALSE(d.mean.has_value());
    for (double f : pacer::protocol_fractions)
        EXPECT_FALSE(d.at(f).has_value()) << f;
}

TEST(stats, single_value_is_every_percentile) {
    std::vector<double> values{0.042};
    const auto d = summarize(values, pacer::pacing_fractions);
    EXPECT_EQ(d.n, 1u);
    for (double f : pacer::pacing_fractions) {
        ASSERT_TRUE(d.at(f).has_value()) << f;
        EXPECT_DOUBLE_EQ(*d.at(f), 0.042) << f;
    }
    EXPECT_DOUBLE_EQ(*d.max, 0.042);
    EXPECT_DOUBLE_EQ(*d.mean, 0.042);
}

TEST(stats, summarize_sorts_in_place_and_computes_max_and_mean) {
    std::vector<double> values{3, 1, 0, 2};
    const auto d = summarize(values, pacer::protocol_fractions);
    EXPECT_EQ(values, (std::vector<double>{0, 1, 2, 3}));
    EXPECT_EQ(d.n, 4u);
    EXPECT_DOUBLE_EQ(*d.at(0.50), 1.5);
    EXPECT_DOUBLE_EQ(*d.at(0.75), 2.25);
    EXPECT_DOUBLE_EQ(*d.at(0.95), 2.85);
    EXPECT_DOUBLE_EQ(*d.at(0.99), 2.97);
    EXPECT_DOUBLE_EQ(*d.max, 3.0);
    EXPECT_DOUBLE_EQ(*d.mean, 1.5);
    // A fraction the distribution was not built with has no value.
    EXPECT_FALSE(d.at(0.25).has_value());
}

std::set<std::string> keys_of(const boost::json::object& o) {
    std::set<std::string> keys;
    for (const auto& kv : o)
        keys.emplace(kv.key());
    return keys;
}

TEST(stats, to_json_pacing_keys) {
    std::vector<double> values{4, 1, 3, 2};
    const auto o = pacer::to_json(summarize(values, pacer::pacing_fractions));
    EXPECT_EQ(keys_of(o), (std::set<std::string>{"n", "p50", "p90", "p99", "p99.9", "max", "mean"}))
        << boost::json::serialize(o);
    EXPECT_EQ(o.at("n").to_number<std::uint64_t>(), 4u);
    EXPECT_DOUBLE_EQ(o.at("p50").as_double(), 2.5);
    EXPECT_DOUBLE_EQ(o.at("p90").as_double(), 3.7);
    EXPECT_DOUBLE_EQ(o.at("p99").as_double(), 3.97);
    EXPECT_DOUBLE_EQ(o.at("p99.9").as_double(), 3.997);
    EXPECT_DOUBLE_EQ(o.at("max").as_double(), 4.0);
    EXPECT_DOUBLE_EQ(o.at("mean").as_double(), 2.5);
}

TEST(stats, to_json_protocol_keys) {
    std::vector<double> values{0, 1, 2, 3};
    const auto o = pacer::to_json(summarize(values, pacer::protocol_fractions));
    EXPECT_EQ(keys_of(o), (std::set<std::string>{"n", "p50", "p75", "p95", "p99", "max", "mean"}))
        << boost::json::serialize(o);
    EXPECT_DOUBLE_EQ(o.at("p75").as_double(), 2.25);
}

TEST(stats, to_json_of_an_empty_sample_is_n_0_and_nulls) {
    std::vector<double> values;
    const auto o = pacer::to_json(summarize(values, pacer::pacing_fractions));
    EXPECT_EQ(keys_of(o),
              (std::set<std::string>{"n", "p50", "p90", "p99", "p99.9", "max", "mean"}));
    EXPECT_EQ(o.at("n").to_number<std::uint64_t>(), 0u);
    for (const char* key : {"p50", "p90", "p99", "p99.9", "max", "mean"})
        EXPECT_TRUE(o.at(key).is_null()) << key << " in " << boost::json::serialize(o);
}

} // namespace

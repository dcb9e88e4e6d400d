#pragma once
// A log-linear histogram of signed durations (HdrHistogram's layout), for distributions that
// must not grow with a run's length: a run folds every append into one of these per session
// context instead of keeping the appends (docs/performance.md, "End of a run").
//
// Values are recorded in whole nanoseconds. Magnitudes below 2,048 ns have a bucket each
// (exact to the nanosecond); above, every power of two is cut into 1,024 buckets, so a
// bucket is at most 1/1,024 of its lower bound wide and its midpoint is within 1/2,048
// (0.05 %, better than 3 significant digits) of any value in it. Negative values are kept by
// magnitude in a second set of buckets. Count, sum, min and max are exact; quantiles are
// interpolated between closest ranks exactly as `percentile_sorted` does, on bucket midpoints
// clamped to [min, max], so each is within 1/2,048 of the larger magnitude of the two exact
// order statistics it interpolates (plus 1 ns of rounding).

#include <pacer/core/stats.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace pacer {

class log_histogram {
public:
    static constexpr int sub_bucket_bits = 11; ///< 2,048 exact buckets, 1,024 per power of two
    static constexpr double relative_precision = 1.0 / 2048;

    /// Records one value in seconds (rounded to the nanosecond). The hot path: a few ns.
    void record(double seconds) {
        double ns = std::abs(std::nearbyint(seconds * 1e9));
        if (!(ns < 9e18)) // beyond 285 years, or not a number: the last bucket
            ns = 9e18;
        const auto magnitude = static_cast<std::uint64_t>(ns);
        auto& buckets = seconds < 0 ? negative_ : positive_;
        const std::size_t i = index_of(magnitude);
        if (i >= buckets.size())
            buckets.resize(i + 1);
        ++buckets[i];
        if (count_ == 0 || seconds < min_)
            min_ = seconds;
        if (count_ == 0 || seconds > max_)
            max_ = seconds;
        const double magnitude_s = std::abs(seconds);
        if (count_ == 0 || magnitude_s < abs_min_)
            abs_min_ = magnitude_s;
        ++count_;
        sum_ += seconds;
        abs_sum_ += magnitude_s;
    }

    /// Adds every value of `other` (the histogram of the union of both samples).
    void merge(const log_histogram& other);

    /// The histogram of the magnitudes |x| (negative buckets folded onto positive ones).
    log_histogram absolute() const;

    std::uint64_t count() const { return count_; }
    std::optional<double> min() const;
    std::optional<double> max() const;
    std::optional<double> mean() const;
    /// The value at fraction `f` (0..1), as `percentile_sorted` would give it on the sample.
    std::optional<double> quantile(double f) const;
    /// The same summary as `pacer::summarize` (n, the quantiles, exact max and mean).
    distribution summarize(std::span<const double> fractions) const;

    /// The bucket of a magnitude in ns, and the midpoint of a bucket (ns).
    static std::size_t index_of(std::uint64_t ns) {
        constexpr std::uint64_t exact = std::uint64_t{1} << sub_bucket_bits;
        if (ns < exact)
            return static_cast<std::size_t>(ns);
        const int shift = std::bit_width(ns) - sub_bucket_bits; // >= 1
        const std::uint64_t top = ns >> shift;                  // [1024, 2048)
        return static_cast<std::size_t>(
            exact + (static_cast<std::uint64_t>(shift) - 1) * (exact / 2) + (top - exact / 2));
    }
    static double midpoint_of(std::size_t index);

    bool operator==(const log_histogram&) const = default;

private:
    // The value of the k-th smallest recorded value (0-based), as a bucket midpoint in seconds.
    double value_at_rank(std::uint64_t k) const;

    std::vector<std::uint64_t> negative_, positive_; // by index_of(|ns|)
    std::uint64_t count_ = 0;
    double sum_ = 0, abs_sum_ = 0, min_ = 0, max_ = 0, abs_min_ = 0;
};

} // namespace pacer

#pragma once
// Percentiles and distributions exactly as docs/protocol.md §4 defines them: linear
// interpolation between closest ranks (NumPy's default); an empty sample has no percentile.

#include <boost/json/value.hpp>

#include <optional>
#include <span>
#include <vector>

namespace pacer {

/// The value at fraction `f` (0..1) of an ascending `sorted` sample, interpolated linearly:
/// pos = (n-1)*f, a[lo] + (a[hi]-a[lo])*(pos-lo). Empty -> nullopt.
std::optional<double> percentile_sorted(std::span<const double> sorted, double f);

/// Sorts a copy of `values` and calls `percentile_sorted`.
std::optional<double> percentile(std::span<const double> values, double f);

/// A summary of one sample: its size and the requested percentiles, computed with one sort.
struct distribution {
    std::size_t n = 0;
    std::vector<std::pair<double, std::optional<double>>> quantiles; ///< (fraction, value)
    std::optional<double> max;
    std::optional<double> mean;

    /// The value at fraction `f`; `f` must be one of the fractions the distribution was built with.
    std::optional<double> at(double f) const;
};

/// The fractions of docs/protocol.md's `distribution`: p50, p75, p95, p99.
inline constexpr double protocol_fractions[] = {0.50, 0.75, 0.95, 0.99};
/// The fractions of the pacing summary: p50, p90, p99, p99.9.
inline constexpr double pacing_fractions[] = {0.50, 0.90, 0.99, 0.999};

/// Builds a distribution; `values` is sorted in place (no copy of large samples).
distribution summarize(std::vector<double>& values, std::span<const double> fractions);

/// `{"n":…, "p50":…, …, "max":…}` with nulls for an empty sample. Keys are `p50`, `p99`, `p99.9`.
boost::json::object to_json(const distribution& d);

} // namespace pacer

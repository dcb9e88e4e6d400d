#include <pacer/core/stats.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pacer {

std::optional<double> percentile_sorted(std::span<const double> sorted, double f) {
    if (sorted.empty())
        return std::nullopt;
    const double pos = static_cast<double>(sorted.size() - 1) * std::clamp(f, 0.0, 1.0);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = static_cast<std::size_t>(std::ceil(pos));
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

std::optional<double> percentile(std::span<const double> values, double f) {
    std::vector<double> copy(values.begin(), values.end());
    std::sort(copy.begin(), copy.end());
    return percentile_sorted(copy, f);
}

std::optional<double> distribution::at(double f) const {
    for (const auto& [fraction, value] : quantiles)
        if (fraction == f)
            return value;
    return std::nullopt;
}

distribution summarize(std::vector<double>& values, std::span<const double> fractions) {
    std::sort(values.begin(), values.end());
    distribution d;
    d.n = values.size();
    for (double f : fractions)
        d.quantiles.emplace_back(f, percentile_sorted(values, f));
    if (!values.empty()) {
        d.max = values.back();
        d.mean =
            std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    }
    return d;
}

namespace {
boost::json::value optional_json(const std::optional<double>& v) {
    return v ? boost::json::value(*v) : boost::json::value(nullptr);
}
} // namespace

boost::json::object to_json(const distribution& d) {
    boost::json::object o;
    o["n"] = d.n;
    for (const auto& [fraction, value] : d.quantiles)
        o[fmt::format("p{:g}", fraction * 100.0)] = optional_json(value);
    o["max"] = optional_json(d.max);
    o["mean"] = optional_json(d.mean);
    return o;
}

} // namespace pacer

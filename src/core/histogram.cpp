#include <pacer/core/histogram.hpp>

#include <algorithm>

namespace pacer {

void log_histogram::merge(const log_histogram& other) {
    if (other.count_ == 0)
        return;
    auto add = [](std::vector<std::uint64_t>& to, const std::vector<std::uint64_t>& from) {
        if (from.size() > to.size())
            to.resize(from.size());
        for (std::size_t i = 0; i < from.size(); ++i)
            to[i] += from[i];
    };
    add(negative_, other.negative_);
    add(positive_, other.positive_);
    abs_min_ = count_ == 0 ? other.abs_min_ : std::min(abs_min_, other.abs_min_);
    min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
    max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
    count_ += other.count_;
    sum_ += other.sum_;
    abs_sum_ += other.abs_sum_;
}

log_histogram log_histogram::absolute() const {
    log_histogram a;
    a.positive_ = positive_;
    if (negative_.size() > a.positive_.size())
        a.positive_.resize(negative_.size());
    for (std::size_t i = 0; i < negative_.size(); ++i)
        a.positive_[i] += negative_[i];
    a.count_ = count_;
    a.sum_ = abs_sum_;
    a.abs_sum_ = abs_sum_;
    if (count_ > 0) {
        a.max_ = std::max(std::abs(min_), std::abs(max_));
        a.min_ = abs_min_;
        a.abs_min_ = abs_min_;
    }
    return a;
}

std::optional<double> log_histogram::min() const {
    return count_ ? std::optional<double>(min_) : std::nullopt;
}

std::optional<double> log_histogram::max() const {
    return count_ ? std::optional<double>(max_) : std::nullopt;
}

std::optional<double> log_histogram::mean() const {
    return count_ ? std::optional<double>(sum_ / static_cast<double>(count_)) : std::nullopt;
}

double log_histogram::midpoint_of(std::size_t index) {
    constexpr std::uint64_t exact = std::uint64_t{1} << sub_bucket_bits;
    if (index < exact)
        return static_cast<double>(index);
    const auto shift = static_cast<int>((index - exact) / (exact / 2)) + 1;
    const std::uint64_t top = (index - exact) % (exact / 2) + exact / 2;
    const double lower = std::ldexp(static_cast<double>(top), shift);
    return lower + (std::ldexp(1.0, shift) - 1) / 2; // integer values lower .. lower + width - 1
}

double log_histogram::value_at_rank(std::uint64_t k) const {
    // The extremes are exact; in between, the bucket's midpoint, kept inside [min, max].
    if (k == 0)
        return min_;
    if (k + 1 == count_)
        return max_;
    std::uint64_t seen = 0;
    double v = max_;
    bool found = false;
    for (std::size_t i = negative_.size(); i-- > 0 && !found;) { // most negative first
        seen += negative_[i];
        if (seen > k) {
            v = -midpoint_of(i) * 1e-9;
            found = true;
        }
    }
    for (std::size_t i = 0; i < positive_.size() && !found; ++i) {
        seen += positive_[i];
        if (seen > k) {
            v = midpoint_of(i) * 1e-9;
            found = true;
        }
    }
    return std::clamp(v, min_, max_);
}

std::optional<double> log_histogram::quantile(double f) const {
    if (count_ == 0)
        return std::nullopt;
    const double pos = static_cast<double>(count_ - 1) * std::clamp(f, 0.0, 1.0);
    const auto lo = static_cast<std::uint64_t>(std::floor(pos));
    const auto hi = static_cast<std::uint64_t>(std::ceil(pos));
    const double a = value_at_rank(lo);
    const double b = hi == lo ? a : value_at_rank(hi);
    return a + (b - a) * (pos - static_cast<double>(lo));
}

distribution log_histogram::summarize(std::span<const double> fractions) const {
    distribution d;
    d.n = static_cast<std::size_t>(count_);
    for (double f : fractions)
        d.quantiles.emplace_back(f, quantile(f));
    d.max = max();
    d.mean = mean();
    return d;
}

} // namespace pacer

#pragma once
// A histogram of durations that any thread may add to and another may read while it fills:
// relaxed atomic counts in log-linear buckets (8 per power of two, so a quantile read back is
// within 12.5 % of the true value), no lock, no allocation. For live progress lines, where a
// percentile "so far" must cost the hot path one relaxed add; never for the measurement itself
// (the summaries sort the exact values).

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace pacer {

class live_histogram {
public:
    static constexpr std::size_t sub_buckets = 8; ///< per power of two
    static constexpr std::size_t buckets = 64 * sub_buckets;

    /// The bucket of `v` (negative values count as 0): values below 8 have one bucket each,
    /// then 8 buckets per power of two.
    static constexpr std::size_t bucket_of(std::int64_t v) {
        if (v < static_cast<std::int64_t>(sub_buckets))
            return v < 0 ? 0 : static_cast<std::size_t>(v);
        const auto u = static_cast<std::uint64_t>(v);
        const int msb = 63 - std::countl_zero(u);
        const int shift = msb - 3;
        return static_cast<std::size_t>(msb - 2) * sub_buckets +
               static_cast<std::size_t>((u >> shift) & (sub_buckets - 1));
    }

    /// The largest value bucket `b` holds.
    static constexpr std::int64_t upper_of(std::size_t b) {
        if (b < sub_buckets)
            return static_cast<std::int64_t>(b);
        const std::size_t msb = b / sub_buckets + 2, sub = b % sub_buckets;
        const std::uint64_t width = std::uint64_t{1} << (msb - 3);
        return static_cast<std::int64_t>(((sub_buckets + sub) << (msb - 3)) + width - 1);
    }

    /// Adds one value (any thread; one relaxed add).
    void record(std::int64_t v) { counts_[bucket_of(v)].fetch_add(1, std::memory_order_relaxed); }

    /// How many values were added (a live read: may miss adds under way).
    std::uint64_t count() const {
        std::uint64_t n = 0;
        for (const auto& c : counts_)
            n += c.load(std::memory_order_relaxed);
        return n;
    }

    /// The quantile `q` in (0, 1] of the values added so far, as the upper edge of its bucket
    /// (never below the true value); nullopt when nothing was added.
    std::optional<std::int64_t> quantile(double q) const {
        std::array<std::uint64_t, buckets> snap{};
        std::uint64_t n = 0;
        for (std::size_t b = 0; b < buckets; ++b)
            n += snap[b] = counts_[b].load(std::memory_order_relaxed);
        if (n == 0)
            return std::nullopt;
        auto rank = static_cast<std::uint64_t>(q * static_cast<double>(n));
        if (static_cast<double>(rank) < q * static_cast<double>(n))
            ++rank; // ceil
        rank = rank < 1 ? 1 : (rank > n ? n : rank);
        std::uint64_t seen = 0;
        for (std::size_t b = 0; b < buckets; ++b)
            if ((seen += snap[b]) >= rank)
                return upper_of(b);
        return upper_of(buckets - 1);
    }

private:
    std::array<std::atomic<std::uint64_t>, buckets> counts_{};
};

} // namespace pacer

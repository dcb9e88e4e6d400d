#pragma once
// The portable pseudo-random generator of pacer's schedules.
//
// A schedule must be byte-identical on every machine for the same arguments and seed
// (docs/architecture.md, "Time"), so the bits come from generators defined by their reference
// C code, not from `std::mt19937_64` plus a `std::*_distribution` (whose algorithms differ
// between standard libraries):
//
// - `splitmix64` (Steele, Lea, Flood 2014; https://prng.di.unimi.it/splitmix64.c) turns one
//   64-bit seed into the generator's state, as the xoshiro authors recommend.
// - `xoshiro256ss` is xoshiro256** 1.0 (Blackman, Vigna 2018;
//   https://prng.di.unimi.it/xoshiro256starstar.c): 256 bits of state, period 2^256 - 1.
//
// Both use only 64-bit unsigned integer arithmetic (wrap-around is defined), so their
// outputs are the same on every conforming C++ implementation.

#include <array>
#include <cstdint>
#include <limits>

namespace pacer::schedule {

/// SplitMix64: a 64-bit counter passed through a bijective mixer.
///
/// Reference check: `splitmix64{0}.next() == 0xe220a8397b1dcdaf`.
class splitmix64 {
public:
    explicit constexpr splitmix64(std::uint64_t seed) noexcept : state_(seed) {}

    /// The next output; advances the state by the golden-ratio increment.
    constexpr std::uint64_t next() noexcept {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

private:
    std::uint64_t state_;
};

/// xoshiro256**: the generator behind every arrival schedule.
///
/// Satisfies `std::uniform_random_bit_generator`, but pacer never feeds it to a
/// `std::*_distribution`: the samplers in `arrival.hpp` are our own.
///
/// @par Thread safety
/// None: one generator per schedule, owned by the function that builds the schedule.
class xoshiro256ss {
public:
    using result_type = std::uint64_t;
    using state_type = std::array<std::uint64_t, 4>;

    /// Seeds the state with the first four outputs of `splitmix64{seed}`. These are four
    /// distinct inputs through a bijection, so at most one of them is zero and the state is
    /// never the forbidden all-zero state, whatever the seed.
    explicit constexpr xoshiro256ss(std::uint64_t seed) noexcept : s_{} {
        splitmix64 sm{seed};
        for (auto& word : s_)
            word = sm.next();
    }

    /// Sets the raw state (for reference test vectors). The state must not be all zero.
    explicit constexpr xoshiro256ss(const state_type& state) noexcept : s_(state) {}

    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }

    /// The next 64 random bits (the reference `next()`).
    constexpr result_type next() noexcept {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    constexpr result_type operator()() noexcept { return next(); }

    /// A uniform double in [0, 1): the top 53 bits of `next()` times 2^-53. Every value is a
    /// multiple of 2^-53 and exactly representable; 1 is never returned, so `1 - uniform01()`
    /// is exact and lies in (0, 1]: the exponential sampler takes `log(1 - u)` there, which is
    /// never `log(0)`.
    constexpr double uniform01() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    /// A uniform double in (0, 1]: (top 53 bits + 1) times 2^-53. Never 0, so it is safe as
    /// the argument of a logarithm (gamma squeeze test, the shape < 1 boost `u^(1/k)`).
    constexpr double uniform01_nonzero() noexcept {
        return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53;
    }

    const state_type& state() const noexcept { return s_; }

private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
        return (x << k) | (x >> (64 - k));
    }

    state_type s_;
};

} // namespace pacer::schedule

#pragma once
// Open-loop arrival schedules: when each request of an open-loop run is due.
//
// A schedule is a pure function of (process, rate, burstiness, seed, count or duration)
// (docs/architecture.md, "Time"): the same arguments give the same offsets, byte for byte, on
// every machine. Offsets are integer nanoseconds from the schedule's origin; the dispatcher
// turns offset i into the absolute deadline `start + offsets[i]`.
//
// Conventions (see docs/schedule.md):
// - The first arrival is at the first gap, not at 0: offsets[i] = gap_0 + ... + gap_i. A
//   Poisson schedule is then stationary from the origin, and `--duration D` holds rate * D
//   arrivals on average (constant: exactly floor(rate * D)).
// - Each gap is sampled in double seconds, rounded once to integer nanoseconds (`llround`,
//   half away from zero) and accumulated as a 64-bit integer. Integer addition is exact, so
//   no floating-point sum (whose last bits depend on evaluation order) enters the offsets;
//   `offsets[i] - offsets[i-1]` is exactly the i-th rounded gap.
// - `constant` is computed directly as offsets[i] = llround((i + 1) * 1e9 / rate): its gaps
//   are 1e9 / rate ns exactly when that is an integer, and never drift otherwise.
// - Randomness comes from `xoshiro256ss` (rng.hpp), and every sampler uses only IEEE-754
//   +, -, *, /, sqrt and exact scalings (frexp/ldexp/floor). The logarithm and exponential
//   are our own (`detail::portable_log`, `detail::portable_exp`) because libm's `log`,
//   `log1p` and `pow` are not correctly rounded and differ in the last bit between C
//   libraries. The guarantee assumes binary64 arithmetic without x87 excess precision and
//   without fused multiply-add contraction (x86-64 default; build with -ffp-contract=off
//   on targets with FMA such as aarch64). The golden hashes in tests/unit pin the result.

#include <pacer/schedule/rng.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::schedule {

/// The arrival processes of an open-loop schedule.
enum class arrival_process {
    poisson,  ///< exponential gaps: memoryless arrivals, coefficient of variation 1 (default)
    gamma,    ///< gamma gaps with coefficient of variation `burstiness`
    constant, ///< every gap exactly 1 / rate
};

/// "poisson", "gamma" or "constant".
std::string_view to_string(arrival_process process) noexcept;

/// The inverse of `to_string`; nullopt for any other text (case-sensitive).
std::optional<arrival_process> parse_arrival_process(std::string_view name) noexcept;

/// The largest rate accepted: one arrival per nanosecond.
inline constexpr double max_rate = 1e9;
/// The accepted burstiness range (coefficient of variation of the gaps, gamma only).
inline constexpr double min_burstiness = 1e-3;
inline constexpr double max_burstiness = 1e3;
/// The most arrivals one schedule may hold (800 MB of offsets): a guard against a typo
/// such as `--rate 1e9 --duration 1h` exhausting memory.
inline constexpr std::uint64_t max_arrivals = 100'000'000;

/// One stage of a staged schedule (`--stages 30s:10/s,2m:10-50/s`): for `duration`, the rate
/// goes linearly from `from_rate` to `to_rate` arrivals per second (equal for a constant stage).
struct stage {
    std::chrono::nanoseconds duration{};
    double from_rate = 0;
    double to_rate = 0;

    bool operator==(const stage&) const = default;
};

/// The most stages one schedule may have.
inline constexpr std::size_t max_stages = 1000;

/// Parses `--stages`: comma-separated stages `DURATION:RATE/s` (constant) or
/// `DURATION:FROM-TO/s` (a linear ramp), e.g. `30s:10/s,2m:10-50/s,30s:50/s`. DURATION is as
/// `parse_duration` reads it (> 0); rates are decimal numbers >= 0 and at most max_rate,
/// followed by `/s` (a stage without it is refused). Throws `bad_input` with one
/// line naming `--stages` and the stage at fault. Checks each stage; `validate` checks them
/// together.
std::vector<stage> parse_stages(std::string_view text);

/// The canonical text of `stages`, which `parse_stages` reads back to the same values: each
/// duration as seconds, milliseconds and microseconds with the nanoseconds as their fraction
/// (`90s`, `1s250ms`, `0.001us` for 1 ns), each rate as its shortest round-trip decimal, a ramp
/// as `FROM-TO/s`.
std::string to_string(std::span<const stage> stages);

/// The length of a staged schedule: the sum of the stages' durations.
std::chrono::nanoseconds stages_duration(std::span<const stage> stages) noexcept;

/// The expected number of arrivals from the origin to offset `at`: the integral of the
/// stages' rate, Lambda(at) (constant past the last stage). A staged schedule maps unit-rate
/// arrivals through the inverse of this function (see `make_schedule`).
double integrated_rate(std::span<const stage> stages, std::chrono::nanoseconds at) noexcept;

/// The index of the stage that holds offset `at`: stage i covers (start_i, end_i], the first
/// one [0, end_0]; stages.size() for an offset past the last stage.
std::size_t stage_index(std::span<const stage> stages, std::chrono::nanoseconds at) noexcept;

/// What defines a schedule. `count` and `duration` may both be given: the schedule then
/// ends at whichever limit is reached first. With `stages`, the stages give the rate and the
/// length: `rate` stays 0 and `duration` unset, and `count` may still end it early.
struct schedule_spec {
    arrival_process process = arrival_process::poisson;
    /// Mean arrivals per second (`--rate`), finite, in (0, max_rate].
    double rate = 0;
    /// Target coefficient of variation of the gaps (`--burstiness`, B), finite, in
    /// [min_burstiness, max_burstiness]; used only by `gamma`. 1 gives Poisson-like gaps,
    /// above 1 is burstier, below 1 is more regular.
    double burstiness = 1;
    /// Any 64-bit value; the same seed gives the same schedule.
    std::uint64_t seed = 0;
    /// The number of arrivals (`--count`), > 0 and at most max_arrivals.
    std::optional<std::uint64_t> count;
    /// Keep the arrivals whose offset is <= duration (`--duration`), > 0.
    std::optional<std::chrono::nanoseconds> duration;
    /// The stages (`--stages`); empty for a schedule of one constant `rate`.
    std::vector<stage> stages;
};

/// The schedule's rate for people: "10/s", or the canonical stages text when staged.
std::string rate_text(const schedule_spec& spec);

/// Checks a spec. Throws `bad_input` whose message names the offending flag,
/// e.g. "--rate must be a finite number > 0 (arrivals per second), got -1".
void validate(const schedule_spec& spec);

/// The schedule of `spec`: non-decreasing offsets from the origin. Validates first (see
/// `validate`).
///
/// A staged schedule is a non-homogeneous process by time rescaling: the process's gaps are
/// drawn at rate 1 (exponential mean 1, gamma mean 1 with CV `burstiness`, or exactly 1) and
/// summed in "operational time" u, and each arrival is placed at t = Lambda^-1(u), where Lambda
/// is `integrated_rate`. Within a ramp of rate a + c*tau, Lambda^-1 is the root
/// tau = 2u / (a + sqrt(a^2 + 2cu)) (u measured from the stage's start, which keeps it small);
/// for Poisson this is an exact non-homogeneous Poisson process of the stages' rate. Each
/// in-stage time is rounded once to ns and added to the stage's integer start. Also throws
/// `bad_input` when the offsets would overflow 64-bit nanoseconds (a rate far too low)
/// or exceed `max_arrivals`. May return an empty vector when only a duration is given and the first
/// arrival falls after it.
std::vector<std::chrono::nanoseconds> make_schedule(const schedule_spec& spec);

/// The most sessions of an open-loop schedule that can be in flight at once when each lives
/// at most `lifetime` (its timeout): the largest number of arrivals within any closed window
/// [t, t + lifetime]. `offsets` must be non-decreasing (as make_schedule gives them); 0 for an
/// empty schedule, at least 1 otherwise. A pure function of its arguments, used to size the
/// descriptor budget of a run (every session holds a socket and its files only while in flight).
std::size_t peak_in_flight(std::span<const std::chrono::nanoseconds> offsets,
                           std::chrono::nanoseconds lifetime) noexcept;

/// The gamma shape k for a burstiness B: k = 1 / B^2 (the gap CV of gamma(k) is 1/sqrt(k)).
/// This is also the value of vLLM's `--burstiness`, which is the gamma shape itself.
constexpr double gamma_shape(double burstiness) noexcept {
    return 1.0 / (burstiness * burstiness);
}

/// Seeded samplers built on xoshiro256** with our own transformations (no
/// `std::*_distribution`). Every method consumes a documented number of generator outputs,
/// so the stream, and hence every schedule, is reproducible.
///
/// @par Thread safety
/// None; one sampler per schedule.
class sampler {
public:
    explicit sampler(std::uint64_t seed) noexcept : rng_(seed) {}

    /// Uniform in [0, 1) (one output). See `xoshiro256ss::uniform01`.
    double uniform01() noexcept { return rng_.uniform01(); }

    /// Exponential with the given rate (mean 1 / rate), by inverse CDF:
    /// `-log1p(-u) / rate`, computed as `-portable_log(1 - u) / rate` where `1 - u` is exact
    /// and in (0, 1] because u in [0, 1) is a multiple of 2^-53 (one output).
    double exponential(double rate) noexcept;

    /// Standard normal by Marsaglia's polar method: pairs of uniforms in the square until
    /// one lands inside the unit disc (s in (0, 1)), then two normals; the second is kept
    /// for the next call. No trigonometric function, so no libm dependence beyond sqrt.
    double standard_normal() noexcept;

    /// Gamma with shape k > 0 and scale theta (mean k * theta), by Marsaglia and Tsang (2000)
    /// for k >= 1; for k < 1 by the usual boost X(k) = X(k + 1) * u^(1/k), u in (0, 1].
    double gamma(double shape, double scale) noexcept;

    xoshiro256ss& rng() noexcept { return rng_; }

private:
    xoshiro256ss rng_;
    double spare_normal_ = 0;
    bool has_spare_normal_ = false;
};

namespace detail {

/// Natural logarithm from IEEE-754 basic operations only (fdlibm's reduction to
/// m in [sqrt(2)/2, sqrt(2)) and the atanh series), so it is the same on every machine.
/// Within about 1 ulp of the true value for finite x > 0; -inf for 0, NaN for x < 0 or NaN.
double portable_log(double x) noexcept;

/// e^x from IEEE-754 basic operations only (reduction by ln 2 with a two-part constant, a
/// degree-13 Taylor polynomial and an exact ldexp). Within about 1 ulp; 0 below -746,
/// +inf above 709.78, NaN for NaN.
double portable_exp(double x) noexcept;

} // namespace detail

} // namespace pacer::schedule

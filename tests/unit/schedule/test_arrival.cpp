// Arrival schedules: validation, exact conventions, golden hashes and statistical conformance.

#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using pacer::schedule::arrival_process;
using pacer::schedule::make_schedule;
using pacer::schedule::schedule_spec;
using ns = std::chrono::nanoseconds;

schedule_spec spec_of(arrival_process process, double rate, std::uint64_t seed, std::uint64_t count,
                      double burstiness = 1) {
    schedule_spec spec;
    spec.process = process;
    spec.rate = rate;
    spec.burstiness = burstiness;
    spec.seed = seed;
    spec.count = count;
    return spec;
}

// The message of the std::invalid_argument thrown by make_schedule, or "" if none.
std::string error_of(const schedule_spec& spec) {
    try {
        make_schedule(spec);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

// ---------------------------------------------------------------------------------------
// Portable log and exp: close to libm (the comparison is only a sanity check; the bytes of
// a schedule come from our functions alone).

TEST(ArrivalMath, PortableLogMatchesLibmWithinTwoUlp) {
    using pacer::schedule::detail::portable_log;
    EXPECT_EQ(portable_log(1.0), 0.0);
    EXPECT_TRUE(std::isinf(portable_log(0.0)));
    EXPECT_TRUE(std::isnan(portable_log(-1.0)));
    double worst = 0;
    for (double x = 1e-300; x < 1e300; x *= 1.000123457) {
        const double want = std::log(x);
        worst =
            std::max(worst, std::fabs(portable_log(x) - want) / std::max(std::fabs(want), 1e-300));
    }
    // Near 1, where log is small, check the relative error too: the exponential sampler takes
    // the log of 1 - u with u a multiple of 2^-53, where 1 - u is exact, so log(1 - u) must
    // match log1p(-u).
    for (double k = 1; k < 0x1.0p52; k = std::ceil(k * 1.01)) {
        const double u = k * 0x1.0p-53;
        const double want = std::log1p(-u);
        worst = std::max(worst, std::fabs(portable_log(1 - u) - want) / std::fabs(want));
    }
    EXPECT_LT(worst, 4.5e-16);
}

TEST(ArrivalMath, PortableExpMatchesLibmWithinTwoUlp) {
    using pacer::schedule::detail::portable_exp;
    EXPECT_EQ(portable_exp(0.0), 1.0);
    EXPECT_EQ(portable_exp(-800.0), 0.0);
    EXPECT_TRUE(std::isinf(portable_exp(800.0)));
    double worst = 0;
    for (double x = -700; x < 700; x += 0.000987) {
        const double want = std::exp(x);
        worst = std::max(worst, std::fabs(portable_exp(x) - want) / want);
    }
    EXPECT_LT(worst, 4.5e-16);
}

// ---------------------------------------------------------------------------------------
// Validation: every message names its flag.

TEST(ArrivalValidation, RateMustBeFinitePositive) {
    for (const double rate : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN()}) {
        const auto msg = error_of(spec_of(arrival_process::poisson, rate, 0, 10));
        EXPECT_NE(msg.find("--rate must be a finite number > 0"), std::string::npos) << msg;
    }
    EXPECT_NE(error_of(spec_of(arrival_process::poisson, 2e9, 0, 10)).find("--rate"),
              std::string::npos);
}

TEST(ArrivalValidation, BurstinessMustBeFinitePositive) {
    for (const double b : {0.0, -2.0, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()}) {
        const auto msg = error_of(spec_of(arrival_process::gamma, 10, 0, 10, b));
        EXPECT_NE(msg.find("--burstiness must be a finite number > 0"), std::string::npos) << msg;
    }
    EXPECT_NE(error_of(spec_of(arrival_process::gamma, 10, 0, 10, 1e-9)).find("--burstiness"),
              std::string::npos);
}

TEST(ArrivalValidation, CountOrDurationIsRequiredAndPositive) {
    schedule_spec spec;
    spec.rate = 10;
    EXPECT_EQ(error_of(spec), "one of --count or --duration is required");
    spec.count = 0;
    EXPECT_EQ(error_of(spec), "--count must be > 0");
    spec.count = pacer::schedule::max_arrivals + 1;
    EXPECT_NE(error_of(spec).find("--count must be at most"), std::string::npos);
    spec.count.reset();
    spec.duration = 0ns;
    EXPECT_EQ(error_of(spec), "--duration must be > 0");
    spec.duration = -1s;
    EXPECT_EQ(error_of(spec), "--duration must be > 0");
    // rate * duration beyond max_arrivals is refused up front, not after eating the memory.
    spec.rate = 1e9;
    spec.duration = 1h;
    EXPECT_NE(error_of(spec).find("--duration"), std::string::npos);
}

TEST(ArrivalValidation, OffsetsThatOverflowNanosecondsAreRefused) {
    // A gap of 1e12 s does not fit in 64-bit nanoseconds (292 years).
    const auto msg = error_of(spec_of(arrival_process::constant, 1e-12, 0, 2));
    EXPECT_NE(msg.find("--rate"), std::string::npos) << msg;
    EXPECT_NE(error_of(spec_of(arrival_process::poisson, 1e-12, 0, 2)).find("--rate"),
              std::string::npos);
}

TEST(ArrivalValidation, ProcessNamesRoundTrip) {
    for (auto p : {arrival_process::poisson, arrival_process::gamma, arrival_process::constant})
        EXPECT_EQ(pacer::schedule::parse_arrival_process(pacer::schedule::to_string(p)), p);
    EXPECT_FALSE(pacer::schedule::parse_arrival_process("Poisson"));
    EXPECT_FALSE(pacer::schedule::parse_arrival_process(""));
}

// ---------------------------------------------------------------------------------------
// Exact conventions.

TEST(ArrivalSchedule, IsAPureFunctionOfItsArguments) {
    for (auto p : {arrival_process::poisson, arrival_process::gamma}) {
        const auto a = make_schedule(spec_of(p, 50, 99, 10'000, 2));
        EXPECT_EQ(a, make_schedule(spec_of(p, 50, 99, 10'000, 2)));
        EXPECT_NE(a, make_schedule(spec_of(p, 50, 100, 10'000, 2)));
        // A longer schedule starts with the shorter one: the count only truncates.
        const auto longer = make_schedule(spec_of(p, 50, 99, 20'000, 2));
        EXPECT_TRUE(std::equal(a.begin(), a.end(), longer.begin()));
    }
}

TEST(ArrivalSchedule, FirstOffsetsArePinned) {
    // The first arrival is at the first gap (not at 0). These are the bytes of
    // `pacer schedule --rate 10 --count 5` (poisson, seed 0).
    const std::vector<ns> expected = {91945323ns, 229688336ns, 240560506ns, 294446856ns,
                                      426496312ns};
    EXPECT_EQ(make_schedule(spec_of(arrival_process::poisson, 10, 0, 5)), expected);
}

TEST(ArrivalSchedule, OffsetsAreNonDecreasingAndStartAfterZero) {
    for (auto p : {arrival_process::poisson, arrival_process::gamma, arrival_process::constant}) {
        const auto offsets = make_schedule(spec_of(p, 1000, 5, 50'000, 4));
        ASSERT_EQ(offsets.size(), 50'000u);
        EXPECT_GE(offsets.front(), 0ns);
        EXPECT_TRUE(std::is_sorted(offsets.begin(), offsets.end()));
    }
}

TEST(ArrivalSchedule, ConstantGapsAreExactlyOneOverRate) {
    for (const double rate : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1000.0}) {
        const auto offsets = make_schedule(spec_of(arrival_process::constant, rate, 0, 10'000));
        const auto period = static_cast<std::int64_t>(1e9 / rate);
        for (std::size_t i = 0; i < offsets.size(); ++i)
            ASSERT_EQ(offsets[i].count(), static_cast<std::int64_t>(i + 1) * period);
    }
    // 1e9 / 3 is not an integer: offsets are rounded from the exact i / rate, so the gaps
    // alternate between 333333333 and 333333334 ns and never drift.
    const auto thirds = make_schedule(spec_of(arrival_process::constant, 3, 0, 3'000'000));
    EXPECT_EQ(thirds[0], 333333333ns);
    EXPECT_EQ(thirds[1], 666666667ns);
    EXPECT_EQ(thirds[2], 1s);
    EXPECT_EQ(thirds.back(), 1'000'000s);
    // The seed and the burstiness do not matter for a constant schedule.
    EXPECT_EQ(make_schedule(spec_of(arrival_process::constant, 7, 1, 100)),
              make_schedule(spec_of(arrival_process::constant, 7, 2, 100, 3)));
}

TEST(ArrivalSchedule, DurationKeepsOffsetsUpToAndIncludingIt) {
    schedule_spec spec;
    spec.process = arrival_process::constant;
    spec.rate = 10;
    spec.duration = 1s;
    auto offsets = make_schedule(spec);
    ASSERT_EQ(offsets.size(), 10u); // 0.1 s ... 1.0 s inclusive
    EXPECT_EQ(offsets.back(), 1s);

    // Poisson over 60 s: every offset within, and the next arrival after.
    spec.process = arrival_process::poisson;
    spec.duration = 60s;
    spec.seed = 3;
    offsets = make_schedule(spec);
    ASSERT_FALSE(offsets.empty());
    EXPECT_LE(offsets.back(), 60s);
    spec.duration.reset();
    spec.count = offsets.size() + 1;
    EXPECT_GT(make_schedule(spec).back(), 60s);

    // With both, the first limit wins.
    spec.duration = 60s;
    spec.count = 5;
    EXPECT_EQ(make_schedule(spec).size(), 5u);

    // A duration shorter than the first gap gives an empty schedule.
    spec.count.reset();
    spec.process = arrival_process::constant;
    spec.rate = 1;
    spec.duration = 500ms;
    EXPECT_TRUE(make_schedule(spec).empty());
}

// ---------------------------------------------------------------------------------------
// Golden hashes: the SHA-256 of the canonical offsets text (schedule_file.hpp) of a few
// schedules, computed once on x86-64 (g++ 12, glibc) and pinned. A failure here means the
// bytes of schedules changed: on another machine, a determinism bug; after a code change,
// a breaking change that docs/schedule.md must announce.

struct golden {
    const char* name;
    schedule_spec spec;
    const char* sha256;
};

schedule_spec with_duration(schedule_spec spec, ns duration) {
    spec.count.reset();
    spec.duration = duration;
    return spec;
}

TEST(ArrivalSchedule, GoldenHashes) {
    const golden cases[] = {
        {"poisson rate 10 seed 0 count 1000", spec_of(arrival_process::poisson, 10, 0, 1000),
         "22b4a54c033b3f4b56b6a0618b1935483fab6ea0e1cda5c0ac983c814ceba0d0"},
        {"poisson rate 100 seed 42 duration 60s",
         with_duration(spec_of(arrival_process::poisson, 100, 42, 1), 60s),
         "15fbbdfdbc74a419e49db10cc0ffcb19a32b26c197911caafb4d50d5a0978bb5"},
        {"gamma rate 20 B 2 seed 7 count 1000", spec_of(arrival_process::gamma, 20, 7, 1000, 2),
         "f63170b100c5c3adeb3e98523a5955f33fcac61e5765c278b739fe4cf429af2f"},
        {"gamma rate 5 B 0.5 seed 123 count 1000",
         spec_of(arrival_process::gamma, 5, 123, 1000, 0.5),
         "c3068079fe3d0098bc7b88054128c1441d16f482a33298d8853f5d9101bc7cbf"},
        {"gamma rate 50 B 4 seed 9 count 100000",
         spec_of(arrival_process::gamma, 50, 9, 100'000, 4),
         "65c71b91e73741850c22f24c3e720e6f064dcb460b83479c5900ac9843a954e3"},
        {"constant rate 3 count 1000", spec_of(arrival_process::constant, 3, 0, 1000),
         "57d0d7a181d609951470775ccd50d4e0b80537e015e72f1a8512e53aa004cd26"},
    };
    for (const auto& c : cases) {
        const auto offsets = make_schedule(c.spec);
        EXPECT_EQ(pacer::schedule::schedule_sha256(offsets), c.sha256)
            << c.name << " (" << offsets.size() << " arrivals)";
    }
}

// ---------------------------------------------------------------------------------------
// Conformance: the schedules have the statistics they promise.
//
// n = 200,000 gaps per schedule. For exponential gaps the standard error of the sample CV
// is about 1/sqrt(n) = 0.0022 and that of the mean gap (relative) CV/sqrt(n) = 0.0022, so
// the bands below (1 % for the CV, 5 CV/sqrt(n) for the mean) are 4.5-5 standard errors
// wide: tight enough to catch a wrong sampler (a 2 % bias fails), wide enough that a
// correct one essentially never lands outside. And the schedules are deterministic (fixed
// seeds), so a test that passes once passes forever: it can never flake, only break when
// the bytes change. The KS bound is the asymptotic critical value at alpha = 0.001,
// D_crit = 1.95 / sqrt(n) = 0.00436.
//
// The gaps are rounded to integer nanoseconds, so the KS statistic compares the empirical
// CDF of the rounded gaps with the exact CDF of rounded gaps, P(round(X) <= v) =
// F(v + 0.5 ns): this matters for gamma with B = 4, where a fifth of the gaps round to 0.

constexpr std::size_t conformance_n = 200'000;
constexpr double ks_critical_001 = 1.95; // / sqrt(n)
const double rates[] = {1, 2, 5, 10, 20, 50, 100};
const std::uint64_t seeds[] = {1, 42, 20240601};

struct gap_stats {
    double mean_gap_error; ///< mean gap * rate - 1
    double cv;             ///< stddev / mean of the gaps
    double ks;             ///< one-sample Kolmogorov-Smirnov D against the model CDF
};

std::vector<double> gaps_of(const std::vector<ns>& offsets) {
    std::vector<double> gaps(offsets.size());
    std::int64_t previous = 0;
    for (std::size_t i = 0; i < offsets.size(); ++i) {
        gaps[i] = static_cast<double>(offsets[i].count() - previous); // in ns
        previous = offsets[i].count();
    }
    return gaps;
}

// `cdf` takes nanoseconds.
gap_stats stats_of(std::vector<double> gaps, double rate,
                   const std::function<double(double)>& cdf) {
    const double n = static_cast<double>(gaps.size());
    double sum = 0;
    for (const double g : gaps)
        sum += g;
    const double mean = sum / n;
    double ss = 0;
    for (const double g : gaps)
        ss += (g - mean) * (g - mean);
    const double sd = std::sqrt(ss / (n - 1));

    std::sort(gaps.begin(), gaps.end());
    double d = 0;
    for (std::size_t i = 0; i < gaps.size();) {
        std::size_t j = i;
        while (j < gaps.size() && gaps[j] == gaps[i])
            ++j;
        // Below v the empirical CDF is i/n, at v it is j/n.
        const double v = gaps[i];
        d = std::max(d, std::fabs(static_cast<double>(j) / n - cdf(v + 0.5)));
        d = std::max(d, std::fabs(static_cast<double>(i) / n - cdf(std::max(v - 0.5, 0.0))));
        i = j;
    }
    return {mean / (1e9 / rate) - 1, sd / mean, d};
}

// Regularized lower incomplete gamma P(a, x), Numerical Recipes style: series below a + 1,
// continued fraction above. Test-only, so libm is fine here.
double gamma_p(double a, double x) {
    if (x <= 0)
        return 0;
    const double log_prefix = -x + a * std::log(x) - std::lgamma(a);
    if (x < a + 1) {
        double term = 1 / a;
        double sum = term;
        for (int n = 1; n < 10'000; ++n) {
            term *= x / (a + n);
            sum += term;
            if (std::fabs(term) < std::fabs(sum) * 1e-16)
                break;
        }
        return sum * std::exp(log_prefix);
    }
    const double tiny = 1e-300;
    double b = x + 1 - a;
    double c = 1 / tiny;
    double dd = 1 / b;
    double h = dd;
    for (int i = 1; i < 10'000; ++i) {
        const double an = -i * (i - a);
        b += 2;
        dd = an * dd + b;
        if (std::fabs(dd) < tiny)
            dd = tiny;
        c = b + an / c;
        if (std::fabs(c) < tiny)
            c = tiny;
        dd = 1 / dd;
        const double delta = dd * c;
        h *= delta;
        if (std::fabs(delta - 1) < 1e-16)
            break;
    }
    return 1 - std::exp(log_prefix) * h;
}

TEST(ArrivalConformance, PoissonGapsAreExponentialWithMeanOneOverRate) {
    const double n = conformance_n;
    const double d_crit = ks_critical_001 / std::sqrt(n);
    std::cout << "| process | rate | seed | mean gap error | CV | KS D (crit " << d_crit
              << ") |\n|---|---|---|---|---|---|\n";
    for (const double rate : rates) {
        for (const auto seed : seeds) {
            const auto offsets =
                make_schedule(spec_of(arrival_process::poisson, rate, seed, conformance_n));
            const double mean_ns = 1e9 / rate;
            const auto s = stats_of(gaps_of(offsets), rate,
                                    [mean_ns](double x) { return -std::expm1(-x / mean_ns); });
            std::cout << "| poisson | " << rate << " | " << seed << " | " << s.mean_gap_error
                      << " | " << s.cv << " | " << s.ks << " |\n";
            EXPECT_NEAR(s.cv, 1.0, 0.01) << "rate " << rate << " seed " << seed;
            EXPECT_NEAR(s.mean_gap_error, 0.0, 5 / std::sqrt(n)) << "rate " << rate;
            EXPECT_LT(s.ks, d_crit) << "rate " << rate << " seed " << seed;
        }
    }
}

TEST(ArrivalConformance, GammaGapsHaveCoefficientOfVariationB) {
    // For gamma gaps with CV B (shape k = 1/B^2) the delta method gives the relative
    // standard error of the sample CV as sqrt((1 + B^2) / (2n)) and that of the mean gap as
    // B / sqrt(n). Bands: 5 standard errors (at least 1 % for the CV). B = 1 must also be
    // exponential: it goes through Marsaglia-Tsang, not the Poisson sampler. k = 4 (B = 0.5),
    // k = 1/4 (B = 2) and k = 1/16 (B = 4) cover Marsaglia-Tsang and the shape < 1 boost.
    const double n = conformance_n;
    const double d_crit = ks_critical_001 / std::sqrt(n);
    std::cout << "| process | B | rate | seed | mean gap error | CV | KS D (crit " << d_crit
              << ") |\n|---|---|---|---|---|---|---|\n";
    for (const double b : {0.5, 1.0, 2.0, 4.0}) {
        const double shape = pacer::schedule::gamma_shape(b);
        const double cv_tol = std::max(0.01, 5 * std::sqrt((1 + b * b) / (2 * n)));
        const double mean_tol = 5 * b / std::sqrt(n);
        for (const double rate : rates) {
            for (const auto seed : seeds) {
                const auto offsets =
                    make_schedule(spec_of(arrival_process::gamma, rate, seed, conformance_n, b));
                const double scale_ns = 1e9 / (shape * rate);
                const auto s = stats_of(gaps_of(offsets), rate,
                                        [&](double x) { return gamma_p(shape, x / scale_ns); });
                std::cout << "| gamma | " << b << " | " << rate << " | " << seed << " | "
                          << s.mean_gap_error << " | " << s.cv << " | " << s.ks << " |\n";
                EXPECT_NEAR(s.cv / b, 1.0, cv_tol) << "B " << b << " rate " << rate;
                EXPECT_NEAR(s.mean_gap_error, 0.0, mean_tol) << "B " << b << " rate " << rate;
                EXPECT_LT(s.ks, d_crit) << "B " << b << " rate " << rate << " seed " << seed;
            }
        }
    }
}

TEST(ArrivalConformance, StandardNormalMoments) {
    // The polar method feeds Marsaglia-Tsang: mean 0, variance 1, no skew, kurtosis 3.
    // n = 10^6: standard errors 0.001, 0.0014, 0.0024, 0.0049; bands are 5 of them.
    pacer::schedule::sampler gen{11};
    constexpr int n = 1'000'000;
    double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
    for (int i = 0; i < n; ++i) {
        const double x = gen.standard_normal();
        m1 += x;
        m2 += x * x;
        m3 += x * x * x;
        m4 += x * x * x * x;
    }
    EXPECT_NEAR(m1 / n, 0, 0.005);
    EXPECT_NEAR(m2 / n, 1, 0.007);
    EXPECT_NEAR(m3 / n, 0, 0.012);
    EXPECT_NEAR(m4 / n, 3, 0.025);
}

// The peak in flight: the most arrivals within any closed window of one lifetime.
TEST(PeakInFlight, CountsTheArrivalsWithinOneLifetime) {
    using pacer::schedule::peak_in_flight;
    const std::vector<ns> none;
    EXPECT_EQ(peak_in_flight(none, 1s), 0u);
    const std::vector<ns> one{5s};
    EXPECT_EQ(peak_in_flight(one, 1ns), 1u);
    // Every second for 100 s, each session living 10 s: the window [t, t + 10 s] holds 11.
    std::vector<ns> steady;
    for (int i = 1; i <= 100; ++i)
        steady.emplace_back(std::chrono::seconds(i));
    EXPECT_EQ(peak_in_flight(steady, 10s), 11u);
    EXPECT_EQ(peak_in_flight(steady, 10s - 1ns), 10u);
    EXPECT_EQ(peak_in_flight(steady, 1000s), 100u); // the lifetime spans the whole schedule
    // A burst inside a sparse schedule is the peak, wherever it falls.
    const std::vector<ns> burst{0s, 10s, 20s, 20s + 1ms, 20s + 2ms, 20s + 3ms, 40s};
    EXPECT_EQ(peak_in_flight(burst, 5ms), 4u);
    EXPECT_EQ(peak_in_flight(burst, 10s), 4u);       // 10 s to 20 s + 3 ms is longer
    EXPECT_EQ(peak_in_flight(burst, 10s + 3ms), 5u); // 10 s and the whole burst
}

TEST(PeakInFlight, ConstantRateScheduleGivesRateTimesLifetime) {
    // 10,000 arrivals at 50/s with a 61 s lifetime: 50 * 61 + 1 in any window, not 10,000.
    const auto offsets = make_schedule(spec_of(arrival_process::constant, 50, 1, 10'000));
    EXPECT_EQ(pacer::schedule::peak_in_flight(offsets, 61s), 3051u);
}

} // namespace

// ---------------------------------------------------------------------------------------
// Stages (`--stages 30s:10/s,2m:10-50/s,30s:50/s`): constant rates and linear ramps, arrivals
// by time rescaling.

namespace {

using pacer::schedule::stage;

schedule_spec staged(arrival_process process, std::vector<stage> stages, std::uint64_t seed,
                     double burstiness = 1) {
    schedule_spec spec;
    spec.process = process;
    spec.stages = std::move(stages);
    spec.seed = seed;
    spec.burstiness = burstiness;
    return spec;
}

// The message of parse_stages's std::invalid_argument, or "" if none.
std::string stages_error(std::string_view text) {
    try {
        pacer::schedule::parse_stages(text);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

// The test's own integrated rate, written out for the three stages used below (independent
// of the library's integrated_rate): 100 s at 50/s, 200 s from 50 to 150/s, 100 s at 150/s.
double lambda_50_ramp_150(double t) {
    if (t <= 100)
        return 50 * t;
    if (t <= 300) {
        const double tau = t - 100;
        return 5000 + 50 * tau + 0.25 * tau * tau; // slope 100/200 = 0.5 per s^2, halved
    }
    return 5000 + 20000 + 150 * (t - 300);
}

const std::vector<stage> ramp_stages = {
    {100s, 50, 50}, {200s, 50, 150}, {100s, 150, 150}}; // 5,000 + 20,000 + 15,000 arrivals

} // namespace

TEST(ArrivalStages, ParseReadsConstantAndRampStages) {
    const auto stages = pacer::schedule::parse_stages("30s:10/s,2m:10-50/s,30s:50/s");
    ASSERT_EQ(stages.size(), 3u);
    EXPECT_EQ(stages[0], (stage{30s, 10, 10}));
    EXPECT_EQ(stages[1], (stage{120s, 10, 50}));
    EXPECT_EQ(stages[2], (stage{30s, 50, 50}));
    // The canonical text, which reads back to the same values.
    EXPECT_EQ(pacer::schedule::to_string(stages), "30s:10/s,120s:10-50/s,30s:50/s");
    EXPECT_EQ(pacer::schedule::parse_stages("30s:10/s,120s:10-50/s,30s:50/s"), stages);
    const std::vector<stage> odd = {
        {1ns, 0.1, 1.0 / 3}, {1500ms, 0, 7}, {ns(2'000'123'457), 1e9, 0}, {250us, 2.5, 2.5}};
    EXPECT_EQ(pacer::schedule::to_string(odd),
              "0.001us:0.1-0.3333333333333333/s,1s500ms:0-7/s,2s123.457us:1000000000-0/s,"
              "250us:2.5/s");
    EXPECT_EQ(pacer::schedule::parse_stages(pacer::schedule::to_string(odd)), odd);
    EXPECT_EQ(pacer::schedule::stages_duration(stages), 180s);
}

TEST(ArrivalStages, BadStagesAreOneLineNamingTheStage) {
    const std::pair<const char*, const char*> cases[] = {
        {"", "--stages must be DURATION:RATE/s"},
        {"30s", "--stages: stage 1 \"30s\" must be DURATION:RATE/s"},
        {"30s:10/s,soon:5/s", "--stages: stage 2 \"soon:5/s\" has no duration"},
        {"0s:10/s", "--stages: stage 1 \"0s:10/s\" must last more than 0 s"},
        {"30s:-1/s", "--stages: stage 1 \"30s:-1/s\" needs a rate"},
        {"30s:10-/s", "--stages: stage 1 \"30s:10-/s\" needs a rate"},
        {"30s:10-20-30/s", "--stages: stage 1 \"30s:10-20-30/s\" needs a rate"},
        {"30s:1e3/s", "--stages: stage 1 \"30s:1e3/s\" needs a rate"},
        {"30s:inf/s", "--stages: stage 1 \"30s:inf/s\" needs a rate"},
        {"30s:2000000000/s", "--stages: stage 1 \"30s:2000000000/s\" has a rate above 1e+09"},
        {"30s:10/s,", "--stages: stage 2 \"\" must be DURATION:RATE/s"},
        // A rate without its unit (issue 39: `--stages 10s:5` was taken as 5/s).
        {"10s:5", "--stages: stage 1 \"10s:5\" needs its rate per second after its ':', "
                  "ending in /s"},
        {"30s:10/s,2m:10-50", "--stages: stage 2 \"2m:10-50\" needs its rate per second"},
    };
    for (const auto& [text, expected] : cases) {
        const auto message = stages_error(text);
        EXPECT_EQ(message.rfind(expected, 0), 0u) << text << " gave: " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos);
    }
}

TEST(ArrivalStages, ValidationRefusesRateDurationAndSilence) {
    auto spec = staged(arrival_process::poisson, {{10s, 5, 5}}, 0);
    EXPECT_EQ(error_of(spec), "");
    spec.rate = 5;
    EXPECT_EQ(error_of(spec).rfind("--stages sets the rate and the length", 0), 0u);
    spec.rate = 0;
    spec.duration = 5s;
    EXPECT_EQ(error_of(spec).rfind("--stages sets the rate and the length", 0), 0u);
    EXPECT_EQ(error_of(staged(arrival_process::poisson, {{10s, 0, 0}, {5s, 0, 0}}, 0)),
              "--stages: every stage has rate 0, so nothing arrives");
    EXPECT_NE(error_of(staged(arrival_process::poisson, {{1000s, 1e6, 1e6}}, 0)).find("limit"),
              std::string::npos);
    // A stage of rate 0 between others is a pause: nothing arrives in it.
    const auto offsets = make_schedule(
        staged(arrival_process::poisson, {{10s, 20, 20}, {10s, 0, 0}, {10s, 20, 20}}, 3));
    EXPECT_GT(offsets.size(), 300u);
    for (const auto o : offsets)
        EXPECT_TRUE(o <= 10s || o > 20s) << o.count();
}

TEST(ArrivalStages, IntegratedRateAndStageIndex) {
    const std::span<const stage> s = ramp_stages;
    for (const double t : {0.0, 1.0, 99.5, 100.0, 150.0, 299.0, 300.0, 350.0, 400.0})
        EXPECT_NEAR(pacer::schedule::integrated_rate(s, ns(std::llround(t * 1e9))),
                    lambda_50_ramp_150(t), 1e-6)
            << t;
    EXPECT_NEAR(pacer::schedule::integrated_rate(s, 500s), 40000, 1e-6); // flat past the end
    EXPECT_EQ(pacer::schedule::stage_index(s, 0s), 0u);
    EXPECT_EQ(pacer::schedule::stage_index(s, 100s), 0u); // (start, end]
    EXPECT_EQ(pacer::schedule::stage_index(s, 100s + 1ns), 1u);
    EXPECT_EQ(pacer::schedule::stage_index(s, 400s), 2u);
    EXPECT_EQ(pacer::schedule::stage_index(s, 400s + 1ns), 3u);
}

TEST(ArrivalStages, IsAPureFunctionPinnedByItsHash) {
    // Byte-identical twice, and pinned: the same hashes on every machine (docs/schedule.md).
    const auto spec = staged(arrival_process::poisson,
                             pacer::schedule::parse_stages("30s:10/s,2m:10-50/s,30s:50/s"), 0);
    const auto a = make_schedule(spec);
    const auto b = make_schedule(spec);
    EXPECT_EQ(a, b);
    EXPECT_EQ(pacer::schedule::schedule_sha256(a), pacer::schedule::schedule_sha256(b));
    EXPECT_NE(make_schedule(staged(arrival_process::poisson, spec.stages, 1)), a);
    const std::pair<schedule_spec, const char*> golden_cases[] = {
        {spec, "c1bd9b2459b2c4a5908f1d827f6e6c6c0095438709dfcaf60663af492a7b434a"},
        {staged(arrival_process::gamma, spec.stages, 7, 2),
         "e540afef6f5a115f67690e754622f990c9cc33d95f1501819d0bcd40ad85f676"},
        {staged(arrival_process::constant, spec.stages, 0),
         "544c241e7eba153bbe844786a1b122f4c5f8238598664a79fe3fde5c4ad0e187"},
    };
    for (const auto& [s, sha] : golden_cases) {
        const auto offsets = make_schedule(s);
        EXPECT_EQ(pacer::schedule::schedule_sha256(offsets), sha)
            << to_string(s.process) << " " << offsets.size() << " arrivals";
    }
    // --count ends the stages early: the first arrivals of the same schedule.
    auto capped = spec;
    capped.count = 100;
    EXPECT_EQ(make_schedule(capped), std::vector<ns>(a.begin(), a.begin() + 100));
    // Non-decreasing, and within the stages.
    EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
    EXPECT_LE(a.back(), 180s);
}

TEST(ArrivalConformance, StagesCountsPerStageMatchTheirRates) {
    // Counts per stage: Poisson(mean) for poisson, so 5 standard errors are 5 sqrt(mean); a
    // gamma renewal process has count variance about B^2 mean; constant is within 1 of the mean.
    // The ramp's four quarters (50-75, 75-100, 100-125 and 125-150/s, 50 s each) must each
    // hold their expected count, so the arrival density increases along the ramp.
    const double stage_mean[] = {5000, 20000, 15000};
    const double quarter_mean[] = {3125, 4375, 5625, 6875};
    std::cout << "| process | seed | stage counts (5,000 / 20,000 / 15,000) | ramp quarters "
                 "(3,125 / 4,375 / 5,625 / 6,875) |\n|---|---|---|---|\n";
    for (const auto& [process, b] :
         {std::pair{arrival_process::poisson, 1.0}, std::pair{arrival_process::gamma, 0.5},
          std::pair{arrival_process::gamma, 2.0}, std::pair{arrival_process::constant, 0.0}}) {
        for (const auto seed : seeds) {
            const auto offsets = make_schedule(staged(process, ramp_stages, seed, b > 0 ? b : 1));
            std::size_t count[3] = {}, quarter[4] = {};
            for (const auto o : offsets) {
                ++count[pacer::schedule::stage_index(ramp_stages, o)];
                const double t = static_cast<double>(o.count()) / 1e9;
                if (t > 100 && t <= 300)
                    ++quarter[std::min<std::size_t>(3, static_cast<std::size_t>((t - 100) / 50))];
            }
            std::cout << "| " << to_string(process) << (b > 0 ? " B " + std::to_string(b) : "")
                      << " | " << seed << " | " << count[0] << " / " << count[1] << " / "
                      << count[2] << " | " << quarter[0] << " / " << quarter[1] << " / "
                      << quarter[2] << " / " << quarter[3] << " |\n";
            const double spread = process == arrival_process::constant ? 0 : b;
            for (int i = 0; i < 3; ++i)
                EXPECT_NEAR(static_cast<double>(count[i]), stage_mean[i],
                            5 * spread * std::sqrt(stage_mean[i]) + 1.5)
                    << to_string(process) << " seed " << seed << " stage " << i;
            for (int q = 0; q < 4; ++q) {
                EXPECT_NEAR(static_cast<double>(quarter[q]), quarter_mean[q],
                            5 * spread * std::sqrt(quarter_mean[q]) + 1.5)
                    << to_string(process) << " seed " << seed << " quarter " << q;
                if (q > 0) {
                    EXPECT_GT(quarter[q], quarter[q - 1]) << "the ramp's density increases";
                }
            }
        }
    }
}

TEST(ArrivalConformance, StagesRescaledGapsAreTheUnitRateProcess) {
    // The time-rescaling theorem: for arrivals t_k of a process with integrated rate Lambda,
    // the gaps Lambda(t_k) - Lambda(t_k-1) are those of the unit-rate process: exponential(1)
    // for poisson, gamma(k, 1/k) for gamma, exactly 1 for constant. KS at alpha = 0.001 over
    // the 40,000 arrivals, across the stage boundaries (with the test's own Lambda).
    for (const auto seed : seeds) {
        for (const double b : {1.0, 0.5, 2.0}) {
            const bool poisson = b == 1.0;
            const auto process = poisson ? arrival_process::poisson : arrival_process::gamma;
            const auto offsets = make_schedule(staged(process, ramp_stages, seed, b));
            std::vector<double> gaps;
            double previous = 0;
            for (const auto o : offsets) {
                const double u = lambda_50_ramp_150(static_cast<double>(o.count()) / 1e9);
                gaps.push_back(u - previous);
                previous = u;
            }
            std::sort(gaps.begin(), gaps.end());
            const double shape = pacer::schedule::gamma_shape(b);
            const auto cdf = [&](double x) {
                return poisson ? -std::expm1(-x) : gamma_p(shape, x * shape);
            };
            const double n = static_cast<double>(gaps.size());
            // The sup is taken at gaps >= 1e-5: the offsets are rounded to ns, which moves a
            // rescaled gap by at most 150/s x 1 ns = 1.5e-7, so below about 1e-5 the rounded
            // gaps do not follow the continuous law (gamma B = 2 has shape 1/4: 1.4 % of its
            // gaps are under 1e-7, many rounded to 0), while above it the rounding can move
            // the empirical CDF by the mass within 3e-7 of a point, under 4e-4.
            double d = 0;
            for (std::size_t i = 0; i < gaps.size(); ++i)
                if (gaps[i] >= 1e-5)
                    d = std::max({d, std::fabs(static_cast<double>(i + 1) / n - cdf(gaps[i])),
                                  std::fabs(static_cast<double>(i) / n - cdf(gaps[i]))});
            std::cout << "rescaled gaps, " << to_string(process) << " B " << b << " seed " << seed
                      << ": n " << gaps.size() << " KS D " << d << " (crit "
                      << ks_critical_001 / std::sqrt(n) << ")\n";
            EXPECT_LT(d, ks_critical_001 / std::sqrt(n)) << "B " << b << " seed " << seed;
        }
    }
    // Constant: every rescaled gap is 1 (up to the ns rounding of the offsets: 150/s x 0.5 ns).
    const auto offsets = make_schedule(staged(arrival_process::constant, ramp_stages, 0));
    ASSERT_EQ(offsets.size(), 40000u);
    double previous = 0;
    for (const auto o : offsets) {
        const double u = lambda_50_ramp_150(static_cast<double>(o.count()) / 1e9);
        EXPECT_NEAR(u - previous, 1.0, 1e-6);
        previous = u;
    }
}

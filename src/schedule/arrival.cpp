#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/schedule/arrival.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace pacer::schedule {

namespace detail {

namespace {

// ln 2 split as in fdlibm: ln2_hi has its low 21 bits zero, so n * ln2_hi is exact for
// |n| < 2^11 (every binary64 exponent).
constexpr double ln2_hi = 6.93147180369123816490e-01; // 0x3fe62e42fee00000
constexpr double ln2_lo = 1.90821492927058770002e-10; // 0x3dea39ef35793c76
constexpr double inv_ln2 = 1.44269504088896338700e+00;
constexpr double sqrt_half = 0.70710678118654752440;

} // namespace

double portable_log(double x) noexcept {
    if (std::isnan(x) || x < 0)
        return std::numeric_limits<double>::quiet_NaN();
    if (x == 0)
        return -std::numeric_limits<double>::infinity();
    if (std::isinf(x))
        return x;
    // x = m * 2^e with m in [sqrt(2)/2, sqrt(2)); frexp and the doubling are exact.
    int e = 0;
    double m = std::frexp(x, &e);
    if (m < sqrt_half) {
        m *= 2;
        --e;
    }
    // log(1 + f) = 2 atanh(s) with s = f / (2 + f), |s| <= 0.1716, z = s^2 <= 0.0295.
    // Written as f - hfsq + s * (hfsq + R(z)) (fdlibm e_log.c), with R the atanh series
    // R(z) = sum 2 z^j / (2j + 1); twelve terms leave a truncation error below 2^-60.
    const double f = m - 1; // exact (Sterbenz)
    const double s = f / (2 + f);
    const double z = s * s;
    double r = 0;
    for (int j = 12; j >= 1; --j) // Horner, highest term first
        r = z * (2.0 / (2 * j + 1) + r);
    const double hfsq = 0.5 * f * f;
    const double dk = e;
    return dk * ln2_hi - ((hfsq - (s * (hfsq + r) + dk * ln2_lo)) - f);
}

double portable_exp(double x) noexcept {
    if (std::isnan(x))
        return x;
    if (x < -746.0)
        return 0.0;
    if (x > 709.78)
        return std::numeric_limits<double>::infinity();
    // x = n ln2 + r, |r| <= ln2 / 2 (plus rounding); floor is exact.
    const double n = std::floor(x * inv_ln2 + 0.5);
    const double r = (x - n * ln2_hi) - n * ln2_lo;
    // e^r by its Taylor polynomial of degree 13: the remainder is below 5e-18 for |r| < 0.35.
    double p = 1;
    for (int j = 13; j >= 1; --j) // Horner: 1 + r/1 (1 + r/2 (1 + ... (1 + r/13)))
        p = 1 + r * p / j;
    return std::ldexp(p, static_cast<int>(n)); // exact scaling (one IEEE rounding if subnormal)
}

} // namespace detail

double sampler::exponential(double rate) noexcept {
    // 1 - u is exact and in (0, 1], so this is -log1p(-u) / rate without ever taking log(0).
    const double u = rng_.uniform01();
    return -detail::portable_log(1.0 - u) / rate;
}

double sampler::standard_normal() noexcept {
    if (has_spare_normal_) {
        has_spare_normal_ = false;
        return spare_normal_;
    }
    double x = 0;
    double y = 0;
    double s = 0;
    do {
        x = 2 * rng_.uniform01() - 1;
        y = 2 * rng_.uniform01() - 1;
        s = x * x + y * y;
    } while (s >= 1 || s == 0); // s in (0, 1): log(s) is finite and negative
    const double factor = std::sqrt(-2 * detail::portable_log(s) / s);
    spare_normal_ = y * factor;
    has_spare_normal_ = true;
    return x * factor;
}

double sampler::gamma(double shape, double scale) noexcept {
    if (shape < 1) {
        // Boost: if X ~ Gamma(k + 1) and u ~ U(0, 1], X * u^(1/k) ~ Gamma(k). u is never 0,
        // so the logarithm is finite; u^(1/k) may underflow to 0, which is a correct sample
        // of a variate that small.
        const double x = gamma(shape + 1, scale);
        const double u = rng_.uniform01_nonzero();
        return x * detail::portable_exp(detail::portable_log(u) / shape);
    }
    // Marsaglia and Tsang, "A simple method for generating gamma variables" (2000).
    const double d = shape - 1.0 / 3;
    const double c = 1 / std::sqrt(9 * d);
    for (;;) {
        double x = 0;
        double v = 0;
        do {
            x = standard_normal();
            v = 1 + c * x;
        } while (v <= 0);
        v = v * v * v;
        const double u = rng_.uniform01_nonzero();
        const double x2 = x * x;
        if (u < 1 - 0.0331 * x2 * x2) // squeeze: accepts ~98% without a logarithm
            return d * v * scale;
        if (detail::portable_log(u) < 0.5 * x2 + d * (1 - v + detail::portable_log(v)))
            return d * v * scale;
    }
}

std::string_view to_string(arrival_process process) noexcept {
    switch (process) {
    case arrival_process::poisson:
        return "poisson";
    case arrival_process::gamma:
        return "gamma";
    case arrival_process::constant:
        return "constant";
    }
    return "unknown";
}

std::optional<arrival_process> parse_arrival_process(std::string_view name) noexcept {
    for (auto p : {arrival_process::poisson, arrival_process::gamma, arrival_process::constant})
        if (name == to_string(p))
            return p;
    return std::nullopt;
}

namespace {

// A stage's rate: a decimal number >= 0 (no sign, no exponent, no inf/nan).
std::optional<double> parse_rate(std::string_view text) {
    if (text.empty() || !(text.front() >= '0' && text.front() <= '9'))
        return std::nullopt;
    double v = 0;
    const auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::fixed);
    if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

// The shortest round-trip decimal in fixed notation (never "1e+09": parse_rate reads no
// exponent). Rates are at most 1e9, so 400 characters hold any of them.
void append_shortest(std::string& out, double value) {
    char buffer[400];
    const auto [end, ec] =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed);
    out.append(buffer, end);
}

double stage_seconds(const stage& s) noexcept {
    return static_cast<double>(s.duration.count()) / 1e9;
}

// Expected arrivals of stage `s` from its start to `tau` seconds into it.
double stage_integral(const stage& s, double tau) noexcept {
    const double slope = (s.to_rate - s.from_rate) / stage_seconds(s);
    return s.from_rate * tau + 0.5 * slope * tau * tau;
}

// Seconds into stage `s` at which its integrated rate reaches u (>= 0): the root of
// a tau + c tau^2 / 2 = u in its cancellation-free form. Clamped to the stage.
double stage_inverse(const stage& s, double u) noexcept {
    const double length = stage_seconds(s);
    if (u <= 0)
        return 0;
    const double a = s.from_rate;
    const double c = (s.to_rate - s.from_rate) / length;
    const double denominator = a + std::sqrt(std::max(0.0, a * a + 2 * c * u));
    if (!(denominator > 0))
        return length;
    return std::min(2 * u / denominator, length);
}

} // namespace

std::vector<stage> parse_stages(std::string_view text) {
    std::vector<stage> stages;
    if (text.empty())
        throw bad_input(
            "--stages must be DURATION:RATE/s or DURATION:FROM-TO/s stages separated by commas, "
            "e.g. 30s:10/s,2m:10-50/s, got \"\"");
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        const std::string_view item = text.substr(at, comma - at);
        const auto bad = [&](std::string_view why) {
            return bad_input(
                fmt::format("--stages: stage {} \"{}\" {}", stages.size() + 1, item, why));
        };
        const std::size_t colon = item.find(':');
        if (colon == std::string_view::npos)
            throw bad("must be DURATION:RATE/s or DURATION:FROM-TO/s, e.g. 30s:10/s or "
                      "2m:10-50/s");
        const auto duration = parse_duration(item.substr(0, colon));
        if (!duration)
            throw bad("has no duration such as 30s, 2m or 250ms before its ':'");
        if (duration->count() <= 0)
            throw bad("must last more than 0 s");
        std::string_view rates = item.substr(colon + 1);
        if (!rates.ends_with("/s"))
            throw bad("needs its rate per second after its ':', ending in /s, e.g. 10/s or "
                      "10-50/s");
        rates.remove_suffix(2);
        const std::size_t dash = rates.find('-');
        const auto from = parse_rate(rates.substr(0, dash));
        const auto to = dash == std::string_view::npos ? from : parse_rate(rates.substr(dash + 1));
        if (!from || !to)
            throw bad("needs a rate such as 10/s or a ramp such as 10-50/s after its ':' (rates "
                      "are numbers >= 0, arrivals per second)");
        if (*from > max_rate || *to > max_rate)
            throw bad(
                fmt::format("has a rate above {:g} arrivals per second (one per ns)", max_rate));
        stages.push_back({*duration, *from, *to});
        if (stages.size() > max_stages)
            throw bad_input(fmt::format("--stages: at most {} stages, got more", max_stages));
        at = comma + 1;
    }
    return stages;
}

std::string to_string(std::span<const stage> stages) {
    std::string out;
    for (const auto& s : stages) {
        if (!out.empty())
            out += ',';
        // Whole seconds, then milliseconds, then microseconds (with the nanoseconds as their
        // fraction): terms parse_duration reads back exactly.
        const auto ns = s.duration.count();
        const auto whole = ns / 1'000'000'000, ms = ns / 1'000'000 % 1000, us = ns / 1000 % 1000,
                   rest = ns % 1000;
        if (whole > 0)
            out += fmt::format("{}s", whole);
        if (ms > 0)
            out += fmt::format("{}ms", ms);
        if (us > 0 || rest > 0)
            out += rest == 0 ? fmt::format("{}us", us) : fmt::format("{}.{:03}us", us, rest);
        out += ':';
        append_shortest(out, s.from_rate);
        if (s.to_rate != s.from_rate) {
            out += '-';
            append_shortest(out, s.to_rate);
        }
        out += "/s";
    }
    return out;
}

std::chrono::nanoseconds stages_duration(std::span<const stage> stages) noexcept {
    std::chrono::nanoseconds total{};
    for (const auto& s : stages)
        total += s.duration;
    return total;
}

double integrated_rate(std::span<const stage> stages, std::chrono::nanoseconds at) noexcept {
    double sum = 0;
    std::chrono::nanoseconds start{};
    for (const auto& s : stages) {
        if (at <= start)
            break;
        const auto in = std::min(at - start, s.duration);
        sum += stage_integral(s, static_cast<double>(in.count()) / 1e9);
        start += s.duration;
    }
    return sum;
}

std::size_t stage_index(std::span<const stage> stages, std::chrono::nanoseconds at) noexcept {
    std::chrono::nanoseconds end{};
    for (std::size_t i = 0; i < stages.size(); ++i) {
        end += stages[i].duration;
        if (at <= end)
            return i;
    }
    return stages.size();
}

std::string rate_text(const schedule_spec& spec) {
    return spec.stages.empty() ? fmt::format("{:g}/s", spec.rate) : to_string(spec.stages);
}

void validate(const schedule_spec& spec) {
    if (!spec.stages.empty()) {
        if (spec.rate != 0 || spec.duration)
            throw bad_input("--stages sets the rate and the length of the schedule: "
                            "drop --rate and --duration");
        if (spec.stages.size() > max_stages)
            throw bad_input(
                fmt::format("--stages: at most {} stages, got {}", max_stages, spec.stages.size()));
        double expected = 0;
        std::int64_t total = 0;
        for (std::size_t i = 0; i < spec.stages.size(); ++i) {
            const auto& s = spec.stages[i];
            if (s.duration.count() <= 0)
                throw bad_input(fmt::format("--stages: stage {} must last more than 0 s", i + 1));
            if (!std::isfinite(s.from_rate) || !std::isfinite(s.to_rate) || s.from_rate < 0 ||
                s.to_rate < 0 || s.from_rate > max_rate || s.to_rate > max_rate)
                throw bad_input(fmt::format(
                    "--stages: stage {} must have rates in [0, {:g}] arrivals per second", i + 1,
                    max_rate));
            if (s.duration.count() > std::numeric_limits<std::int64_t>::max() - total)
                throw bad_input(
                    "--stages: the stages last longer than 64-bit nanoseconds hold (292 years)");
            total += s.duration.count();
            expected += stage_integral(s, stage_seconds(s));
        }
        if (!(expected > 0))
            throw bad_input("--stages: every stage has rate 0, so nothing arrives");
        if (!spec.count && expected > static_cast<double>(max_arrivals))
            throw bad_input(fmt::format(
                "--stages give about {:.0f} arrivals, more than the limit of {}; use lower rates "
                "or shorter stages",
                expected, max_arrivals));
    }
    if (spec.stages.empty() && (!std::isfinite(spec.rate) || spec.rate <= 0))
        throw bad_input(fmt::format(
            "--rate must be a finite number > 0 (arrivals per second), got {}", spec.rate));
    if (spec.stages.empty() && spec.rate > max_rate)
        throw bad_input(
            fmt::format("--rate must be at most {:g} arrivals per second (one per ns), got {}",
                        max_rate, spec.rate));
    if (!std::isfinite(spec.burstiness) || spec.burstiness <= 0)
        throw bad_input(
            fmt::format("--burstiness must be a finite number > 0, got {}", spec.burstiness));
    if (spec.burstiness < min_burstiness || spec.burstiness > max_burstiness)
        throw bad_input(fmt::format("--burstiness must be in [{:g}, {:g}], got {}", min_burstiness,
                                    max_burstiness, spec.burstiness));
    if (!spec.count && !spec.duration && spec.stages.empty())
        throw bad_input("one of --count or --duration is required");
    if (spec.count && *spec.count == 0)
        throw bad_input("--count must be > 0");
    if (spec.count && *spec.count > max_arrivals)
        throw bad_input(
            fmt::format("--count must be at most {}, got {}", max_arrivals, *spec.count));
    if (spec.duration && spec.duration->count() <= 0)
        throw bad_input("--duration must be > 0");
    if (spec.duration && !spec.count) {
        const double expected = spec.rate * (static_cast<double>(spec.duration->count()) * 1e-9);
        if (expected > static_cast<double>(max_arrivals))
            throw bad_input(fmt::format(
                "--duration: --rate {} for {} s gives about {:.0f} arrivals, more than the "
                "limit of {}; use a lower rate or a shorter duration",
                spec.rate, static_cast<double>(spec.duration->count()) * 1e-9, expected,
                max_arrivals));
    }
}

namespace {

[[noreturn]] void throw_overflow(double rate) {
    throw bad_input(
        fmt::format("--rate {} is too low: the schedule's offsets overflow 64-bit nanoseconds "
                    "(292 years)",
                    rate));
}

// One gap in double seconds rounded to integer nanoseconds.
std::int64_t gap_ns(double gap_s, double rate) {
    const double ns = gap_s * 1e9;
    if (!(ns < 9.0e18))
        throw_overflow(rate);
    return std::llround(ns);
}

} // namespace

std::vector<std::chrono::nanoseconds> make_schedule(const schedule_spec& spec) {
    validate(spec);
    const std::uint64_t limit = spec.count ? *spec.count : max_arrivals;
    const std::int64_t end_ns =
        spec.duration ? spec.duration->count() : std::numeric_limits<std::int64_t>::max();

    std::vector<std::chrono::nanoseconds> offsets;
    const double expected = spec.stages.empty()
                                ? spec.rate * (static_cast<double>(end_ns) * 1e-9)
                                : integrated_rate(spec.stages, stages_duration(spec.stages));
    if (spec.count)
        offsets.reserve(static_cast<std::size_t>(
            std::min(static_cast<double>(*spec.count), expected * 1.05 + 16)));
    else
        offsets.reserve(static_cast<std::size_t>(expected * 1.05 + 16));

    // Appends one offset; false once the schedule is complete.
    auto append = [&](std::int64_t offset) {
        if (offset > end_ns)
            return false;
        if (offsets.size() >= max_arrivals)
            throw bad_input(fmt::format(
                "--duration: the schedule exceeds {} arrivals; use a lower rate or a shorter "
                "duration",
                max_arrivals));
        offsets.emplace_back(offset);
        return offsets.size() < limit;
    };

    if (!spec.stages.empty()) {
        sampler gen{spec.seed};
        // Time rescaling (see the header): unit-rate gaps in operational time, mapped through
        // the inverse of each stage's integrated rate. `pending` is the operational time from
        // the current stage's start to the next arrival; what a stage leaves over carries into
        // the next one, so the process runs on across the boundary.
        const double shape = gamma_shape(spec.burstiness);
        const auto unit_gap = [&] {
            switch (spec.process) {
            case arrival_process::poisson:
                return gen.exponential(1.0);
            case arrival_process::gamma:
                return gen.gamma(shape, 1 / shape);
            case arrival_process::constant:
                break;
            }
            return 1.0;
        };
        double pending = unit_gap();
        std::int64_t stage_start = 0;
        for (const auto& s : spec.stages) {
            const double total = stage_integral(s, stage_seconds(s));
            for (; pending <= total; pending += unit_gap()) {
                const std::int64_t in_stage = std::min<std::int64_t>(
                    std::llround(stage_inverse(s, pending) * 1e9), s.duration.count());
                if (!append(stage_start + in_stage))
                    return offsets;
            }
            pending -= total;
            stage_start += s.duration.count();
        }
        return offsets;
    }
    if (spec.process == arrival_process::constant) {
        // Direct, not accumulated: no drift when 1e9 / rate is not an integer.
        for (std::uint64_t i = 1;; ++i) {
            const double ns = static_cast<double>(i) * 1e9 / spec.rate;
            if (!(ns < 9.0e18))
                throw_overflow(spec.rate);
            if (!append(std::llround(ns)))
                break;
        }
        return offsets;
    }

    sampler gen{spec.seed};
    std::int64_t offset = 0;
    auto step = [&](double gap_s) {
        const std::int64_t gap = gap_ns(gap_s, spec.rate); // >= 0
        if (gap > std::numeric_limits<std::int64_t>::max() - offset)
            throw_overflow(spec.rate);
        offset += gap;
        return append(offset);
    };
    if (spec.process == arrival_process::poisson) {
        while (step(gen.exponential(spec.rate))) {
        }
    } else {
        // Shape k = 1 / B^2 gives gap CV B; scale 1 / (k rate) keeps the mean gap 1 / rate.
        const double shape = gamma_shape(spec.burstiness);
        const double scale = 1 / (shape * spec.rate);
        while (step(gen.gamma(shape, scale))) {
        }
    }
    return offsets;
}

std::size_t peak_in_flight(std::span<const std::chrono::nanoseconds> offsets,
                           std::chrono::nanoseconds lifetime) noexcept {
    // Two pointers: for each arrival j, the arrivals i <= j with offsets[j] - offsets[i] <=
    // lifetime are the ones that may still be in flight when j arrives.
    std::size_t peak = 0;
    std::size_t first = 0;
    for (std::size_t j = 0; j < offsets.size(); ++j) {
        while (offsets[j] - offsets[first] > lifetime)
            ++first;
        peak = std::max(peak, j - first + 1);
    }
    return peak;
}

} // namespace pacer::schedule

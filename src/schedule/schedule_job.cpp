// `pacer schedule` executed (see schedule_file.hpp): the options checked into a spec, then the
// schedule or its `--dry-run` plan printed.

#include <pacer/core/units.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <span>
#include <stdexcept>

namespace pacer::schedule {

namespace {

using runtime::usage_error;

// What `schedule` would print, as checked: `--dry-run` prints this instead of the schedule.
void print_schedule_plan(const schedule_request& o, const schedule_spec& spec,
                         std::span<const std::chrono::nanoseconds> offsets) {
    fmt::print("pacer schedule --dry-run: checked; the schedule is not printed\n");
    fmt::print("  arrivals   {} ({} at {}, burstiness {:g}, seed {}){}\n", offsets.size(),
               o.arrival, rate_text(spec), spec.burstiness, spec.seed,
               offsets.empty() ? std::string()
                               : fmt::format(", last at {:.3f} s",
                                             static_cast<double>(offsets.back().count()) / 1e9));
    fmt::print("  format     {}, sha256 {}\n", o.format, schedule_sha256(offsets));
}

} // namespace

schedule_spec checked_spec(const schedule_request& o) {
    schedule_spec spec;
    const auto process = parse_arrival_process(o.arrival);
    if (!process)
        throw usage_error(
            fmt::format("--arrival must be poisson, gamma or constant, got \"{}\"", o.arrival));
    spec.process = *process;
    if (o.burstiness && spec.process != arrival_process::gamma)
        throw usage_error(fmt::format(
            "--burstiness applies only to --arrival gamma (got --arrival {})", o.arrival));
    if (o.stages) {
        if (o.rate || o.duration)
            throw usage_error("--stages sets the rate and the length of the schedule: drop "
                              "--rate and --duration");
        try {
            spec.stages = parse_stages(*o.stages);
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
    } else if (!o.rate) {
        throw usage_error("pacer schedule needs --rate R (arrivals per second) or --stages");
    }
    spec.rate = o.rate.value_or(0);
    spec.burstiness = o.burstiness.value_or(1);
    spec.seed = o.seed;
    if (o.count) {
        if (*o.count <= 0)
            throw usage_error(fmt::format("--count must be > 0, got {}", *o.count));
        spec.count = static_cast<std::uint64_t>(*o.count);
    }
    if (o.duration) {
        const auto d = parse_duration(*o.duration);
        if (!d)
            throw usage_error(
                fmt::format("--duration must be a duration such as 60s, 1.5m or 250ms, got \"{}\"",
                            *o.duration));
        spec.duration = *d;
    }
    return spec;
}

int print_schedule(const schedule_request& o) {
    const auto spec = checked_spec(o);
    std::vector<std::chrono::nanoseconds> offsets;
    try {
        offsets = make_schedule(spec);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }

    if (o.dry_run) {
        print_schedule_plan(o, spec, offsets);
        return runtime::exit_ok;
    }
    const std::string text = o.format == "json" ? to_json(spec, offsets) : to_csv(offsets);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout))
        throw std::runtime_error("cannot write the schedule to stdout");
    return runtime::exit_ok;
}

} // namespace pacer::schedule

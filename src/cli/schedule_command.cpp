// `pacer schedule`: prints an open-loop arrival schedule (README.md).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/core/units.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

namespace pacer::cli {

namespace {

struct schedule_options {
    std::string arrival = "poisson";
    double rate = 0;
    double burstiness = 1;
    std::uint64_t seed = 0;
    std::int64_t count = 0; // signed so that a negative count gets our message, not CLI11's
    std::string duration;
    std::string stages;
    std::string format = "csv";
    CLI::Option* rate_opt = nullptr;
    CLI::Option* stages_opt = nullptr;
    CLI::Option* burstiness_opt = nullptr;
    CLI::Option* count_opt = nullptr;
    CLI::Option* duration_opt = nullptr;
    bool dry_run = false;
};

// What `schedule` would print, as checked: `--dry-run` prints this instead of the schedule.
void print_schedule_plan(const schedule_options& o, const schedule::schedule_spec& spec,
                         std::span<const std::chrono::nanoseconds> offsets) {
    fmt::print("pacer schedule --dry-run: checked; the schedule is not printed\n");
    fmt::print("  arrivals   {} ({} at {}, burstiness {:g}, seed {}){}\n", offsets.size(),
               o.arrival, schedule::rate_text(spec), spec.burstiness, spec.seed,
               offsets.empty() ? std::string()
                               : fmt::format(", last at {:.3f} s",
                                             static_cast<double>(offsets.back().count()) / 1e9));
    fmt::print("  format     {}, sha256 {}\n", o.format, schedule::schedule_sha256(offsets));
}

int run_schedule(const schedule_options& o) {
    schedule::schedule_spec spec;
    spec.process = schedule::parse_arrival_process(o.arrival).value(); // checked by CLI11
    if (o.burstiness_opt->count() > 0 && spec.process != schedule::arrival_process::gamma)
        throw usage_error(fmt::format(
            "--burstiness applies only to --arrival gamma (got --arrival {})", o.arrival));
    if (o.stages_opt->count() > 0) {
        if (o.rate_opt->count() > 0 || o.duration_opt->count() > 0)
            throw usage_error("--stages sets the rate and the length of the schedule: drop "
                              "--rate and --duration");
        try {
            spec.stages = schedule::parse_stages(o.stages);
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
    } else if (o.rate_opt->count() == 0) {
        throw usage_error("pacer schedule needs --rate R (arrivals per second) or --stages");
    }
    spec.rate = o.rate;
    spec.burstiness = o.burstiness;
    spec.seed = o.seed;
    if (o.count_opt->count() > 0) {
        if (o.count <= 0)
            throw usage_error(fmt::format("--count must be > 0, got {}", o.count));
        spec.count = static_cast<std::uint64_t>(o.count);
    }
    if (o.duration_opt->count() > 0) {
        const auto d = parse_duration(o.duration);
        if (!d)
            throw usage_error(
                fmt::format("--duration must be a duration such as 60s, 1.5m or 250ms, got \"{}\"",
                            o.duration));
        spec.duration = *d;
    }

    std::vector<std::chrono::nanoseconds> offsets;
    try {
        offsets = schedule::make_schedule(spec);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }

    if (o.dry_run) {
        print_schedule_plan(o, spec, offsets);
        return runtime::exit_ok;
    }
    const std::string text =
        o.format == "json" ? schedule::to_json(spec, offsets) : schedule::to_csv(offsets);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout))
        throw std::runtime_error("cannot write the schedule to stdout");
    return runtime::exit_ok;
}

} // namespace

command add_schedule_command(CLI::App& app) {
    auto* sub = app.add_subcommand(
        "schedule",
        "Print an open-loop arrival schedule: the offset of each arrival from the start, in "
        "integer nanoseconds. The output is a pure function of the arguments: the same "
        "arguments and seed print the same bytes on every machine.");
    auto o = std::make_shared<schedule_options>();

    sub->add_option("--arrival", o->arrival,
                    "Arrival process: 'poisson' (exponential gaps, coefficient of variation 1), "
                    "'gamma' (gamma gaps whose coefficient of variation is --burstiness) or "
                    "'constant' (every gap exactly 1/rate)")
        ->check(CLI::IsMember({"poisson", "gamma", "constant"}))
        ->capture_default_str();
    o->rate_opt = sub->add_option("--rate", o->rate,
                                  "Mean arrivals per second (a finite number > 0, at most 1e9); "
                                  "the mean gap is 1/rate. Required unless --stages is given");
    o->stages_opt = sub->add_option(
        "--stages", o->stages,
        "Stages of the rate instead of --rate and --duration: DURATION:RATE/s (constant) or "
        "DURATION:FROM-TO/s (a linear ramp), comma-separated, e.g. 30s:10/s,2m:10-50/s,30s:50/s. "
        "Arrivals follow the rate by time rescaling (docs/schedule.md); --count may end the "
        "schedule early");
    o->burstiness_opt =
        sub->add_option("--burstiness", o->burstiness,
                        "Gamma only (an error with other processes): B, the target coefficient "
                        "of variation (stddev/mean) of the gaps, in [0.001, 1000]. 1 is as "
                        "bursty as Poisson, 2 burstier, 0.5 more regular. Gamma shape "
                        "k = 1/B^2, scale 1/(k*rate). vLLM's --burstiness is the shape k "
                        "itself, so vLLM's value = 1/B^2 (vLLM 0.25 = our 2, vLLM 4 = our 0.5)")
            ->capture_default_str();
    sub->add_option("--seed", o->seed,
                    "Seed of the generator (0 to 2^64-1): splitmix64 seeding xoshiro256**")
        ->check(whole_number(0, UINT64_MAX))
        ->capture_default_str();
    o->count_opt = sub->add_option("--count", o->count, "Number of arrivals (> 0)");
    o->duration_opt = sub->add_option(
        "--duration", o->duration,
        "Keep the arrivals whose offset is <= D, e.g. 60s, 1.5m, 250ms (about rate*D arrivals). "
        "With --count as well, the schedule ends at whichever limit comes first");
    sub->add_option("--format", o->format,
                    "'csv': an 'index,offset_ns' header, one line per arrival, then "
                    "'# sha256 <hex>'; 'json': {arrival, rate, burstiness, seed, count, "
                    "duration_s, offsets_ns, sha256}, readable by --schedule FILE")
        ->check(CLI::IsMember({"csv", "json"}))
        ->capture_default_str();
    add_dry_run_flag(*sub, o->dry_run);
    sub->footer(
        "The first arrival is at the first gap, not at 0. sha256 is the SHA-256 of the "
        "offsets written as decimal nanoseconds, one per line, each ending with '\\n': it is "
        "the same for the csv and the json print. One of --count or --duration is "
        "required (or --stages). See docs/schedule.md.\nExit status: 0 printed (or planned, with "
        "--dry-run); "
        "1 pacer itself failed (the output could not be written); 2 bad input (nothing "
        "printed).");
    return {sub, [o] { return run_schedule(*o); }};
}

} // namespace pacer::cli

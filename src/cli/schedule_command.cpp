// `pacer schedule`: prints an open-loop arrival schedule (README.md). The options are declared
// here; schedule::print_schedule checks them and prints the schedule.

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace pacer::cli {

namespace {

// The options as parsed; those whose absence matters are passed on only when given.
struct schedule_options {
    schedule::schedule_request request; // --arrival, --seed, --format, --dry-run
    double rate = 0;
    double burstiness = 1;
    std::int64_t count = 0; // signed so that a negative count gets our message, not CLI11's
    std::string duration;
    std::string stages;
};

template <class T>
std::optional<T> given(const CLI::App& sub, const std::string& name, const T& value) {
    return sub.count(name) > 0 ? std::optional<T>(value) : std::nullopt;
}

int run_schedule(const CLI::App& sub, const schedule_options& o) {
    auto request = o.request;
    request.rate = given(sub, "--rate", o.rate);
    request.burstiness = given(sub, "--burstiness", o.burstiness);
    request.count = given(sub, "--count", o.count);
    request.duration = given(sub, "--duration", o.duration);
    request.stages = given(sub, "--stages", o.stages);
    return schedule::print_schedule(request);
}

} // namespace

command add_schedule_command(CLI::App& app) {
    auto* sub = app.add_subcommand(
        "schedule",
        "Print an open-loop arrival schedule: the offset of each arrival from the start, in "
        "integer nanoseconds. The output is a pure function of the arguments: the same "
        "arguments and seed print the same bytes on every machine.");
    auto o = std::make_shared<schedule_options>();

    sub->add_option("--arrival", o->request.arrival,
                    "Arrival process: 'poisson' (exponential gaps, coefficient of variation 1), "
                    "'gamma' (gamma gaps whose coefficient of variation is --burstiness) or "
                    "'constant' (every gap exactly 1/rate)")
        ->check(CLI::IsMember({"poisson", "gamma", "constant"}))
        ->capture_default_str();
    sub->add_option("--rate", o->rate,
                    "Mean arrivals per second (a finite number > 0, at most 1e9); "
                    "the mean gap is 1/rate. Required unless --stages is given");
    sub->add_option(
        "--stages", o->stages,
        "Stages of the rate instead of --rate and --duration: DURATION:RATE/s (constant) or "
        "DURATION:FROM-TO/s (a linear ramp), comma-separated, e.g. 30s:10/s,2m:10-50/s,30s:50/s. "
        "Arrivals follow the rate by time rescaling (docs/schedule.md); --count may end the "
        "schedule early");
    sub->add_option("--burstiness", o->burstiness,
                    "Gamma only (an error with other processes): B, the target coefficient "
                    "of variation (stddev/mean) of the gaps, in [0.001, 1000]. 1 is as "
                    "bursty as Poisson, 2 burstier, 0.5 more regular. Gamma shape "
                    "k = 1/B^2, scale 1/(k*rate). vLLM's --burstiness is the shape k "
                    "itself, so vLLM's value = 1/B^2 (vLLM 0.25 = our 2, vLLM 4 = our 0.5)")
        ->capture_default_str();
    sub->add_option("--seed", o->request.seed,
                    "Seed of the generator (0 to 2^64-1): splitmix64 seeding xoshiro256**")
        ->check(whole_number(0, UINT64_MAX))
        ->capture_default_str();
    sub->add_option("--count", o->count, "Number of arrivals (> 0)");
    sub->add_option(
        "--duration", o->duration,
        "Keep the arrivals whose offset is <= D, e.g. 60s, 1.5m, 250ms (about rate*D arrivals). "
        "With --count as well, the schedule ends at whichever limit comes first");
    sub->add_option("--format", o->request.format,
                    "'csv': an 'index,offset_ns' header, one line per arrival, then "
                    "'# sha256 <hex>'; 'json': {arrival, rate, burstiness, seed, count, "
                    "duration_s, offsets_ns, sha256}, readable by --schedule FILE")
        ->check(CLI::IsMember({"csv", "json"}))
        ->capture_default_str();
    add_dry_run_flag(*sub, o->request.dry_run);
    sub->footer(
        "The first arrival is at the first gap, not at 0. sha256 is the SHA-256 of the "
        "offsets written as decimal nanoseconds, one per line, each ending with '\\n': it is "
        "the same for the csv and the json print. One of --count or --duration is "
        "required (or --stages). See docs/schedule.md.\nExit status: 0 printed (or planned, with "
        "--dry-run); "
        "1 pacer itself failed (the output could not be written); 2 bad input (nothing "
        "printed).");
    return {sub, [sub, o] { return run_schedule(*sub, *o); }};
}

} // namespace pacer::cli

// `pacer schedule`: prints an open-loop arrival schedule (README.md). The options are declared
// here (the arrival options by add_arrival_options, as run and http declare them);
// schedule::print_schedule checks them and prints the schedule.

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/schedule/arrival_options.hpp>

#include <CLI/CLI.hpp>

#include <memory>

namespace pacer::cli {

command add_schedule_command(CLI::App& app) {
    auto* sub = app.add_subcommand(
        "schedule",
        "Print an open-loop arrival schedule: the offset of each arrival from the start, in "
        "integer nanoseconds. The output is a pure function of the arguments: the same "
        "arguments and seed print the same bytes on every machine.");
    auto o = std::make_shared<schedule::schedule_request>();
    add_arrival_options(*sub, o->arrivals);
    sub->add_option("--count", o->arrivals.count, "Number of arrivals (> 0)");
    sub->add_option(
        "--duration", o->arrivals.duration,
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
    return {sub, [o] { return schedule::print_schedule(*o); }};
}

} // namespace pacer::cli

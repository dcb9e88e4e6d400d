#include <pacer/cli/checks.hpp>
#include <pacer/core/nearest_name.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace pacer::cli {

CLI::Validator non_empty_path() {
    return CLI::Validator(
        [](std::string& input) -> std::string {
            return input.empty() ? "is empty: name a folder, or leave the option out for the "
                                   "default"
                                 : "";
        },
        "PATH");
}

CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi) {
    return CLI::Validator(
        [lo, hi](std::string& input) -> std::string {
            std::uint64_t v = 0;
            const char* first = input.data();
            const char* last = first + input.size();
            const auto [end, ec] = std::from_chars(first, last, v);
            const bool digits =
                !input.empty() && std::all_of(input.begin(), input.end(),
                                              [](char c) { return c >= '0' && c <= '9'; });
            if (!digits || ec != std::errc() || end != last || v < lo || v > hi)
                return fmt::format("must be a whole number from {} to {}, got '{}'", lo, hi, input);
            return {};
        },
        fmt::format("{}..{}", lo, hi), "whole_number");
}

CLI::Validator number_in(double lo, double hi, bool lo_open) {
    return CLI::Validator(
        [lo, hi, lo_open](std::string& input) -> std::string {
            double v = 0;
            const char* first = input.data();
            const char* last = first + input.size();
            const auto [end, ec] = std::from_chars(first, last, v, std::chars_format::fixed);
            const bool in_range = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
            if (input.empty() || ec != std::errc() || end != last || !in_range)
                return fmt::format("must be a number {} {:g} and <= {:g}, got '{}'",
                                   lo_open ? ">" : ">=", lo, hi, input);
            return {};
        },
        fmt::format("{}{:g}..{:g}]", lo_open ? "(" : "[", lo, hi), "number_in");
}

void add_arrival_options(CLI::App& sub, schedule::arrival_options& o) {
    sub.add_option("--arrival", o.arrival,
                   "Arrival process: poisson (the default: exponential gaps, coefficient of "
                   "variation 1), gamma (gamma gaps whose coefficient of variation is "
                   "--burstiness) or constant (every gap exactly 1/rate)")
        ->check(CLI::IsMember({"poisson", "gamma", "constant"}));
    sub.add_option("--rate", o.rate,
                   "Mean arrivals per second (a finite number > 0, at most 1e9); the mean gap "
                   "is 1/rate");
    sub.add_option("--stages", o.stages,
                   "The rate in stages instead of --rate (and --duration): DURATION:RATE/s "
                   "(constant) or DURATION:FROM-TO/s (a linear ramp), comma-separated, e.g. "
                   "30s:10/s,2m:10-50/s,30s:50/s; the count, if given, ends it early "
                   "(docs/schedule.md)");
    sub.add_option("--burstiness", o.burstiness,
                   "Gamma only (an error with other processes): B, the coefficient of "
                   "variation (stddev/mean) of the gaps, in [0.001, 1000], default 1. 1 is as "
                   "bursty as Poisson, 2 burstier, 0.5 more regular. Gamma shape k = 1/B^2, "
                   "scale 1/(k*rate). vLLM's --burstiness is the shape k itself, so vLLM's "
                   "value = 1/B^2 (vLLM 0.25 = our 2, vLLM 4 = our 0.5)");
    sub.add_option("--seed", o.seed,
                   "Seed (0 to 2^64-1) of everything drawn at random: the schedule "
                   "(splitmix64 seeding xoshiro256**) and, in http, the synthetic prompts")
        ->check(whole_number(0, UINT64_MAX))
        ->capture_default_str();
}

void add_dry_run_flag(CLI::App& sub, bool& dry_run) {
    sub.add_flag("--dry-run", dry_run,
                 "Check every option and input exactly as a real run would (bad input: exit 2), "
                 "print the plan, create and write nothing, exit 0");
}

void add_end_output_options(CLI::App& sub, bool& no_report, std::string& export_format) {
    sub.add_flag("--no-report", no_report,
                 "Do not write report.html (see pacer report) into the result folder at the end");
    sub.add_option("--export", export_format,
                   "Also write the flat tables (see pacer export) into the result folder at the "
                   "end: tables-csv/ or tables-jsonl/")
        ->check(CLI::IsMember({"csv", "jsonl"}));
}

void add_progress_option(CLI::App& sub, std::string& progress, const std::string& shows,
                         const std::string& ends, const std::string& more) {
    sub.add_option("--progress", progress,
                   "Live progress on stderr: " + shows +
                       ". auto: on when stderr is a terminal (one line refreshed 4 times a "
                       "second); always: also into a pipe or file (a line every 10 s and one at " +
                       ends + "); never" + more)
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
}

void add_scenario_option(CLI::App& command, std::string& scenario, session::voice_settings& voice,
                         const std::string& where, const std::string& results) {
    command
        .add_option("--scenario", scenario,
                    "What " + where +
                        " says (docs/scenarios.md): single (the input once), multi-turn (the "
                        "input three times with 0.6-1 s pauses), barge-in (the input, then again "
                        "0.5 s into the assistant's reply), or a scenario JSON file of turns "
                        "(audio, pause, interrupt_after); " +
                        results)
        ->capture_default_str();
    command
        .add_option("--voice-threshold-db", voice.threshold_db,
                    "--scenario: a 10 ms frame of a turn's input is voice at this RMS level "
                    "(dBFS) or above; the turn's voice ends at its last voiced frame's end, the "
                    "reference of voice-to-voice latency (ttfa_from_voice_end_s)")
        ->check(CLI::Range(-120.0, 0.0))
        ->capture_default_str();
    command
        .add_option("--voice-hangover-ms", voice.hangover_ms,
                    "--scenario: added to the last voiced frame's end (never past the turn's "
                    "audio)")
        ->check(CLI::Range(0.0, 10000.0))
        ->capture_default_str();
}

std::string nearest_command(const CLI::App& app, const std::string& typed) {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        names.push_back(sub->get_name());
    return nearest_name(names, typed);
}

std::string nearest_option(const CLI::App& command, const std::string& typed) {
    std::vector<std::string> names;
    for (const auto* o : command.get_options())
        for (const auto& l : o->get_lnames())
            names.push_back("--" + l);
    return nearest_name(names, typed);
}

std::string unknown_option_line(const CLI::App& command, int argc, char** argv) {
    bool in_command = false;
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (!in_command) {
            in_command = command.check_name(word);
            continue;
        }
        if (word == "--")
            break; // positionals from here on
        if (word.rfind("--", 0) != 0)
            continue;
        const std::string name = word.substr(0, word.find('='));
        if (command.get_option_no_throw(name) != nullptr)
            continue;
        const std::string near = nearest_option(command, name);
        const std::string help = fmt::format("(pacer {} --help)", command.get_name());
        return near.empty()
                   ? fmt::format("unknown option '{}' for '{}' {}", name, command.get_name(), help)
                   : fmt::format("unknown option '{}' for '{}'; did you mean '{}'? {}", name,
                                 command.get_name(), near, help);
    }
    return {};
}

std::string repeated_option_line(const CLI::App& command, std::string_view what) {
    const auto colon = what.find(": At Most 1 required but received ");
    if (colon == std::string_view::npos)
        return {};
    const std::string name(what.substr(0, colon));
    const auto* option = command.get_option_no_throw(name);
    if (option == nullptr)
        return {};
    std::string names;
    for (const auto& l : option->get_lnames())
        if ("--" + l != name)
            names += fmt::format("{}--{}", names.empty() ? "" : ", ", l);
    return fmt::format("{}{} is given more than once: give it once", name,
                       names.empty() ? "" : fmt::format(" (also {})", names));
}

} // namespace pacer::cli

#pragma once
// Range checks of numeric options, shared by every subcommand: a negative, wrapped-around or
// absurd number is refused by the parser with one line ("--threads: must be a whole number from
// 1 to 1024, got '-2'"), before anything runs; the options several subcommands declare alike
// (--dry-run, --progress, --scenario, the end outputs).

#include <pacer/run/run_plan.hpp>
#include <pacer/schedule/arrival_options.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pacer::cli {

/// Session contexts (`--threads`) and worker processes (`--processes`).
inline constexpr std::uint64_t max_threads = 1024;
/// Millisecond options (stagger, stalls, limits, latencies): at most one hour.
inline constexpr double max_ms = 3'600'000;

/// Decimal digits only (no sign, no hex or octal, no exponent), from `lo` to `hi`.
CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi);

/// A finite decimal number in [lo, hi], or in (lo, hi] when `lo_open`.
CLI::Validator number_in(double lo, double hi, bool lo_open = false);
/// A folder or file name that is not empty (`-o ""` is refused, not the default taken).
CLI::Validator non_empty_path();

/// The help's "Exit status" line of a server command (the mocks): it serves until SIGINT or
/// SIGTERM.
inline constexpr const char* server_exit_statuses =
    "Exit status: 0 stopped by SIGINT/SIGTERM (the stats written); 1 pacer itself failed (a "
    "socket or file error while serving); 2 bad input, a port in use or a descriptor limit too "
    "low (nothing served, nothing written).";

/// Declares --arrival, --rate, --stages, --burstiness and --seed into `o`, in the option group
/// in force: one declaration and one wording for run, http and schedule, whose count and
/// --duration the command declares itself. schedule::spec_from checks them together.
void add_arrival_options(CLI::App& sub, schedule::arrival_options& o);

/// Adds `--dry-run` to a subcommand: validate everything as the real command would, print the
/// plan, create and write nothing, exit 0.
void add_dry_run_flag(CLI::App& sub, bool& dry_run);

/// Adds what a job writes at its end besides its summary: `--no-report` (skip report.html)
/// and `--export csv|jsonl` (the flat tables of `pacer export`).
void add_end_output_options(CLI::App& sub, bool& no_report, std::string& export_format);

/// `--progress auto|always|never`, as every job command takes it: `shows` is what the line
/// says, `ends` when a pipe or file gets its last lines, `more` anything the command adds.
void add_progress_option(CLI::App& sub, std::string& progress, const std::string& shows,
                         const std::string& ends, const std::string& more = "");

/// Declares `--scenario` on `command` (run and serve take one grammar): the built-in names or
/// a file, with `where` saying what plays it and `results` what it adds to the result folder.
/// session::load_scenario (session/scenario_plan.hpp) loads it.
void add_scenario_option(CLI::App& command, std::string& scenario, session::voice_settings& voice,
                         const std::string& where, const std::string& results);

/// The nearest subcommand name to a mistyped one, or "" when none is close.
std::string nearest_command(const CLI::App& app, const std::string& typed);

/// The long option of `command` (`--name`) nearest to `typed`, by the same rule, or empty.
std::string nearest_option(const CLI::App& command, const std::string& typed);

/// For a command line CLI11 refused with unexpected arguments: the line that names the first
/// `--option` `command` does not know, with its nearest option (`pacer: unknown option
/// '--concurency' for 'run'; did you mean '--concurrency'? (pacer run --help)`), or empty
/// when every option is known.
std::string unknown_option_line(const CLI::App& command, int argc, char** argv);

/// The line for a value option given more than once (CLI11's "At Most 1 required but received
/// 2"), naming every name of the option, since `--count` and `--sessions` are one; empty when
/// `what` is another mismatch.
std::string repeated_option_line(const CLI::App& command, std::string_view what);

} // namespace pacer::cli

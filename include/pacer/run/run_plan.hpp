#pragma once
// `pacer run`'s options resolved into a run_job (run_job.hpp), step by step, and the plan that
// `--dry-run` prints: the checks that need only the options (the numbers, the profile, the
// shard, the open loop's schedule and cap, the shared start, the timeout against the input),
// the sessions of this process, and the estimates checked before anything is created (disk,
// descriptors), and the input (--audio or --duration, --scenario). The command
// (src/cli/run_command.cpp) calls them in order, between its own steps (the protocol, the URL
// and the output folder), so that the first mistake is the one reported.
//
// Bad input throws bad_input (core/bad_input.hpp): one line, exit 2, nothing written.

#include <pacer/session/runner.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

namespace pacer::run {

struct run_options; // run_job.hpp
struct run_job;

/// Checks --concurrency, --threads, --inject-stall-ms, --stagger-ms and --processes, and
/// returns --timeout parsed (nullopt: not given; checked against the input by `set_timeout`).
std::optional<std::chrono::nanoseconds> check_numbers(const run_options& s);

/// Sets `job.profile` from --profile: a profile pacer speaks, and without --url the one the
/// built-in probe mock serves.
void check_profile(run_job& job);

/// Resolves the sessions of this process into `job`: its shard (--shard, or the launcher's
/// environment), the open loop's schedule (--arrival/--rate/--stages/--sessions, or a saved
/// --schedule) and cap policy, this process's arrivals and sessions, and the shared start
/// (--start-at, or the parent's).
void plan_sessions(run_job& job);

/// The input of `pacer run` into `job` (its options, protocol and processes set): --audio, or
/// --duration of silence, with its conversion record (config.input_conversion), and --scenario
/// with its turns' audio at the protocol's rate (session::load_scenario); `input_length` is
/// what one session streams. A bad_input for anything wrong, such as a multi-turn
/// scenario with --processes.
void load_run_input(run_job& job);

/// Sets `job.timeout`: `given` (parsed --timeout), which must be longer than the input
/// (`job.input_length`), or the input plus default_timeout_margin.
void set_timeout(run_job& job, std::optional<std::chrono::nanoseconds> given);

/// The bytes of traces and receipts all the run's sessions write while they stream, kept or
/// not (--keep-traces only decides whether they stay), by the --trace mode; refuses
/// --keep-traces without --trace full.
std::uint64_t disk_estimate(const run_job& job);

/// The sessions in flight at most: all of a closed batch; in an open loop, the arrivals within
/// one session lifetime (its timeout), at most --max-concurrency per process.
std::size_t sessions_in_flight(const run_job& job);

/// The file descriptors the run needs: a socket and two files per session in flight, and the
/// other socket end when the built-in mock serves them.
std::size_t descriptors_needed(const run_job& job);

/// Prints what `job` would do (`--dry-run`): the target, the sessions or the open loop, the
/// input, timeout, threads, start, output, descriptors and disk, the transport, and
/// `telemetry_plan` (a line each). `job.disk_free` is the free space found.
void print_plan(const run_job& job, std::span<const std::string> telemetry_plan);

} // namespace pacer::run

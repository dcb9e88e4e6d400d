#pragma once
// The execution of `pacer serve` (docs/serving.md): a checked sweep (sweep.hpp) run against a
// running server, with its telemetry, its start line, the sweep's summary.json and the lines
// that end it (the capacity, its verification, the energy, the cost, the files written); and
// the two things the command shows before it runs: the `--dry-run` plan and the disk estimate.
//
// The command (src/cli/serve_command.cpp, src/cli/serve_plan.cpp) declares and checks the
// options into a serve_job, prints the plan, starts the built-in mock when no `--url` is given,
// creates the output folder and calls execute_serve. What this module may not include (run's
// progress line and transport record, the report, the mock) the command hands in: an observer
// and the functions of serve_job.

#include <pacer/runtime/exit_status.hpp>
#include <pacer/sweep/sweep.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::sweep {

/// The options of `pacer serve`, as given (`sweep_options` holds what they resolve to).
struct serve_options {
    std::string url;
    std::vector<std::string> audio;
    std::string duration = "10s";
    std::string profile = "nemotron";
    std::string protocol = "native"; ///< native, openai-realtime or vllm-realtime
    std::string turns = "server-vad";
    std::string scenario = "single"; ///< `--scenario` (docs/scenarios.md)
    session::voice_settings voice;   ///< `--voice-threshold-db`, `--voice-hangover-ms`
    std::string model;
    std::string concurrencies = "1,2,4,8";
    std::size_t concurrency = 0;
    std::size_t warmup_runs = 0;
    std::optional<std::size_t> warmup_level; ///< default: the first level the plan runs
    std::size_t repeats = 1;
    std::string settle; ///< default: 5s with --find-capacity, else 0s
    std::optional<std::size_t> confirm, verify_repeats; ///< --find-capacity only
    std::string server_stats;     ///< the server's JSON stats (`/stats`), `#pointer` optional
    std::optional<double> growth; ///< --find-capacity only (default 1.25)
    std::string recovery; ///< canary, stats, canary,stats, none; default: canary with the search
    std::string recovery_max = "120s";
    std::string metrics_listen; ///< --metrics-listen: the live totals, served ("": none)
    bool warm_until_stable = false;
    double stable_power_pct = 3, stable_temperature_c = 1;
    std::string stable_window = "30s", stable_max_wait = "10m";
    double stagger_ms = 0;
    std::string pacing = "realtime";
    double startup_reserve_ms = 80;
    std::string timeout; ///< default: the longest input + 60 s
    std::string output;
    std::size_t threads = 1;
    double loop_lag_limit_ms = 20;
    double send_lateness_limit_ms = 20;
    bool find_capacity = false;
    std::string slo;
    std::size_t max_level = 1024;
    std::size_t start_level = 1;
    double resolution = 0.05;
    bool drop_traces = false;
    std::string progress = "auto";
    bool no_report = false;
    std::string export_format; ///< --export csv|jsonl: the tables at the end ("": none)
};

/// A checked `pacer serve`.
struct serve_job {
    serve_options options;
    sweep_options sweep;
    /// The result folder: to be created when the plan is printed, created (empty) when the
    /// job is executed.
    std::filesystem::path out;
    std::uint64_t disk_estimate = 0; ///< disk_estimate(options, sweep)
    std::uint64_t disk_free = 0;     ///< on the folder's filesystem, checked
    /// summary.json's `command_line` (header values redacted).
    boost::json::array command_line;
    /// The progress line and the table (see table_printer); also told when the sweep starts
    /// and ends (the command's `--metrics-listen`).
    sweep_observer* observer = nullptr;
    /// Stops the built-in mock once the sweep is over and returns its stats (summary.json's
    /// `mock`); empty with --url.
    std::function<boost::json::object()> stop_server;
    /// summary.json's `transport` and the closing `transport` line (empty: none) of the
    /// endpoint after the sweep (its handshakes).
    std::function<boost::json::object(const transport::ws_endpoint&)> transport_json;
    std::function<std::string(const transport::ws_endpoint&)> transport_line;
    /// Writes report.html into the folder (unless --no-report) and the --export tables; each
    /// returns what it wrote, or nullopt when it printed a warning instead.
    std::function<std::optional<std::filesystem::path>(const std::filesystem::path& dir)> report;
    std::function<std::optional<std::filesystem::path>(const std::filesystem::path& dir,
                                                       std::string_view format)>
        tables;
};

/// `--concurrencies a,b,c`: the levels in the order given, each a whole number from 1 to
/// `max_level`, none twice, at least one. Throws bad_input (the line to print,
/// naming the option) otherwise.
std::vector<std::size_t> parse_levels(std::string_view concurrencies, std::size_t max_level);

/// Copies into `sweep` the settings the plan takes as given (nothing to check or resolve): the
/// protocol's names and model, the inputs' names, the runs, the stagger, the pacing, the
/// limits, `--drop-traces` and the capacity search's settings.
void take_given(const serve_options& options, sweep_options& sweep);

/// The inputs at the protocol's rate (realtime protocols; nothing for the native one), made
/// once before any session: `direct[i]` when the file was converted to that rate straight
/// from its source (load_input_audio), else `sweep.inputs[i]` resampled.
void take_wire_inputs(sweep_options& sweep,
                      std::vector<std::optional<std::vector<std::uint8_t>>> direct);

/// The bytes the plan writes: every level's traces and receipts (warm-ups included). With
/// --drop-traces, only the largest level's traces are on disk at once. A capacity search is
/// estimated by its doubling levels (bisection adds more): a lower bound.
std::uint64_t disk_estimate(const serve_options& options, const sweep_options& sweep);

/// What `serve` would do, as checked (`--dry-run`): the target, the levels or the search, the
/// runs, the inputs, the output, `descriptors` needed, the disk, then `telemetry` (a line
/// each) and the `--warm-until-stable` rule.
void print_plan(const serve_job& job, std::size_t descriptors,
                std::span<const std::string> telemetry);

/// Runs `job` into `job.out` (created, empty): the telemetry's idle baseline, the start line,
/// run_sweep, the sweep's summary.json (with the telemetry of its whole window and the energy
/// at the capacity level), report.html and the tables through `job`'s functions, and the
/// closing lines. Returns the verdict: interrupted, some level's client fell behind, the
/// server failed (see sweep_result). Throws what the sweep throws (std::runtime_error: pacer
/// itself failed).
runtime::run_verdict execute_serve(const serve_job& job);

} // namespace pacer::sweep

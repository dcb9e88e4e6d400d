#pragma once
// Module `http` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns the
// execution of `pacer http` (docs/http.md): the streaming request coroutine, one open-loop run of
// a checked schedule (requests.jsonl, schedule.json, summary.json and the lines that say them),
// the capacity search of `--find-capacity`, and the command's live progress line and
// `--metrics-listen` figures (progress.hpp). It may include core, schedule, runtime, transport,
// session, metrics, telemetry, console, capacity_search; it may not include trace, protocol,
// server, report, record, sweep, run, cli (the build fails if it does): the command writes
// report.html and the tables (console::end_writers), the progress line is console's reporter
// with this command's figures, and the capacity search (capacity_search) walks request rates.
//
// The command (src/cli/http_command.cpp) declares the options and checks which go together,
// has plan.hpp read their values into an http_plan (or print the `--dry-run` plan), opens the
// telemetry, fills an http_job and calls execute.

#include <pacer/console/end_writers.hpp>
#include <pacer/metrics/llm.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/shard.hpp>
#include <pacer/schedule/arrival_options.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/session/llm_prompts.hpp>
#include <pacer/session/open_loop.hpp>
#include <pacer/transport/http_client.hpp>

#include <boost/json/array.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pacer::telemetry {
class recorder;         // telemetry/recorder.hpp
class metrics_listener; // telemetry/metrics_listener.hpp
} // namespace pacer::telemetry

namespace pacer::http {

/// The options of `pacer http`, as given (`http_plan` holds what they resolve to).
struct http_options {
    std::string base_url;
    std::string endpoint = "/v1/completions";
    std::string model;
    /// --arrival, --rate, --stages, --burstiness, --seed (also of the prompts), --requests and
    /// --duration.
    schedule::arrival_options arrivals;
    std::size_t max_concurrency = 0;
    std::string cap_policy = "queue";
    std::string schedule_file;
    std::string shard;
    std::uint64_t input_len = 128;
    std::uint64_t output_len = 128;
    double range_ratio = 0;
    std::string prompts_file;
    bool ignore_eos = false;
    std::optional<double> temperature;
    std::vector<std::string> headers;
    std::string api_key_env;
    std::string ca_file;
    bool insecure = false;
    std::string timeout = "5m";
    std::string goodput;
    std::string output;
    bool find_capacity = false;
    double goodput_fraction = 0.95;
    std::size_t capacity_steps = 4;
    std::size_t confirm = 0;        ///< --confirm: extra tries of a probe that missed
    std::size_t verify_repeats = 0; ///< --verify-repeats: closing re-runs of the boundary
    std::string progress = "auto";
    bool no_report = false;
    std::string export_format;  ///< --export csv|jsonl: the tables at the end ("": none)
    std::string metrics_listen; ///< --metrics-listen: the live totals, served ("": none)
};

/// Everything checked, ready to run.
struct http_plan {
    transport::http_endpoint endpoint;
    std::string target;
    session::request_options request;
    schedule::schedule_document schedule;
    std::optional<runtime::shard> shard;
    std::vector<std::size_t> indices; ///< global arrival index of each local arrival
    std::vector<std::chrono::nanoseconds> offsets;
    session::cap_policy policy = session::cap_policy::queue;
    std::optional<std::vector<session::prompt_file_entry>> prompt_file;
    session::synthetic_prompts synthetic;
    transport::header_list headers;
    std::vector<std::string> header_names; ///< for the record: never the values
    std::chrono::nanoseconds timeout{};
    metrics::goodput_slo slo;
    std::filesystem::path output;
};

/// Takes the plan's own arrivals of its schedule: all, or those of its shard. Throws
/// bad_input when the shard gets none.
void take_arrivals(http_plan& p);

/// The descriptors a run of `plan` needs, checked (runtime::ensure_descriptors: one line, exit
/// 2, when the limit is too low) by the run and by its dry run alike; returns the number. One
/// socket per request in flight: at most the arrivals within one --timeout (a request lives no
/// longer), and at most --max-concurrency.
std::size_t check_descriptors(const http_options& s, const http_plan& plan);

/// How the server's certificate is checked, in words; --insecure said loudly.
std::string tls_words(const http_options& s);

/// A checked `pacer http`: its output folder not created yet.
struct http_job {
    http_options options;
    http_plan plan;
    /// --gpu-telemetry / --server-metrics, opened (nullptr: none): started in the first folder
    /// a run creates (a search's own folder, sampled across its probes).
    std::shared_ptr<telemetry::recorder> telemetry;
    /// --metrics-listen, bound (nullptr: none): the live totals, then the final ones until a
    /// watcher scraped them (docs/telemetry.md).
    std::shared_ptr<telemetry::metrics_listener> listener;
    /// summary.json's and capacity.json's `command_line` (header values redacted).
    boost::json::array command_line;
    console::end_writers end; ///< report.html and the tables of each folder written
    /// Creates a new result folder (the run's, a search's, a probe's; the command's: one line,
    /// exit 2, when it cannot).
    std::function<void(const std::filesystem::path&)> create_folder;
};

/// Runs `job`: one open-loop run of its schedule into `plan.output`, or (`find_capacity`) the
/// search, a run per probe; serves `--metrics-listen` meanwhile and prints the results. Returns
/// the verdict. Throws bad_input when a probe's rate gives no valid schedule,
/// std::runtime_error when pacer itself fails (a file that cannot be written).
runtime::run_verdict execute(const http_job& job);

} // namespace pacer::http

#pragma once
// `pacer run` as a library entry point: the options as given (filled by the command line), the
// job they resolve to once checked, and its execution: one process of sessions (closed batch
// or open loop, optionally a shard or a worker of `--processes`), or the parent of
// `--processes` (workers started by runtime::worker_pool, their parts pooled). The command
// (src/cli/run_command.cpp) declares and validates the options and calls execute_run.

#include <pacer/cli/client_options.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/runtime/shard.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/session/open_loop.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pacer::cli {

/// The options of `pacer run`, as given (strings as typed; `run_job` holds what they resolve to).
struct run_options {
    std::size_t concurrency = 256;
    std::string duration = "30s";
    std::string audio;
    std::string url;
    std::string profile = "nemotron";
    std::string protocol = "native";
    std::string turns = "server-vad";
    std::string model;
    std::size_t threads = 1;
    std::string output;
    bool keep_traces = false;
    std::string trace = "full"; // --trace full|receipts|none
    double inject_stall_ms = 0;
    std::string timeout; // default: the input + 60 s
    double stagger_ms = 80;
    std::size_t stagger_slots = 0; // --stagger-slots
    std::size_t processes = 1;
    std::string shard;
    std::size_t shards = 0;
    std::string start_at;
    double start_at_monotonic = -1; // hidden: the parent's shared start for its workers
    // Open loop.
    std::string arrival;
    double rate = 0;
    std::size_t sessions = 0;
    std::optional<double> burstiness;
    std::uint64_t seed = 0;
    std::size_t max_concurrency = 0;
    std::string cap_policy = "queue";
    std::string schedule_file;
    int worker_index = -1; // hidden: which worker of `--processes` this is
    std::string live_file; // hidden: where a worker exports its live totals for the parent
    std::string progress = "auto";
    bool no_report = false;
    std::string export_format; ///< --export csv|jsonl: the tables at the end ("": none)
    client_settings client;    // wss:// trust and handshake headers
    /// The program the workers of `--processes` run (this one; a test names the pacer binary).
    std::string worker_program = "/proc/self/exe";
};

/// A checked run: every value resolved, nothing created yet.
struct run_job {
    run_options options;
    std::size_t sessions = 0;      ///< this process's (per worker with --processes)
    std::vector<std::uint8_t> pcm; ///< 16 kHz mono PCM16
    /// The input at the protocol's own rate, converted straight from the file (none: derive it
    /// from `pcm`).
    std::optional<std::vector<std::uint8_t>> wire_pcm;
    boost::json::object input_conversion; ///< config.input_conversion of summary.json
    duration input_length{};
    std::chrono::nanoseconds timeout{};
    std::filesystem::path out; ///< does not exist yet
    std::optional<runtime::shard> shard;
    std::optional<schedule::schedule_document> open_loop;
    std::vector<std::chrono::nanoseconds> arrivals; ///< this process's (open loop)
    std::optional<double> start_monotonic;
    const protocol::profile* profile = nullptr;
    std::optional<protocol::realtime_protocol> realtime;
    session::cap_policy policy{};
    transport::ws_endpoint endpoint; ///< the client settings applied ("" url: set by the run)
    std::uint64_t disk_estimate = 0;
    std::uint64_t disk_free = 0;
};

/// Runs `job`: creates its output folder, runs the sessions (or the workers), writes
/// summary.json, samples.json and the report, prints the table; returns the exit status.
/// Throws std::runtime_error when pacer itself fails (a worker that cannot start, a file that
/// cannot be written).
int execute_run(run_job job);

} // namespace pacer::cli

#pragma once
// Module `run` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns the
// execution of `pacer run`: its options and input resolved into a job and its `--dry-run` plan
// (run_plan.hpp), one process of sessions (closed batch or open loop, optionally a shard
// or a worker of `--processes`), or the parent of `--processes` (its workers' command lines,
// started by runtime::worker_pool, their parts pooled), the run's summary.json, samples.json and
// table, the live progress line and the workers' live files, the client's connection settings as
// given, and pacer's exit statuses. It may include core, schedule, trace, runtime, protocol,
// transport, session, metrics, telemetry, console; it may not include server, report, record,
// sweep, http, cli, capacity_search (the build fails if it does): the command starts any built-in
// mock (`local_server`) and writes report.html and the tables (`end_writers`).
//
// The command (src/cli/run_command.cpp) declares the options, checks and resolves them into a
// run_job (with run_plan.hpp's steps; `--dry-run` prints run::print_plan), creates the output
// folder, starts the built-in mock when no `--url` is given and calls execute_run.

#include <pacer/console/end_writers.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/pcm_input.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/run/client_settings.hpp>
#include <pacer/run/local_server.hpp>
#include <pacer/runtime/shard.hpp>
#include <pacer/schedule/arrival_options.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/session/error.hpp>
#include <pacer/session/open_loop.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::telemetry {
class recorder;         // telemetry/recorder.hpp
class metrics_listener; // telemetry/metrics_listener.hpp
} // namespace pacer::telemetry

namespace pacer::run {

/// The options of `pacer run`, as given (strings as typed; `run_job` holds what they resolve to).
struct run_options {
    std::size_t concurrency = 256;
    bool concurrency_given = false; ///< whether -c was typed (an open loop refuses it)
    std::string duration = "30s";
    std::string audio;
    std::string url;
    std::string profile = "nemotron";
    std::string protocol = "native";
    std::string turns = "server-vad";
    std::string scenario = "single"; ///< `--scenario` (docs/scenarios.md)
    session::voice_settings voice;   ///< `--voice-threshold-db`, `--voice-hangover-ms`
    std::string model;
    omni_cli omni; ///< `--chunk-ms`, `--ref-audio`, `--ack`, `--ack-ms` (vllm-omni)
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
    schedule::arrival_options arrivals; ///< --arrival, --rate, --stages, --sessions...
    std::size_t max_concurrency = 0;
    std::string cap_policy = "queue";
    std::string schedule_file;
    int worker_index = -1; // hidden: which worker of `--processes` this is
    std::string live_file; // hidden: where a worker exports its live totals for the parent
    std::string progress = "auto";
    bool no_report = false;
    std::string export_format; ///< --export csv|jsonl: the tables at the end ("": none)
    client_settings client;    // wss:// trust and handshake headers
    /// --metrics-listen HOST:PORT ("": none): the live totals served in the Prometheus format.
    std::string metrics_listen;
    /// The program the workers of `--processes` run (this one; a test names the pacer binary).
    std::string worker_program = "/proc/self/exe";
};

/// A checked run: every value resolved, its (empty) output folder created, nothing else yet.
struct run_job {
    run_options options;
    std::size_t sessions = 0; ///< this process's (per worker with --processes)
    protocol::pcm_input pcm;  ///< 16 kHz mono PCM16 (silence: held nowhere)
    /// The input at the protocol's own rate, converted straight from the file (none: derive it
    /// from `pcm`).
    std::optional<std::vector<std::uint8_t>> wire_pcm;
    boost::json::object input_conversion; ///< config.input_conversion of summary.json
    /// summary.json's `command_line`: the command as typed, header values redacted (none: the
    /// summary has no `command_line`).
    boost::json::array command_line;
    duration input_length{};
    std::chrono::nanoseconds timeout{};
    std::filesystem::path out; ///< exists and is empty (the command created it)
    std::optional<runtime::shard> shard;
    std::optional<schedule::schedule_document> open_loop;
    std::vector<std::chrono::nanoseconds> arrivals; ///< this process's (open loop)
    std::optional<double> start_monotonic;
    const protocol::profile* profile = nullptr;
    std::optional<protocol::realtime_protocol> realtime;
    session::cap_policy policy{};
    protocol::realtime_turns turns = protocol::realtime_turns::server_vad; ///< `--turns`
    omni_plan omni; ///< vllm-omni's chunk and listener (the default plan otherwise)
    /// A multi-turn `--scenario` (none: `single`) and its turns' audio, a turn with no `pcm`
    /// being the run's input; each session draws its own pauses.
    session::conversation_plan conversation;
    /// The client settings applied, to `--url` or to the built-in mock's address.
    transport::ws_endpoint endpoint;
    /// The built-in mock when no `--url` was given (stopped by the run when its sessions end).
    std::unique_ptr<local_server> mock;
    console::end_writers end;
    /// --gpu-telemetry / --server-metrics, opened (nullptr: none): sampled from before the idle
    /// baseline to the end of the sessions, into telemetry.jsonl and summary.json's `telemetry`.
    std::shared_ptr<telemetry::recorder> telemetry;
    /// --metrics-listen, bound (nullptr: none): the live totals from before the idle baseline,
    /// then the final totals until a watcher scraped them (docs/telemetry.md).
    std::shared_ptr<telemetry::metrics_listener> listener;
    std::uint64_t disk_estimate = 0;
    std::uint64_t disk_free = 0;
};

/// Runs `job`: runs the sessions (or the workers) in its output folder, writes summary.json,
/// samples.json and (through `job.end`) the report, prints the table; returns the exit status.
/// Throws std::runtime_error when pacer itself fails (a worker that cannot start, a file that
/// cannot be written).
int execute_run(run_job job);

/// What the session runner is given for `job` in this process: its sessions (and open-loop
/// arrivals, cap and common start), the input (moved out of `job`, and at the protocol's rate:
/// `job.wire_pcm`, or `pcm` resampled once), the timeout, traces under `job.out` in the
/// `--trace` mode, the protocol, the stagger and any injected stall. The live totals are the
/// caller's to set.
session::run_options runner_options(run_job& job);

/// The argument list that makes worker `index` of `--processes` run its share of `s` against
/// `url`, into `out`, from the shared start `start_at_monotonic`: --concurrency sessions
/// (closed loop, `schedule_file` empty), or shard index/P of the parent's `schedule_file`
/// (open loop); it exports its live totals to `live_file`, writes no report and shows no
/// progress line. Secrets go by the environment (client_worker_args).
std::vector<std::string> worker_args(const run_options& s, const std::string& url,
                                     const std::filesystem::path& out, double start_at_monotonic,
                                     int index, const std::filesystem::path& schedule_file,
                                     const std::filesystem::path& live_file);

/// The failures of each session as summary.json's `server` counts them: its own (those its
/// trace's error lines wrote), a 503 rejection, the writer's failure, and an incomplete session
/// that recorded no error (a session never dispatched has none).
std::vector<std::vector<failure>>
session_errors(const std::vector<session::session_result>& sessions);

/// summary.json's `server`: the time to first audio of `f`, the sessions' errors by kind, and
/// `unreachable` (why no dispatched session reached the server, or null).
boost::json::object server_json(const metrics::pacing_figures& f,
                                const std::vector<session::session_result>& sessions);

} // namespace pacer::run

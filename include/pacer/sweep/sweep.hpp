#pragma once
// Module `sweep` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns the
// execution of `pacer serve`: running a level and its repeats, judging it (client timing
// validity, the server's failures, SLOs), the capacity search, the level's and the sweep's
// summary.json, the table (serve_table.hpp), and the job: the start and closing lines, the
// `--dry-run` plan and the disk estimate (serve_job.hpp). It may include core, trace, runtime,
// protocol, transport, session, metrics, telemetry, capacity_search; it may not include schedule,
// server, report, record, run, http, cli, console (the build fails if it does): the command starts
// any mock and passes its URL and a stop function, adds the progress line to the observer, hands
// in the writers of report.html and the tables, and records the transport.
//
// The command (src/cli/serve_command.cpp, serve_plan.cpp) declares and checks the options,
// fills a serve_job (its sweep_options) and calls execute_serve, which calls run_sweep and
// writes summary_json.

#include <pacer/capacity_search/capacity.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/metrics/level.hpp>
#include <pacer/metrics/outcome.hpp>
#include <pacer/metrics/realtime_level.hpp>
#include <pacer/metrics/slo.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/pcm_input.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/session/live_counters.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/sweep/recovery.hpp>
#include <pacer/sweep/validity.hpp>
#include <pacer/telemetry/stability.hpp>
#include <pacer/transport/http_get.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pacer::telemetry {
class recorder;
}

namespace pacer::sweep {

/// A checked sweep: what the command line resolved to. Nothing here is read from the
/// environment or started: the endpoint is a running server (or the command's mock).
struct sweep_options {
    // The target.
    transport::ws_endpoint endpoint;
    /// As recorded (config.url) and named in "cannot connect to ...": `--url`, or the built-in
    /// mock's address and name.
    std::string url;
    /// The native protocol's profile (recorded as null for the realtime protocols).
    const protocol::profile* profile = &protocol::default_profile();
    std::string protocol = "native"; ///< native, openai-realtime or vllm-realtime
    /// openai-realtime / vllm-realtime (docs/protocols.md); nullopt: native.
    std::optional<protocol::realtime_protocol> realtime;
    protocol::realtime_turns turns = protocol::realtime_turns::server_vad;
    std::string turns_name = "server-vad"; ///< `--turns` as given (recorded)
    /// vllm-omni: the append chunk and the listener (session_options' `chunk`, `omni`).
    duration chunk = protocol::packet_period;
    session::omni_settings omni;
    std::string model;

    // The input.
    std::vector<std::string> audio; ///< the files as named (config.audio); empty: silence
    std::string silence;            ///< `--duration` when no file is given (config.silence)
    /// 16 kHz mono PCM16, session i streams input i mod n.
    std::vector<protocol::pcm_input> inputs;
    /// The inputs at the protocol's rate (realtime protocols), in order.
    std::vector<protocol::pcm_input> wire_inputs;
    /// Per input: its length, or with a `conversation` the longest a session's turns take.
    std::vector<double> input_duration_s;
    /// `--scenario` (docs/scenarios.md): the conversation every session of every run (warm-ups
    /// too) plays, a turn of `input` streaming the session's input (none: one utterance). Each
    /// run's and level's aggregate then has `turns` (summary.json's `turns` in `pacer run`),
    /// and each run's folder a turns.jsonl.
    session::conversation_plan conversation;
    /// How each input was read and converted (config.input_conversion), in order.
    boost::json::array conversions;
    duration timeout{}; ///< per session

    // The plan.
    std::vector<std::size_t> levels; ///< without find_capacity
    std::size_t warmup_runs = 0;
    /// Sessions of each warm-up run (the command's default: the first level the plan runs).
    /// One session streams the first input only, as the reference's warm-up; more stream the
    /// inputs round-robin, as a level does.
    std::size_t warmup_level = 1;
    /// Idle time before every run (warm-ups, levels, repeats, confirmations, verifications) but
    /// the sweep's first. A run starts only after every session of the one before has closed.
    duration settle{};
    /// `--server-stats`: the server's own JSON stats endpoint (native-mock's `GET /stats`), read
    /// with `?reset=1` before each run and again after it (nullopt: none).
    std::optional<transport::http_endpoint> server_stats;
    std::string server_stats_url; ///< as given (recorded), without its `#pointer`
    /// `--server-stats URL#POINTER`: where `--recovery stats` finds the server's pending work.
    std::string stats_pointer = "/pending_units";
    /// `--recovery` and `--recovery-max` (docs/serving.md, "Overload and recovery"): what is
    /// waited for before every run but the first (after the settle pause).
    recovery_settings recovery;
    /// These options are a recovery canary's (its runs are labelled so).
    bool canary = false;
    /// `--gpu-telemetry` (docs/telemetry.md): sampling, started by the command; each run's
    /// summary gets the window from its common start to its last session's end (nullptr: none).
    std::shared_ptr<telemetry::recorder> telemetry;
    /// `--warm-until-stable` (needs `telemetry`): after the `warmup_runs`, more warm-up runs
    /// of `warmup_level`, back to back (no settle pause), until the GPUs' power and
    /// temperature are steady by this rule or its maximum wait has passed; the first level
    /// follows without a settle pause.
    std::optional<telemetry::stability_rule> warm_until_stable;
    std::size_t repeats = 1;
    std::size_t threads = 1;
    double stagger_ms = 0;
    std::string pacing = "realtime"; ///< realtime or lockstep
    double startup_reserve_ms = 80;
    timing_limits limits;
    bool drop_traces = false;
    bool find_capacity = false;
    capacity_search::capacity_settings capacity;
    std::string slo;                      ///< `--slo` as given (recorded)
    std::vector<metrics::slo_check> slos; ///< what each level is judged by (may be empty)
};

/// 16 kHz for the native protocol and vllm-realtime, 24 kHz for openai-realtime.
std::size_t wire_sample_rate(std::optional<protocol::realtime_protocol> realtime);

/// One run of one level: its summary (as written to its folder) and its sessions.
struct level_run {
    std::size_t concurrency = 0;
    std::size_t repeat = 0;
    boost::json::object summary;
    std::vector<metrics::level_session> sessions;
    /// Realtime protocols: the sessions with their protocol's figures (`sessions` holds the
    /// same sessions' status, admission and send lateness).
    std::vector<metrics::realtime_level_session> realtime_sessions;
    /// A conversation: each session's turns as it recorded them (by session index).
    std::vector<std::vector<trace::turn_result>> turns;
    double loop_lag_p99_s = 0;
    bool valid = false;
    bool interrupted = false;
    /// Some session was admitted and the client's timing was not valid: it fell behind.
    bool client_fell_behind = false;
    /// Some session failed or was rejected; `unreachable` when none reached the server.
    bool server_failed = false;
    std::optional<std::string> unreachable; ///< "cannot connect to URL: connection refused"
    std::size_t failed = 0, rejected = 0;
    std::vector<metrics::error_count> errors; ///< distinct messages, most frequent first
    /// The wait for the server's recovery before the run (nullopt: none).
    std::optional<recovery_record> recovery;
};

/// One level of the plan, `repeats` times; the level's pooled entry for the top summary.
struct level_result {
    std::size_t concurrency = 0;
    capacity_search::level_try
        run;            ///< why it ran (a plain sweep's levels are all `search`, attempt 1)
    std::string folder; ///< c<level>[-confirm<n>|-verify<n>], under repeat-<r>/ with repeats
    std::vector<level_run> runs;
    bool valid = true;
    bool slo_met = true;
    bool interrupted = false;
    bool client_fell_behind = false;
    bool server_failed = false;
    bool unreachable = false;
    bool recovered = true; ///< every run started on a recovered server
    boost::json::object entry;
};

/// What the command sees of a sweep while it runs: the progress line and the table. Every call
/// comes from the thread that called run_sweep (or execute_serve), between levels (never while
/// sessions run).
class sweep_observer {
public:
    virtual ~sweep_observer() = default;
    /// execute_serve is about to call run_sweep (the start line is printed): e.g. the
    /// command's `--metrics-listen` starts serving.
    virtual void sweep_starting();
    /// run_sweep has returned; the sweep's summary.json is not written yet.
    virtual void sweep_ended();
    /// A level (or a warm-up) is about to start: its label ("warmup", "level c8", "level c8
    /// (repeat 2)") and expected length. Returns the totals its sessions bump, or nullptr.
    virtual session::live_counters* level_starting(const std::string& label, double expected_s);
    /// Its sessions have ended (only after level_starting returned totals).
    virtual void level_ended();
    /// The sweep waits `seconds` before its next run (`--settle`).
    virtual void settling(double seconds);
    /// The recovery canary's baseline was measured (nullopt: it gave no figure).
    virtual void canary_baseline(std::optional<double> seconds);
    /// Warm-up `index` (from 1) is over.
    virtual void warmup_done(std::size_t index, const level_run& run);
    /// The warm-ups are over; the levels follow.
    virtual void levels_starting();
    /// One run of a level is over (its summary.json is written).
    virtual void run_done(const level_run& run);
    /// A sweep without capacity search stopped early: the server cannot be reached.
    virtual void stopped_unreachable();
};

/// A finished sweep.
struct sweep_result {
    /// `--warm-until-stable`: telemetry::stability_json of the last verdict (nullopt: not asked
    /// or interrupted before its first run).
    std::optional<boost::json::object> warm_until_stable;
    std::vector<level_result> levels;                         ///< as probed, in order
    std::optional<capacity_search::capacity_result> capacity; ///< find_capacity only
    /// find_capacity: how the server held up (overloads_json; nullopt: no search ran).
    std::optional<boost::json::object> recovery;
    bool interrupted = false;
    bool all_valid = true;           ///< every run's client timing was valid
    bool client_fell_behind = false; ///< some level's client fell behind
    /// Some level's sessions failed or were rejected; with find_capacity, only a server that
    /// could not be reached counts (the levels beyond the capacity fail on purpose).
    bool server_failed = false;
};

/// Runs the warm-ups (`out`/warmup-<i>/) and the levels (`out`/[repeat-<r>/]c<level>/, each
/// with its summary.json), or the capacity search (its confirmation and verification runs in
/// c<level>-confirm<n>/ and c<level>-verify<n>/). `out` must exist. A signal ends it after the
/// current level, or at once during a settle pause.
sweep_result run_sweep(const sweep_options& options, const std::filesystem::path& out,
                       sweep_observer& observer);

/// summary.json's `config`; `levels` the levels run (or probed).
boost::json::object config_json(const sweep_options& options, std::span<const std::size_t> levels);

/// What the sweep's summary.json records that the command knows: the disk estimate, the
/// transport's settings and handshakes, the built-in mock's stats (nullopt: none).
struct summary_extras {
    boost::json::object disk;
    boost::json::object transport;
    std::optional<boost::json::object> mock;
};

/// The sweep's summary.json (schema_version 1, command serve): config, disk, runs, levels,
/// capacity, client_timing_valid, interrupted, transport, mock, provenance, resources.
boost::json::object summary_json(const sweep_options& options, const sweep_result& result,
                                 summary_extras extras);

} // namespace pacer::sweep

// `pacer run`: the options declared, checked and resolved into a run::run_job (run_plan.hpp's
// steps and this file's), run by run::execute_run.

#include <pacer/cli/checks.hpp>
#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/cli/telemetry_options.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/report/end_report.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/run/run_plan.hpp>
#include <pacer/runtime/command_line.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/output_dir.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/server/probe_mock.hpp>

#include <boost/asio/io_context.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace pacer::cli {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// The options as CLI11 fills them; what only the command needs comes on top.
struct run_settings : run::run_options {
    telemetry_settings telemetry;
    CLI::Option* concurrency_option = nullptr;
    bool dry_run = false;
};

// The (empty) output folder, then the built-in probe mock when no --url is given: the run
// takes a running server's endpoint.
void prepare_run(run::run_job& job) {
    runtime::create_output_dir(job.out);
    if (!job.options.url.empty())
        return;
    job.mock = std::make_unique<local_mock>([](asio::io_context& io) {
        return std::make_unique<server::probe_mock>(io, server::mock_options{});
    });
    job.endpoint = transport::parse_ws_url(job.mock->url());
    run::apply_client_settings(job.options.client, job.endpoint);
}

int run(const run_settings& s) {
    // Everything is checked in this order before anything is created.
    run::run_job job;
    job.options = s;
    const auto timeout = run::check_numbers(s);
    run::check_profile(job);
    job.realtime = run::protocol_option(s.protocol, s.model);
    if (job.realtime && s.url.empty())
        throw bad_input(fmt::format("--protocol {} needs --url: the built-in probe mock "
                                    "speaks the native protocol only",
                                    s.protocol));
    job.turns = run::turns_option(s.turns);
    job.omni = run::omni_option(s.omni, job.realtime, s.turns);
    run::plan_sessions(job);
    run::load_run_input(job);
    run::set_timeout(job, timeout);
    job.endpoint = run::url_option(s.url);
    run::model_in_url(job.endpoint, job.realtime, s.model);
    run::apply_client_settings(s.client,
                               job.endpoint); // bad headers, a missing key: before any file
    job.out = s.output.empty() ? runtime::default_output_dir("run") : fs::path(s.output);
    if (fs::exists(job.out))
        throw bad_input(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            job.out.string()));
    // Every session writes its trace while it streams: the whole run must fit first.
    job.disk_estimate = run::disk_estimate(job);
    job.disk_free = runtime::ensure_free_space(job.out, job.disk_estimate);
    runtime::ensure_descriptors(run::descriptors_needed(job));
    if (!s.metrics_listen.empty() && s.processes > 1)
        throw bad_input("--metrics-listen serves one process's counters: not with --processes");
    // NVML loaded, --metrics-listen bound: a missing library or a busy port is exit 2 here.
    auto telemetry = telemetry::open_telemetry(s.telemetry, s.metrics_listen, s.dry_run);
    if (s.dry_run) {
        run::print_plan(job, telemetry.plan);
        return runtime::exit_ok;
    }
    prepare_run(job);
    job.end = {[](const fs::path& dir) { return report::write_end_report(dir); },
               report::write_end_tables};
    job.telemetry = std::move(telemetry.recorder);
    job.listener = std::move(telemetry.listener);
    // A worker of --processes is not typed by anyone: the parent's summary has the command.
    if (s.worker_index < 0)
        job.command_line = runtime::recorded_command_line({"--header"});
    return run::execute_run(std::move(job));
}

// --rate, --stages or --schedule: sessions that arrive on a seeded schedule.
void add_open_loop_options(CLI::App& sub, run_settings& s) {
    const std::string group = sub.option_defaults()->get_group();
    sub.option_defaults()->group("Open loop");
    add_arrival_options(sub, s.arrivals);
    sub.add_option("--sessions,--count", s.arrivals.count,
                   "Open loop: how many sessions arrive (--count is the same, the name that "
                   "schedule and http take too)")
        ->check(whole_number(1, session::max_sessions));
    sub.add_option("--max-concurrency", s.max_concurrency,
                   "Open loop: sessions in flight at most; gates dispatch, never moves the "
                   "schedule (0: no cap)")
        ->check(whole_number(0, session::max_sessions));
    sub.add_option("--cap-policy", s.cap_policy,
                   "Open loop: when the cap binds, queue (wait; counted in latency) or drop")
        ->capture_default_str();
    sub.add_option(
        "--schedule", s.schedule_file,
        "Open loop: replay a saved schedule.json (as written next to every open-loop run)");
    sub.option_defaults()->group(group);
}

// What each session streams: silence of --duration, or --audio.
void add_input_options(CLI::App& sub, run_settings& s) {
    auto* duration_opt =
        sub.add_option("-d,--duration", s.duration,
                       "Length of silent input per session when no --audio is given (e.g. 30s, "
                       "90s, 2m30s; at most 24h: silence is generated per packet, never held)")
            ->capture_default_str();
    sub.add_option("--audio", s.audio,
                   "Input WAV file: any rate, channels and PCM/float encoding, mixed down to mono "
                   "and converted with libsamplerate to 16 kHz and the protocol's rate "
                   "(config.input_conversion records it); not with -d (the file's length is the "
                   "input's)")
        ->excludes(duration_opt);
}

// The server, its wire protocol and what each session says to it.
void add_server_options(CLI::App& sub, run_settings& s) {
    sub.add_option("--url", s.url,
                   "Server, e.g. ws://127.0.0.1:8097/v1/realtime. Default: start the built-in "
                   "probe mock in this process on its own thread. wss:// for TLS "
                   "(docs/tls.md)");
    add_client_options(sub, s.client);
    sub.add_option("--protocol", s.protocol,
                   "Wire protocol: native (sglang-omni), openai-realtime, vllm-realtime or "
                   "vllm-omni (docs/protocols.md; all but native need --url)")
        ->capture_default_str();
    sub.add_option("--turns", s.turns,
                   "Turn handling: server-vad (the server finds the turns) or manual (commit at "
                   "each turn's end); vllm-omni also model (the model decides, no commit)")
        ->capture_default_str();
    add_omni_options(sub, s.omni);
    sub.add_option("--model", s.model,
                   "vllm-realtime: the served model, named in session.update (required); "
                   "openai-realtime: added to --url's query as model=");
    add_scenario_option(sub, s.scenario, s.voice, "each session",
                        "summary.json gets per-turn figures (`turns`) and turns.jsonl a line per "
                        "session and turn. Works in the open loop (each arrival plays it); needs "
                        "--processes 1");
    sub.add_option("--profile", s.profile,
                   "Server profile the sessions negotiate (the output modalities of "
                   "session.update): nemotron (VoiceChat, audio) or minicpmo (MiniCPM-o, audio "
                   "and text; needs --url). Recorded in summary.json for pacer replay")
        ->capture_default_str();
}

// Session contexts, the output folder, the traces, the stagger and fault injection.
void add_session_options(CLI::App& sub, run_settings& s) {
    sub.add_option("-t,--threads", s.threads,
                   "Session contexts: single-threaded io_contexts, one thread each")
        ->check(whole_number(1, max_threads))
        ->capture_default_str();
    sub.add_option("-o,--output", s.output,
                   "Result folder; must not exist. Default: pacer-results/run-<UTC time>")
        ->check(non_empty_path());
    sub.add_flag("--keep-traces", s.keep_traces,
                 "Keep every session's trace.jsonl (about 125 kB/s per session; 145 kB/s with "
                 "openai-realtime, 50 kB/s with vllm-realtime)");
    sub.add_option("--trace", s.trace,
                   "What each session writes: full (trace.jsonl and input-send-receipts.json), "
                   "receipts (input-send-receipts.json only) or none (no session file; the "
                   "receipts go to an unnamed spool file, so summary.json and samples.json, "
                   "with every packet's deviation, are the same as in the other modes and "
                   "memory does not grow with the run). For measuring what the trace costs; "
                   "`pacer replay` and the per-line analyses need full")
        ->check(CLI::IsMember({"full", "receipts", "none"}))
        ->capture_default_str();
    sub.add_option("--inject-stall-ms", s.inject_stall_ms,
                   "Fault injection: block each session context once, half-way, for this long, "
                   "starting 10 ms before a packet deadline, to show that the lateness detector "
                   "fires (over 160 makes every session late, whatever its grid's phase; "
                   "under 80 alone makes none late)")
        ->check(number_in(0, max_ms));
    sub.add_option("--stagger-ms", s.stagger_ms,
                   "Session i of N has the phase i/N x this after the run's start (with "
                   "--processes, the workers' common start): once negotiated it starts "
                   "streaming at the first instant of its phase (+ m x 80 ms) not yet past, "
                   "spreading the sessions' 80 ms grids over the period; 0 aligns every "
                   "session's sends")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub.add_option("--stagger-slots", s.stagger_slots,
                   "Round the stagger's offsets down to this many slots (k/K x --stagger-ms), "
                   "so that the sessions of a slot share their phase, start on the same "
                   "instant whenever each negotiated, and one timer wake-up serves them all "
                   "(less CPU, a batch of sends per instant); 0: every session its own phase")
        ->check(whole_number(0, 1000000))
        ->capture_default_str();
}

// Worker processes, shards and a shared start (docs/scale-out.md).
void add_scale_out_options(CLI::App& sub, run_settings& s) {
    sub.add_option("--processes", s.processes,
                   "Worker processes of --concurrency sessions each (P x S in all), sharing one "
                   "start deadline; their raw samples are pooled into one summary.json and each "
                   "keeps its part under worker-K/. Open loop: the workers split the one "
                   "schedule as --shard K/P would (--max-concurrency caps each worker)")
        ->check(whole_number(1, max_threads))
        ->capture_default_str();
    sub.add_option("--shard", s.shard,
                   "Run shard I of N (I/N) of --concurrency sessions (sessions I, I+N, ...). "
                   "Without it, the shard comes from OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, "
                   "SLURM_PROCID/NTASKS or JOB_COMPLETION_INDEX (with --shards) when set");
    sub.add_option("--shards", s.shards,
                   "Shard count for a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)")
        ->check(whole_number(1, session::max_sessions));
    sub.add_option("--start-at", s.start_at,
                   "Start at this wall-clock instant (RFC 3339 UTC or Unix seconds): every shard "
                   "begins together");
    sub.add_option("--start-at-monotonic", s.start_at_monotonic)->group("");
    sub.add_option("--worker-index", s.worker_index)->group("");
    sub.add_option("--live-file", s.live_file)->group("");
}

} // namespace

command add_run_command(CLI::App& app) {
    auto s = std::make_shared<run_settings>();
    auto* sub = app.add_subcommand(
        "run", "Run N paced duplex sessions at once against --url, or against the built-in mock "
               "when no URL is given. Writes summary.json, samples.json and report.html (unless "
               "--no-report) to --output, with a live progress line on stderr (--progress).\n"
               "Every session writes a trace while it streams (about 125 kB/s a session, 145 with "
               "openai-realtime, 50 with vllm-realtime; "
               "deleted at the end unless --keep-traces): a run the output folder's disk cannot "
               "hold is refused before it starts, and so is a descriptor limit too low for "
               "the sessions in flight (3 each: all of them in a closed batch; in an open "
               "loop, the most arrivals within one --timeout, at most --max-concurrency).\n"
               "Exit status: 0 all sessions complete and paced; 1 pacer itself failed (a "
               "session's files could not be written, a worker process died); 2 bad input "
               "(nothing written); 3 the client fell behind its 80 ms grid or its open-loop "
               "schedule (pacing-unqualified: the run measured the client); 4 the server failed "
               "or rejected sessions, or could not be reached; 130 interrupted by SIGINT/SIGTERM "
               "(sessions closed, files and a partial summary written). When several apply, the "
               "first of 130, 3, 1, 4 wins.");
    s->concurrency_option = sub->add_option("-c,--concurrency", s->concurrency,
                                            "Sessions started at once (closed batch)")
                                ->check(whole_number(1, session::max_sessions))
                                ->capture_default_str();
    add_open_loop_options(*sub, *s);
    add_input_options(*sub, *s);
    add_server_options(*sub, *s);
    add_session_options(*sub, *s);
    add_scale_out_options(*sub, *s);
    sub->add_option("--timeout", s->timeout,
                    "Per-session deadline: admission, exchange and close, e.g. 90s or 2m30s. "
                    "Default: the input's length + 60 s; a timeout not longer than the input is "
                    "refused");
    add_progress_option(
        *sub, s->progress,
        "elapsed and ETA, sessions active/done/failed, packets sent and late, loop lag max and "
        "errors so far",
        "the end", ". With --processes, the parent shows one line pooling its workers' totals");
    add_end_output_options(*sub, s->no_report, s->export_format);
    add_telemetry_options(*sub, s->telemetry, s->metrics_listen);
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] {
                s->concurrency_given = s->concurrency_option->count() > 0;
                return run(*s);
            }};
}

} // namespace pacer::cli

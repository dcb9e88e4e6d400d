// `pacer run`: N paced duplex sessions against --url, or against the built-in mock.

#include <pacer/cli/auto_report.hpp>
#include <pacer/cli/checks.hpp>
#include <pacer/cli/client_options.hpp>
#include <pacer/cli/command_line.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/input_audio.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/cli/telemetry_options.hpp>
#include <pacer/core/units.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/run/progress.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/runtime/audio_file.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/runtime/shard.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/schedule/scenario.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/server/probe_mock.hpp>
#include <pacer/session/open_loop.hpp>
#include <pacer/trace/disk_estimate.hpp>

#include <boost/asio/io_context.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <span>
#include <thread>
#include <unistd.h>

namespace pacer::cli {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// The options as CLI11 fills them; what only the command needs comes on top.
struct run_settings : run::run_options {
    telemetry_settings telemetry;
    CLI::Option* concurrency_option = nullptr;
    CLI::Option* rate_option = nullptr;
    bool dry_run = false;
};

// What `run` would do, as checked: `--dry-run` prints it instead of running.
struct run_plan {
    const run_settings& s;
    std::size_t sessions = 0;
    std::chrono::nanoseconds input{};
    std::chrono::nanoseconds timeout{};
    fs::path out;
    std::optional<runtime::shard> shard;
    const schedule::schedule_document* open_loop = nullptr;
    std::span<const std::chrono::nanoseconds> arrivals;
    std::optional<double> start_monotonic;
    std::size_t in_flight = 0; // the peak of sessions in flight the descriptors are sized for
    std::size_t descriptors = 0;
    std::uint64_t disk = 0;
    std::uint64_t disk_free = 0;
};

void print_run_plan(const run_plan& p) {
    const auto& s = p.s;
    fmt::print("pacer run --dry-run: checked; nothing started, nothing written\n");
    fmt::print("  target     {}\n", s.url.empty() ? std::string("the built-in probe mock (in this "
                                                                "process, any free loopback port)")
                                                  : s.url);
    if (p.open_loop) {
        const auto& spec = p.open_loop->spec;
        fmt::print("  open loop  {} arrivals{} ({} at {}, burstiness {:g}, seed {}, sha256 {}"
                   "{})\n",
                   p.arrivals.size(),
                   p.arrivals.empty()
                       ? std::string()
                       : fmt::format(" from {:.3f} s to {:.3f} s", to_seconds(p.arrivals.front()),
                                     to_seconds(p.arrivals.back())),
                   schedule::to_string(spec.process), schedule::rate_text(spec), spec.burstiness,
                   spec.seed, p.open_loop->sha256,
                   s.schedule_file.empty() ? "" : ", from " + s.schedule_file);
        fmt::print("  cap        {}\n", s.max_concurrency == 0
                                            ? std::string("none")
                                            : fmt::format("{} sessions in flight, then {}",
                                                          s.max_concurrency, s.cap_policy));
    } else {
        fmt::print("  sessions   {} at once (closed batch){}\n", p.sessions,
                   s.processes > 1 ? fmt::format(" in each of {} worker processes ({} in all)",
                                                 s.processes, p.sessions * s.processes)
                                   : std::string());
    }
    if (p.shard)
        fmt::print("  shard      {}/{} (from {}): {} of --concurrency {} sessions\n",
                   p.shard->index, p.shard->count, p.shard->source, p.sessions, s.concurrency);
    fmt::print("  input      {} ({:.2f} s per session)\n",
               s.audio.empty() ? std::string("silence") : s.audio, to_seconds(p.input));
    fmt::print("  timeout    {:.2f} s per session{}\n", to_seconds(p.timeout),
               s.timeout.empty() ? " (default: the input + 60 s)" : "");
    fmt::print("  threads    {} session context(s), stagger {:g} ms{}{}\n", s.threads, s.stagger_ms,
               s.stagger_slots > 0 ? fmt::format(" in {} slots", s.stagger_slots) : std::string(),
               s.inject_stall_ms > 0 ? fmt::format(", injected stall {:g} ms", s.inject_stall_ms)
                                     : std::string());
    if (p.start_monotonic)
        fmt::print("  start      in {:.1f} s (--start-at {})\n",
                   *p.start_monotonic - read_clock_pair().monotonic_s, s.start_at);
    fmt::print("  output     {} (summary.json, samples.json, {}{}{}{})\n", p.out.string(),
               s.trace == "none"       ? "no session file (--trace none)"
               : s.trace == "receipts" ? "session-NNN/ receipts only (--trace receipts)"
               : s.keep_traces         ? "session-NNN/; traces kept"
                                       : "session-NNN/",
               p.open_loop ? ", schedule.json" : "", s.no_report ? "" : ", report.html",
               s.export_format.empty() ? "" : ", tables-" + s.export_format + "/");
    fmt::print("  descriptors about {} needed for {} sessions in flight at most{}, limit {}\n",
               p.descriptors, p.in_flight,
               p.open_loop ? " (arrivals within one timeout, capped by --max-concurrency)" : "",
               runtime::descriptor_limit());
    fmt::print("  disk       about {} of traces and receipts for all {} sessions (written while "
               "streaming{}), {} free\n",
               format_bytes(p.disk), p.open_loop ? p.arrivals.size() : p.sessions * s.processes,
               s.keep_traces ? "" : ", traces deleted at the end", format_bytes(p.disk_free));
}

int run(const run_settings& s) {
    // Validate everything before anything is created.
    if (s.concurrency == 0)
        throw usage_error("--concurrency must be at least 1");
    if (s.threads == 0)
        throw usage_error("--threads must be at least 1");
    std::optional<std::chrono::nanoseconds> timeout;
    if (!s.timeout.empty()) {
        timeout = parse_duration(s.timeout);
        if (!timeout || timeout->count() == 0)
            throw usage_error(
                fmt::format("--timeout '{}' is not a positive duration such as 90s", s.timeout));
    }
    if (s.inject_stall_ms < 0)
        throw usage_error("--inject-stall-ms must be >= 0");
    if (!(s.stagger_ms >= 0))
        throw usage_error("--stagger-ms must be >= 0");
    if (s.processes == 0)
        throw usage_error("--processes must be at least 1");
    const auto* profile = protocol::find_profile(s.profile);
    if (!profile || profile->name == "qwen3-omni-half-duplex")
        throw usage_error(
            fmt::format("--profile '{}' is not known: use nemotron or minicpmo (or their full "
                        "names; the legacy qwen3 protocol is not spoken)",
                        s.profile));
    if (s.url.empty() && profile != &protocol::default_profile())
        throw usage_error(fmt::format("--profile {} needs --url: the built-in probe mock serves "
                                      "the nemotron profile only",
                                      s.profile));
    const auto realtime = protocol_option(s.protocol, s.model);
    if (realtime && s.url.empty())
        throw usage_error(fmt::format("--protocol {} needs --url: the built-in probe mock "
                                      "speaks the native protocol only",
                                      s.protocol));
    const auto turns = turns_option(s.turns);
    // Shards: --shard I/N, or the launcher's environment (MPI, Slurm, Kubernetes).
    std::optional<runtime::shard> shard;
    try {
        if (!s.shard.empty()) {
            shard = runtime::parse_shard(s.shard);
            if (!shard)
                throw usage_error(fmt::format("--shard '{}' must be I/N with 0 <= I < N", s.shard));
        } else {
            shard =
                runtime::shard_from_environment([](const char* name) { return std::getenv(name); },
                                                s.shards ? std::optional(s.shards) : std::nullopt);
        }
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    if (shard && s.processes > 1)
        throw usage_error("--processes and shards do not mix: run one worker per shard");

    // Open loop: a schedule fixed up front from (process, rate, burstiness, seed, count).
    std::optional<schedule::schedule_document> open_loop;
    const bool open_loop_asked =
        s.rate > 0 || !s.arrival.empty() || s.sessions > 0 || s.burstiness || !s.stages.empty();
    if (!s.schedule_file.empty()) {
        if (open_loop_asked)
            throw usage_error("--schedule replays a saved schedule: drop "
                              "--arrival/--rate/--stages/--sessions/--burstiness");
        try {
            open_loop = schedule::read_schedule_file(s.schedule_file);
        } catch (const std::exception& e) {
            throw usage_error(e.what());
        }
    } else if (open_loop_asked) {
        schedule::schedule_spec spec;
        const auto process =
            schedule::parse_arrival_process(s.arrival.empty() ? "poisson" : s.arrival);
        if (!process)
            throw usage_error(
                fmt::format("--arrival must be poisson, gamma or constant (got '{}')", s.arrival));
        if (!s.stages.empty()) {
            // The stages give the rate and the length; --sessions may end them early.
            if (s.rate_option && s.rate_option->count() > 0)
                throw usage_error("--stages sets the rate of the open loop: drop --rate");
            try {
                spec.stages = schedule::parse_stages(s.stages);
            } catch (const std::invalid_argument& e) {
                throw usage_error(e.what());
            }
        } else {
            if (s.sessions == 0)
                throw usage_error("open-loop runs need --sessions N (how many arrivals)");
            if (s.rate_option && s.rate_option->count() == 0) // not a "got 0" never typed
                throw usage_error("open-loop runs need --rate R (arrivals per second) with "
                                  "--sessions, or --stages, or --schedule FILE");
            spec.rate = s.rate;
        }
        spec.process = *process;
        if (s.burstiness)
            spec.burstiness = *s.burstiness;
        spec.seed = s.seed;
        if (s.sessions > 0)
            spec.count = s.sessions;
        try {
            schedule::validate(spec);
            open_loop = schedule::schedule_document{spec, schedule::make_schedule(spec), {}};
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
        open_loop->sha256 = schedule::schedule_sha256(open_loop->offsets);
    }
    const auto policy = session::parse_cap_policy(s.cap_policy);
    if (!policy)
        throw usage_error(
            fmt::format("--cap-policy must be queue or drop (got '{}')", s.cap_policy));
    if (open_loop) {
        if (s.concurrency_option && s.concurrency_option->count() > 0)
            throw usage_error(
                "--concurrency starts every session at once; open-loop runs take --sessions");
        if (open_loop->offsets.empty())
            throw usage_error("the schedule has no arrivals");
        if (open_loop->offsets.size() > max_sessions)
            throw usage_error(fmt::format("the schedule has {} arrivals, more than the {} sessions "
                                          "one run may hold: use lower rates or shorter stages",
                                          open_loop->offsets.size(), max_sessions));
        if (s.processes > open_loop->offsets.size())
            throw usage_error(fmt::format("--processes {} is more than the schedule's {} arrivals",
                                          s.processes, open_loop->offsets.size()));
    } else if (s.max_concurrency > 0) {
        throw usage_error("--max-concurrency gates open-loop arrivals: give --rate and --sessions");
    }
    std::vector<std::chrono::nanoseconds> arrivals;
    if (open_loop)
        arrivals = shard ? runtime::shard_arrivals(*shard, open_loop->offsets) : open_loop->offsets;
    const std::size_t sessions = open_loop ? arrivals.size()
                                 : shard   ? runtime::shard_sessions(*shard, s.concurrency).size()
                                           : s.concurrency;
    if (sessions == 0 && open_loop)
        throw usage_error(fmt::format("shard {}/{} gets no arrival of the schedule's {}",
                                      shard->index, shard->count, open_loop->offsets.size()));
    if (sessions == 0)
        throw usage_error(fmt::format("shard {}/{} gets no session of --concurrency {}",
                                      shard->index, shard->count, s.concurrency));
    std::optional<double> start_monotonic;
    if (s.start_at_monotonic >= 0)
        start_monotonic = s.start_at_monotonic;
    if (!s.start_at.empty()) {
        const auto wall = runtime::parse_start_at(s.start_at);
        if (!wall)
            throw usage_error(fmt::format(
                "--start-at '{}' must be RFC 3339 UTC (2026-11-30T17:00:00Z) or Unix seconds",
                s.start_at));
        const auto now = read_clock_pair();
        if (*wall < now.realtime_s - 1.0)
            throw usage_error(fmt::format("--start-at {} is {:.1f} s in the past", s.start_at,
                                          now.realtime_s - *wall));
        start_monotonic = now.monotonic_s + (*wall - now.realtime_s);
    }
    protocol::pcm_input pcm;
    // Any WAV: mixed down and converted to 16 kHz, and to the protocol's rate straight from the
    // file (recorded in config.input_conversion).
    const std::size_t wire_rate = realtime == protocol::realtime_protocol::openai
                                      ? protocol::openai_sample_rate
                                      : protocol::input_sample_rate;
    std::optional<loaded_input> loaded;
    if (!s.audio.empty()) {
        loaded = load_input_audio(s.audio, wire_rate);
        pcm = std::move(loaded->pcm);
    } else {
        pcm = protocol::pcm_input::silence(silence_bytes(silence_duration(s.duration, "30s")));
    }
    // --scenario: a built-in, or a file checked whole before anything starts; the turns' own
    // audio loaded like --audio (docs/scenarios.md).
    auto conversation = load_scenario(s.scenario, wire_rate, !realtime);
    if (conversation && s.processes > 1)
        throw usage_error("--scenario with several turns needs --processes 1 (the per-turn "
                          "figures are one process's)");
    const auto input_length = conversation.length(pcm.size());
    if (!timeout)
        timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(input_length) +
                  default_timeout_margin;
    else if (*timeout <= input_length)
        throw usage_error(fmt::format("--timeout {} must be longer than the input ({:.2f} s)",
                                      s.timeout, to_seconds(input_length)));
    transport::ws_endpoint endpoint = url_option(s.url);
    model_in_url(endpoint, realtime, s.model);
    apply_client_settings(s.client, endpoint); // bad headers, a missing key: before any file
    const fs::path out = s.output.empty() ? default_output_dir("run") : fs::path(s.output);
    if (fs::exists(out))
        throw usage_error(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            out.string()));
    // Disk: every session writes its trace while it streams, kept or not (--keep-traces only
    // decides whether it stays), so the whole run must fit before anything is created.
    // (Open-loop workers share the one schedule: together they run its sessions once.)
    const double input_s = to_seconds(input_length);
    const std::size_t all_sessions = sessions * (open_loop ? 1 : s.processes);
    // (--trace receipts writes no trace, --trace none nothing at all.)
    if (s.trace != "full" && s.keep_traces)
        throw usage_error(fmt::format("--keep-traces needs --trace full (--trace {} writes no "
                                      "trace.jsonl)",
                                      s.trace));
    const std::uint64_t disk_estimate =
        (s.trace == "full" ? trace::trace_bytes_estimate(all_sessions, input_s, s.protocol) : 0) +
        (s.trace == "none" ? 0 : trace::receipt_bytes_estimate(all_sessions, input_s));
    const std::uint64_t disk_free = ensure_free_space(out, disk_estimate);
    // Each session in flight holds a socket and two files; a local mock holds the other socket
    // end. A closed batch has all its sessions in flight at once; an open loop only those that
    // arrived within one session lifetime (its timeout), at most --max-concurrency per process.
    std::size_t in_flight = all_sessions;
    if (open_loop) {
        in_flight = schedule::peak_in_flight(arrivals, *timeout);
        if (s.max_concurrency > 0)
            in_flight = std::min(in_flight, s.max_concurrency * (shard ? 1 : s.processes));
    }
    const std::size_t descriptors = in_flight * (s.url.empty() ? 4 : 3) + 64;
    runtime::ensure_descriptors(descriptors);
    if (!s.metrics_listen.empty() && s.processes > 1)
        throw usage_error("--metrics-listen serves one process's counters: not with --processes");
    // NVML loaded here (not in a dry run): a missing library is exit 2 before any file.
    auto telemetry = open_telemetry(s.telemetry, s.metrics_listen, s.dry_run);
    if (s.dry_run) {
        print_run_plan({s, sessions,
                        std::chrono::duration_cast<std::chrono::nanoseconds>(input_length),
                        *timeout, out, shard, open_loop ? &*open_loop : nullptr, arrivals,
                        start_monotonic, in_flight, descriptors, disk_estimate, disk_free});
        if (const auto line = run::transport_line(endpoint); !line.empty())
            fmt::print("  transport  {}\n", line);
        for (const auto& line : telemetry.plan)
            fmt::print("  telemetry  {}\n", line);
        return runtime::exit_ok;
    }
    // The (empty) output folder, then the built-in mock when no --url is given: the run takes a
    // running server's endpoint.
    create_output_dir(out);
    std::unique_ptr<local_mock> mock;
    if (s.url.empty()) {
        mock = std::make_unique<local_mock>([](asio::io_context& io) {
            return std::make_unique<server::probe_mock>(io, server::mock_options{});
        });
        endpoint = transport::parse_ws_url(mock->url());
        apply_client_settings(s.client, endpoint);
    }
    run::run_job job;
    job.options = s;
    job.sessions = sessions;
    job.pcm = std::move(pcm);
    if (loaded) {
        job.wire_pcm = std::move(loaded->wire);
        job.input_conversion = std::move(loaded->conversion);
    } else {
        job.input_conversion = silence_conversion(wire_rate);
    }
    job.input_length = input_length;
    job.timeout = *timeout;
    job.out = out;
    job.shard = shard;
    job.open_loop = std::move(open_loop);
    job.arrivals = std::move(arrivals);
    job.start_monotonic = start_monotonic;
    job.profile = profile;
    job.realtime = realtime;
    job.policy = *policy;
    job.turns = turns;
    job.conversation = std::move(conversation);
    job.endpoint = endpoint;
    job.mock = std::move(mock);
    job.end = {[](const fs::path& dir) { return write_end_report(dir); }, write_end_tables};
    job.telemetry = std::move(telemetry.recorder);
    job.disk_estimate = disk_estimate;
    job.disk_free = disk_free;
    // A worker of --processes is not typed by anyone: the parent's summary has the command.
    if (s.worker_index < 0)
        job.command_line = recorded_command_line({"--header"});
    return run::execute_run(std::move(job));
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
                                ->check(whole_number(1, max_sessions))
                                ->capture_default_str();
    sub->add_option("--arrival", s->arrival,
                    "Open loop: start sessions on a seeded schedule instead of all at once: "
                    "poisson (default), gamma (with --burstiness) or constant")
        ->group("Open loop");
    s->rate_option = sub->add_option("--rate", s->rate, "Open loop: arrivals per second")
                         ->check(number_in(0, 1e9, true))
                         ->group("Open loop");
    sub->add_option("--stages", s->stages,
                    "Open loop: the arrival rate in stages instead of --rate, "
                    "DURATION:RATE/s (constant) or DURATION:FROM-TO/s (a linear ramp), "
                    "comma-separated, e.g. 30s:10/s,2m:10-50/s,30s:50/s; --sessions, if given, "
                    "ends the schedule early (docs/open-loop.md)")
        ->group("Open loop");
    sub->add_option("--sessions,--count", s->sessions,
                    "Open loop: how many sessions arrive (--count is the same, the name that "
                    "schedule and http take too)")
        ->check(whole_number(1, max_sessions))
        ->group("Open loop");
    sub->add_option("--burstiness", s->burstiness,
                    "Open loop, gamma: coefficient of variation of the gaps (1 = Poisson; vLLM's "
                    "--burstiness is 1/B^2)")
        ->check(number_in(0.001, 1000))
        ->group("Open loop");
    sub->add_option("--seed", s->seed, "Open loop: schedule seed")
        ->check(whole_number(0, UINT64_MAX))
        ->capture_default_str()
        ->group("Open loop");
    sub->add_option("--max-concurrency", s->max_concurrency,
                    "Open loop: sessions in flight at most; gates dispatch, never moves the "
                    "schedule (0: no cap)")
        ->check(whole_number(0, max_sessions))
        ->group("Open loop");
    sub->add_option("--cap-policy", s->cap_policy,
                    "Open loop: when the cap binds, queue (wait; counted in latency) or drop")
        ->capture_default_str()
        ->group("Open loop");
    sub->add_option(
           "--schedule", s->schedule_file,
           "Open loop: replay a saved schedule.json (as written next to every open-loop run)")
        ->group("Open loop");
    auto* duration_opt =
        sub->add_option("-d,--duration", s->duration,
                        "Length of silent input per session when no --audio is given (e.g. 30s, "
                        "90s, 2m30s; at most 24h: silence is generated per packet, never held)")
            ->capture_default_str();
    sub->add_option("--audio", s->audio,
                    "Input WAV file: any rate, channels and PCM/float encoding, mixed down to mono "
                    "and converted with libsamplerate to 16 kHz and the protocol's rate "
                    "(config.input_conversion records it); not with -d (the file's length is the "
                    "input's)")
        ->excludes(duration_opt);
    sub->add_option("--url", s->url,
                    "Server, e.g. ws://127.0.0.1:8097/v1/realtime. Default: start the built-in "
                    "probe mock in this process on its own thread. wss:// for TLS "
                    "(docs/tls.md)");
    add_client_options(*sub, s->client);
    sub->add_option("--protocol", s->protocol,
                    "Wire protocol: native (sglang-omni), openai-realtime or vllm-realtime "
                    "(docs/protocols.md; the last two need --url)")
        ->capture_default_str();
    sub->add_option("--turns", s->turns,
                    "openai-realtime turn handling: server-vad (stream, the server finds the "
                    "turns) or manual (commit + response.create at the input's end)")
        ->capture_default_str();
    sub->add_option("--model", s->model,
                    "vllm-realtime: the served model, named in session.update (required); "
                    "openai-realtime: added to --url's query as model=");
    add_scenario_option(*sub, s->scenario, "each session",
                        "summary.json gets per-turn figures (`turns`) and turns.jsonl a line per "
                        "session and turn. Works in the open loop (each arrival plays it); needs "
                        "--processes 1");
    sub->add_option("--profile", s->profile,
                    "Server profile the sessions negotiate (the output modalities of "
                    "session.update): nemotron (VoiceChat, audio) or minicpmo (MiniCPM-o, audio "
                    "and text; needs --url). Recorded in summary.json for pacer replay")
        ->capture_default_str();
    sub->add_option("-t,--threads", s->threads,
                    "Session contexts: single-threaded io_contexts, one thread each")
        ->check(whole_number(1, max_threads))
        ->capture_default_str();
    sub->add_option("-o,--output", s->output,
                    "Result folder; must not exist. Default: pacer-results/run-<UTC time>")
        ->check(non_empty_path());
    sub->add_flag("--keep-traces", s->keep_traces,
                  "Keep every session's trace.jsonl (about 125 kB/s per session; 145 kB/s with "
                  "openai-realtime, 50 kB/s with vllm-realtime)");
    sub->add_option("--trace", s->trace,
                    "What each session writes: full (trace.jsonl and input-send-receipts.json), "
                    "receipts (input-send-receipts.json only) or none (no session file; the "
                    "receipts go to an unnamed spool file, so summary.json and samples.json, "
                    "with every packet's deviation, are the same as in the other modes and "
                    "memory does not grow with the run). For measuring what the trace costs; "
                    "`pacer replay` and the per-line analyses need full")
        ->check(CLI::IsMember({"full", "receipts", "none"}))
        ->capture_default_str();
    sub->add_option("--inject-stall-ms", s->inject_stall_ms,
                    "Fault injection: block each session context once, half-way, for this long, "
                    "starting 10 ms before a packet deadline, to show that the lateness detector "
                    "fires (over 160 makes every session late, whatever its grid's phase; "
                    "under 80 alone makes none late)")
        ->check(number_in(0, max_ms));
    sub->add_option("--stagger-ms", s->stagger_ms,
                    "Session i of N has the phase i/N x this after the run's start (with "
                    "--processes, the workers' common start): once negotiated it starts "
                    "streaming at the first instant of its phase (+ m x 80 ms) not yet past, "
                    "spreading the sessions' 80 ms grids over the period; 0 aligns every "
                    "session's sends")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--stagger-slots", s->stagger_slots,
                    "Round the stagger's offsets down to this many slots (k/K x --stagger-ms), "
                    "so that the sessions of a slot share their phase, start on the same "
                    "instant whenever each negotiated, and one timer wake-up serves them all "
                    "(less CPU, a batch of sends per instant); 0: every session its own phase")
        ->check(whole_number(0, 1000000))
        ->capture_default_str();
    sub->add_option("--processes", s->processes,
                    "Worker processes of --concurrency sessions each (P x S in all), sharing one "
                    "start deadline; their raw samples are pooled into one summary.json and each "
                    "keeps its part under worker-K/. Open loop: the workers split the one "
                    "schedule as --shard K/P would (--max-concurrency caps each worker)")
        ->check(whole_number(1, max_threads))
        ->capture_default_str();
    sub->add_option("--shard", s->shard,
                    "Run shard I of N (I/N) of --concurrency sessions (sessions I, I+N, ...). "
                    "Without it, the shard comes from OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, "
                    "SLURM_PROCID/NTASKS or JOB_COMPLETION_INDEX (with --shards) when set");
    sub->add_option("--shards", s->shards,
                    "Shard count for a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)")
        ->check(whole_number(1, max_sessions));
    sub->add_option("--start-at", s->start_at,
                    "Start at this wall-clock instant (RFC 3339 UTC or Unix seconds): every shard "
                    "begins together");
    sub->add_option("--start-at-monotonic", s->start_at_monotonic)->group("");
    sub->add_option("--worker-index", s->worker_index)->group("");
    sub->add_option("--live-file", s->live_file)->group("");
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
    return {sub, [s] { return run(*s); }};
}

} // namespace pacer::cli

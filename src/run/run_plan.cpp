// `pacer run`'s options resolved into a run_job, its input, and its `--dry-run` plan (see
// run_plan.hpp).

#include <pacer/core/bad_input.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/core/units.hpp>
#include <pacer/run/client_settings.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/run/run_plan.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/input_audio.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/runtime/shard.hpp>
#include <pacer/schedule/arrival_options.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/session/open_loop.hpp>
#include <pacer/session/scenario_plan.hpp>
#include <pacer/trace/disk_estimate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace pacer::run {

namespace {

// --shard I/N, or the launcher's environment (MPI, Slurm, Kubernetes).
std::optional<runtime::shard> shard_of(const run_options& s) {
    std::optional<runtime::shard> shard;
    if (!s.shard.empty())
        shard = runtime::parse_shard(s.shard);
    else
        shard = runtime::shard_from_environment([](const char* name) { return std::getenv(name); },
                                                s.shards ? std::optional(s.shards) : std::nullopt);
    if (!s.shard.empty() && !shard)
        throw bad_input(fmt::format("--shard '{}' must be I/N with 0 <= I < N", s.shard));
    if (shard && s.processes > 1)
        throw bad_input("--processes and shards do not mix: run one worker per shard");
    return shard;
}

// How run's open loop is named in its messages: no schedule --duration (-d is the input's).
constexpr schedule::arrival_command open_loop_command{"an open-loop run", "--sessions", false, true,
                                                      true};

// The options of the open loop that a closed batch refuses (and the other way round), and the
// schedule's size.
void check_open_loop(const run_options& s, const schedule::schedule_document* open_loop) {
    if (!open_loop) {
        if (s.max_concurrency > 0)
            throw bad_input(
                "--max-concurrency gates open-loop arrivals: give --rate and --sessions");
        return;
    }
    if (s.concurrency_given)
        throw bad_input(
            "--concurrency starts every session at once; open-loop runs take --sessions");
    const std::size_t arrivals = open_loop->offsets.size();
    if (arrivals == 0)
        throw bad_input("the schedule has no arrivals");
    if (arrivals > session::max_sessions)
        throw bad_input(fmt::format("the schedule has {} arrivals, more than the {} sessions "
                                    "one run may hold: use lower rates or shorter stages",
                                    arrivals, session::max_sessions));
    if (s.processes > arrivals)
        throw bad_input(fmt::format("--processes {} is more than the schedule's {} arrivals",
                                    s.processes, arrivals));
}

// This process's sessions: the open loop's arrivals, or --concurrency (its shard's of either).
void share_sessions(run_job& job) {
    const run_options& s = job.options;
    const auto& shard = job.shard;
    const auto* open_loop = job.open_loop ? &*job.open_loop : nullptr;
    if (open_loop)
        job.arrivals =
            shard ? runtime::shard_arrivals(*shard, open_loop->offsets) : open_loop->offsets;
    job.sessions = open_loop ? job.arrivals.size()
                   : shard   ? runtime::shard_sessions(*shard, s.concurrency).size()
                             : s.concurrency;
    if (job.sessions == 0 && open_loop)
        throw bad_input(fmt::format("shard {}/{} gets no arrival of the schedule's {}",
                                    shard->index, shard->count, open_loop->offsets.size()));
    if (job.sessions == 0)
        throw bad_input(fmt::format("shard {}/{} gets no session of --concurrency {}", shard->index,
                                    shard->count, s.concurrency));
}

// The shared start on this host's monotonic clock: --start-at (a wall-clock instant), or the
// parent's (the hidden --start-at-monotonic). Nullopt: none.
std::optional<double> start_of(const run_options& s) {
    std::optional<double> start_monotonic;
    if (s.start_at_monotonic >= 0)
        start_monotonic = s.start_at_monotonic;
    if (s.start_at.empty())
        return start_monotonic;
    const auto wall = runtime::parse_start_at(s.start_at);
    if (!wall)
        throw bad_input(fmt::format(
            "--start-at '{}' must be RFC 3339 UTC (2026-11-30T17:00:00Z) or Unix seconds",
            s.start_at));
    const auto now = read_clock_pair();
    if (*wall < now.realtime_s - 1.0)
        throw bad_input(fmt::format("--start-at {} is {:.1f} s in the past", s.start_at,
                                    now.realtime_s - *wall));
    return now.monotonic_s + (*wall - now.realtime_s);
}

} // namespace

std::optional<std::chrono::nanoseconds> check_numbers(const run_options& s) {
    if (s.concurrency == 0)
        throw bad_input("--concurrency must be at least 1");
    if (s.threads == 0)
        throw bad_input("--threads must be at least 1");
    std::optional<std::chrono::nanoseconds> timeout;
    if (!s.timeout.empty()) {
        timeout = parse_duration(s.timeout);
        if (!timeout || timeout->count() == 0)
            throw bad_input(
                fmt::format("--timeout '{}' is not a positive duration such as 90s", s.timeout));
    }
    if (s.inject_stall_ms < 0)
        throw bad_input("--inject-stall-ms must be >= 0");
    if (!(s.stagger_ms >= 0))
        throw bad_input("--stagger-ms must be >= 0");
    if (s.processes == 0)
        throw bad_input("--processes must be at least 1");
    return timeout;
}

void check_profile(run_job& job) {
    const run_options& s = job.options;
    job.profile = protocol::find_profile(s.profile);
    if (!job.profile || job.profile->name == "qwen3-omni-half-duplex")
        throw bad_input(
            fmt::format("--profile '{}' is not known: use nemotron or minicpmo (or their full "
                        "names; the legacy qwen3 protocol is not spoken)",
                        s.profile));
    if (s.url.empty() && job.profile != &protocol::default_profile())
        throw bad_input(fmt::format("--profile {} needs --url: the built-in probe mock "
                                    "serves the nemotron profile only",
                                    s.profile));
}

void plan_sessions(run_job& job) {
    const run_options& s = job.options;
    job.shard = shard_of(s);
    // Open loop: a schedule fixed up front, or a saved one (--schedule); nullopt: a closed batch.
    job.open_loop = schedule::open_loop_of(s.arrivals, open_loop_command, s.schedule_file);
    const auto policy = session::parse_cap_policy(s.cap_policy);
    if (!policy)
        throw bad_input(fmt::format("--cap-policy must be queue or drop (got '{}')", s.cap_policy));
    job.policy = *policy;
    check_open_loop(s, job.open_loop ? &*job.open_loop : nullptr);
    share_sessions(job);
    job.start_monotonic = start_of(s);
}

void load_run_input(run_job& job) {
    const run_options& s = job.options;
    const std::size_t wire_rate = job.realtime == protocol::realtime_protocol::openai
                                      ? protocol::openai_sample_rate
                                      : protocol::input_sample_rate;
    std::optional<runtime::loaded_input> loaded;
    if (!s.audio.empty()) {
        loaded = runtime::load_input_audio(s.audio, wire_rate);
        job.pcm = std::move(loaded->pcm);
    } else {
        job.pcm = protocol::pcm_input::silence(
            runtime::silence_bytes(runtime::silence_duration(s.duration, "30s")));
    }
    job.conversation = session::load_scenario(s.scenario, wire_rate, !job.realtime);
    job.conversation.voice = s.voice;
    if (job.conversation && s.processes > 1)
        throw bad_input("--scenario with several turns needs --processes 1 (the "
                        "per-turn figures are one process's)");
    job.input_length = job.conversation.length(job.pcm.size());
    if (loaded) {
        job.wire_pcm = std::move(loaded->wire);
        job.input_conversion = std::move(loaded->conversion);
    } else {
        job.input_conversion = runtime::silence_conversion(wire_rate);
    }
}

void set_timeout(run_job& job, std::optional<std::chrono::nanoseconds> given) {
    if (given && *given <= job.input_length)
        throw bad_input(fmt::format("--timeout {} must be longer than the input ({:.2f} s)",
                                    job.options.timeout, to_seconds(job.input_length)));
    job.timeout = given ? *given
                        : std::chrono::duration_cast<std::chrono::nanoseconds>(job.input_length) +
                              session::default_timeout_margin;
}

std::uint64_t disk_estimate(const run_job& job) {
    const run_options& s = job.options;
    // Open-loop workers share the one schedule: together they run its sessions once.
    const double input_s = to_seconds(job.input_length);
    const std::size_t all_sessions = job.sessions * (job.open_loop ? 1 : s.processes);
    // (--trace receipts writes no trace, --trace none nothing at all.)
    if (s.trace != "full" && s.keep_traces)
        throw bad_input(fmt::format("--keep-traces needs --trace full (--trace {} writes no "
                                    "trace.jsonl)",
                                    s.trace));
    return (s.trace == "full" ? trace::trace_bytes_estimate(all_sessions, input_s, s.protocol)
                              : 0) +
           (s.trace == "none" ? 0 : trace::receipt_bytes_estimate(all_sessions, input_s));
}

std::size_t sessions_in_flight(const run_job& job) {
    const run_options& s = job.options;
    if (!job.open_loop)
        return job.sessions * s.processes;
    auto in_flight = schedule::peak_in_flight(job.arrivals, job.timeout);
    if (s.max_concurrency > 0)
        in_flight = std::min(in_flight, s.max_concurrency * (job.shard ? 1 : s.processes));
    return in_flight;
}

std::size_t descriptors_needed(const run_job& job) {
    // A local mock holds the other socket end.
    return sessions_in_flight(job) * (job.options.url.empty() ? 4 : 3) + 64;
}

void print_plan(const run_job& job, std::span<const std::string> telemetry_plan) {
    const run_options& s = job.options;
    const auto* open_loop = job.open_loop ? &*job.open_loop : nullptr;
    const auto& arrivals = job.arrivals;
    const auto& shard = job.shard;
    fmt::print("pacer run --dry-run: checked; nothing started, nothing written\n");
    fmt::print("  target     {}\n", s.url.empty() ? std::string("the built-in probe mock (in this "
                                                                "process, any free loopback port)")
                                                  : s.url);
    if (open_loop) {
        const auto& spec = open_loop->spec;
        fmt::print("  open loop  {} arrivals{} ({} at {}, burstiness {:g}, seed {}, sha256 {}"
                   "{})\n",
                   arrivals.size(),
                   arrivals.empty()
                       ? std::string()
                       : fmt::format(" from {:.3f} s to {:.3f} s", to_seconds(arrivals.front()),
                                     to_seconds(arrivals.back())),
                   schedule::to_string(spec.process), schedule::rate_text(spec), spec.burstiness,
                   spec.seed, open_loop->sha256,
                   s.schedule_file.empty() ? "" : ", from " + s.schedule_file);
        fmt::print("  cap        {}\n", s.max_concurrency == 0
                                            ? std::string("none")
                                            : fmt::format("{} sessions in flight, then {}",
                                                          s.max_concurrency, s.cap_policy));
    } else {
        fmt::print("  sessions   {} at once (closed batch){}\n", job.sessions,
                   s.processes > 1 ? fmt::format(" in each of {} worker processes ({} in all)",
                                                 s.processes, job.sessions * s.processes)
                                   : std::string());
    }
    if (shard)
        fmt::print("  shard      {}/{} (from {}): {} of --concurrency {} sessions\n", shard->index,
                   shard->count, shard->source, job.sessions, s.concurrency);
    fmt::print("  input      {} ({:.2f} s per session)\n",
               s.audio.empty() ? std::string("silence") : s.audio, to_seconds(job.input_length));
    fmt::print("  timeout    {:.2f} s per session{}\n", to_seconds(job.timeout),
               s.timeout.empty() ? " (default: the input + 60 s)" : "");
    fmt::print("  threads    {} session context(s), stagger {:g} ms{}{}\n", s.threads, s.stagger_ms,
               s.stagger_slots > 0 ? fmt::format(" in {} slots", s.stagger_slots) : std::string(),
               s.inject_stall_ms > 0 ? fmt::format(", injected stall {:g} ms", s.inject_stall_ms)
                                     : std::string());
    if (job.start_monotonic)
        fmt::print("  start      in {:.1f} s (--start-at {})\n",
                   *job.start_monotonic - read_clock_pair().monotonic_s, s.start_at);
    fmt::print("  output     {} (summary.json, samples.json, {}{}{}{})\n", job.out.string(),
               s.trace == "none"       ? "no session file (--trace none)"
               : s.trace == "receipts" ? "session-NNN/ receipts only (--trace receipts)"
               : s.keep_traces         ? "session-NNN/; traces kept"
                                       : "session-NNN/",
               open_loop ? ", schedule.json" : "", s.no_report ? "" : ", report.html",
               s.export_format.empty() ? "" : ", tables-" + s.export_format + "/");
    fmt::print("  descriptors about {} needed for {} sessions in flight at most{}, limit {}\n",
               descriptors_needed(job), sessions_in_flight(job),
               open_loop ? " (arrivals within one timeout, capped by --max-concurrency)" : "",
               runtime::descriptor_limit());
    fmt::print("  disk       about {} of traces and receipts for all {} sessions (written while "
               "streaming{}), {} free\n",
               format_bytes(job.disk_estimate),
               open_loop ? arrivals.size() : job.sessions * s.processes,
               s.keep_traces ? "" : ", traces deleted at the end", format_bytes(job.disk_free));
    if (const auto line = transport_line(job.endpoint); !line.empty())
        fmt::print("  transport  {}\n", line);
    for (const auto& line : telemetry_plan)
        fmt::print("  telemetry  {}\n", line);
}

} // namespace pacer::run

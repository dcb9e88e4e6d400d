// The parent of `pacer run --processes P` (see run_job.hpp): P worker processes share one start
// deadline on the host's monotonic clock, each with S sessions (closed loop) or shard K/P of the
// one schedule (open loop, from the parent's schedule.json); their raw samples are pooled into
// one summary.

#include <pacer/console/progress.hpp>
#include <pacer/core/json_text.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/merge.hpp>
#include <pacer/metrics/omni.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/run/client_settings.hpp>
#include <pacer/run/live_file.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/worker_pool.hpp>
#include <pacer/telemetry/recorder.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include "internal.hpp"
#include <sys/wait.h>
#include <unistd.h>

namespace pacer::run {

namespace fs = std::filesystem;
namespace json = boost::json;

std::vector<std::string> worker_args(const run_options& s, const std::string& url,
                                     const fs::path& out, double start_at_monotonic, int index,
                                     const fs::path& schedule_file, const fs::path& live_file) {
    std::vector<std::string> a{"pacer", "run", "--url", url};
    if (schedule_file.empty()) {
        a.insert(a.end(), {"-c", std::to_string(s.concurrency)});
    } else {
        a.insert(a.end(), {"--schedule", schedule_file.string(), "--shard",
                           fmt::format("{}/{}", index, s.processes), "--cap-policy", s.cap_policy});
        if (s.max_concurrency > 0)
            a.insert(a.end(), {"--max-concurrency", std::to_string(s.max_concurrency)});
    }
    a.insert(a.end(),
             {"--threads", std::to_string(s.threads), "--stagger-ms",
              fmt::format("{}", s.stagger_ms), "-o", out.string(), "--start-at-monotonic",
              fmt::format("{:.9f}", start_at_monotonic), "--worker-index", std::to_string(index)});
    if (!s.timeout.empty()) // otherwise each worker takes the same default from the same input
        a.insert(a.end(), {"--timeout", s.timeout});
    if (!s.audio.empty()) {
        a.push_back("--audio");
        a.push_back(s.audio);
    } else {
        a.push_back("-d");
        a.push_back(s.duration);
    }
    if (s.keep_traces)
        a.push_back("--keep-traces");
    a.push_back("--trace");
    a.push_back(s.trace);
    a.push_back("--stagger-slots");
    a.push_back(std::to_string(s.stagger_slots));
    // The parent writes the pooled report and shows the one progress line (from each worker's
    // live file); a worker's stderr is its log file.
    a.insert(a.end(), {"--no-report", "--progress", "never", "--live-file", live_file.string()});
    a.push_back("--profile");
    a.push_back(s.profile);
    a.insert(a.end(), {"--protocol", s.protocol, "--turns", s.turns});
    if (!s.model.empty())
        a.insert(a.end(), {"--model", s.model});
    // vllm-omni's options, as given (the worker checks and resolves them as the parent did).
    if (s.omni.chunk_ms != 0)
        a.insert(a.end(), {"--chunk-ms", std::to_string(s.omni.chunk_ms)});
    if (!s.omni.ref_audio.empty())
        a.insert(a.end(), {"--ref-audio", s.omni.ref_audio});
    if (!s.omni.ack.empty())
        a.insert(a.end(), {"--ack", s.omni.ack});
    if (s.omni.ack_ms != 0)
        a.insert(a.end(), {"--ack-ms", std::to_string(s.omni.ack_ms)});
    if (s.inject_stall_ms > 0) {
        a.push_back("--inject-stall-ms");
        a.push_back(fmt::format("{}", s.inject_stall_ms));
    }
    const auto client = client_worker_args(s.client); // secrets go by the environment
    a.insert(a.end(), client.begin(), client.end());
    return a;
}

namespace detail {

namespace {

// What the workers left: their parts to pool, a row each for summary.json's `workers`.
struct worker_parts {
    std::vector<metrics::run_part> parts;
    json::array workers;
    bool all_ok = true;
    bool interrupted = false;
};

// Starts the P workers on one shared start (one second from now lets every worker exec, read
// its input and connect before it), shows one progress line for all (the workers' live
// files, pooled on the progress thread) and returns their wait statuses once all have ended,
// and when they had.
struct ended_workers {
    std::vector<int> statuses; ///< wait statuses, in spawn order
    double end_s = 0;          ///< when the last one ended
};

ended_workers run_worker_processes(const run_options& s, const std::string& url,
                                   const fs::path& out, const fs::path& schedule_file,
                                   double start_at, double expected_s) {
    // The pool forwards SIGINT/SIGTERM to the workers; each worker's own table and errors go
    // to worker-K.log beside its folder.
    runtime::worker_pool pool(s.worker_program);
    std::vector<fs::path> live_files;
    for (std::size_t k = 0; k < s.processes; ++k)
        live_files.push_back(out / fmt::format("worker-{}.live.json", k));
    const auto progress_mode = console::resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1);
    console::progress_reporter progress(*progress_mode);
    progress.set_source([&live_files] {
        std::vector<console::progress_snapshot> parts;
        for (const auto& f : live_files)
            if (const auto l = read_live_file(f))
                parts.push_back(l->totals);
        return pool_snapshots(parts);
    });
    progress.begin(fmt::format("{} processes", s.processes), 1.0 + expected_s);
    for (std::size_t k = 0; k < s.processes; ++k)
        pool.spawn(worker_args(s, url, out / fmt::format("worker-{}", k), start_at,
                               static_cast<int>(k), schedule_file, live_files[k]),
                   out / fmt::format("worker-{}.log", k));
    ended_workers ended{pool.wait_all(), 0};
    ended.end_s = to_seconds(clock::now());
    progress.end(); // its last line: the workers' final totals
    return ended;
}

// Worker `dir`'s part, folded as read (the parent's memory does not grow with the workers'
// packets); in an open loop it must have run the parent's one schedule.
metrics::run_part read_worker_part(const fs::path& dir,
                                   const schedule::schedule_document* open_loop) {
    auto part = metrics::read_run_part_folded(dir);
    if (open_loop) {
        const auto* ol = part.summary.if_contains("open_loop");
        const auto* sch = ol && ol->is_object() ? ol->as_object().if_contains("schedule") : nullptr;
        const auto* sha =
            sch && sch->is_object() ? sch->as_object().if_contains("sha256") : nullptr;
        if (!sha || !sha->is_string() || sha->get_string() != open_loop->sha256)
            throw std::runtime_error("its open-loop schedule is not the parent's");
    }
    return part;
}

worker_parts collect_parts(const fs::path& out, const std::vector<int>& statuses,
                           const schedule::schedule_document* open_loop) {
    worker_parts r;
    for (std::size_t k = 0; k < statuses.size(); ++k) {
        const fs::path dir = out / fmt::format("worker-{}", k);
        const int st = statuses[k];
        const bool exited = WIFEXITED(st);
        r.interrupted = r.interrupted || (exited && WEXITSTATUS(st) == runtime::exit_interrupted);
        json::object w{{"index", k},
                       {"dir", dir.string()},
                       {"log", (out / fmt::format("worker-{}.log", k)).string()},
                       {"status", runtime::describe_status(st)}};
        try {
            r.parts.push_back(read_worker_part(dir, open_loop));
            w["merged"] = true;
        } catch (const std::exception& e) {
            w["merged"] = false;
            w["error"] = e.what();
            r.all_ok = false;
        }
        if (!exited ||
            (WEXITSTATUS(st) != runtime::exit_ok && WEXITSTATUS(st) != runtime::exit_unqualified &&
             WEXITSTATUS(st) != runtime::exit_server_failed))
            r.all_ok = false;
        r.workers.push_back(std::move(w));
    }
    return r;
}

// The pooled summary.json: the workers' parts merged, and what the parent knows of the run.
json::object pooled_summary(const run_job& job, const std::string& url, worker_parts& w,
                            const fs::path& schedule_file) {
    const run_options& s = job.options;
    auto summary = metrics::merge_parts(w.parts);
    std::vector<const json::object*> part_summaries;
    for (const auto& p : w.parts)
        part_summaries.push_back(&p.summary);
    if (auto omni = metrics::pool_omni_json(part_summaries); !omni.empty())
        summary["server"] = json::object{{"omni", std::move(omni)}};
    summary["command"] = "run";
    summary["run_id"] = new_run_id();
    summary["processes"] = s.processes;
    if (job.open_loop) {
        summary["schedule_split"] = "worker K runs arrivals K, K+P, K+2P, ... (as --shard K/P)";
        if (auto* ol = summary.if_contains("open_loop"))
            ol->as_object()["schedule"].as_object()["file"] = schedule_file.string();
        else
            w.all_ok = false; // a worker left no open-loop records to pool
    } else {
        summary["sessions_per_process"] = s.concurrency;
    }
    summary["workers"] = std::move(w.workers);
    w.all_ok = w.all_ok && summary.at("complete").as_bool();
    w.interrupted = w.interrupted || summary.at("interrupted").as_bool();
    summary["complete"] = w.all_ok;
    summary["interrupted"] = w.interrupted;
    summary["url"] = url;
    if (!job.command_line.empty())
        summary["command_line"] = job.command_line;
    summary["profile"] = protocol::find_profile(s.profile)->name; // validated by the command
    auto transport_block = transport_json(job.endpoint);
    // Measured by the workers, pooled from their samples.json by merge_parts.
    transport_block["handshake_s"] = summary.at("handshake_s");
    summary.erase("handshake_s");
    summary["transport"] = std::move(transport_block);
    return summary;
}

// The parent's table: the workers, then the pooled figures.
void print_pooled_table(const run_options& s, const std::string& url,
                        const schedule::schedule_document* open_loop, const json::object& summary) {
    const auto& p = summary.at("pacing").as_object();
    const auto& dev = p.at("pacing_deviation_s").as_object();
    if (open_loop)
        fmt::print("pacer run: {} processes sharing {} open-loop arrivals against {}\n",
                   s.processes, open_loop->offsets.size(), url);
    else
        fmt::print("pacer run: {} x {} against {}\n", plural(s.processes, "process", "processes"),
                   plural(s.concurrency, "session"), url);
    for (const auto& w : summary.at("workers").as_array())
        fmt::print("  worker {}   {}{}\n", w.at("index").as_uint64(),
                   w.at("status").as_string().c_str(),
                   w.at("merged").as_bool() ? "" : " (no results)");
    fmt::print("  sessions   {} complete of {} (pooled)\n",
               p.at("sessions").at("complete").to_number<std::uint64_t>(),
               p.at("sessions").at("requested").to_number<std::uint64_t>());
    fmt::print("  packets    {} sent, {} late (> 80 ms) -> {}\n",
               p.at("packets").at("sent").to_number<std::uint64_t>(),
               p.at("packets").at("late").to_number<std::uint64_t>(),
               summary.at("pacing_qualified").as_bool() ? "PACING QUALIFIED"
                                                        : "PACING UNQUALIFIED");
    fmt::print("  deviation  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  (pooled over all packets)\n",
               ms(dev.at("p50")), ms(dev.at("p90")), ms(dev.at("p99")), ms(dev.at("p99.9")),
               ms(dev.at("max")));
    for (const auto& part : summary.at("parts").as_array())
        fmt::print("  part       {}: {:.2f} cores, peak RSS {:.0f} MB\n",
                   part.at("dir").as_string().c_str(),
                   part.at("client_cpu_cores").to_number<double>(),
                   part.at("peak_rss_bytes").to_number<double>() / 1e6);
    if (const auto* olv = summary.if_contains("open_loop")) {
        const auto& ol = olv->as_object();
        fmt::print("  open loop  {} arrivals, {} dropped by the cap; latency p50 {} p99 {}; "
                   "dispatch lag p99 {} max {} -> {} (pooled over all arrivals)\n",
                   ol.at("requests").at("scheduled").to_number<std::uint64_t>(),
                   ol.at("requests").at("dropped").to_number<std::uint64_t>(),
                   ms(ol.at("latency_s").at("p50")), ms(ol.at("latency_s").at("p99")),
                   ms(ol.at("dispatch_lag_s").at("p99")), ms(ol.at("dispatch_lag_s").at("max")),
                   ol.at("schedule_kept").as_bool() ? "SCHEDULE KEPT" : "SCHEDULE NOT KEPT");
    }
    if (const auto* server = summary.if_contains("server"))
        fmt::print("{}\n", metrics::omni_line(server->at("omni").as_object()));
    for (const auto& part : summary.at("incomplete_parts").as_array())
        fmt::print("  incomplete {}: {}{} of {} session(s) incomplete\n",
                   part.at("dir").as_string().c_str(),
                   part.at("interrupted").as_bool() ? "interrupted, " : "",
                   part.at("sessions_incomplete").as_uint64(), part.at("sessions").as_uint64());
}

// The report, the tables and the telemetry line, after the table's figures.
void write_pooled_end(const run_job& job, const json::object& summary) {
    const run_options& s = job.options;
    std::optional<fs::path> report;
    if (!s.no_report && job.end.report)
        report = job.end.report(job.out);
    fmt::print("  results    {}{}\n", (job.out / "summary.json").string(),
               report ? ", " + report->string() : std::string());
    if (!s.export_format.empty() && job.end.tables)
        if (const auto tables = job.end.tables(job.out, s.export_format))
            fmt::print("  tables     {}\n", tables->string());
    print_telemetry(summary);
}

int pooled_verdict(const json::object& summary, const worker_parts& w) {
    const auto& p = summary.at("pacing").as_object();
    const auto* ol = summary.if_contains("open_loop");
    const bool schedule_kept = !ol || ol->at("schedule_kept").as_bool();
    runtime::run_verdict v;
    v.interrupted = w.interrupted;
    // Nothing sent is not a client that fell behind: no packet was late, none was due.
    v.client_fell_behind = p.at("packets").at("late").as_uint64() > 0 || !schedule_kept;
    v.client_failed = !w.all_ok;
    v.server_failed =
        p.at("sessions").at("complete").as_uint64() != p.at("sessions").at("requested").as_uint64();
    return runtime::exit_status(v);
}

} // namespace

int run_workers(run_job& job, const std::string& url, local_server* mock, double expected_s) {
    const run_options& s = job.options;
    const fs::path& out = job.out;
    const auto* open_loop = job.open_loop ? &*job.open_loop : nullptr;
    fs::path schedule_file;
    if (open_loop) {
        // Written once: every worker reads this one file.
        schedule_file = out / "schedule.json";
        runtime::write_new_file(schedule_file,
                                schedule::to_json(open_loop->spec, open_loop->offsets));
    }
    // Telemetry in the parent, for the GPUs all workers load; its idle baseline comes first.
    start_telemetry(job.telemetry.get(), out);
    const double start_at = to_seconds(clock::now()) + 1.0;
    const auto ended = run_worker_processes(s, url, out, schedule_file, start_at, expected_s);
    if (job.telemetry)
        job.telemetry->stop();
    json::object mock_stats;
    if (mock)
        mock_stats = mock->stop();

    auto parts = collect_parts(out, ended.statuses, open_loop);
    auto summary = pooled_summary(job, url, parts, schedule_file);
    if (mock)
        summary["mock"] = std::move(mock_stats);
    if (job.telemetry)
        summary["telemetry"] = telemetry_summary(
            *job.telemetry, start_at, ended.end_s,
            summary.at("pacing").at("packets").at("sent").to_number<std::uint64_t>(),
            to_seconds(job.omni.chunk));
    runtime::write_new_file(out / "summary.json", json_text(summary) + "\n");
    print_pooled_table(s, url, open_loop, summary);
    write_pooled_end(job, summary);
    return pooled_verdict(summary, parts);
}

} // namespace detail

} // namespace pacer::run

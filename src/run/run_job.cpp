// `pacer run` as executed once its options are checked: one process of sessions, or the parent
// of `--processes`; summary.json, samples.json, the report and the table (see run_job.hpp).

#include <pacer/core/json_text.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/loop_lag.hpp>
#include <pacer/metrics/merge.hpp>
#include <pacer/metrics/outcome.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/metrics/realtime.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/run/client_settings.hpp>
#include <pacer/run/live_file.hpp>
#include <pacer/run/live_metrics.hpp>
#include <pacer/run/progress.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/runtime/audio_codec.hpp>
#include <pacer/runtime/audio_file.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/runtime/shard.hpp>
#include <pacer/runtime/worker_pool.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/constants.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/session/open_loop.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/telemetry/metrics_listener.hpp>
#include <pacer/telemetry/recorder.hpp>
#include <pacer/trace/disk_estimate.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace pacer::run {

namespace fs = std::filesystem;
using metrics::connect_outcome;
using metrics::count_kinds;
using metrics::unreachable_reason;
using runtime::write_new_file;
using trace::trace_bytes_per_session_second;

namespace {

std::string ms(const boost::json::value& v) {
    return v.is_null() ? "-" : fmt::format("{:.2f} ms", v.to_number<double>() * 1e3);
}

// A random identity for this run's summary.json, so that `pacer merge` can tell a part given
// twice (or a copy of one) from another part.
std::string new_run_id() {
    std::random_device rd;
    std::string id;
    for (int k = 0; k < 4; ++k)
        id += fmt::format("{:08x}", static_cast<std::uint32_t>(rd()));
    return id;
}

// "1 session", "2 sessions".
std::string plural(std::size_t n, std::string_view one, std::string_view many = {}) {
    return fmt::format("{} {}", n,
                       n == 1         ? std::string(one)
                       : many.empty() ? std::string(one) + "s"
                                      : std::string(many));
}

// The table's first line, printed when the run starts (a terminal shows it above the progress
// line, not only once the run is over): the sessions (or the open-loop plan), the input, the URL.
void print_header(const run_options& s, const std::string& url, std::size_t sessions,
                  const schedule::schedule_document* open_loop) {
    const std::string input = s.audio.empty() ? s.duration + " of silence" : s.audio;
    if (open_loop) {
        // Open loop: the plan is the schedule, not a batch of sessions.
        const auto& spec = open_loop->spec;
        const std::string arrival(schedule::to_string(spec.process));
        fmt::print("pacer run: open loop, {} arriving {} at {} (seed {}{}), {} each, "
                   "against {}\n",
                   plural(sessions, "session"), arrival, schedule::rate_text(spec), spec.seed,
                   arrival == "gamma" ? fmt::format(", burstiness {:g}", spec.burstiness)
                                      : std::string(),
                   input, url);
    } else {
        fmt::print("pacer run: {} x {} against {}\n", plural(sessions, "session"), input, url);
    }
    std::fflush(stdout);
}

void print_table(const run_options& s, const metrics::pacing_figures& f,
                 const boost::json::object& summary, const fs::path& out,
                 const std::optional<fs::path>& report) {
    const auto& p = f.json;
    auto dist = [&](const char* key) -> const boost::json::object& {
        return p.at(key).as_object();
    };
    const auto& dev = dist("pacing_deviation_s");
    const auto& send = dist("ws_send_time_s");
    const auto& lag = dist("loop_lag_s");
    const auto& res = summary.at("resources").as_object();
    const auto* unreachable = summary.at("server").as_object().if_contains("unreachable");
    if (unreachable && unreachable->is_string())
        fmt::print("  cannot connect to {}: {} (no session reached the server)\n", s.url,
                   unreachable->as_string().c_str());
    // A rejected session is not also counted incomplete: the three add up to the whole.
    const std::size_t not_complete = f.sessions - f.complete;
    fmt::print("  sessions   {} complete of {} ({} rejected, {} incomplete)\n", f.complete,
               f.sessions, f.rejected, not_complete - std::min(f.rejected, not_complete));
    fmt::print("  packets    {} sent of {}, {} late (> 80 ms) in {}{} -> {}\n", f.packets_sent,
               f.packets_expected, f.late_packets, plural(f.sessions_with_late_packet, "session"),
               f.late_packets == 0
                   ? std::string()
                   : fmt::format(" ({} after a send stall: the server's; {} the "
                                 "client's)",
                                 f.late_after_send_stall, f.late_packets - f.late_after_send_stall),
               f.pacing_qualified    ? "PACING QUALIFIED"
               : f.packets_sent == 0 ? "nothing sent: pacing not measured"
                                     : "PACING UNQUALIFIED");
    fmt::print("  deviation  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n", ms(dev.at("p50")),
               ms(dev.at("p90")), ms(dev.at("p99")), ms(dev.at("p99.9")), ms(dev.at("max")));
    fmt::print("  ws send    p50 {}  p99 {}  max {}\n", ms(send.at("p50")), ms(send.at("p99")),
               ms(send.at("max")));
    fmt::print("  loop lag   p99 {}  max {}  over 80 ms: {}\n", ms(lag.at("p99")),
               ms(lag.at("max")), lag.at("over_80ms").as_uint64());
    if (const auto& st = p.at("send_stalls").as_object(); st.at("stalled_sends").as_uint64() > 0) {
        // The server's TCP window was full: sends blocked (it stopped reading, or is slow).
        const auto pending = st.at("sessions_ended_with_send_pending").as_uint64();
        fmt::print("  send stall {} send(s) took > 80 ms in {} session(s), longest {:.2f} s{}\n",
                   st.at("stalled_sends").as_uint64(), st.at("sessions").as_uint64(),
                   st.at("longest_write_s").to_number<double>(),
                   pending == 0
                       ? std::string()
                       : fmt::format("; {} session(s) ended with a send pending (longest "
                                     "{:.2f} s): the server stopped reading",
                                     pending, st.at("longest_pending_s").to_number<double>()));
    }
    const auto& trace = summary.at("trace").as_object();
    const auto& disk = summary.at("disk").as_object();
    fmt::print("  trace      {:.1f} MB written (estimated {} before the run, {} free), channel "
               "waits {}\n",
               static_cast<double>(trace.at("bytes").as_uint64()) / 1e6,
               format_bytes(disk.at("estimated_bytes").as_uint64()),
               format_bytes(disk.at("free_bytes").as_uint64()),
               p.at("trace_channel").at("waits").as_uint64());
    std::string contexts;
    for (const auto& c : res.at("session_context_cpu_cores").as_array())
        contexts += fmt::format("{}{:.2f}", contexts.empty() ? "" : "/", c.to_number<double>());
    fmt::print(
        "  cpu        client {:.2f} cores (session contexts {}, writer {:.2f}){}, peak RSS {:.0f} "
        "MB\n",
        res.at("client_cpu_cores").to_number<double>(), contexts,
        res.at("writer_cpu_cores").to_number<double>(),
        res.contains("mock_cpu_cores")
            ? fmt::format(", mock {:.2f} cores", res.at("mock_cpu_cores").to_number<double>())
            : std::string(),
        static_cast<double>(res.at("peak_rss_bytes").as_uint64()) / 1e6);
    // What the server did: its time to first audio and the sessions' errors by kind.
    const auto& server = summary.at("server").as_object();
    const auto& ttfa = server.at("time_to_first_audio_s").as_object();
    fmt::print("  server     time to first audio (stream start -> first audio delta) p50 {}  "
               "p95 {}  p99 {}  ({})\n",
               ms(ttfa.at("p50")), ms(ttfa.at("p95")), ms(ttfa.at("p99")),
               plural(ttfa.at("n").to_number<std::uint64_t>(), "session"));
    std::string kinds;
    for (const auto& k : server.at("errors_by_kind").as_array())
        kinds += fmt::format("{}{} {} session(s)", kinds.empty() ? "" : ", ",
                             k.at("kind").as_string().c_str(), k.at("sessions").as_uint64());
    if (!kinds.empty())
        fmt::print("  errors     by kind: {}\n", kinds);
    for (const auto& e : p.at("errors").as_array())
        fmt::print("  error      {} session(s): {}\n", e.at("sessions").as_uint64(),
                   e.at("message").as_string().c_str());
    fmt::print("  results    {}{}\n", (out / "summary.json").string(),
               report ? ", " + report->string() : std::string());
}

// summary.json's `telemetry` for the run's window [t0, t1] (the recorder stopped first, so a
// sample follows t1). Output audio is not decoded by `pacer run` (replay's oracle measures it):
// its ratio stays null.
boost::json::object telemetry_summary(telemetry::recorder& r, double t0, double t1,
                                      std::uint64_t packets_sent) {
    telemetry::window_denominators d;
    d.input_audio_s = static_cast<double>(packets_sent) * schedule::packet_period_s;
    auto t = r.window(t0, t1, d);
    t["window_definition"] = "from the sessions' start (before the first connect; with "
                             "--processes the workers' shared start) to the last session's "
                             "end, on clock.monotonic_s";
    t["input_audio_definition"] = "audio packets sent x 80 ms (session-seconds of input)";
    return t;
}

// The table's telemetry line, when the summary has one.
void print_telemetry(const boost::json::object& summary) {
    const auto* t = summary.if_contains("telemetry");
    if (!t)
        return;
    const auto num = [](const boost::json::value& v, const char* unit) {
        return v.is_null() ? std::string("-")
                           : fmt::format("{:.1f} {}", v.to_number<double>(), unit);
    };
    const auto& o = t->as_object();
    fmt::print("  telemetry  {} over {:.2f} s, mean {}, peak {}, {} per session-second of "
               "input (telemetry.jsonl: {} samples)\n",
               num(o.at("energy_j"), "J"), o.at("window").at("duration_s").to_number<double>(),
               num(o.at("mean_power_w"), "W"), num(o.at("peak_power_w"), "W"),
               num(o.at("j_per_input_audio_s"), "J"), o.at("samples").as_uint64());
}

} // namespace

std::vector<std::vector<failure>>
session_errors(const std::vector<session::session_result>& sessions) {
    std::vector<std::vector<failure>> out;
    for (const auto& r : sessions) {
        auto& e = out.emplace_back(r.failures);
        if (r.rejected)
            e.push_back(session::make_failure(session::session_errc::admission_rejected));
        if (!r.trace_error.empty())
            e.push_back(session::make_failure(session::session_errc::trace_failed, r.trace_error));
        if (!r.complete && e.empty() && r.dispatched)
            e.push_back(session::make_failure(session::session_errc::incomplete));
    }
    return out;
}

boost::json::object server_json(const metrics::pacing_figures& f,
                                const std::vector<session::session_result>& sessions) {
    boost::json::object o;
    o["time_to_first_audio_s"] = f.json.at("time_to_first_audio_s");
    o["time_to_first_audio_definition"] =
        "first response.output_audio.delta receipt - the session's stream start (its packet "
        "grid's origin)";
    const auto errors = session_errors(sessions);
    boost::json::array kinds;
    for (const auto& k : count_kinds(errors))
        kinds.push_back({{"kind", k.what}, {"sessions", k.sessions}});
    o["errors_by_kind"] = std::move(kinds);
    std::vector<connect_outcome> attempts;
    for (std::size_t i = 0; i < sessions.size(); ++i)
        if (sessions[i].dispatched)
            attempts.push_back({sessions[i].admitted, sessions[i].rejected, sessions[i].failures});
    const auto reason = unreachable_reason(attempts);
    o["unreachable"] = reason ? boost::json::value(*reason) : boost::json::value(nullptr);
    return o;
}

session::run_options runner_options(run_job& job) {
    const run_options& s = job.options;
    const auto& realtime = job.realtime;
    session::run_options ro;
    ro.sessions = job.sessions;
    if (job.open_loop) {
        ro.arrivals = job.arrivals;
        ro.max_concurrency = s.max_concurrency;
        ro.policy = job.policy;
        if (job.start_monotonic) // shards and workers run the schedule from their common start
            ro.open_loop_start = time_point(from_seconds(*job.start_monotonic));
    }
    ro.threads = s.threads;
    ro.endpoint = job.endpoint;
    ro.pcm = std::move(job.pcm);
    ro.timeout = std::chrono::duration_cast<duration>(job.timeout);
    ro.trace_root = job.out;
    ro.trace = trace::parse_mode(s.trace).value_or(trace::mode::full);
    ro.profile = job.profile;
    ro.realtime = realtime;
    ro.turns = job.turns;
    ro.model = s.model;
    if (realtime && job.wire_pcm)
        ro.wire_pcm = protocol::pcm_input(std::move(*job.wire_pcm));
    else if (realtime)
        ro.wire_pcm =
            *realtime == protocol::realtime_protocol::openai
                ? ro.pcm.at_rate(protocol::input_sample_rate, protocol::openai_sample_rate)
                : ro.pcm;
    // A turn of "input" streams the session's input (held once, silence never held).
    ro.conversation = job.conversation;
    ro.stagger = from_seconds(s.stagger_ms / 1e3);
    ro.stagger_slots = s.stagger_slots;
    if (job.start_monotonic) // workers and shards share the stagger's origin: their phases agree
        ro.stagger_origin = time_point(from_seconds(*job.start_monotonic));
    if (s.inject_stall_ms > 0)
        ro.inject_stall = from_seconds(s.inject_stall_ms / 1e3);
    return ro;
}

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
    if (s.inject_stall_ms > 0) {
        a.push_back("--inject-stall-ms");
        a.push_back(fmt::format("{}", s.inject_stall_ms));
    }
    const auto client = client_worker_args(s.client); // secrets go by the environment
    a.insert(a.end(), client.begin(), client.end());
    return a;
}

namespace {

// `--processes P`: P worker processes share one start deadline on the host's monotonic clock,
// each with S sessions (closed loop) or shard K/P of the one schedule (open loop, from the
// parent's schedule.json); their raw samples are pooled into one summary.
int run_workers(const run_options& s, const std::string& url, const fs::path& out,
                local_server* mock, const schedule::schedule_document* open_loop, double expected_s,
                const transport::ws_endpoint& endpoint, const end_writers& end,
                const boost::json::array& command_line, telemetry::recorder* telemetry) {
    fs::path schedule_file;
    if (open_loop) {
        // Written once: every worker reads this one file.
        schedule_file = out / "schedule.json";
        write_new_file(schedule_file, schedule::to_json(open_loop->spec, open_loop->offsets));
    }
    // Telemetry in the parent, for the GPUs all workers load; its idle baseline comes first.
    if (telemetry) {
        telemetry->start(out / "telemetry.jsonl");
        telemetry->measure_idle_baseline();
    }
    // One second lets every worker exec, read its input and connect before the deadline.
    const double start_at = to_seconds(clock::now()) + 1.0;
    // The pool forwards SIGINT/SIGTERM to the workers; each worker's own table and errors go
    // to worker-K.log beside its folder.
    runtime::worker_pool pool(s.worker_program);
    // One progress line for all: the workers' live files, pooled on the progress thread.
    std::vector<fs::path> live_files;
    for (std::size_t k = 0; k < s.processes; ++k)
        live_files.push_back(out / fmt::format("worker-{}.live.json", k));
    const auto progress_mode = resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1);
    progress_reporter progress(*progress_mode);
    progress.set_source([&live_files] {
        std::vector<progress_snapshot> parts;
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
    const std::vector<int> statuses = pool.wait_all();
    const double workers_end_s = to_seconds(clock::now());
    progress.end(); // its last line: the workers' final totals
    if (telemetry)
        telemetry->stop();
    boost::json::object mock_stats;
    if (mock)
        mock_stats = mock->stop();

    std::vector<metrics::run_part> parts;
    boost::json::array workers;
    bool all_ok = true, interrupted = false;
    for (std::size_t k = 0; k < statuses.size(); ++k) {
        const fs::path dir = out / fmt::format("worker-{}", k);
        const int st = statuses[k];
        const bool exited = WIFEXITED(st);
        interrupted = interrupted || (exited && WEXITSTATUS(st) == runtime::exit_interrupted);
        boost::json::object w{{"index", k},
                              {"dir", dir.string()},
                              {"log", (out / fmt::format("worker-{}.log", k)).string()},
                              {"status", runtime::describe_status(st)}};
        try {
            // Folded as read: the parent's memory does not grow with the workers' packets.
            auto part = metrics::read_run_part_folded(dir);
            if (open_loop) {
                // Every worker must have run the parent's one schedule.
                const auto* ol = part.summary.if_contains("open_loop");
                const auto* sch =
                    ol && ol->is_object() ? ol->as_object().if_contains("schedule") : nullptr;
                const auto* sha =
                    sch && sch->is_object() ? sch->as_object().if_contains("sha256") : nullptr;
                if (!sha || !sha->is_string() || sha->get_string() != open_loop->sha256)
                    throw std::runtime_error("its open-loop schedule is not the parent's");
            }
            parts.push_back(std::move(part));
            w["merged"] = true;
        } catch (const std::exception& e) {
            w["merged"] = false;
            w["error"] = e.what();
            all_ok = false;
        }
        if (!exited ||
            (WEXITSTATUS(st) != runtime::exit_ok && WEXITSTATUS(st) != runtime::exit_unqualified &&
             WEXITSTATUS(st) != runtime::exit_server_failed))
            all_ok = false;
        workers.push_back(std::move(w));
    }
    auto summary = metrics::merge_parts(parts);
    summary["command"] = "run";
    summary["run_id"] = new_run_id();
    summary["processes"] = s.processes;
    if (open_loop) {
        summary["schedule_split"] = "worker K runs arrivals K, K+P, K+2P, ... (as --shard K/P)";
        if (auto* ol = summary.if_contains("open_loop"))
            ol->as_object()["schedule"].as_object()["file"] = schedule_file.string();
        else
            all_ok = false; // a worker left no open-loop records to pool
    } else {
        summary["sessions_per_process"] = s.concurrency;
    }
    summary["workers"] = std::move(workers);
    all_ok = all_ok && summary.at("complete").as_bool();
    interrupted = interrupted || summary.at("interrupted").as_bool();
    summary["complete"] = all_ok;
    summary["interrupted"] = interrupted;
    summary["url"] = url;
    if (!command_line.empty())
        summary["command_line"] = command_line;
    summary["profile"] = protocol::find_profile(s.profile)->name; // validated by run()
    auto transport_block = transport_json(endpoint);
    // Measured by the workers, pooled from their samples.json by merge_parts.
    transport_block["handshake_s"] = summary.at("handshake_s");
    summary.erase("handshake_s");
    summary["transport"] = std::move(transport_block);
    if (mock)
        summary["mock"] = std::move(mock_stats);
    if (telemetry)
        summary["telemetry"] = telemetry_summary(
            *telemetry, start_at, workers_end_s,
            summary.at("pacing").at("packets").at("sent").to_number<std::uint64_t>());
    write_new_file(out / "summary.json", json_text(summary) + "\n");

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
    bool schedule_kept = true;
    if (const auto* olv = summary.if_contains("open_loop")) {
        const auto& ol = olv->as_object();
        schedule_kept = ol.at("schedule_kept").as_bool();
        fmt::print("  open loop  {} arrivals, {} dropped by the cap; latency p50 {} p99 {}; "
                   "dispatch lag p99 {} max {} -> {} (pooled over all arrivals)\n",
                   ol.at("requests").at("scheduled").to_number<std::uint64_t>(),
                   ol.at("requests").at("dropped").to_number<std::uint64_t>(),
                   ms(ol.at("latency_s").at("p50")), ms(ol.at("latency_s").at("p99")),
                   ms(ol.at("dispatch_lag_s").at("p99")), ms(ol.at("dispatch_lag_s").at("max")),
                   schedule_kept ? "SCHEDULE KEPT" : "SCHEDULE NOT KEPT");
    }
    for (const auto& part : summary.at("incomplete_parts").as_array())
        fmt::print("  incomplete {}: {}{} of {} session(s) incomplete\n",
                   part.at("dir").as_string().c_str(),
                   part.at("interrupted").as_bool() ? "interrupted, " : "",
                   part.at("sessions_incomplete").as_uint64(), part.at("sessions").as_uint64());
    std::optional<fs::path> report;
    if (!s.no_report && end.report)
        report = end.report(out);
    fmt::print("  results    {}{}\n", (out / "summary.json").string(),
               report ? ", " + report->string() : std::string());
    if (!s.export_format.empty() && end.tables)
        if (const auto tables = end.tables(out, s.export_format))
            fmt::print("  tables     {}\n", tables->string());
    print_telemetry(summary);
    runtime::run_verdict v;
    v.interrupted = interrupted;
    // Nothing sent is not a client that fell behind: no packet was late, none was due.
    v.client_fell_behind = p.at("packets").at("late").as_uint64() > 0 || !schedule_kept;
    v.client_failed = !all_ok;
    v.server_failed =
        p.at("sessions").at("complete").as_uint64() != p.at("sessions").at("requested").as_uint64();
    return runtime::exit_status(v);
}

} // namespace

int execute_run(run_job job) {
    const run_options& s = job.options;
    const std::size_t sessions = job.sessions;
    const auto input_length = job.input_length;
    const fs::path& out = job.out;
    const auto& shard = job.shard;
    const auto& open_loop = job.open_loop;
    const auto& arrivals = job.arrivals;
    const auto& start_monotonic = job.start_monotonic;
    const auto* profile = job.profile;
    const auto& realtime = job.realtime;
    auto& endpoint = job.endpoint;
    const std::uint64_t disk_estimate = job.disk_estimate;
    const std::uint64_t disk_free = job.disk_free;
    const auto& end = job.end;

    const std::unique_ptr<local_server> mock = std::move(job.mock);
    std::string url = mock ? mock->url() : s.url;
    // The ETA of the progress line: the input (after the last arrival, open loop) and the
    // stagger; negotiation comes on top.
    const double expected_s =
        to_seconds(input_length) + (open_loop ? to_seconds(arrivals.back()) : s.stagger_ms / 1e3);
    if (s.processes > 1)
        return run_workers(s, url, out, mock.get(), open_loop ? &*open_loop : nullptr, expected_s,
                           endpoint, end, job.command_line, job.telemetry.get());
    if (mock)
        url += " (built-in mock)";

    // A worker of `--processes` exports its live totals (and its pid) from now on: the parent's
    // progress line pools them.
    session::live_counters exported;
    std::optional<live_file_writer> live_writer;
    if (!s.live_file.empty())
        live_writer.emplace(s.live_file, exported);
    // Telemetry samples from here, on its own threads; the idle baseline comes before any
    // session (and before a shared start: it must fit before --start-at).
    const auto& telemetry = job.telemetry;
    if (telemetry) {
        telemetry->start(out / "telemetry.jsonl");
        telemetry->measure_idle_baseline();
    }
    if (start_monotonic) {
        // A shared start: every worker or shard begins at the same instant.
        std::this_thread::sleep_until(time_point(from_seconds(*start_monotonic)));
    }

    session::run_options ro = runner_options(job);
    // A worker of `--processes` reads its parent's schedule.json: the schedule is written once.
    const bool worker = s.worker_index >= 0;
    const fs::path schedule_path = worker ? fs::path(s.schedule_file) : out / "schedule.json";
    if (open_loop && !worker)
        write_new_file(schedule_path, schedule::to_json(open_loop->spec, open_loop->offsets));
    // The live line: on its own thread, fed by the sessions' relaxed atomic totals. A worker of
    // `--processes` shows none: it exports the same totals to its parent's live file.
    const auto progress_mode = resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1);
    progress_reporter progress(worker ? progress_mode::off : *progress_mode);
    if (progress.on())
        ro.live = &progress.counters();
    if (live_writer)
        ro.live = &exported;
    // --metrics-listen: the same live totals, served on a thread of its own.
    session::live_counters listened;
    if (!s.metrics_listen.empty() && !ro.live)
        ro.live = &listened;
    std::optional<telemetry::metrics_listener> listener;
    if (!s.metrics_listen.empty()) {
        const session::live_counters* counters = ro.live;
        listener.emplace(s.metrics_listen, [counters] { return live_metrics_text(*counters); });
        fmt::print(stderr, "pacer: serving the live counters at {} (--metrics-listen)\n",
                   listener->url());
        std::fflush(stderr);
    }
    const auto clocks = read_clock_pair();
    const double cpu_before = runtime::read_process_usage().cpu_s;
    print_header(s, url, open_loop ? arrivals.size() : sessions, open_loop ? &*open_loop : nullptr);
    // After its input, a session waits for the server until its --timeout: the progress line
    // says so, with the time left, once the input is sent.
    progress.begin("", expected_s,
                   to_seconds(job.timeout) +
                       (open_loop ? to_seconds(arrivals.back()) : s.stagger_ms / 1e3));
    auto outcome = session::run_duplex(ro);
    const double sessions_end_s = to_seconds(clock::now());
    progress.end(); // the terminal line is cleared before the table
    listener.reset();
    if (telemetry)
        telemetry->stop(); // a last sample after the sessions' end
    if (live_writer)
        live_writer->stop(); // the final totals, before the parent sees this worker end
    const auto usage = runtime::read_process_usage();
    boost::json::object mock_stats;
    if (mock)
        mock_stats = mock->stop();

    const auto figures =
        metrics::summarize_pacing(outcome.sessions, outcome.receipts, outcome.loop_lag_s);
    // A trace the disk could not hold (issue 33 item 8): the run is over for that disk. The
    // temporary traces go first, so that the space they took holds the summary, and the
    // summary says the run was interrupted, and why.
    std::string disk_full;
    for (const auto& r : outcome.sessions)
        if (disk_full.empty() && r.trace_error.find(std::strerror(ENOSPC)) != std::string::npos)
            disk_full = "disk full: " + r.trace_error;
    auto remove_traces = [&] {
        for (const auto& r : outcome.sessions) {
            std::error_code ignored;
            fs::remove(out / trace::session_folder_name(r.index) / "trace.jsonl", ignored);
        }
    };
    if (!disk_full.empty() && !s.keep_traces)
        remove_traces();
    boost::json::object summary;
    summary["schema_version"] = 1;
    summary["command"] = "run";
    summary["run_id"] = new_run_id();
    summary["config"] = {{"concurrency", sessions},
                         {"threads", s.threads},
                         {"input", s.audio.empty() ? "silence" : s.audio},
                         {"input_duration_s", to_seconds(input_length)},
                         {"url", url},
                         {"profile", profile->name},
                         {"protocol", s.protocol},
                         {"timeout_s", to_seconds(ro.timeout)},
                         {"packet_ms", 80},
                         {"inject_stall_ms", s.inject_stall_ms},
                         {"stagger_ms", s.stagger_ms},
                         {"stagger_slots", s.stagger_slots},
                         {"keep_traces", s.keep_traces},
                         {"trace", s.trace}};
    summary["config"].as_object()["input_conversion"] = std::move(job.input_conversion);
    const auto sync = read_clock_sync();
    summary["clock"] =
        boost::json::object{{"monotonic_s", clocks.monotonic_s},
                            {"realtime_s", clocks.realtime_s},
                            {"domain", "CLOCK_MONOTONIC seconds"},
                            {"sync", boost::json::object{{"synchronized", sync.synchronized},
                                                         {"max_error_s", sync.max_error_s},
                                                         {"est_error_s", sync.est_error_s}}}};
    summary["pacing"] = figures.json;
    summary["pacing_qualified"] = figures.pacing_qualified;
    summary["loop_lag_over_time"] = metrics::loop_lag_over_time(
        outcome.loop_lag_s, outcome.loop_lag_started_s, outcome.loop_lag_period_s);
    summary["server"] = server_json(figures, outcome.sessions);
    if (realtime) {
        auto& cfg = summary["config"].as_object();
        cfg["turns"] = s.turns;
        cfg["model"] = s.model;
        const bool openai = *realtime == protocol::realtime_protocol::openai;
        cfg["wire_sample_rate"] =
            openai ? protocol::openai_sample_rate : protocol::input_sample_rate;
        cfg["resampler"] = openai ? "libsamplerate SRC_SINC_BEST_QUALITY" : "none";
        summary["server"].as_object()["realtime"] =
            metrics::realtime_latency_json(outcome.sessions);
    }
    if (job.conversation) { // multi-turn: the scenario and its per-turn figures
        summary["config"].as_object()["scenario"] = job.conversation.name();
        summary["turns"] = metrics::turn_metrics_json(outcome.sessions);
    }
    summary["disk"] = {
        {"estimated_bytes", disk_estimate},
        {"trace_bytes_per_session_second", trace_bytes_per_session_second(job.options.protocol)},
        {"free_bytes", disk_free}};
    summary["stalls_injected"] = outcome.stalls_injected;
    summary["interrupted"] = outcome.interrupted || !disk_full.empty();
    if (!disk_full.empty())
        summary["interrupted_by"] = disk_full;
    summary["transport"] = transport_json(endpoint);
    summary["transport"].as_object()["handshake_s"].as_object()["session_update_ack"] =
        metrics::update_ack_json(outcome.sessions);
    if (telemetry) // the run's window: from the sessions' start to the last one's end
        summary["telemetry"] =
            telemetry_summary(*telemetry, clocks.monotonic_s, sessions_end_s, figures.packets_sent);
    bool schedule_kept = true;
    if (outcome.open_loop) {
        // A session start is late for the schedule like a packet is late for its grid.
        auto ol =
            session::open_loop_summary(*outcome.open_loop, session::client_schedule_thresholds);
        schedule_kept = ol.at("schedule_kept").as_bool();
        if (!open_loop->spec.stages.empty())
            ol["stages"] = schedule::stage_rows(*outcome.open_loop, open_loop->spec.stages);
        ol["schedule"] = boost::json::object{
            {"arrival", schedule::to_string(open_loop->spec.process)},
            {"rate", open_loop->spec.stages.empty() ? boost::json::value(open_loop->spec.rate)
                                                    : boost::json::value(nullptr)},
            {"stages", open_loop->spec.stages.empty()
                           ? boost::json::value(nullptr)
                           : boost::json::value(schedule::to_string(open_loop->spec.stages))},
            {"burstiness", open_loop->spec.burstiness},
            {"seed", open_loop->spec.seed},
            {"arrivals", open_loop->offsets.size()},
            {"sha256", open_loop->sha256},
            {"file", schedule_path.string()}};
        summary["open_loop"] = std::move(ol);
    }
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    summary["host"] = host;
    if (!job.command_line.empty())
        summary["command_line"] = job.command_line;
    if (shard)
        summary["shard"] = boost::json::object{
            {"index", shard->index},
            {"count", shard->count},
            {"source", worker ? std::string("--processes") : shard->source},
            {"sessions_total", open_loop ? open_loop->offsets.size() : s.concurrency}};
    if (s.worker_index >= 0)
        summary["worker_index"] = s.worker_index;
    if (start_monotonic)
        summary["start_at_monotonic_s"] = *start_monotonic;
    const auto& w = outcome.writer;
    summary["trace"] = {
        {"lines", w.lines},
        {"bytes", w.bytes},
        {"writes", w.writes},
        {"write_errors", w.write_errors},
        {"peak_buffered_bytes", w.peak_buffered_bytes},
        {"bytes_per_s", outcome.wall_s > 0 ? static_cast<double>(w.bytes) / outcome.wall_s : 0.0},
        {"kept", s.keep_traces},
        {"mode", s.trace}};
    boost::json::object resources;
    const double cpu = usage.cpu_s - cpu_before;
    double mock_cpu = 0;
    if (const auto* m = mock_stats.if_contains("thread_cpu_s"))
        mock_cpu = m->to_number<double>();
    resources["wall_s"] = outcome.wall_s;
    resources["client_cpu_s"] = cpu - mock_cpu;
    resources["client_cpu_cores"] = outcome.wall_s > 0 ? (cpu - mock_cpu) / outcome.wall_s : 0.0;
    if (mock) {
        resources["mock_cpu_s"] = mock_cpu;
        resources["mock_cpu_cores"] = outcome.wall_s > 0 ? mock_cpu / outcome.wall_s : 0.0;
    }
    resources["peak_rss_bytes"] = usage.peak_rss_bytes;
    boost::json::array context_cores;
    for (double c : outcome.context_cpu_s)
        context_cores.push_back(outcome.wall_s > 0 ? c / outcome.wall_s : 0.0);
    resources["session_context_cpu_cores"] = std::move(context_cores);
    resources["writer_cpu_cores"] =
        outcome.wall_s > 0 ? outcome.writer_cpu_s / outcome.wall_s : 0.0;
    summary["resources"] = std::move(resources);
    if (mock)
        summary["mock"] = std::move(mock_stats);

    metrics::open_loop_arrivals arrival_records;
    if (outcome.open_loop) {
        arrival_records.result = &*outcome.open_loop;
        arrival_records.first_index = shard ? shard->index : 0;
        arrival_records.index_stride = shard ? shard->count : 1;
    }
    {
        // One session's receipts at a time (read back, or taken from the writer's memory with
        // --trace none), written and dropped: never every receipt of the run in memory.
        runtime::new_file samples(out / "samples.json");
        const auto unreadable = metrics::write_samples(
            [&](std::string_view piece) { samples.write(piece); }, outcome.sessions,
            metrics::run_receipts(out, ro.trace == trace::mode::none ? outcome.kept_receipts.get()
                                                                     : nullptr),
            arrival_records);
        samples.close();
        auto& errors = summary["pacing"].as_object()["errors"].as_array();
        for (const auto& e : unreadable)
            errors.push_back({{"message", e}, {"sessions", 1}});
    }
    if (job.conversation) // every session's turns, one line each (docs/scenarios.md)
        metrics::write_turn_rows(out / "turns.jsonl", outcome.sessions);
    write_new_file(out / "summary.json", json_text(summary) + "\n");
    std::optional<fs::path> report;
    if (!s.no_report && end.report)
        report = end.report(out);
    print_table(s, figures, summary, out, report);
    if (!s.export_format.empty() && end.tables)
        if (const auto tables = end.tables(out, s.export_format))
            fmt::print("  tables     {}\n", tables->string());
    if (const auto line = transport_line(endpoint); !line.empty())
        fmt::print("  transport  {}\n", line);
    print_telemetry(summary);
    if (outcome.interrupted)
        fmt::print("  INTERRUPTED by a signal: the summary covers what ran until then\n");
    if (!disk_full.empty())
        fmt::print("  INTERRUPTED: {}; the summary covers what ran until then{}\n", disk_full,
                   s.keep_traces ? "" : " (the temporary traces were removed)");
    if (outcome.open_loop) {
        const auto& ol = summary.at("open_loop").as_object();
        const auto& lat = ol.at("latency_s").as_object();
        const auto& lag = ol.at("dispatch_lag_s").as_object();
        const auto& cap = ol.at("cap").as_object();
        fmt::print("  open loop  {} arrivals, {} dropped by the cap; dispatch lag p99 {} max {} "
                   "-> {}\n",
                   ol.at("requests").at("scheduled").to_number<std::uint64_t>(),
                   ol.at("requests").at("dropped").to_number<std::uint64_t>(), ms(lag.at("p99")),
                   ms(lag.at("max")), schedule_kept ? "SCHEDULE KEPT" : "SCHEDULE NOT KEPT");
        // Latency is anchored to the scheduled start, so a queue anywhere counts in it.
        auto from_schedule = [&](const char* key) -> const boost::json::object* {
            const auto* v = figures.json.if_contains(key);
            return v ? &v->as_object() : nullptr;
        };
        std::string to;
        if (const auto* u = from_schedule("latency_to_session_updated_s"))
            to +=
                fmt::format("session.updated p50 {} p99 {}; ", ms(u->at("p50")), ms(u->at("p99")));
        if (const auto* a = from_schedule("latency_to_first_audio_s"))
            to += fmt::format("first audio p50 {} p99 {}; ", ms(a->at("p50")), ms(a->at("p99")));
        fmt::print("  latency    scheduled start -> {}session end p50 {} p99 {}\n", to,
                   ms(lat.at("p50")), ms(lat.at("p99")));
        if (cap.at("binding").as_bool())
            fmt::print("  cap        --max-concurrency {} bound: {} arrivals delayed, {} dropped\n",
                       cap.at("max_concurrency").to_number<std::uint64_t>(),
                       cap.at("delayed").to_number<std::uint64_t>(),
                       cap.at("dropped").to_number<std::uint64_t>());
    }
    if (!s.keep_traces && disk_full.empty()) {
        // The traces proved the writer kept up; the receipts and summaries are what stays. Last,
        // after the table: unlinking 1,024 files of 3.5 MB takes ~2.5 s on ext4 (nothing above
        // reads them).
        remove_traces();
    }
    runtime::run_verdict v;
    v.interrupted = outcome.interrupted;
    // Nothing sent is not a client that fell behind: no packet was late, none was due. A packet
    // a send stall made late is the server's (its TCP window was full): exit 4, not 3.
    v.client_fell_behind = figures.late_packets > figures.late_after_send_stall || !schedule_kept;
    v.server_failed = figures.late_after_send_stall > 0;
    v.unreachable = summary.at("server").at("unreachable").is_string();
    for (const auto& r : outcome.sessions) {
        if (r.complete || r.interrupted || !r.dispatched)
            continue;
        const bool internal = std::any_of(r.failures.begin(), r.failures.end(), [](const auto& f) {
            return f.code == session::session_errc::internal_error;
        });
        v.client_failed = v.client_failed || internal || !r.trace_error.empty();
        v.server_failed = v.server_failed || r.rejected || r.trace_error.empty();
    }
    return runtime::exit_status(v);
}

} // namespace pacer::run

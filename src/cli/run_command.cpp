// `pacer run`: N paced duplex sessions against --url, or against the built-in mock.

#include <pacer/cli/auto_report.hpp>
#include <pacer/cli/checks.hpp>
#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/input_audio.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/cli/outcome.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/cli/progress.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/loop_lag.hpp>
#include <pacer/metrics/merge.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/metrics/realtime.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/runtime/audio_file.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/runtime/shard.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/server/probe_mock.hpp>
#include <pacer/session/open_loop.hpp>
#include <pacer/session/runner.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <random>
#include <span>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace pacer::cli {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

struct run_settings {
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
    double inject_stall_ms = 0;
    std::string timeout; // default: the input + 60 s
    double stagger_ms = 80;
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
    CLI::Option* concurrency_option = nullptr;
    int worker_index = -1; // hidden: which worker of `--processes` this is
    bool dry_run = false;
    std::string progress = "auto";
    bool no_report = false;
    std::string export_format; ///< --export csv|jsonl: the tables at the end ("": none)
    client_settings client;    // wss:// trust and handshake headers
};

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

void print_table(const run_settings& s, const std::string& url, const metrics::pacing_figures& f,
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
    const std::string input = s.audio.empty() ? s.duration + " of silence" : s.audio;
    if (const auto* ol = summary.if_contains("open_loop")) {
        // Open loop: the plan is the schedule, not a batch of sessions.
        const auto& plan = ol->at("schedule").as_object();
        const std::string arrival(plan.at("arrival").as_string());
        fmt::print("pacer run: open loop, {} sessions arriving {} at {:g}/s (seed {}{}), {} each, "
                   "against {}\n",
                   f.sessions, arrival, plan.at("rate").to_number<double>(),
                   plan.at("seed").to_number<std::uint64_t>(),
                   arrival == "gamma"
                       ? fmt::format(", burstiness {:g}", plan.at("burstiness").to_number<double>())
                       : std::string(),
                   input, url);
    } else {
        fmt::print("pacer run: {} sessions x {} against {}\n", f.sessions, input, url);
    }
    const auto* unreachable = summary.at("server").as_object().if_contains("unreachable");
    if (unreachable && unreachable->is_string())
        fmt::print("  cannot connect to {}: {} (no session reached the server)\n", s.url,
                   unreachable->as_string().c_str());
    fmt::print("  sessions   {} complete of {} ({} rejected, {} incomplete)\n", f.complete,
               f.sessions, f.rejected, f.sessions - f.complete);
    fmt::print("  packets    {} sent of {}, {} late (> 80 ms) in {} sessions -> {}\n",
               f.packets_sent, f.packets_expected, f.late_packets, f.sessions_with_late_packet,
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
               "p95 {}  p99 {}  ({} sessions)\n",
               ms(ttfa.at("p50")), ms(ttfa.at("p95")), ms(ttfa.at("p99")),
               ttfa.at("n").to_number<std::uint64_t>());
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

// The errors of each session as the server row counts them: its trace's error messages, a
// 503 rejection, the writer's failure, and an incomplete session that recorded no error.
std::vector<std::vector<std::string>>
session_errors(const std::vector<session::session_result>& sessions) {
    std::vector<std::vector<std::string>> out;
    for (const auto& r : sessions) {
        auto& e = out.emplace_back(r.errors);
        if (r.rejected)
            e.emplace_back("admission rejected: HTTP 503, retries exhausted");
        if (!r.trace_error.empty())
            e.push_back("trace: " + r.trace_error);
        if (!r.complete && e.empty() && r.dispatched)
            e.emplace_back("incomplete: no drain or no close from the server");
    }
    return out;
}

// The `server` part of summary.json: TTFA, errors by kind, and whether it could be reached.
boost::json::object server_json(const metrics::pacing_figures& f,
                                const std::vector<session::session_result>& sessions) {
    boost::json::object o;
    o["time_to_first_audio_s"] = f.json.at("time_to_first_audio_s");
    o["time_to_first_audio_definition"] =
        "first response.output_audio.delta receipt - the session's stream start (its packet "
        "grid's origin)";
    const auto errors = session_errors(sessions);
    boost::json::array kinds;
    for (const auto& k : count_errors(errors, true))
        kinds.push_back({{"kind", k.what}, {"sessions", k.sessions}});
    o["errors_by_kind"] = std::move(kinds);
    std::vector<connect_outcome> attempts;
    for (std::size_t i = 0; i < sessions.size(); ++i)
        if (sessions[i].dispatched)
            attempts.push_back({sessions[i].admitted, sessions[i].rejected, sessions[i].errors});
    const auto reason = unreachable_reason(attempts);
    o["unreachable"] = reason ? boost::json::value(*reason) : boost::json::value(nullptr);
    return o;
}

// The argument list that makes worker `index` run its share of `s`: --concurrency sessions
// (closed loop), or shard index/P of the parent's schedule file (open loop).
std::vector<std::string> worker_args(const run_settings& s, const std::string& url,
                                     const fs::path& out, double start_at_monotonic, int index,
                                     const fs::path& schedule_file) {
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
    // The parent writes the pooled report; a worker's stderr is its log file.
    a.insert(a.end(), {"--no-report", "--progress", "never"});
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

// Workers of `--processes`: children whose signals the parent forwards.
std::vector<pid_t> g_workers;
void forward_signal(int sig) {
    for (pid_t pid : g_workers)
        ::kill(pid, sig);
}

std::string describe_status(int status) {
    if (WIFEXITED(status))
        return fmt::format("exit {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return fmt::format("killed by signal {} ({})", WTERMSIG(status),
                           ::strsignal(WTERMSIG(status)));
    return "unknown";
}

// `--processes P`: P worker processes share one start deadline on the host's monotonic clock,
// each with S sessions (closed loop) or shard K/P of the one schedule (open loop, from the
// parent's schedule.json); their raw samples are pooled into one summary.
int run_workers(const run_settings& s, const std::string& url, const fs::path& out,
                local_mock* mock, const schedule::schedule_document* open_loop) {
    fs::path schedule_file;
    if (open_loop) {
        // Written once: every worker reads this one file.
        schedule_file = out / "schedule.json";
        write_new_file(schedule_file, schedule::to_json(open_loop->spec, open_loop->offsets));
    }
    // One second lets every worker exec, read its input and connect before the deadline.
    const double start_at = to_seconds(clock::now()) + 1.0;
    struct sigaction forward {
    }, old_int{}, old_term{};
    forward.sa_handler = forward_signal;
    ::sigaction(SIGINT, &forward, &old_int);
    ::sigaction(SIGTERM, &forward, &old_term);
    std::vector<pid_t> pids;
    for (std::size_t k = 0; k < s.processes; ++k) {
        auto args = worker_args(s, url, out / fmt::format("worker-{}", k), start_at,
                                static_cast<int>(k), schedule_file);
        std::vector<char*> argv;
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        // Each worker's own table and errors go to worker-K.log beside its folder.
        const std::string log = (out / fmt::format("worker-{}.log", k)).string();
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        pid_t pid = -1;
        const int rc = ::posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        if (rc != 0)
            throw std::runtime_error(
                fmt::format("cannot start worker {}: {}", k, std::strerror(rc)));
        pids.push_back(pid);
        g_workers.push_back(pid);
    }
    std::vector<int> statuses(pids.size(), 0);
    for (std::size_t k = 0; k < pids.size(); ++k)
        while (::waitpid(pids[k], &statuses[k], 0) < 0 && errno == EINTR) {
        }
    g_workers.clear();
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    boost::json::object mock_stats;
    if (mock)
        mock_stats = mock->stop();

    std::vector<metrics::run_part> parts;
    boost::json::array workers;
    bool all_ok = true, interrupted = false;
    for (std::size_t k = 0; k < pids.size(); ++k) {
        const fs::path dir = out / fmt::format("worker-{}", k);
        const int st = statuses[k];
        const bool exited = WIFEXITED(st);
        interrupted = interrupted || (exited && WEXITSTATUS(st) == exit_interrupted);
        boost::json::object w{{"index", k},
                              {"dir", dir.string()},
                              {"log", (out / fmt::format("worker-{}.log", k)).string()},
                              {"status", describe_status(st)}};
        try {
            auto part = metrics::read_run_part(dir);
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
        if (!exited || (WEXITSTATUS(st) != exit_ok && WEXITSTATUS(st) != exit_unqualified &&
                        WEXITSTATUS(st) != exit_server_failed))
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
    summary["profile"] = protocol::find_profile(s.profile)->name; // validated by run()
    transport::ws_endpoint endpoint = transport::parse_ws_url(url); // checked by run()
    apply_client_settings(s.client, endpoint);
    auto transport_block = transport_json(endpoint);
    // Measured by the workers, pooled from their samples.json by merge_parts.
    transport_block["handshake_s"] = summary.at("handshake_s");
    summary.erase("handshake_s");
    summary["transport"] = std::move(transport_block);
    if (mock)
        summary["mock"] = std::move(mock_stats);
    write_new_file(out / "summary.json", boost::json::serialize(summary) + "\n");

    const auto& p = summary.at("pacing").as_object();
    const auto& dev = p.at("pacing_deviation_s").as_object();
    if (open_loop)
        fmt::print("pacer run: {} processes sharing {} open-loop arrivals against {}\n",
                   s.processes, open_loop->offsets.size(), url);
    else
        fmt::print("pacer run: {} processes x {} sessions against {}\n", s.processes, s.concurrency,
                   url);
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
    if (!s.no_report)
        report = write_end_report(out);
    fmt::print("  results    {}{}\n", (out / "summary.json").string(),
               report ? ", " + report->string() : std::string());
    if (!s.export_format.empty())
        if (const auto tables = write_end_tables(out, s.export_format))
            fmt::print("  tables     {}\n", tables->string());
    run_verdict v;
    v.interrupted = interrupted;
    // Nothing sent is not a client that fell behind: no packet was late, none was due.
    v.client_fell_behind = p.at("packets").at("late").as_uint64() > 0 || !schedule_kept;
    v.client_failed = !all_ok;
    v.server_failed =
        p.at("sessions").at("complete").as_uint64() != p.at("sessions").at("requested").as_uint64();
    return exit_status(v);
}

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
        fmt::print("  open loop  {} arrivals{} ({} at {:g}/s, burstiness {:g}, seed {}, sha256 {}"
                   "{})\n",
                   p.arrivals.size(),
                   p.arrivals.empty()
                       ? std::string()
                       : fmt::format(" from {:.3f} s to {:.3f} s", to_seconds(p.arrivals.front()),
                                     to_seconds(p.arrivals.back())),
                   schedule::to_string(spec.process), spec.rate, spec.burstiness, spec.seed,
                   p.open_loop->sha256, s.schedule_file.empty() ? "" : ", from " + s.schedule_file);
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
    fmt::print("  threads    {} session context(s), stagger {:g} ms{}\n", s.threads, s.stagger_ms,
               s.inject_stall_ms > 0 ? fmt::format(", injected stall {:g} ms", s.inject_stall_ms)
                                     : std::string());
    if (p.start_monotonic)
        fmt::print("  start      in {:.1f} s (--start-at {})\n",
                   *p.start_monotonic - read_clock_pair().monotonic_s, s.start_at);
    fmt::print("  output     {} (summary.json, samples.json, session-NNN/{}{}{}{})\n",
               p.out.string(), s.keep_traces ? "; traces kept" : "",
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
    std::optional<protocol::realtime_protocol> realtime;
    if (s.protocol != "native") {
        protocol::realtime_protocol p{};
        if (!protocol::parse_realtime_protocol(s.protocol, p))
            throw usage_error(fmt::format("--protocol '{}' is not known: use native, "
                                          "openai-realtime or vllm-realtime",
                                          s.protocol));
        if (s.url.empty())
            throw usage_error(fmt::format("--protocol {} needs --url: the built-in probe mock "
                                          "speaks the native protocol only",
                                          s.protocol));
        if (p == protocol::realtime_protocol::vllm && s.model.empty())
            throw usage_error("--protocol vllm-realtime needs --model (the served model)");
        realtime = p;
    }
    if (s.turns != "server-vad" && s.turns != "manual")
        throw usage_error(
            fmt::format("--turns '{}' is not known: use server-vad or manual", s.turns));
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
    const bool open_loop_asked = s.rate > 0 || !s.arrival.empty() || s.sessions > 0 || s.burstiness;
    if (!s.schedule_file.empty()) {
        if (open_loop_asked)
            throw usage_error("--schedule replays a saved schedule: drop "
                              "--arrival/--rate/--sessions/--burstiness");
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
        if (s.sessions == 0)
            throw usage_error("open-loop runs need --sessions N (how many arrivals)");
        spec.process = *process;
        spec.rate = s.rate;
        if (s.burstiness)
            spec.burstiness = *s.burstiness;
        spec.seed = s.seed;
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
    std::vector<std::uint8_t> pcm;
    // Any WAV: mixed down and converted to 16 kHz, and to the protocol's rate straight from the
    // file (recorded in config.input_conversion).
    const std::size_t wire_rate = realtime == protocol::realtime_protocol::openai
                                      ? protocol::openai_sample_rate
                                      : protocol::input_sample_rate;
    std::optional<loaded_input> loaded;
    if (!s.audio.empty()) {
        loaded = load_input_audio(s.audio, wire_rate);
        pcm = loaded->pcm;
    } else {
        const auto d = parse_duration(s.duration);
        if (!d || d->count() == 0)
            throw usage_error(
                fmt::format("--duration '{}' is not a positive duration such as 30s", s.duration));
        pcm = runtime::silence(*d);
    }
    const auto input_length = schedule::input_duration(pcm.size());
    if (!timeout)
        timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(input_length) +
                  default_timeout_margin;
    else if (*timeout <= input_length)
        throw usage_error(fmt::format("--timeout {} must be longer than the input ({:.2f} s)",
                                      s.timeout, to_seconds(input_length)));
    transport::ws_endpoint endpoint = url_option(s.url);
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
    const std::uint64_t disk_estimate =
        trace_bytes_estimate(all_sessions, input_s) + receipt_bytes_estimate(all_sessions, input_s);
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
    if (s.dry_run) {
        print_run_plan({s, sessions,
                        std::chrono::duration_cast<std::chrono::nanoseconds>(input_length),
                        *timeout, out, shard, open_loop ? &*open_loop : nullptr, arrivals,
                        start_monotonic, in_flight, descriptors, disk_estimate, disk_free});
        if (const auto line = transport_line(endpoint); !line.empty())
            fmt::print("  transport  {}\n", line);
        return exit_ok;
    }
    create_output_dir(out);

    std::unique_ptr<local_mock> mock;
    std::string url = s.url;
    if (url.empty()) {
        mock = std::make_unique<local_mock>([](asio::io_context& io) {
            return std::make_unique<server::probe_mock>(io, server::mock_options{});
        });
        url = mock->url();
        endpoint = transport::parse_ws_url(url);
        apply_client_settings(s.client, endpoint);
    }
    if (s.processes > 1)
        return run_workers(s, url, out, mock.get(), open_loop ? &*open_loop : nullptr);
    if (mock)
        url += " (built-in mock)";

    if (const char* abort_worker = std::getenv("PACER_TEST_ABORT_WORKER");
        abort_worker && s.worker_index >= 0 && std::to_string(s.worker_index) == abort_worker)
        std::abort(); // test seam: a worker that dies, so the parent's reporting can be checked
    if (start_monotonic) {
        // A shared start: every worker or shard begins at the same instant.
        std::this_thread::sleep_until(time_point(from_seconds(*start_monotonic)));
    }

    session::run_options ro;
    ro.sessions = sessions;
    // A worker of `--processes` reads its parent's schedule.json: the schedule is written once.
    const bool worker = s.worker_index >= 0;
    const fs::path schedule_path = worker ? fs::path(s.schedule_file) : out / "schedule.json";
    if (open_loop) {
        ro.arrivals = arrivals;
        ro.max_concurrency = s.max_concurrency;
        ro.policy = *policy;
        if (start_monotonic) // shards and workers run the schedule from their common start
            ro.open_loop_start = time_point(from_seconds(*start_monotonic));
        if (!worker)
            write_new_file(schedule_path, schedule::to_json(open_loop->spec, open_loop->offsets));
    }
    ro.threads = s.threads;
    ro.endpoint = endpoint;
    ro.pcm = std::make_shared<const std::vector<std::uint8_t>>(std::move(pcm));
    ro.timeout = std::chrono::duration_cast<duration>(*timeout);
    ro.trace_root = out;
    ro.profile = profile;
    ro.realtime = realtime;
    ro.turns = s.turns == "manual" ? protocol::realtime_turns::manual
                                   : protocol::realtime_turns::server_vad;
    ro.model = s.model;
    if (realtime && loaded && loaded->wire)
        ro.wire_pcm = std::make_shared<const std::vector<std::uint8_t>>(*loaded->wire);
    else if (realtime)
        ro.wire_pcm = std::make_shared<const std::vector<std::uint8_t>>(
            *realtime == protocol::realtime_protocol::openai
                ? protocol::resample_pcm16(*ro.pcm, protocol::input_sample_rate,
                                           protocol::openai_sample_rate)
                : *ro.pcm);
    ro.stagger = from_seconds(s.stagger_ms / 1e3);
    if (s.inject_stall_ms > 0)
        ro.inject_stall = from_seconds(s.inject_stall_ms / 1e3);
    // The live line: on its own thread, fed by the sessions' relaxed atomic totals. Its ETA is
    // the input (after the last arrival, open loop) and the stagger; negotiation comes on top.
    const auto progress_mode = resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1);
    progress_reporter progress(worker ? progress_mode::off : *progress_mode);
    if (progress.on())
        ro.live = &progress.counters();
    const double expected_s =
        to_seconds(input_length) + (open_loop ? to_seconds(arrivals.back()) : s.stagger_ms / 1e3);
    const auto clocks = read_clock_pair();
    const double cpu_before = runtime::read_process_usage().cpu_s;
    progress.begin("", expected_s);
    auto outcome = session::run_duplex(ro);
    progress.end(); // the terminal line is cleared before the table
    const auto usage = runtime::read_process_usage();
    boost::json::object mock_stats;
    if (mock)
        mock_stats = mock->stop();

    const auto figures = metrics::summarize_pacing(outcome.sessions, outcome.loop_lag_s);
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
                         {"keep_traces", s.keep_traces}};
    summary["config"].as_object()["input_conversion"] =
        loaded ? loaded->conversion : silence_conversion(wire_rate);
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
    summary["disk"] = {{"estimated_bytes", disk_estimate},
                       {"trace_bytes_per_session_second", trace_bytes_per_session_second},
                       {"free_bytes", disk_free}};
    summary["stalls_injected"] = outcome.stalls_injected;
    summary["interrupted"] = outcome.interrupted;
    summary["transport"] = transport_json(endpoint);
    summary["transport"].as_object()["handshake_s"].as_object()["session_update_ack"] =
        metrics::update_ack_json(outcome.sessions);
    bool schedule_kept = true;
    if (outcome.open_loop) {
        // A session start is late for the schedule like a packet is late for its grid: the
        // run keeps its schedule when dispatch lag p99 <= 5 ms and max <= 80 ms.
        session::schedule_thresholds thresholds;
        thresholds.dispatch_lag_p99 = std::chrono::milliseconds(5);
        thresholds.dispatch_lag_max = std::chrono::milliseconds(80);
        auto ol = session::open_loop_summary(*outcome.open_loop, thresholds);
        schedule_kept = ol.at("schedule_kept").as_bool();
        ol["schedule"] =
            boost::json::object{{"arrival", schedule::to_string(open_loop->spec.process)},
                                {"rate", open_loop->spec.rate},
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
        {"kept", s.keep_traces}};
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
    write_new_file(out / "samples.json", metrics::samples_json(outcome.sessions, arrival_records));
    write_new_file(out / "summary.json", boost::json::serialize(summary) + "\n");
    if (!s.keep_traces) {
        // The traces proved the writer kept up; the receipts and summaries are what stays.
        for (const auto& r : outcome.sessions) {
            std::error_code ignored;
            fs::remove(out / trace::session_folder_name(r.index) / "trace.jsonl", ignored);
        }
    }
    std::optional<fs::path> report;
    if (!s.no_report)
        report = write_end_report(out);
    print_table(s, url, figures, summary, out, report);
    if (!s.export_format.empty())
        if (const auto tables = write_end_tables(out, s.export_format))
            fmt::print("  tables     {}\n", tables->string());
    if (const auto line = transport_line(endpoint); !line.empty())
        fmt::print("  transport  {}\n", line);
    if (outcome.interrupted)
        fmt::print("  INTERRUPTED by a signal: the summary covers what ran until then\n");
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
    run_verdict v;
    v.interrupted = outcome.interrupted;
    // Nothing sent is not a client that fell behind: no packet was late, none was due.
    v.client_fell_behind = figures.late_packets > 0 || !schedule_kept;
    for (const auto& r : outcome.sessions) {
        if (r.complete || r.interrupted || !r.dispatched)
            continue;
        const bool internal = std::any_of(r.errors.begin(), r.errors.end(), [](const auto& e) {
            return e.rfind("internal error", 0) == 0;
        });
        v.client_failed = v.client_failed || internal || !r.trace_error.empty();
        v.server_failed = v.server_failed || r.rejected || r.trace_error.empty();
    }
    return exit_status(v);
}

} // namespace

command add_run_command(CLI::App& app) {
    auto s = std::make_shared<run_settings>();
    auto* sub = app.add_subcommand(
        "run", "Run N paced duplex sessions at once against --url, or against the built-in mock "
               "when no URL is given. Writes summary.json, samples.json and report.html (unless "
               "--no-report) to --output, with a live progress line on stderr (--progress).\n"
               "Every session writes a trace while it streams (about 110 kB/s a session, "
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
    sub->add_option("--rate", s->rate, "Open loop: arrivals per second")
        ->check(number_in(0, 1e9, true))
        ->group("Open loop");
    sub->add_option("--sessions", s->sessions, "Open loop: how many sessions arrive")
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
    sub->add_option("-d,--duration", s->duration,
                    "Length of silent input per session when no --audio is given (e.g. 30s, 90s, "
                    "2m30s)")
        ->capture_default_str();
    sub->add_option("--audio", s->audio,
                    "Input WAV file: any rate, channels and PCM/float encoding, mixed down to mono "
                    "and converted with libsamplerate to 16 kHz and the protocol's rate "
                    "(config.input_conversion records it)");
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
                    "openai-realtime takes its model in the URL");
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
                    "Result folder; must not exist. Default: pacer-results/run-<UTC time>");
    sub->add_flag("--keep-traces", s->keep_traces,
                  "Keep every session's trace.jsonl (about 110 kB/s per session)");
    sub->add_option("--inject-stall-ms", s->inject_stall_ms,
                    "Fault injection: block each session context once, half-way, for this long, "
                    "starting 10 ms before a packet deadline, to show that the lateness detector "
                    "fires (over 160 makes every session late, whatever its grid's phase; "
                    "under 80 alone makes none late)")
        ->check(number_in(0, max_ms));
    sub->add_option("--stagger-ms", s->stagger_ms,
                    "Session i starts streaming i/N x this after negotiating, spreading the "
                    "sessions' 80 ms grids over the period; 0 aligns every session's sends")
        ->check(number_in(0, max_ms))
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
    sub->add_option("--timeout", s->timeout,
                    "Per-session deadline: admission, exchange and close, e.g. 90s or 2m30s. "
                    "Default: the input's length + 60 s; a timeout not longer than the input is "
                    "refused");
    sub->add_option("--progress", s->progress,
                    "Live progress on stderr: elapsed and ETA, sessions active/done/failed, "
                    "packets sent and late, loop lag max and errors so far. auto: on when stderr "
                    "is a terminal (one line refreshed 4 times a second); always: also into a "
                    "pipe or file (a line every 10 s and one at the end); never. Not shown by the "
                    "parent of --processes")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
    add_end_output_options(*sub, s->no_report, s->export_format);
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return run(*s); }};
}

} // namespace pacer::cli

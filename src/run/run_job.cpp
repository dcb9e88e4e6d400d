// `pacer run` as executed once its options are checked: one process of sessions, or the parent
// of `--processes` (workers.cpp); summary.json (process_summary.cpp), samples.json, the report
// and the table (run_table.cpp). See run_job.hpp.

#include <pacer/console/progress.hpp>
#include <pacer/core/json_text.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/metrics/realtime.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/run/client_settings.hpp>
#include <pacer/run/live_file.hpp>
#include <pacer/run/live_metrics.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/telemetry/metrics_listener.hpp>
#include <pacer/telemetry/recorder.hpp>
#include <pacer/telemetry/settings.hpp>
#include <pacer/trace/writer.hpp>

#include <fmt/format.h>

#include "internal.hpp"
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>
#include <unistd.h>

namespace pacer::run {

namespace fs = std::filesystem;

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
    ro.chunk = job.omni.chunk;
    ro.omni = job.omni.settings;
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

namespace detail {

void start_telemetry(telemetry::recorder* telemetry, const fs::path& out) {
    if (telemetry) {
        telemetry->start(out / "telemetry.jsonl");
        telemetry->measure_idle_baseline();
    }
}

namespace {

// The readers of the live totals while one process's sessions run: the progress line, a
// worker's live file for its parent, `--metrics-listen`.
struct live_views {
    session::live_counters exported; // a worker's totals, for its parent's progress line
    std::optional<live_file_writer> live_file;
    std::optional<console::progress_reporter> progress;
    session::live_counters listened;              // `--metrics-listen` when nothing else counts
    std::optional<telemetry::served_page> served; // the counters above, while they live
};

// The live line: on its own thread, fed by the sessions' relaxed atomic totals. A worker of
// `--processes` shows none: it exports the same totals to its parent's live file (begun with
// `v.live_file`). `--metrics-listen` (bound by the command): the same live totals, served on a
// thread of its own from here, before the idle baseline.
void show_live_totals(live_views& v, const run_job& job, session::run_options& ro) {
    const run_options& s = job.options;
    const bool worker = s.worker_index >= 0;
    const auto progress_mode = console::resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1);
    v.progress.emplace(worker ? console::progress_mode::off : *progress_mode);
    if (v.progress->on())
        ro.live = &v.progress->counters();
    if (v.live_file)
        ro.live = &v.exported;
    if (job.listener && !ro.live)
        ro.live = &v.listened;
    if (job.listener) {
        const session::live_counters* counters = ro.live;
        v.served.emplace(job.listener.get(), [counters] { return live_metrics_text(*counters); });
        fmt::print(stderr, "pacer: serving the live counters at {} (--metrics-listen)\n",
                   job.listener->url());
        std::fflush(stderr);
    }
}

// The open loop's schedule.json. A worker of `--processes` reads its parent's: the schedule is
// written once.
fs::path write_schedule(const run_job& job) {
    const run_options& s = job.options;
    const bool worker = s.worker_index >= 0;
    const fs::path path = worker ? fs::path(s.schedule_file) : job.out / "schedule.json";
    if (job.open_loop && !worker)
        runtime::write_new_file(path,
                                schedule::to_json(job.open_loop->spec, job.open_loop->offsets));
    return path;
}

// Runs this process's sessions (the telemetry's idle baseline and any shared start first, the
// live views while they go) and returns what they left and what was measured around them.
process_run run_sessions(run_job& job, const std::string& url, local_server* mock,
                         double expected_s) {
    const run_options& s = job.options;
    live_views live;
    // A worker of `--processes` exports its live totals (and its pid) from now on: the parent's
    // progress line pools them.
    if (!s.live_file.empty())
        live.live_file.emplace(s.live_file, live.exported);
    session::run_options ro = runner_options(job);
    show_live_totals(live, job, ro);
    // Telemetry samples from here, on its own threads; the idle baseline comes before any
    // session (and before a shared start: it must fit before --start-at).
    start_telemetry(job.telemetry.get(), job.out);
    if (job.start_monotonic) // a shared start: every worker or shard begins at the same instant
        std::this_thread::sleep_until(time_point(from_seconds(*job.start_monotonic)));
    process_run r;
    r.schedule_path = write_schedule(job);
    r.clocks = read_clock_pair();
    r.cpu_before_s = runtime::read_process_usage().cpu_s;
    const auto* open_loop = job.open_loop ? &*job.open_loop : nullptr;
    print_header(s, url, open_loop ? job.arrivals.size() : job.sessions, open_loop);
    // After its input, a session waits for the server until its --timeout: the progress line
    // says so, with the time left, once the input is sent.
    live.progress->begin("", expected_s,
                         to_seconds(job.timeout) +
                             (open_loop ? to_seconds(job.arrivals.back()) : s.stagger_ms / 1e3));
    r.outcome = session::run_duplex(ro);
    r.sessions_end_s = to_seconds(clock::now());
    live.progress->end(); // the terminal line is cleared before the table
    if (job.listener)     // the counters go with `live`: their final totals stay served
        job.listener->serve_final(live_metrics_text(*ro.live));
    if (job.telemetry)
        job.telemetry->stop(); // a last sample after the sessions' end
    if (live.live_file)
        live.live_file->stop(); // the final totals, before the parent sees this worker end
    r.usage = runtime::read_process_usage();
    r.mock = mock != nullptr;
    if (mock)
        r.mock_stats = mock->stop();
    r.timeout = ro.timeout;
    r.trace = ro.trace;
    return r;
}

// A trace the disk could not hold (issue 33 item 8): the run is over for that disk.
std::string disk_full_reason(const std::vector<session::session_result>& sessions) {
    for (const auto& r : sessions)
        if (r.trace_error.find(std::strerror(ENOSPC)) != std::string::npos)
            return "disk full: " + r.trace_error;
    return {};
}

void remove_traces(const fs::path& out, const std::vector<session::session_result>& sessions) {
    for (const auto& r : sessions) {
        std::error_code ignored;
        fs::remove(out / trace::session_folder_name(r.index) / "trace.jsonl", ignored);
    }
}

// samples.json: one session's receipts at a time (read back, or taken from the writer's memory
// with --trace none), written and dropped: never every receipt of the run in memory. Receipts
// that cannot be read are errors of the summary's `pacing`.
void write_samples_file(const run_job& job, const process_run& r, boost::json::object& summary) {
    const auto& outcome = r.outcome;
    metrics::open_loop_arrivals arrival_records;
    if (outcome.open_loop) {
        arrival_records.result = &*outcome.open_loop;
        arrival_records.first_index = job.shard ? job.shard->index : 0;
        arrival_records.index_stride = job.shard ? job.shard->count : 1;
    }
    runtime::new_file samples(job.out / "samples.json");
    const auto unreadable = metrics::write_samples(
        [&](std::string_view piece) { samples.write(piece); }, outcome.sessions,
        metrics::run_receipts(job.out,
                              r.trace == trace::mode::none ? outcome.kept_receipts.get() : nullptr),
        arrival_records);
    samples.close();
    auto& errors = summary["pacing"].as_object()["errors"].as_array();
    for (const auto& e : unreadable)
        errors.push_back({{"message", e}, {"sessions", 1}});
}

// The report and the tables (through the command's writers), the table and what follows it.
void print_results(const run_job& job, const process_run& r, const metrics::pacing_figures& figures,
                   const boost::json::object& summary) {
    const run_options& s = job.options;
    std::optional<fs::path> report;
    if (!s.no_report && job.end.report)
        report = job.end.report(job.out);
    print_table(s, figures, summary, job.out, report);
    if (!s.export_format.empty() && job.end.tables)
        if (const auto tables = job.end.tables(job.out, s.export_format))
            fmt::print("  tables     {}\n", tables->string());
    if (const auto line = transport_line(job.endpoint); !line.empty())
        fmt::print("  transport  {}\n", line);
    print_telemetry(summary);
    if (r.outcome.interrupted)
        fmt::print("  INTERRUPTED by a signal: the summary covers what ran until then\n");
    if (!r.disk_full.empty())
        fmt::print("  INTERRUPTED: {}; the summary covers what ran until then{}\n", r.disk_full,
                   s.keep_traces ? "" : " (the temporary traces were removed)");
    if (r.outcome.open_loop)
        print_open_loop(figures, summary);
}

int process_verdict(const process_run& r, const metrics::pacing_figures& figures,
                    const boost::json::object& summary) {
    const auto* ol = summary.if_contains("open_loop");
    const bool schedule_kept = !ol || ol->at("schedule_kept").as_bool();
    runtime::run_verdict v;
    v.interrupted = r.outcome.interrupted;
    // Nothing sent is not a client that fell behind: no packet was late, none was due. A packet
    // a send stall made late is the server's (its TCP window was full): exit 4, not 3.
    v.client_fell_behind = figures.late_packets > figures.late_after_send_stall || !schedule_kept;
    v.server_failed = figures.late_after_send_stall > 0;
    v.unreachable = summary.at("server").at("unreachable").is_string();
    for (const auto& s : r.outcome.sessions) {
        if (s.complete || s.interrupted || !s.dispatched)
            continue;
        const bool internal = std::any_of(s.failures.begin(), s.failures.end(), [](const auto& f) {
            return f.code == session::session_errc::internal_error;
        });
        v.client_failed = v.client_failed || internal || !s.trace_error.empty();
        v.server_failed = v.server_failed || s.rejected || s.trace_error.empty();
    }
    return runtime::exit_status(v);
}

} // namespace

} // namespace detail

int execute_run(run_job job) {
    const run_options& s = job.options;
    const std::unique_ptr<local_server> mock = std::move(job.mock);
    std::string url = mock ? mock->url() : s.url;
    // The ETA of the progress line: the input (after the last arrival, open loop) and the
    // stagger; negotiation comes on top.
    const double expected_s =
        to_seconds(job.input_length) +
        (job.open_loop ? to_seconds(job.arrivals.back()) : s.stagger_ms / 1e3);
    if (s.processes > 1)
        return detail::run_workers(job, url, mock.get(), expected_s);
    if (mock)
        url += " (built-in mock)";

    auto r = detail::run_sessions(job, url, mock.get(), expected_s);
    const auto figures =
        metrics::summarize_pacing(r.outcome.sessions, r.outcome.receipts, r.outcome.loop_lag_s);
    // A full disk: the temporary traces go first, so that the space they took holds the
    // summary, and the summary says the run was interrupted, and why.
    r.disk_full = detail::disk_full_reason(r.outcome.sessions);
    if (!r.disk_full.empty() && !s.keep_traces)
        detail::remove_traces(job.out, r.outcome.sessions);
    auto summary = detail::process_summary(job, url, r, figures);
    detail::write_samples_file(job, r, summary);
    if (job.conversation) // every session's turns, one line each (docs/scenarios.md)
        metrics::write_turn_rows(job.out / "turns.jsonl", r.outcome.sessions);
    runtime::write_new_file(job.out / "summary.json", json_text(summary) + "\n");
    detail::print_results(job, r, figures, summary);
    if (!s.keep_traces && r.disk_full.empty()) {
        // The traces proved the writer kept up; the receipts and summaries are what stays. Last,
        // after the table: unlinking 1,024 files of 3.5 MB takes ~2.5 s on ext4 (nothing above
        // reads them).
        detail::remove_traces(job.out, r.outcome.sessions);
    }
    const int verdict = detail::process_verdict(r, figures, summary);
    telemetry::finish_listening(job.listener.get()); // a watcher scrapes the final totals
    return verdict;
}

} // namespace pacer::run

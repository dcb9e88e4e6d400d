// `pacer http` executed: one open-loop run of a checked schedule, or the capacity search of
// `--find-capacity` (a run per probe), with the live line and `--metrics-listen` (http_job.hpp).

#include <pacer/capacity_search/capacity.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/core/json_text.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/core/units.hpp>
#include <pacer/http/http_job.hpp>
#include <pacer/http/progress.hpp>
#include <pacer/http/request.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/telemetry/metrics_listener.hpp>
#include <pacer/telemetry/recorder.hpp>
#include <pacer/telemetry/settings.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <map>
#include <unistd.h>

namespace pacer::http {

namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// The doublings (or halvings) of the capacity search before it gives up finding a bracket.
constexpr std::size_t max_rate_moves = 10;

} // namespace

void take_arrivals(http_plan& p) {
    p.indices.clear();
    p.offsets.clear();
    const std::size_t first = p.shard ? p.shard->index : 0, step = p.shard ? p.shard->count : 1;
    for (std::size_t i = first; i < p.schedule.offsets.size(); i += step) {
        p.indices.push_back(i);
        p.offsets.push_back(p.schedule.offsets[i]);
    }
    if (p.indices.empty())
        throw bad_input(fmt::format("shard {}/{} gets no arrival of the schedule's {}", first, step,
                                    p.schedule.offsets.size()));
}

std::string tls_words(const http_options& s) {
    if (s.insecure)
        return "https:// with --insecure: WARNING, the server's certificate was NOT verified";
    return fmt::format("https://, certificate verified against {}",
                       s.ca_file.empty() ? std::string("the system CA store") : s.ca_file);
}

std::size_t check_descriptors(const http_options& s, const http_plan& plan) {
    std::size_t in_flight = schedule::peak_in_flight(plan.offsets, plan.timeout);
    if (s.max_concurrency > 0)
        in_flight = std::min(in_flight, s.max_concurrency);
    runtime::ensure_descriptors(in_flight + 64);
    return in_flight + 64;
}

namespace {

// The telemetry of a run or a capacity search: started (telemetry.jsonl, then the idle
// baseline) in the first folder a run creates, or in the search's folder before its probes.
struct http_telemetry {
    std::shared_ptr<telemetry::recorder> recorder; // nullptr: none asked
    bool search = false; // a capacity search: sampling goes on across its probes
    bool started = false;

    void start(const std::filesystem::path& dir) {
        if (!recorder || started)
            return;
        recorder->start(dir / "telemetry.jsonl");
        recorder->measure_idle_baseline(); // before the first request
        started = true;
    }
};

// What watches a run or a capacity search as it goes: the progress line and `--metrics-listen`
// (both read the same relaxed atomic totals from a thread of their own), and the offered rate
// of the run or probe under way.
struct http_watch {
    http_progress_reporter progress;
    bool listening = false;
    std::atomic<double> offered_rate{0};

    explicit http_watch(const http_options& s)
        : progress(console::resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1)
                       .value_or(console::progress_mode::off)),
          listening(!s.metrics_listen.empty()) {}
    bool counting() const { return progress.on() || listening; }
};

// What one run found.
struct run_outcome {
    bool kept = false;
    bool unreachable = false; // no request reached the server: nothing was measured
    bool interrupted = false;
    std::uint64_t failed = 0;
    std::uint64_t good = 0; // requests meeting every SLO
    std::size_t scheduled = 0;
};

// What the requests of one run left: their records, the dispatcher's, the pool's connections.
struct run_data {
    std::vector<metrics::llm_request> records;
    session::open_loop_result result;
    double end_s = 0;         // the last request's end
    bool interrupted = false; // by a signal caught here (the dispatcher says its own)
    std::size_t opened = 0, reused = 0;
    std::vector<double> connect_times, tls_times;
};

// Creates `out` and runs the plan's arrivals once.
run_data run_requests(const http_job& job, const http_plan& plan, const std::filesystem::path& out,
                      http_telemetry& telemetry, http_watch& watch) {
    const auto& s = job.options;
    check_descriptors(s, plan);
    run_data d;
    auto& records = d.records;
    records.resize(plan.offsets.size());
    for (std::size_t i = 0; i < records.size(); ++i)
        records[i].index = plan.indices[i];

    asio::io_context io{1};
    if (s.insecure) // said on stderr before anything is sent, and again in the summary
        fmt::print(stderr, "pacer: WARNING: --insecure: the server's certificate is NOT "
                           "verified\n");
    transport::http_pool pool(io.get_executor(), plan.endpoint);
    session::open_loop_options options;
    options.max_concurrency = s.max_concurrency;
    options.policy = plan.policy;
    // The live line: its own thread, reading the dispatcher's and the requests' relaxed atomic
    // totals. Its ETA is the last arrival; the answers still in flight come on top.
    auto& progress = watch.progress;
    progress.begin("", plan.offsets, s.max_concurrency, to_seconds(plan.offsets.back()));
    const double span_s = to_seconds(plan.offsets.back());
    watch.offered_rate.store(plan.schedule.spec.rate > 0 ? plan.schedule.spec.rate
                             : span_s > 0 ? static_cast<double>(plan.offsets.size()) / span_s
                                          : 0.0);
    http_live* live = watch.counting() ? &progress.requests() : nullptr;
    if (watch.counting())
        options.live = &progress.dispatch();
    std::exception_ptr failure;
    asio::cancellation_signal cancel;
    // Signals are caught before the folder appears: a SIGINT from then on ends the run cleanly.
    asio::signal_set signals(io, SIGINT, SIGTERM);
    job.create_folder(out);
    telemetry.start(out);
    signals.async_wait([&](boost::system::error_code ec, int) {
        if (ec)
            return;
        d.interrupted = true;
        cancel.emit(asio::cancellation_type::terminal);
    });
    // Each request counts its end in the live totals (when the line is on).
    const auto request = [&](std::size_t i, time_point scheduled) -> awaitable<void> {
        return observe_request(one_request(pool, plan, records[i]), records[i], scheduled, live);
    };
    asio::co_spawn(io, session::run_open_loop(plan.offsets, options, request),
                   asio::bind_cancellation_slot(
                       cancel.slot(), [&](std::exception_ptr e, session::open_loop_result r) {
                           failure = e;
                           d.result = std::move(r);
                           signals.cancel();
                           pool.close_idle();
                       }));
    io.run();
    d.end_s = to_seconds(clock::now()); // the last request's end
    progress.end();                     // the terminal line is cleared before the table
    if (failure)
        std::rethrow_exception(failure);
    for (std::size_t i = 0; i < records.size() && i < d.result.records.size(); ++i) {
        const auto& o = d.result.records[i];
        records[i].scheduled = o.scheduled;
        records[i].dispatched = o.dispatched;
        records[i].dropped = o.dropped;
    }
    d.opened = pool.connections_opened();
    d.reused = pool.connections_reused();
    d.connect_times = pool.connect_times();
    d.tls_times = pool.tls_times();
    return d;
}

// summary.json of a run; `kept` says whether the client kept its schedule.
json::object summary_json(const http_job& job, const http_plan& plan, const run_data& d,
                          http_telemetry& telemetry, bool& kept) {
    const auto& s = job.options;
    const auto& records = d.records;
    const auto& result = d.result;
    json::object summary = metrics::llm_summary(records, result.start, plan.slo);
    // The verdict rule of `pacer run`'s open loop (p99 <= 5 ms, max <= 80 ms).
    json::object open_loop =
        session::open_loop_summary(result, session::client_schedule_thresholds);
    kept = open_loop["schedule_kept"].as_bool();
    if (!plan.schedule.spec.stages.empty()) {
        // A request that ended with an error (HTTP status, timeout) is no completion here.
        auto staged = result;
        for (std::size_t i = 0; i < records.size() && i < staged.records.size(); ++i)
            staged.records[i].failed = staged.records[i].failed || !records[i].error.empty();
        open_loop["stages"] = schedule::stage_rows(staged, plan.schedule.spec.stages);
    }
    summary["schedule_kept"] = kept;
    summary["open_loop"] = std::move(open_loop);
    const auto& spec = plan.schedule.spec;
    summary["schedule"] = json::object{
        {"arrival", to_string(spec.process)},
        {"rate", spec.stages.empty() ? json::value(spec.rate) : json::value(nullptr)},
        {"stages", spec.stages.empty() ? json::value(nullptr)
                                       : json::value(schedule::to_string(spec.stages))},
        {"burstiness", spec.burstiness},
        {"seed", spec.seed},
        {"arrivals", plan.schedule.offsets.size()},
        {"sha256", plan.schedule.sha256},
        {"shard", plan.shard
                      ? json::value(fmt::format("{}/{}", plan.shard->index, plan.shard->count))
                      : json::value(nullptr)}};
    json::array header_names;
    for (const auto& n : plan.header_names)
        header_names.emplace_back(n);
    summary["config"] = json::object{
        {"base_url", plan.endpoint.url()},
        {"endpoint", s.endpoint},
        {"model", s.model},
        {"prompts", plan.prompt_file ? json::value(s.prompts_file) : json::value("synthetic")},
        {"input_len", s.input_len},
        {"output_len", s.output_len},
        {"range_ratio", s.range_ratio},
        {"ignore_eos", s.ignore_eos},
        {"temperature", s.temperature ? json::value(*s.temperature) : json::value(nullptr)},
        {"timeout_s", std::chrono::duration<double>(plan.timeout).count()},
        {"header_names", std::move(header_names)}};
    auto connect_times = d.connect_times, tls_times = d.tls_times; // summarize sorts
    summary["connections"] =
        json::object{{"opened", d.opened},
                     {"reused", d.reused},
                     {"connect_s", to_json(summarize(connect_times, protocol_fractions))}};
    if (plan.endpoint.tls)
        summary["connections"].as_object()["tls_handshake_s"] =
            to_json(summarize(tls_times, protocol_fractions));
    summary["tls"] = json::object{
        {"enabled", plan.endpoint.tls},
        {"insecure", s.insecure},
        {"ca_file", s.ca_file.empty() ? json::value(nullptr) : json::value(s.ca_file)}};
    summary["interrupted"] = d.interrupted || result.interrupted;
    summary["command"] = "http";
    summary["command_line"] = job.command_line;
    if (char host[256] = {}; ::gethostname(host, sizeof host - 1) == 0)
        summary["host"] = host;
    if (telemetry.recorder) {
        // The window: the schedule's origin to the last request's end; per successful request
        // (completed without error), docs/telemetry.md.
        const double start_s = to_seconds(result.start);
        if (!telemetry.search)
            telemetry.recorder->stop(); // a last sample after the last request's end
        auto t = telemetry.recorder->window(start_s, std::max(d.end_s, start_s),
                                            {{}, {}, summary.at("completed").to_number<double>()});
        t["window_definition"] = "the schedule's origin to the last request's end, on pacer's "
                                 "clock (CLOCK_MONOTONIC)";
        t["requests_definition"] = "requests completed without error (summary `completed`)";
        summary["telemetry"] = std::move(t);
    }
    return summary;
}

// The figures of a run's summary: counts, throughput, latencies, goodput, energy.
void print_figures(const json::object& summary, std::size_t requests, bool slo) {
    const auto num = [&](const char* k) { return summary.at(k).to_number<double>(); };
    fmt::print("pacer http: {} requests, {} completed, {} failed, {} dropped in {:.3f} s\n",
               requests, summary.at("completed").to_number<std::uint64_t>(),
               summary.at("failed").to_number<std::uint64_t>(),
               summary.at("dropped").to_number<std::uint64_t>(), num("duration"));
    fmt::print("  request throughput {:.2f}/s, output {:.1f} tok/s\n", num("request_throughput"),
               num("output_throughput"));
    // A latency no request has (every one failed) is "–", never 0.
    const auto latency = [&](const char* label, const char* name, const char* anchor) {
        std::string line = fmt::format("  {} ms ", label);
        for (const char* stat : {"mean", "std", "median", "p90", "p95", "p99"}) {
            const auto& v = summary.at(fmt::format("{}_{}_ms", stat, name));
            line += fmt::format(" {} {}", stat,
                                v.is_number() ? fmt::format("{:.2f}", v.to_number<double>())
                                              : std::string("–"));
        }
        fmt::print("{}{}\n", line, anchor);
    };
    latency("TTFT", "ttft", " (from the schedule)");
    latency("TPOT", "tpot", "");
    latency("ITL ", "itl", "");
    latency("E2EL", "e2el", " (from the schedule)");
    if (slo)
        fmt::print("  goodput  {:.2f} requests/s\n", num("request_goodput"));
    if (const auto* t = summary.if_contains("telemetry")) {
        const auto& o = t->as_object();
        const auto val = [&](const char* k, const char* unit) {
            const auto& v = o.at(k);
            return v.is_number() ? fmt::format("{:.4g} {}", v.to_number<double>(), unit)
                                 : std::string("–");
        };
        if (const auto* e = o.if_contains("error"); e && e->is_string())
            fmt::print("  energy   {} (telemetry.jsonl: {} samples)\n", e->as_string().c_str(),
                       o.at("samples").to_number<std::uint64_t>());
        else
            fmt::print("  energy   {} per successful request ({} over {:.2f} s, mean {}, peak "
                       "{}; telemetry.jsonl: {} samples)\n",
                       val("j_per_request", "J"), val("energy_j", "J"),
                       o.at("window").at("duration_s").to_number<double>(),
                       val("mean_power_w", "W"), val("peak_power_w", "W"),
                       o.at("samples").to_number<std::uint64_t>());
    }
}

// The failed requests' errors, as `pacer run` prints its sessions': by kind, then one message
// of each kind.
void print_errors(const std::vector<metrics::llm_request>& records) {
    std::vector<std::pair<std::string, std::size_t>> kinds;
    std::map<std::string, std::string> example;
    for (const auto& r : records) {
        if (r.error.empty())
            continue;
        auto k = std::find_if(kinds.begin(), kinds.end(),
                              [&](const auto& x) { return x.first == r.error; });
        if (k == kinds.end())
            kinds.emplace_back(r.error, 1);
        else
            ++k->second;
        if (example[r.error].empty())
            example[r.error] = r.error_message.empty() ? r.error : r.error_message;
    }
    std::stable_sort(kinds.begin(), kinds.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string by_kind;
    for (const auto& [kind, n] : kinds)
        by_kind += fmt::format("{}{} {} request(s)", by_kind.empty() ? "" : ", ", kind, n);
    if (!by_kind.empty())
        fmt::print("  errors   by kind: {}\n", by_kind);
    for (const auto& [kind, n] : kinds)
        fmt::print("  error    {} ({} request(s)): {}\n", kind, n, example[kind]);
}

// Runs the plan's arrivals once and writes the result folder `out` (created here).
run_outcome run_once(const http_job& job, const http_plan& plan, const std::filesystem::path& out,
                     http_telemetry& telemetry, http_watch& watch) {
    const auto& s = job.options;
    const run_data d = run_requests(job, plan, out, telemetry, watch);
    const auto& records = d.records;
    bool kept = false;
    const json::object summary = summary_json(job, plan, d, telemetry, kept);

    std::string lines;
    for (const auto& r : records)
        lines += json_text(metrics::llm_request_json(r, d.result.start)) + "\n";
    runtime::write_new_file(out / "requests.jsonl", lines);
    runtime::write_new_file(out / "schedule.json",
                            schedule::to_json(plan.schedule.spec, plan.schedule.offsets));
    runtime::write_new_file(out / "summary.json", json_text(summary) + "\n");
    std::optional<std::filesystem::path> report, tables;
    if (!s.no_report && job.end.report)
        report = job.end.report(out);
    if (!s.export_format.empty() && job.end.tables)
        tables = job.end.tables(out, s.export_format);

    print_figures(summary, records.size(), !plan.slo.empty());
    print_errors(records);
    const auto unreached = unreachable(records);
    // A server nobody reached is the finding; the client's timing of requests that went nowhere
    // is not a verdict on anything (as `pacer serve` judges an unreachable level).
    fmt::print("  schedule {}\n", unreached ? "not judged: no request reached the server"
                                  : kept    ? "kept (dispatch lag within bounds)"
                                            : "NOT kept: the client fell behind (exit 3)");
    if (plan.endpoint.tls) {
        std::string line = tls_words(s);
        if (!d.tls_times.empty()) {
            auto tls_times = d.tls_times;
            const auto q = summarize(tls_times, protocol_fractions);
            line += fmt::format("; TLS handshake p50 {:.1f} ms p99 {:.1f} ms over {} connection(s)",
                                *q.at(0.50) * 1e3, *q.at(0.99) * 1e3, d.tls_times.size());
        }
        fmt::print("  tls      {}\n", line);
    }
    if (unreached)
        fmt::print(stderr, "pacer: cannot reach {}: {} (no request reached the server)\n",
                   plan.endpoint.url(), *unreached);
    fmt::print("  results  {}{}\n", out.string(), report ? ", " + report->string() : "");
    if (tables)
        fmt::print("  tables   {}\n", tables->string());
    const bool interrupted = d.interrupted || d.result.interrupted;
    // As `pacer run`, `serve` and `record` say it: the figures above are a part of the run.
    if (interrupted)
        fmt::print("  INTERRUPTED by a signal: the summary covers the arrivals dispatched until "
                   "then\n");

    run_outcome o;
    o.kept = kept;
    o.unreachable = unreached.has_value();
    o.interrupted = interrupted;
    o.failed = summary.at("failed").to_number<std::uint64_t>();
    o.good = summary.contains("goodput_requests")
                 ? summary.at("goodput_requests").to_number<std::uint64_t>()
                 : 0;
    o.scheduled = records.size();
    return o;
}

// What the probes of a capacity search showed beyond the search's own judgement, as
// capacity.json says it.
struct rate_search_log {
    json::array probes;
    bool client_limited = false, interrupted = false, unreachable = false;
    bool last_passed = false; // the last probe's own verdict
};

// One probe of the search: a whole run of its own folder at the try's rate.
capacity_search::level_outcome probe_rate(const http_job& job, http_plan& plan,
                                          const capacity_search::capacity_try& t,
                                          http_telemetry& telemetry, http_watch& watch,
                                          rate_search_log& log) {
    const auto& s = job.options;
    const double rate = t.value;
    const auto n = log.probes.size() + 1;
    auto spec = plan.schedule.spec;
    spec.rate = rate;
    schedule::validate(spec);
    plan.schedule = {spec, schedule::make_schedule(spec), {}};
    // Halving has gone below one request per run: the search cannot go lower.
    if (plan.schedule.offsets.empty()) {
        fmt::print("probe {}: {:g} requests/s gives no arrival: the search stops here\n", n, rate);
        return {.nothing_to_run = true};
    }
    plan.schedule.sha256 = schedule::schedule_sha256(plan.schedule.offsets);
    take_arrivals(plan);
    const auto dir = plan.output / fmt::format("probe-{:02}-rate-{:g}", n, rate);
    fmt::print("probe {}: {:g} requests/s{}\n", n, rate,
               t.kind == capacity_search::try_kind::search
                   ? std::string()
                   : fmt::format(" ({} {})", capacity_search::to_string(t.kind), t.attempt));
    const run_outcome o = run_once(job, plan, dir, telemetry, watch);
    const double fraction =
        o.scheduled ? static_cast<double>(o.good) / static_cast<double>(o.scheduled) : 0;
    log.last_passed = o.kept && !o.interrupted && fraction >= s.goodput_fraction;
    log.client_limited = log.client_limited || (!o.kept && !o.unreachable);
    log.unreachable = log.unreachable || o.unreachable;
    log.interrupted = log.interrupted || o.interrupted;
    json::object p{
        {"rate", rate},       {"schedule_kept", o.kept},   {"goodput_fraction", fraction},
        {"failed", o.failed}, {"passed", log.last_passed}, {"folder", dir.filename().string()}};
    if (s.confirm > 0 || s.verify_repeats > 0) {
        p["kind"] = capacity_search::to_string(t.kind);
        p["attempt"] = t.attempt;
    }
    log.probes.push_back(std::move(p));
    return {.interrupted = o.interrupted,
            .unreachable = o.unreachable,
            .valid = o.kept,
            .slo_met = fraction >= s.goodput_fraction};
}

// capacity.json: the answer, the criterion, how the search ended and every probe; with
// --confirm or --verify-repeats also the verification, whether the boundary held and the notes.
json::object capacity_doc(const http_job& job, const capacity_search::capacity_search_result& r,
                          rate_search_log& log, std::optional<double> pass,
                          std::optional<double> fail) {
    const auto& s = job.options;
    json::object doc;
    doc["capacity_rps"] = pass ? json::value(*pass) : json::value(nullptr);
    doc["first_failing_rps"] = fail ? json::value(*fail) : json::value(nullptr);
    doc["criterion"] = json::object{
        {"goodput", s.goodput}, {"goodput_fraction", s.goodput_fraction}, {"schedule_kept", true}};
    doc["client_limited"] = log.client_limited;
    doc["interrupted"] = log.interrupted;
    doc["unreachable"] = log.unreachable;
    doc["probes"] = std::move(log.probes);
    if (s.confirm > 0 || s.verify_repeats > 0) {
        doc["verification"] = json::object{
            {"capacity_rate", capacity_search::verification_json(
                                  r.capacity_check, capacity_search::value_kind::rate)},
            {"first_failing_rate", capacity_search::verification_json(
                                       r.failing_check, capacity_search::value_kind::rate)}};
        doc["boundary_held"] =
            r.boundary_held ? json::value(*r.boundary_held) : json::value(nullptr);
        json::array notes;
        for (const auto& n : r.notes)
            notes.emplace_back(n);
        doc["notes"] = std::move(notes);
    }
    doc["command"] = "http";
    doc["command_line"] = job.command_line;
    return doc;
}

// --find-capacity: the highest rate whose run keeps its schedule and meets the SLOs for
// `goodput_fraction` of its requests: sweep's capacity search over rates (from --rate, double
// while probes pass or halve while they fail, at most 10 times, then `capacity_steps`
// bisections; --confirm and --verify-repeats as serve's). Each probe is a whole run of its own
// folder.
runtime::run_verdict find_capacity(const http_job& job, http_telemetry& telemetry,
                                   http_watch& watch) {
    const auto& s = job.options;
    http_plan plan = job.plan;
    job.create_folder(plan.output);
    telemetry.start(plan.output); // one baseline and one telemetry.jsonl for every probe
    rate_search_log log;
    const auto r = capacity_search::search_capacity(
        capacity_search::rate_space(schedule::max_rate, max_rate_moves, s.capacity_steps),
        plan.schedule.spec.rate,
        {s.confirm, s.verify_repeats, capacity_search::client_policy::counts_as_miss},
        [&](const capacity_search::capacity_try& t) {
            return probe_rate(job, plan, t, telemetry, watch, log);
        });
    // A search probe that stopped the search (a signal, no server reached) is not judged by it;
    // its own verdict still bounds the answer, as it always has in capacity.json.
    std::optional<double> pass = r.good, fail = r.bad;
    if ((r.limited_by == capacity_search::limit::interrupted ||
         r.limited_by == capacity_search::limit::unreachable) &&
        !r.probes.empty() && r.probes.back().run.kind != capacity_search::try_kind::verify) {
        const double rate = r.probes.back().run.value;
        if (log.last_passed)
            pass = std::max(pass.value_or(rate), rate);
        else
            fail = std::min(fail.value_or(rate), rate);
    }
    const json::object doc = capacity_doc(job, r, log, pass, fail);
    runtime::write_new_file(plan.output / "capacity.json", json_text(doc) + "\n");
    // The search's own page (the probes; each probe's folder has its own).
    if (!s.no_report && job.end.report)
        if (const auto report = job.end.report(plan.output))
            fmt::print("  report   {}\n", report->string());
    if (!s.export_format.empty() && job.end.tables)
        if (const auto tables = job.end.tables(plan.output, s.export_format))
            fmt::print("  tables   {}\n", tables->string());
    for (const auto& note : r.notes)
        fmt::print("  note     {}\n", note);
    if (r.boundary_held)
        fmt::print("  boundary {}\n",
                   *r.boundary_held ? "held on verification" : "did NOT hold on verification");
    fmt::print("pacer http --find-capacity: {}{}\n",
               pass ? fmt::format("{:g} requests/s meet the SLOs", *pass)
                    : std::string("no probed rate meets the SLOs"),
               log.client_limited
                   ? "; a probe did not keep its schedule (the client fell behind, exit 3): its "
                     "rate was not measurable"
               : log.unreachable ? "; no request reached the server: the search stopped (exit 4)"
                                 : "");
    if (log.interrupted)
        fmt::print("INTERRUPTED by a signal: the search stopped at the probe it was running\n");
    runtime::run_verdict v;
    v.interrupted = log.interrupted;
    v.client_fell_behind = log.client_limited;
    v.unreachable = log.unreachable; // the search stopped there
    return v;
}

} // namespace

runtime::run_verdict execute(const http_job& job) {
    const auto& s = job.options;
    // The recorder's destructor stops its threads however the run ends.
    http_telemetry telemetry{job.telemetry, s.find_capacity};
    http_watch watch(s);
    // --metrics-listen (bound by open_telemetry): the running run's (or probe's) totals, on a
    // thread of its own, for the whole command (a capacity search's probes one after another),
    // then the final totals until a watcher scraped them.
    const auto page = [&watch] {
        return http_metrics_text(watch.progress.snapshot(clock::now()),
                                 watch.offered_rate.load(std::memory_order_relaxed));
    };
    const pacer::telemetry::served_page served(job.listener.get(), page); // while `watch` lives
    if (job.listener) {
        fmt::print(stderr, "pacer: serving the live counters at {} (--metrics-listen)\n",
                   job.listener->url());
        std::fflush(stderr);
    }
    const auto finish = [&] {
        if (job.listener) {
            job.listener->serve_final(page());
            pacer::telemetry::finish_listening(job.listener.get());
        }
    };
    if (s.find_capacity) {
        const auto v = find_capacity(job, telemetry, watch);
        finish();
        return v;
    }
    const run_outcome o = run_once(job, job.plan, job.plan.output, telemetry, watch);
    finish();
    runtime::run_verdict v;
    v.interrupted = o.interrupted;
    v.client_fell_behind = !o.kept;
    v.server_failed = o.failed > 0;
    v.unreachable = o.unreachable;
    return v;
}

} // namespace pacer::http

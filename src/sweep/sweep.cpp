// The concurrency sweep of `pacer serve`: levels one after another, each judged by the
// client's timing, the server's failures and the SLOs; the capacity search; the summaries.

#include <pacer/core/json_text.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/metrics/realtime.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/sweep/sweep.hpp>
#include <pacer/telemetry/recorder.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include "sweep_run.hpp"
#include <algorithm>
#include <csignal>
#include <stdexcept>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace pacer::sweep {

namespace fs = std::filesystem;
namespace json = boost::json;

void sweep_observer::sweep_starting() {}
void sweep_observer::sweep_ended() {}
session::live_counters* sweep_observer::level_starting(const std::string&, double) {
    return nullptr;
}
void sweep_observer::level_ended() {}
void sweep_observer::settling(double) {}
void sweep_observer::canary_baseline(std::optional<double>) {}
void sweep_observer::warmup_done(std::size_t, const level_run&) {}
void sweep_observer::levels_starting() {}
void sweep_observer::run_done(const level_run&) {}
void sweep_observer::stopped_unreachable() {}

std::size_t wire_sample_rate(std::optional<protocol::realtime_protocol> realtime) {
    return realtime == protocol::realtime_protocol::openai ? protocol::openai_sample_rate
                                                           : protocol::input_sample_rate;
}

namespace {

// A level's folder: new, with its parents (the sweep's folder exists; repeat-<r>/ may not).
void create_level_dir(const fs::path& dir) {
    if (!fs::create_directories(dir))
        throw std::runtime_error(fmt::format("{} already exists", dir.string()));
}

std::optional<double> p99_of(std::vector<double> v) {
    return percentile(v, 0.99);
}

// What a realtime session's evaluation needs: the protocol, its turns, the input's length, the
// output rate the session asked for and the player's reserve.
metrics::realtime_context realtime_context(const sweep_options& o, double input_duration_s) {
    metrics::realtime_context c;
    c.protocol = *o.realtime;
    c.turns = o.turns;
    c.input_duration_s = input_duration_s;
    c.output_sample_rate = static_cast<double>(protocol::openai_sample_rate);
    c.startup_reserve_s = o.startup_reserve_ms / 1e3;
    c.chunk_s = to_seconds(o.chunk);
    return c;
}

json::object checks_json(const sweep_options& o) {
    return validity_checks_json(o.limits, o.protocol,
                                o.realtime ? std::optional(realtime_context(o, 0)) : std::nullopt);
}

// A level's (and the sweep's) record of the realtime protocol's settings.
void add_realtime_config(json::object& obj, const sweep_options& o) {
    obj["turns"] = o.realtime == protocol::realtime_protocol::openai ? json::value(o.turns_name)
                                                                     : json::value(nullptr);
    obj["model"] = o.model.empty() ? json::value(nullptr) : json::value(o.model);
    obj["wire_sample_rate"] = wire_sample_rate(o.realtime);
    obj["resampler"] = wire_sample_rate(o.realtime) != protocol::input_sample_rate
                           ? "libsamplerate SRC_SINC_BEST_QUALITY"
                           : "none";
}

// Waits `d` unless SIGINT or SIGTERM arrives first (true then). Between levels no session
// context handles signals, so the pause must: Ctrl-C still ends the sweep with its summary.
bool idle_interrupted(duration d) {
    boost::asio::io_context io;
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    boost::asio::steady_timer timer(io, std::chrono::duration_cast<std::chrono::nanoseconds>(d));
    bool interrupted = false;
    signals.async_wait([&](const boost::system::error_code& ec, int) {
        if (!ec) {
            interrupted = true;
            timer.cancel();
        }
    });
    timer.async_wait([&](const boost::system::error_code&) { signals.cancel(); });
    io.run();
    return interrupted;
}

constexpr auto server_stats_timeout = std::chrono::milliseconds(2000);

// The server's own view of a run: its stats endpoint read after the run (`?reset=1` before it
// started the window). A server that does not answer, or not with JSON, is recorded, never fatal.
json::object read_server_stats(const sweep_options& s) {
    json::object o{{"url", s.server_stats_url}, {"stats", nullptr}, {"error", nullptr}};
    const auto got =
        transport::http_get(*s.server_stats, s.server_stats->target(), server_stats_timeout);
    if (!got.ok()) {
        o["error"] = got.error.empty() ? fmt::format("HTTP {}", got.status) : got.error;
        return o;
    }
    boost::system::error_code ec;
    auto v = json::parse(got.body, ec);
    if (ec || !v.is_object())
        o["error"] = "the answer is not a JSON object";
    else
        o["stats"] = std::move(v);
    return o;
}

// The client's unit lag beside the server's own unit latency (docs/serving.md): on loopback the
// difference is the network and the client's receive path, a few milliseconds.
json::object server_view(const json::value& aggregate, const json::object& server_stats) {
    json::object v;
    const auto& stats = server_stats.at("stats");
    for (const char* q : {"p50", "p95", "max"}) {
        boost::system::error_code ec; // a missing member is no figure, not an error
        const auto* client = aggregate.find_pointer(fmt::format("/units/unit_lag_s/{}", q), ec);
        const auto* server = stats.find_pointer(fmt::format("/unit_latency_s/{}", q), ec);
        const bool both = client && client->is_number() && server && server->is_number();
        v[fmt::format("client_unit_lag_{}_s", q)] =
            client && client->is_number() ? *client : json::value(nullptr);
        v[fmt::format("server_unit_latency_{}_s", q)] =
            server && server->is_number() ? *server : json::value(nullptr);
        v[fmt::format("difference_{}_s", q)] =
            both ? json::value(client->to_number<double>() - server->to_number<double>())
                 : json::value(nullptr);
    }
    return v;
}

// Why no session reached the server, from the sessions' failures (their codes; the errors a
// level counts are the messages its metrics read from the traces).
std::optional<std::string> unreachable(const std::vector<session::session_result>& sessions) {
    std::vector<metrics::connect_outcome> attempts;
    for (const auto& x : sessions)
        attempts.push_back({x.admitted, x.rejected, x.failures});
    return metrics::unreachable_reason(attempts);
}

// What the session runner is given for one run of a level (or a warm-up), its progress line
// started.
session::run_options level_runner_options(const sweep_options& s, sweep_observer& observer,
                                          const fs::path& dir, std::size_t concurrency,
                                          std::size_t repeat, bool warmup) {
    session::run_options ro;
    ro.sessions = concurrency;
    ro.threads = s.threads;
    ro.endpoint = s.endpoint;
    // A one-session warm-up streams the first input (the reference's); a larger one, like a level.
    const bool first_input_only = warmup && concurrency == 1;
    ro.inputs = s.inputs;
    if (first_input_only)
        ro.inputs.resize(1);
    ro.timeout = s.timeout;
    ro.trace_root = dir;
    ro.stagger = warmup ? duration::zero() : from_seconds(s.stagger_ms / 1e3);
    ro.start_gate_lead = std::chrono::milliseconds(200);
    if (s.pacing == "lockstep" && !warmup)
        ro.lockstep_unit_bytes = static_cast<std::size_t>(s.profile->unit_ms) * 32;
    ro.profile = s.profile;
    ro.realtime = s.realtime;
    ro.turns = s.turns;
    ro.model = s.model;
    ro.chunk = s.chunk;
    ro.omni = s.omni;
    ro.conversation = s.conversation;
    if (s.realtime) {
        ro.wire_inputs = s.wire_inputs;
        if (first_input_only)
            ro.wire_inputs.resize(1);
    }
    {
        // ETA: the longest input after the common start (0.2 s after the last is ready).
        double longest = 0;
        for (std::size_t i = 0; i < ro.inputs.size(); ++i)
            longest = std::max(longest, s.input_duration_s[i]);
        ro.live = observer.level_starting(
            s.canary        ? std::string("recovery canary c1")
            : warmup        ? fmt::format("warmup c{}", concurrency)
            : s.repeats > 1 ? fmt::format("level c{} (repeat {})", concurrency, repeat)
                            : fmt::format("level c{}", concurrency),
            longest + 0.2 + to_seconds(ro.stagger));
    }
    return ro;
}

// Each session of a run judged from its files on disk, as `pacer replay` would read them (after
// the run's last session ended, so the metrics cannot delay a send), into `run`'s sessions
// (and a conversation's turns). Returns the longest input a session streamed.
double evaluate_sessions(const sweep_options& s, const fs::path& dir,
                         const session::run_options& ro, const session::run_outcome& outcome,
                         level_run& run) {
    metrics::session_params context;
    context.startup_reserve_s = s.startup_reserve_ms / 1e3;
    double input_max = 0;
    for (std::size_t i = 0; i < run.concurrency; ++i) {
        const auto folder = dir / trace::session_folder_name(static_cast<std::uint32_t>(i));
        context.input_duration_s = s.input_duration_s[i % ro.inputs.size()];
        if (s.conversation && i < outcome.sessions.size()) {
            // A conversation's input is what the session's grid carried: its own pause draws
            // and barge-ins decided how many appends that was.
            const auto& r = outcome.sessions[i];
            context.input_duration_s =
                static_cast<double>(s.conversation.streamed_bytes(
                    ro.inputs[i % ro.inputs.size()].size(), r.expected_appends)) /
                static_cast<double>(protocol::input_bytes_per_second);
            run.turns.push_back(r.turns);
        }
        input_max = std::max(input_max, *context.input_duration_s);
        std::optional<std::string> trace, receipts;
        std::vector<std::string> extra;
        try {
            trace = runtime::read_file_if_exists(folder / "trace.jsonl");
            receipts = runtime::read_file_if_exists(folder / "input-send-receipts.json");
        } catch (const std::exception& e) {
            extra.emplace_back(e.what());
        }
        if (i < outcome.sessions.size() && !outcome.sessions[i].trace_error.empty())
            extra.push_back("trace: " + outcome.sessions[i].trace_error);
        const auto trace_text = trace ? std::optional<std::string_view>(*trace) : std::nullopt;
        const auto receipts_text =
            receipts ? std::optional<std::string_view>(*receipts) : std::nullopt;
        if (s.realtime) {
            run.realtime_sessions.push_back(metrics::evaluate_realtime_session(
                static_cast<std::uint32_t>(i), trace_text, receipts_text,
                realtime_context(s, *context.input_duration_s), extra));
            run.sessions.push_back(run.realtime_sessions.back().base);
            continue;
        }
        run.sessions.push_back(metrics::evaluate_session(
            static_cast<std::uint32_t>(i), trace_text, receipts_text, *s.profile, context, extra));
    }
    return input_max;
}

// The run judged: the client's timing (valid, or the problems returned) and what the server
// did (failures, rejections, the errors, and whether it could be reached).
std::vector<std::string> judge_run(const sweep_options& s, const session::run_outcome& outcome,
                                   std::optional<double> lag_p99, level_run& run) {
    run.loop_lag_p99_s = lag_p99.value_or(0);
    auto problems = validity_problems(s.limits, lag_p99, run.sessions);
    run.valid = problems.empty() && !outcome.interrupted;
    std::vector<std::vector<std::string>> session_errors;
    bool any_admitted = false;
    for (const auto& x : run.sessions) {
        session_errors.push_back(x.errors);
        any_admitted = any_admitted || x.admitted.admitted;
        run.failed += x.status == metrics::session_status::failed;
        run.rejected += x.status == metrics::session_status::rejected;
    }
    run.client_fell_behind = any_admitted && !problems.empty();
    run.server_failed = run.failed + run.rejected > 0;
    run.errors = metrics::count_messages(session_errors);
    if (const auto reason = unreachable(outcome.sessions))
        run.unreachable = fmt::format("cannot connect to {}: {}", s.url, *reason);
    return problems;
}

// What a run's summary.json says of how it ran and how it was judged: its settings, the
// client's timing and its problems, the checks, why the server was unreachable, the errors.
json::object run_summary_head(const sweep_options& s, const session::run_options& ro,
                              const session::run_outcome& outcome, const level_run& run,
                              const std::vector<std::string>& problems, std::vector<double> lags,
                              double input_max, bool warmup) {
    json::object o;
    o["concurrency"] = run.concurrency;
    o["repeat"] = run.repeat;
    o["warmup"] = warmup;
    o["input_duration_s"] = input_max;
    // `pacer replay` of a session folder reads this (a conversation's sessions each have their
    // own length: replay counts what each trace carried).
    if (ro.inputs.size() == 1 && !s.conversation)
        o["config"] = json::object{{"input_duration_s", input_max}};
    if (s.conversation)
        o["scenario"] = s.conversation.name();
    o["common_start_s"] =
        outcome.common_start_s ? json::value(*outcome.common_start_s) : json::value(nullptr);
    o["configured_sessions"] = outcome.ready_sessions;
    o["profile"] = s.realtime ? json::value(nullptr) : json::value(s.profile->name);
    o["protocol"] = s.protocol;
    if (s.realtime)
        add_realtime_config(o, s);
    o["pacing"] = ro.lockstep_unit_bytes ? "lockstep" : "realtime";
    o["playback_startup_reserve_s"] = s.startup_reserve_ms / 1e3;
    o["stagger_s"] = to_seconds(ro.stagger);
    o["loop_lag_s"] = metrics::distribution_json(std::move(lags));
    o["loop_lag_limit_s"] = s.limits.loop_lag_ms / 1e3;
    o["send_lateness_limit_s"] = s.limits.send_lateness_ms / 1e3;
    o["client_timing_valid"] = run.valid;
    json::array reasons;
    for (const auto& p : problems)
        reasons.emplace_back(p);
    if (outcome.interrupted)
        reasons.emplace_back("interrupted by a signal");
    o["client_timing_problems"] = std::move(reasons);
    o["validity_checks"] = checks_json(s);
    o["unreachable"] = run.unreachable ? json::value(*run.unreachable) : json::value(nullptr);
    json::array errors;
    for (const auto& e : run.errors)
        errors.push_back({{"message", e.what}, {"sessions", e.sessions}});
    o["errors"] = std::move(errors); // distinct errors, most frequent first
    o["traces_dropped"] = s.drop_traces;
    return o;
}

// What a run's summary.json says it measured: every session, the aggregate and its SLOs, the
// telemetry of the run's window (from its common start to `ended_s`, its last session's end)
// and the server's own stats.
void add_run_figures(json::object& o, const sweep_options& s, const level_run& run,
                     const session::run_outcome& outcome, double ended_s) {
    json::array sessions;
    if (s.realtime)
        for (const auto& x : run.realtime_sessions)
            sessions.push_back(x.to_json());
    else
        for (const auto& x : run.sessions)
            sessions.push_back(x.to_json());
    o["sessions"] = std::move(sessions);
    o["aggregate"] = s.realtime ? metrics::aggregate_realtime_level(run.realtime_sessions)
                                : metrics::aggregate_level(run.sessions, *s.profile);
    if (s.conversation) // per-turn figures, as `pacer run`'s summary.json `turns`
        o["aggregate"].as_object()["turns"] = metrics::turn_metrics_json(run.turns);
    if (!s.slos.empty())
        o["slo"] = metrics::evaluate_slos(s.slos, o.at("aggregate").as_object());
    if (s.telemetry && outcome.common_start_s) {
        // The run's window and what it carried (session-seconds of input, seconds of output
        // audio received).
        double input_s = 0, output_s = 0;
        for (const auto& x : run.sessions)
            if (x.admitted.admitted) {
                input_s += x.session.input_duration_s;
                output_s += x.session.output_duration_s;
            }
        o["telemetry"] =
            s.telemetry->window(*outcome.common_start_s, ended_s, {input_s, output_s, {}});
    }
    if (s.server_stats) {
        auto stats = read_server_stats(s);
        o["server_view"] = server_view(o.at("aggregate"), stats);
        o["server_stats"] = std::move(stats);
    }
}

// What the run cost the client: wall time, CPU (`cpu_before`: the process's before the run),
// memory, the trace writer's bytes and its channel's waits.
json::object run_resources(const session::run_outcome& outcome, const runtime::process_usage& usage,
                           double cpu_before) {
    const double wall = outcome.wall_s;
    const auto waits = metrics::sum_trace_waits(outcome.sessions);
    return json::object{{"wall_s", wall},
                        {"client_cpu_s", usage.cpu_s - cpu_before},
                        {"client_cpu_cores", wall > 0 ? (usage.cpu_s - cpu_before) / wall : 0.0},
                        {"writer_cpu_s", outcome.writer_cpu_s},
                        {"peak_rss_bytes", usage.peak_rss_bytes},
                        {"trace_bytes", outcome.writer.bytes},
                        {"trace_channel_waits", waits.waits},
                        {"trace_channel_wait_s", waits.wait_s}};
}

level_run run_level(const sweep_options& s, sweep_observer& observer, const fs::path& dir,
                    std::size_t concurrency, std::size_t repeat, bool warmup) {
    create_level_dir(dir);
    if (s.server_stats) // the window starts now: what the server did before is not this run's
        transport::http_get(*s.server_stats, s.server_stats->target_with("reset=1"),
                            server_stats_timeout);
    auto ro = level_runner_options(s, observer, dir, concurrency, repeat, warmup);
    const double cpu_before = runtime::read_process_usage().cpu_s;
    auto outcome = session::run_duplex(ro);
    const double ended_s = to_seconds(clock::now()); // the last session's end: run_duplex joined it
    if (ro.live)
        observer.level_ended(); // the terminal line is cleared before the level's row
    const auto usage = runtime::read_process_usage();

    level_run run;
    run.concurrency = concurrency;
    run.repeat = repeat;
    run.interrupted = outcome.interrupted;
    const double input_max = evaluate_sessions(s, dir, ro, outcome, run);
    std::vector<double> lags;
    for (const auto& l : outcome.loop_lag_s)
        lags.insert(lags.end(), l.begin(), l.end());
    const auto problems = judge_run(s, outcome, p99_of(lags), run);
    run.summary =
        run_summary_head(s, ro, outcome, run, problems, std::move(lags), input_max, warmup);
    add_run_figures(run.summary, s, run, outcome, ended_s);
    run.summary["resources"] = run_resources(outcome, usage, cpu_before);
    if (s.conversation) // every session's turns, one line each (docs/scenarios.md)
        metrics::write_turn_rows(dir / "turns.jsonl", outcome.sessions);
    runtime::write_new_file(dir / "summary.json", json_text(run.summary) + "\n");
    if (s.drop_traces) {
        // Last: every file of the level that reads the traces is written. Receipts and the
        // summaries stay.
        for (std::size_t i = 0; i < concurrency; ++i) {
            std::error_code ignored;
            fs::remove(dir / trace::session_folder_name(static_cast<std::uint32_t>(i)) /
                           "trace.jsonl",
                       ignored);
        }
    }
    return run;
}

// A level's folder name for why it runs: c<level>, c<level>-confirm<n>, c<level>-verify<n>.
std::string run_folder_name(const capacity_search::level_try& t) {
    switch (t.kind) {
    case capacity_search::try_kind::search:
        return fmt::format("c{}", t.level);
    case capacity_search::try_kind::confirm:
        return fmt::format("c{}-confirm{}", t.level, t.attempt);
    case capacity_search::try_kind::verify:
        return fmt::format("c{}-verify{}", t.level, t.attempt);
    }
    return fmt::format("c{}", t.level);
}

// Runs every repeat of one level; `before_run` is called before each (the settle pause and the
// wait for the server's recovery, which it records) and returns true when a signal came instead.
template <class BeforeRun>
level_result run_plan_level(const sweep_options& s, sweep_observer& observer, const fs::path& out,
                            const capacity_search::level_try& t, std::optional<double> baseline_s,
                            BeforeRun&& before_run) {
    const std::size_t c = t.level;
    level_result lr;
    lr.concurrency = c;
    lr.run = t;
    lr.folder = run_folder_name(t);
    for (int n = 2;
         fs::exists(out / lr.folder) || (s.repeats > 1 && fs::exists(out / "repeat-1" / lr.folder));
         ++n) // a level the search comes back to in the same role
        lr.folder = fmt::format("{}-{}", run_folder_name(t), n);
    std::vector<metrics::level_session> pooled;
    std::vector<metrics::realtime_level_session> pooled_realtime;
    std::vector<std::vector<trace::turn_result>> pooled_turns;
    double lag_p99_max = 0;
    for (std::size_t r = 1; r <= s.repeats; ++r) {
        std::optional<recovery_record> recovery;
        if (before_run(&recovery)) {
            lr.interrupted = true;
            break;
        }
        const fs::path dir =
            s.repeats > 1 ? out / fmt::format("repeat-{}", r) / lr.folder : out / lr.folder;
        auto run = run_level(s, observer, dir, c, r, false);
        if (recovery) {
            lr.recovered = lr.recovered && recovery->recovered;
            run.summary["recovery"] = recovery_json(*recovery, baseline_s);
            run.recovery = std::move(recovery);
        }
        run.summary["folder"] = lr.folder;
        run.summary["try"] = to_string(t.kind);
        run.summary["attempt"] = t.attempt;
        observer.run_done(run);
        lr.valid = lr.valid && run.valid;
        lr.client_fell_behind = lr.client_fell_behind || run.client_fell_behind;
        lr.server_failed = lr.server_failed || run.server_failed;
        lr.unreachable = lr.unreachable || run.unreachable.has_value();
        lag_p99_max = std::max(lag_p99_max, run.loop_lag_p99_s);
        pooled.insert(pooled.end(), run.sessions.begin(), run.sessions.end());
        pooled_realtime.insert(pooled_realtime.end(), run.realtime_sessions.begin(),
                               run.realtime_sessions.end());
        pooled_turns.insert(pooled_turns.end(), run.turns.begin(), run.turns.end());
        lr.interrupted = run.interrupted;
        lr.runs.push_back(std::move(run));
        if (lr.interrupted || lr.unreachable)
            break;
    }
    if (lr.runs.empty())
        lr.valid = false; // interrupted before it ran: no evidence either way
    lr.entry["concurrency"] = c;
    lr.entry["try"] = to_string(t.kind);
    lr.entry["attempt"] = t.attempt;
    lr.entry["folder"] = lr.folder;
    lr.entry["second_try"] =
        t.kind != capacity_search::try_kind::search; // kept for readers of earlier results
    lr.entry["repeats"] = lr.runs.size();
    lr.entry["client_timing_valid"] = lr.valid;
    lr.entry["server_recovered"] = lr.recovered;
    lr.entry["loop_lag_p99_s"] = lag_p99_max;
    auto aggregate = s.realtime ? metrics::aggregate_realtime_level(pooled_realtime)
                                : metrics::aggregate_level(pooled, *s.profile);
    if (s.conversation)
        aggregate["turns"] = metrics::turn_metrics_json(pooled_turns);
    if (!s.slos.empty()) {
        auto slo = metrics::evaluate_slos(s.slos, aggregate);
        lr.slo_met = slo.at("met").as_bool();
        lr.entry["slo"] = std::move(slo);
    }
    lr.entry["aggregate"] = std::move(aggregate);
    return lr;
}

// Each overload of the search (a level that missed its SLOs) and the wait that followed it: the
// next run's, or `closing` after the last run.
std::vector<overload_record> overloads(const std::vector<level_result>& levels,
                                       const std::optional<recovery_record>& closing) {
    std::vector<overload_record> list;
    for (std::size_t i = 0; i < levels.size(); ++i) {
        if (levels[i].slo_met || levels[i].runs.empty())
            continue;
        overload_record o{levels[i].concurrency, levels[i].folder, closing};
        if (i + 1 < levels.size() && !levels[i + 1].runs.empty())
            o.after = levels[i + 1].runs.front().recovery;
        list.push_back(std::move(o));
    }
    return list;
}

} // namespace

namespace detail {

level_run run_once(const sweep_options& s, sweep_observer& observer, const fs::path& dir,
                   std::size_t concurrency, std::size_t repeat, bool warmup) {
    return run_level(s, observer, dir, concurrency, repeat, warmup);
}

bool idle(duration d) {
    return idle_interrupted(d);
}

} // namespace detail

sweep_result run_sweep(const sweep_options& s, const fs::path& out, sweep_observer& observer) {
    sweep_result result;
    bool& interrupted = result.interrupted;
    // The settle pause before every run but the first (a real server drains its queues and
    // frees the previous run's sessions), then the wait for its recovery before each level's
    // run (`--recovery`); a signal during either ends the sweep.
    bool first_run = true;
    std::optional<detail::recovery_watch> watch;
    if (s.recovery.on())
        watch.emplace(s, out, observer);
    auto before_run = [&](std::optional<recovery_record>* recovery = nullptr) {
        if (std::exchange(first_run, false))
            return false;
        if (s.settle > duration::zero()) {
            observer.settling(to_seconds(s.settle));
            if (idle_interrupted(s.settle))
                return true;
        }
        if (!watch || !recovery)
            return false;
        *recovery = watch->wait();
        return (*recovery)->interrupted;
    };
    for (std::size_t i = 1; i <= s.warmup_runs && !interrupted; ++i) {
        if (before_run()) {
            interrupted = true;
            break;
        }
        auto run =
            run_level(s, observer, out / fmt::format("warmup-{}", i), s.warmup_level, 0, true);
        observer.warmup_done(i, run);
        interrupted = run.interrupted;
    }
    if (s.warm_until_stable && s.telemetry && s.telemetry->sampling() && !interrupted) {
        // Back-to-back warm-ups until the GPUs are steady (docs/telemetry.md), judged on the
        // samples since the first of them began, after each run.
        if (before_run())
            interrupted = true;
        const double since = to_seconds(clock::now());
        telemetry::stability_verdict verdict;
        std::size_t runs = 0;
        while (!interrupted) {
            ++runs;
            const std::size_t i = s.warmup_runs + runs;
            auto run =
                run_level(s, observer, out / fmt::format("warmup-{}", i), s.warmup_level, 0, true);
            observer.warmup_done(i, run);
            interrupted = run.interrupted;
            const auto samples = s.telemetry->sampling()->samples();
            verdict = telemetry::judge_stability(samples, since, to_seconds(clock::now()),
                                                 *s.warm_until_stable);
            if (verdict.stable || verdict.gave_up)
                break;
        }
        if (runs > 0)
            result.warm_until_stable =
                telemetry::stability_json(*s.warm_until_stable, verdict, runs);
        first_run = true; // the first level follows at once: the GPUs stay warm
    }
    std::optional<double> baseline;
    if (watch && !interrupted) // the unloaded server's canary, before any level loads it
        observer.canary_baseline(baseline = watch->measure_baseline());
    observer.levels_starting();
    auto& results = result.levels;
    auto probe = [&](const capacity_search::level_try& t) -> const level_result& {
        results.push_back(run_plan_level(s, observer, out, t, baseline, before_run));
        interrupted = interrupted || results.back().interrupted;
        return results.back();
    };
    if (!interrupted && s.find_capacity) {
        result.capacity =
            capacity_search::search_capacity(s.capacity, [&](const capacity_search::level_try& t) {
                const auto& r = probe(t);
                return capacity_search::level_outcome{r.interrupted, r.unreachable, r.valid,
                                                      r.slo_met,     false,         r.recovered};
            });
        // How the server held up: the wait after the last run too, when it overloaded.
        std::optional<recovery_record> closing;
        if (watch && !interrupted && !results.empty() && !results.back().slo_met) {
            closing = watch->wait();
            interrupted = closing->interrupted;
        }
        result.recovery =
            overloads_json(s.recovery, baseline, s.stats_pointer, overloads(results, closing));
    } else if (!s.find_capacity) {
        for (auto c : s.levels) {
            if (interrupted)
                break;
            if (probe(capacity_search::level_try{c, capacity_search::try_kind::search, 1})
                    .unreachable) {
                observer.stopped_unreachable();
                break;
            }
        }
    }
    for (const auto& r : results) {
        result.all_valid = result.all_valid && r.valid;
        result.client_fell_behind = result.client_fell_behind || r.client_fell_behind;
        // A capacity search drives the server past its capacity on purpose: the failures of
        // the levels beyond it are the search's evidence, not a failed command.
        result.server_failed =
            result.server_failed || (s.find_capacity ? r.unreachable : r.server_failed);
    }
    return result;
}

json::object config_json(const sweep_options& s, std::span<const std::size_t> levels) {
    json::array audio, plan;
    for (const auto& a : s.audio)
        audio.emplace_back(a);
    for (auto c : levels)
        plan.push_back(c);
    json::object c{
        {"url", s.url},
        {"audio", std::move(audio)},
        {"profile", s.realtime ? json::value(nullptr) : json::value(s.profile->name)},
        {"protocol", s.protocol},
        {"levels", std::move(plan)},
        {"warmup_runs", s.warmup_runs},
        {"warmup_level", s.warmup_level},
        {"settle_s", to_seconds(s.settle)},
        {"server_stats", s.server_stats ? json::value(s.server_stats_url) : json::value(nullptr)},
        {"repeats", s.repeats},
        {"stagger_ms", s.stagger_ms},
        {"pacing", s.pacing},
        {"startup_reserve_ms", s.startup_reserve_ms},
        {"timeout_s", to_seconds(s.timeout)},
        {"threads", s.threads},
        {"loop_lag_limit_ms", s.limits.loop_lag_ms},
        {"send_lateness_limit_ms", s.limits.send_lateness_ms},
        {"start_lead_s", 0.2},
        {"drop_traces", s.drop_traces}};
    if (s.audio.empty())
        c["silence"] = s.silence;
    if (s.conversation)
        c["scenario"] = s.conversation.name();
    if (s.realtime)
        add_realtime_config(c, s);
    c["input_conversion"] = s.conversions;
    c["validity_checks"] = checks_json(s);
    if (s.warm_until_stable)
        c["warm_until_stable"] = telemetry::stability_json(*s.warm_until_stable, {}, 0).at("rule");
    if (s.find_capacity)
        c["find_capacity"] = json::object{{"start_level", s.capacity.start_level},
                                          {"max_level", s.capacity.max_level},
                                          {"resolution", s.capacity.resolution},
                                          {"confirm", s.capacity.confirm},
                                          {"verify_repeats", s.capacity.verify_repeats},
                                          {"growth", s.capacity.growth},
                                          {"slo", s.slo}};
    c["recovery"] = s.recovery.on()
                        ? json::value(json::object{{"canary", s.recovery.canary},
                                                   {"stats", s.recovery.stats},
                                                   {"max_s", to_seconds(s.recovery.max)}})
                        : json::value(nullptr);
    return c;
}

json::object summary_json(const sweep_options& s, const sweep_result& result,
                          summary_extras extras) {
    json::array runs, level_entries;
    std::vector<std::size_t> probed;
    for (const auto& r : result.levels) {
        for (const auto& run : r.runs)
            runs.push_back(run.summary);
        level_entries.push_back(r.entry);
        probed.push_back(r.concurrency);
    }
    json::object summary;
    summary["schema_version"] = 1;
    summary["command"] = "serve";
    summary["config"] = config_json(s, s.find_capacity ? std::span<const std::size_t>(probed)
                                                       : std::span<const std::size_t>(s.levels));
    summary["disk"] = std::move(extras.disk);
    summary["runs"] = std::move(runs);
    if (result.warm_until_stable)
        summary["warm_until_stable"] = *result.warm_until_stable;
    summary["levels"] = std::move(level_entries);
    if (s.find_capacity) { // empty when a warm-up was interrupted before the search
        summary["capacity"] = result.capacity
                                  ? capacity_search::capacity_json(*result.capacity, s.slo)
                                  : json::object{};
        if (result.recovery)
            summary["capacity"].as_object()["recovery"] = *result.recovery;
    }
    summary["client_timing_valid"] = result.all_valid;
    summary["interrupted"] = result.interrupted;
    summary["transport"] = std::move(extras.transport); // every level's connections
    if (extras.mock)
        summary["mock"] = std::move(*extras.mock);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const auto clocks = read_clock_pair();
    summary["provenance"] = json::object{{"pacer", "0.1.0"},
                                         {"host", host},
                                         {"clock", "CLOCK_MONOTONIC seconds"},
                                         {"monotonic_s", clocks.monotonic_s},
                                         {"realtime_s", clocks.realtime_s}};
    const auto usage = runtime::read_process_usage();
    summary["resources"] =
        json::object{{"client_cpu_s", usage.cpu_s}, {"peak_rss_bytes", usage.peak_rss_bytes}};
    return summary;
}

} // namespace pacer::sweep

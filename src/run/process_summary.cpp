// summary.json of one process of `pacer run` (see run_job.hpp): its config, clock, pacing,
// server, open-loop, trace and resource blocks, in the order the file has always had them.

#include <pacer/core/units.hpp>
#include <pacer/metrics/loop_lag.hpp>
#include <pacer/metrics/omni.hpp>
#include <pacer/metrics/outcome.hpp>
#include <pacer/metrics/realtime.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/run/client_settings.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/constants.hpp>
#include <pacer/session/open_loop.hpp>
#include <pacer/telemetry/recorder.hpp>
#include <pacer/trace/disk_estimate.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include "internal.hpp"
#include <random>
#include <unistd.h>

namespace pacer::run {

namespace json = boost::json;
using metrics::connect_outcome;
using metrics::count_kinds;
using metrics::unreachable_reason;

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

namespace detail {

// A random identity for this run's summary.json, so that `pacer merge` can tell a part given
// twice (or a copy of one) from another part.
std::string new_run_id() {
    std::random_device rd;
    std::string id;
    for (int k = 0; k < 4; ++k)
        id += fmt::format("{:08x}", static_cast<std::uint32_t>(rd()));
    return id;
}

// summary.json's `telemetry` for the run's window [t0, t1] (the recorder stopped first, so a
// sample follows t1). Output audio is not decoded by `pacer run` (replay's oracle measures it):
// its ratio stays null.
boost::json::object telemetry_summary(telemetry::recorder& r, double t0, double t1,
                                      std::uint64_t packets_sent, double chunk_s) {
    telemetry::window_denominators d;
    d.input_audio_s = static_cast<double>(packets_sent) * chunk_s;
    auto t = r.window(t0, t1, d);
    t["window_definition"] = "from the sessions' start (before the first connect; with "
                             "--processes the workers' shared start) to the last session's "
                             "end, on clock.monotonic_s";
    t["input_audio_definition"] =
        fmt::format("audio packets sent x {:g} ms (session-seconds of input)", chunk_s * 1000);
    return t;
}

namespace {

// `config`: the options as resolved, the input's conversion, the protocol's settings and the
// scenario.
json::object config_json(run_job& job, const std::string& url, duration timeout) {
    const run_options& s = job.options;
    // The append grid's period: 80 ms, or vllm-omni's --chunk-ms.
    const auto packet_ms = std::chrono::duration_cast<std::chrono::milliseconds>(job.omni.chunk);
    json::object cfg{{"concurrency", job.sessions},
                     {"threads", s.threads},
                     {"input", s.audio.empty() ? "silence" : s.audio},
                     {"input_duration_s", to_seconds(job.input_length)},
                     {"url", url},
                     {"profile", job.profile->name},
                     {"protocol", s.protocol},
                     {"timeout_s", to_seconds(timeout)},
                     {"packet_ms", packet_ms.count()},
                     {"inject_stall_ms", s.inject_stall_ms},
                     {"stagger_ms", s.stagger_ms},
                     {"stagger_slots", s.stagger_slots},
                     {"keep_traces", s.keep_traces},
                     {"trace", s.trace}};
    cfg["input_conversion"] = std::move(job.input_conversion);
    if (job.realtime) {
        cfg["turns"] = s.turns;
        cfg["model"] = s.model;
        const bool openai = *job.realtime == protocol::realtime_protocol::openai;
        cfg["wire_sample_rate"] =
            openai ? protocol::openai_sample_rate : protocol::input_sample_rate;
        cfg["resampler"] = openai ? "libsamplerate SRC_SINC_BEST_QUALITY" : "none";
    }
    if (job.conversation)
        cfg["scenario"] = job.conversation.name();
    return cfg;
}

json::object clock_json(const clock_pair& clocks) {
    const auto sync = read_clock_sync();
    return {{"monotonic_s", clocks.monotonic_s},
            {"realtime_s", clocks.realtime_s},
            {"domain", "CLOCK_MONOTONIC seconds"},
            {"sync", json::object{{"synchronized", sync.synchronized},
                                  {"max_error_s", sync.max_error_s},
                                  {"est_error_s", sync.est_error_s}}}};
}

// `open_loop`: the dispatcher's records and the schedule they followed.
json::object open_loop_json(const schedule::schedule_document& doc,
                            const session::open_loop_result& result,
                            const std::filesystem::path& schedule_path) {
    // A session start is late for the schedule like a packet is late for its grid.
    auto ol = session::open_loop_summary(result, session::client_schedule_thresholds);
    const auto& spec = doc.spec;
    if (!spec.stages.empty())
        ol["stages"] = schedule::stage_rows(result, spec.stages);
    ol["schedule"] = json::object{
        {"arrival", schedule::to_string(spec.process)},
        {"rate", spec.stages.empty() ? json::value(spec.rate) : json::value(nullptr)},
        {"stages", spec.stages.empty() ? json::value(nullptr)
                                       : json::value(schedule::to_string(spec.stages))},
        {"burstiness", spec.burstiness},
        {"seed", spec.seed},
        {"arrivals", doc.offsets.size()},
        {"sha256", doc.sha256},
        {"file", schedule_path.string()}};
    return ol;
}

json::object trace_json(const session::run_outcome& outcome, const run_options& s) {
    const auto& w = outcome.writer;
    return {
        {"lines", w.lines},
        {"bytes", w.bytes},
        {"writes", w.writes},
        {"write_errors", w.write_errors},
        {"peak_buffered_bytes", w.peak_buffered_bytes},
        {"bytes_per_s", outcome.wall_s > 0 ? static_cast<double>(w.bytes) / outcome.wall_s : 0.0},
        {"kept", s.keep_traces},
        {"mode", s.trace}};
}

// `resources`: the client's CPU (the built-in mock's thread apart) and memory.
json::object resources_json(const process_run& r, bool mock) {
    const auto& outcome = r.outcome;
    json::object resources;
    const double cpu = r.usage.cpu_s - r.cpu_before_s;
    double mock_cpu = 0;
    if (const auto* m = r.mock_stats.if_contains("thread_cpu_s"))
        mock_cpu = m->to_number<double>();
    resources["wall_s"] = outcome.wall_s;
    resources["client_cpu_s"] = cpu - mock_cpu;
    resources["client_cpu_cores"] = outcome.wall_s > 0 ? (cpu - mock_cpu) / outcome.wall_s : 0.0;
    if (mock) {
        resources["mock_cpu_s"] = mock_cpu;
        resources["mock_cpu_cores"] = outcome.wall_s > 0 ? mock_cpu / outcome.wall_s : 0.0;
    }
    resources["peak_rss_bytes"] = r.usage.peak_rss_bytes;
    json::array context_cores;
    for (double c : outcome.context_cpu_s)
        context_cores.push_back(outcome.wall_s > 0 ? c / outcome.wall_s : 0.0);
    resources["session_context_cpu_cores"] = std::move(context_cores);
    resources["writer_cpu_cores"] =
        outcome.wall_s > 0 ? outcome.writer_cpu_s / outcome.wall_s : 0.0;
    return resources;
}

// Where this process stands in a larger run: its shard, its worker index, the shared start.
void placement_json(json::object& summary, const run_job& job) {
    const run_options& s = job.options;
    if (job.shard)
        summary["shard"] = json::object{
            {"index", job.shard->index},
            {"count", job.shard->count},
            {"source", s.worker_index >= 0 ? std::string("--processes") : job.shard->source},
            {"sessions_total", job.open_loop ? job.open_loop->offsets.size() : s.concurrency}};
    if (s.worker_index >= 0)
        summary["worker_index"] = s.worker_index;
    if (job.start_monotonic)
        summary["start_at_monotonic_s"] = *job.start_monotonic;
}

} // namespace

json::object process_summary(run_job& job, const std::string& url, const process_run& r,
                             const metrics::pacing_figures& figures) {
    const auto& outcome = r.outcome;
    json::object summary;
    summary["schema_version"] = 1;
    summary["command"] = "run";
    summary["run_id"] = new_run_id();
    summary["config"] = config_json(job, url, r.timeout);
    summary["clock"] = clock_json(r.clocks);
    summary["pacing"] = figures.json;
    summary["pacing_qualified"] = figures.pacing_qualified;
    summary["loop_lag_over_time"] = metrics::loop_lag_over_time(
        outcome.loop_lag_s, outcome.loop_lag_started_s, outcome.loop_lag_period_s);
    summary["server"] = server_json(figures, outcome.sessions);
    if (job.realtime)
        summary["server"].as_object()["realtime"] =
            metrics::realtime_latency_json(outcome.sessions);
    if (job.realtime == protocol::realtime_protocol::vllm_omni)
        summary["server"].as_object()["omni"] = metrics::omni_json(outcome.sessions);
    if (job.conversation) // multi-turn: its per-turn figures
        summary["turns"] = metrics::turn_metrics_json(outcome.sessions);
    summary["disk"] = {{"estimated_bytes", job.disk_estimate},
                       {"trace_bytes_per_session_second",
                        trace::trace_bytes_per_session_second(job.options.protocol)},
                       {"free_bytes", job.disk_free}};
    summary["stalls_injected"] = outcome.stalls_injected;
    summary["interrupted"] = outcome.interrupted || !r.disk_full.empty();
    if (!r.disk_full.empty())
        summary["interrupted_by"] = r.disk_full;
    summary["transport"] = transport_json(job.endpoint);
    summary["transport"].as_object()["handshake_s"].as_object()["session_update_ack"] =
        metrics::update_ack_json(outcome.sessions);
    if (job.telemetry) // the run's window: from the sessions' start to the last one's end
        summary["telemetry"] =
            telemetry_summary(*job.telemetry, r.clocks.monotonic_s, r.sessions_end_s,
                              figures.packets_sent, to_seconds(job.omni.chunk));
    if (outcome.open_loop)
        summary["open_loop"] = open_loop_json(*job.open_loop, *outcome.open_loop, r.schedule_path);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    summary["host"] = host;
    if (!job.command_line.empty())
        summary["command_line"] = job.command_line;
    placement_json(summary, job);
    summary["trace"] = trace_json(outcome, job.options);
    summary["resources"] = resources_json(r, r.mock);
    if (r.mock)
        summary["mock"] = r.mock_stats;
    return summary;
}

} // namespace detail

} // namespace pacer::run

// `pacer serve` executed (serve_job.hpp): the start line, the sweep, its summary.json and the
// closing lines; and the `--dry-run` plan and the disk estimate the command shows before.

#include <pacer/core/bad_input.hpp>
#include <pacer/core/json_pointer.hpp>
#include <pacer/core/json_text.hpp>
#include <pacer/core/units.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/sweep/serve_job.hpp>
#include <pacer/telemetry/recorder.hpp>
#include <pacer/trace/disk_estimate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <utility>

namespace pacer::sweep {

namespace fs = std::filesystem;
namespace json = boost::json;

std::vector<std::size_t> parse_levels(std::string_view concurrencies, std::size_t max_level) {
    std::vector<std::size_t> levels;
    std::string_view rest = concurrencies;
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const auto item = rest.substr(0, comma);
        rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
        std::size_t v = 0;
        const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (ec != std::errc() || p != item.data() + item.size() || v == 0 || v > max_level)
            throw bad_input(fmt::format("--concurrencies '{}': each level must be a "
                                        "whole number from 1 to {} (e.g. 1,2,4,8)",
                                        concurrencies, max_level));
        if (std::find(levels.begin(), levels.end(), v) != levels.end())
            throw bad_input(
                fmt::format("--concurrencies '{}': level {} appears twice", concurrencies, v));
        levels.push_back(v);
    }
    if (levels.empty())
        throw bad_input("--concurrencies needs at least one level");
    return levels;
}

void take_given(const serve_options& s, sweep_options& w) {
    w.protocol = s.protocol;
    w.turns_name = s.turns;
    w.model = s.model;
    w.audio = s.audio;
    w.silence = s.duration;
    w.warmup_runs = s.warmup_runs;
    w.repeats = s.repeats;
    w.threads = s.threads;
    w.stagger_ms = s.stagger_ms;
    w.pacing = s.pacing;
    w.startup_reserve_ms = s.startup_reserve_ms;
    w.limits = {s.loop_lag_limit_ms, s.send_lateness_limit_ms};
    w.drop_traces = s.drop_traces;
    w.find_capacity = s.find_capacity;
    w.capacity = {s.start_level,
                  s.max_level,
                  s.resolution,
                  s.confirm.value_or(1),
                  s.verify_repeats.value_or(2),
                  s.growth.value_or(1.25)};
    w.slo = s.slo;
}

void take_wire_inputs(sweep_options& w,
                      std::vector<std::optional<std::vector<std::uint8_t>>> direct) {
    if (!w.realtime)
        return;
    for (std::size_t i = 0; i < w.inputs.size(); ++i)
        w.wire_inputs.push_back(
            i < direct.size() && direct[i]
                ? protocol::pcm_input(std::move(*direct[i]))
                : w.inputs[i].at_rate(protocol::input_sample_rate, wire_sample_rate(w.realtime)));
}

std::uint64_t disk_estimate(const serve_options& s, const sweep_options& w) {
    const auto& levels = w.levels;
    const auto& input_duration_s = w.input_duration_s;
    std::vector<std::size_t> plan(levels.begin(), levels.end());
    if (s.find_capacity)
        for (std::size_t c = s.start_level; c <= s.max_level; c = c * 2) {
            plan.push_back(c);
            if (c > s.max_level / 2 && c != s.max_level) {
                plan.push_back(s.max_level);
                break;
            }
        }
    const double longest = *std::max_element(input_duration_s.begin(), input_duration_s.end());
    std::uint64_t traces = 0, largest = 0, receipts = 0;
    auto add = [&](std::size_t sessions, double d) {
        const auto t = trace::trace_bytes_estimate(sessions, d, s.protocol);
        traces += t;
        largest = std::max(largest, t);
        receipts += trace::receipt_bytes_estimate(sessions, d);
    };
    const std::size_t warmup_level = s.warmup_level    ? *s.warmup_level
                                     : s.find_capacity ? s.start_level
                                                       : levels.front();
    for (std::size_t i = 0; i < s.warmup_runs; ++i)
        add(warmup_level, warmup_level == 1 ? input_duration_s.front() : longest);
    for (std::size_t r = 0; r < s.repeats; ++r)
        for (auto c : plan)
            add(c, longest);
    return receipts + (s.drop_traces ? largest : traces);
}

namespace {

// What the search will do to the server: how gently it grows, the runs above the capacity it
// expects (over every capacity from the start level to the largest the plan can reach, 256 at
// most: the search is pure, so this is its own count), and what it waits for before each run.
void print_overload_plan(const sweep_options& w) {
    const auto& c = w.capacity;
    std::size_t runs_lo = SIZE_MAX, runs_hi = 0, above_lo = SIZE_MAX, above_hi = 0;
    for (std::size_t k = c.start_level; k < std::min<std::size_t>(c.max_level, 256); ++k) {
        const auto cost = capacity_search::search_cost_at(c, k);
        runs_lo = std::min(runs_lo, cost.runs);
        runs_hi = std::max(runs_hi, cost.runs);
        above_lo = std::min(above_lo, cost.above);
        above_hi = std::max(above_hi, cost.above);
    }
    if (runs_hi > 0)
        fmt::print("  growth     doubling until the first miss, then at most x{:g} above the last "
                   "good level: {}-{} runs above the capacity (of {}-{} runs) for a capacity "
                   "from {} to {}\n",
                   c.growth, above_lo, above_hi, runs_lo, runs_hi, c.start_level,
                   std::min<std::size_t>(c.max_level, 256) - 1);
    const auto& r = w.recovery;
    fmt::print("  recovery   {}\n",
               !r.on() ? std::string("none: each run starts after --settle alone (--recovery)")
                       : fmt::format("before each level, confirmation and verification run: "
                                     "{}{}{}, up to {:g} s",
                                     r.canary ? "a one-session canary back within max(20 ms, "
                                                "50 %) of its baseline"
                                              : "",
                                     r.canary && r.stats ? " and " : "",
                                     r.stats ? fmt::format("{}#{} at 0", w.server_stats_url,
                                                           w.stats_pointer)
                                             : std::string(),
                                     to_seconds(r.max)));
}

} // namespace

void print_plan(const serve_job& job, std::size_t descriptors,
                std::span<const std::string> telemetry) {
    const auto& s = job.options;
    const auto& w = job.sweep;
    fmt::print("pacer serve --dry-run: checked; nothing started, nothing written\n");
    fmt::print("  target     {}\n", s.url.empty()
                                        ? fmt::format("the built-in native mock of {} {} (in this "
                                                      "process, any free loopback port)",
                                                      w.realtime ? "protocol" : "profile",
                                                      w.realtime ? s.protocol : w.profile->name)
                                        : s.url);
    if (w.realtime)
        fmt::print("  protocol   {}{}{}, input at {} Hz, start gate after {}\n", s.protocol,
                   w.realtime == protocol::realtime_protocol::openai ? ", turns " + s.turns : "",
                   s.model.empty() ? "" : ", model " + s.model, wire_sample_rate(w.realtime),
                   w.realtime == protocol::realtime_protocol::openai
                       ? "session.updated"
                       : "session.update and the starting commit");
    else
        fmt::print("  profile    {}, {} pacing\n", w.profile->name, s.pacing);
    if (s.find_capacity) {
        std::string slos;
        for (const auto& c : w.slos)
            slos += fmt::format("{}{}{}{:g}", slos.empty() ? "" : ", ", c.name,
                                c.at_least ? ">=" : "<=", c.bound);
        fmt::print("  search     capacity from level {} up to {} (doubling, then bisection to "
                   "{:g}); SLOs: {}\n",
                   s.start_level, s.max_level, s.resolution, slos);
    } else {
        std::string list;
        for (auto c : w.levels)
            list += fmt::format("{}{}", list.empty() ? "" : ", ", c);
        fmt::print("  levels     {}\n", list);
    }
    fmt::print("  runs       {} repeat(s) per level, {} warmup run(s){}, {:g} s settle before "
               "each run but the first\n",
               s.repeats, s.warmup_runs,
               s.warmup_runs ? fmt::format(" of {} session(s)", w.warmup_level) : std::string(),
               to_seconds(w.settle));
    if (s.find_capacity)
        fmt::print("  confirm    a missed level is tried {} more time(s) before it counts as "
                   "failing; then the capacity and first failing levels are re-run {} time(s) "
                   "each\n",
                   w.capacity.confirm, w.capacity.verify_repeats);
    if (s.find_capacity)
        print_overload_plan(w);
    if (w.server_stats)
        fmt::print("  server     its stats from {} before and after each run\n",
                   w.server_stats_url);
    if (w.conversation)
        fmt::print("  scenario   {}: {} turns{} (docs/scenarios.md)\n", w.conversation.name(),
                   w.conversation.turns.size(), w.conversation.barge_in() ? ", barge-in" : "");
    std::string inputs;
    for (std::size_t i = 0; i < w.inputs.size(); ++i)
        inputs += fmt::format("{}{} ({:.2f} s)", i ? ", " : "",
                              s.audio.empty() ? std::string("silence") : s.audio[i],
                              w.input_duration_s[i]);
    fmt::print("  input      {}\n", inputs);
    fmt::print("  timeout    {:.2f} s per session{}\n", to_seconds(w.timeout),
               s.timeout.empty() ? " (default: the longest input + 60 s)" : "");
    fmt::print("  threads    {} session context(s), stagger {:g} ms\n", s.threads, s.stagger_ms);
    fmt::print("  output     {} (c<level>/, summary.json{}{})\n", job.out.string(),
               s.no_report ? "" : ", report.html",
               s.export_format.empty() ? "" : ", tables-" + s.export_format + "/");
    fmt::print("  descriptors about {} needed, limit {}\n", descriptors,
               runtime::descriptor_limit());
    fmt::print("  disk       about {} of traces and receipts{}, {} free\n",
               format_bytes(job.disk_estimate),
               s.drop_traces ? " (--drop-traces: one level's traces at a time)" : "",
               format_bytes(job.disk_free));
    for (const auto& line : telemetry)
        fmt::print("  telemetry  {}\n", line);
    if (const auto& r = w.warm_until_stable)
        fmt::print("  warm       back-to-back warm-ups of {} session(s) until every GPU's power "
                   "is within {:g} % and its temperature within {:g} °C over {:g} s (at most "
                   "{:g} s)\n",
                   w.warmup_level, r->power_fraction * 100, r->temperature_c, to_seconds(r->window),
                   to_seconds(r->max_wait));
}

namespace {

// The sweep's telemetry: its whole window (the first run's common start to the end), and the
// energy per session-second of input at the capacity level (the mean over its runs that met
// their SLOs, each a window of its own).
void add_sweep_telemetry(json::object& summary, const sweep_result& result,
                         telemetry::recorder& recorder, double end_s) {
    std::optional<double> start_s;
    double input_s = 0, output_s = 0;
    for (const auto& l : result.levels)
        for (const auto& r : l.runs) {
            const auto* t = find_pointer(r.summary, "/common_start_s");
            if (!start_s && t && t->is_number())
                start_s = t->to_number<double>();
            if (const auto* w = r.summary.if_contains("telemetry"); w && w->is_object()) {
                if (const auto* v = w->as_object().if_contains("input_audio_s");
                    v && v->is_number())
                    input_s += v->to_number<double>();
                if (const auto* v = find_pointer(w->as_object(), "/output_audio_s");
                    v && v->is_number())
                    output_s += v->to_number<double>();
            }
        }
    if (start_s)
        summary["telemetry"] = recorder.window(*start_s, end_s, {input_s, output_s, {}});
    if (!result.capacity || result.capacity->sessions == 0)
        return;
    double sum = 0;
    std::size_t n = 0;
    for (const auto& l : result.levels)
        if (l.concurrency == result.capacity->sessions)
            for (const auto& r : l.runs) {
                const auto* met = find_pointer(r.summary, "/slo/met");
                const auto* j = find_pointer(r.summary, "/telemetry/j_per_input_audio_s");
                if (r.valid && (!met || (met->is_bool() && met->as_bool())) && j &&
                    j->is_number()) {
                    sum += j->to_number<double>();
                    ++n;
                }
            }
    summary["capacity"].as_object()["energy_j_per_session_second"] =
        n ? json::value(sum / static_cast<double>(n)) : json::value(nullptr);
}

// The sweep's summary.json: sweep::summary_json with what the command knows (the disk
// estimate, the transport, the mock's stats), the command line and the telemetry.
json::object serve_summary(const serve_job& job, const sweep_result& result, double end_s) {
    const auto& s = job.options;
    const auto& w = job.sweep;
    summary_extras extras;
    extras.disk = json::object{
        {"estimated_bytes", job.disk_estimate},
        {"estimate_is_lower_bound", s.find_capacity},
        {"trace_bytes_per_session_second", trace::trace_bytes_per_session_second(s.protocol)},
        {"free_bytes", job.disk_free},
        {"drop_traces", s.drop_traces}};
    if (job.transport_json)
        extras.transport = job.transport_json(w.endpoint); // every level's connections
    if (job.stop_server)
        extras.mock = job.stop_server();
    auto summary = summary_json(w, result, std::move(extras));
    summary["command_line"] = job.command_line; // as `run` and `http` record it
    if (w.telemetry)
        add_sweep_telemetry(summary, result, *w.telemetry, end_s);
    return summary;
}

// "warm": how long the GPUs took to be steady, or that they were not.
void print_warm_line(const json::object& o) {
    fmt::print("warm       {} after {:.1f} s ({} warm-up run{}){}\n",
               o.at("stable").as_bool() ? "steady" : "NOT steady",
               o.at("waited_s").to_number<double>(), o.at("warmup_runs").to_number<std::uint64_t>(),
               o.at("warmup_runs").to_number<std::uint64_t>() == 1 ? "" : "s",
               o.at("stable").as_bool() ? std::string()
                                        : fmt::format(": {}; measured anyway (--stable-max-wait)",
                                                      o.at("why_not").as_string().c_str()));
}

// "verified": a verification's runs, said for the capacity level or the first failing one.
std::string verification_words(const std::optional<capacity_search::value_verification>& v,
                               bool capacity_level) {
    return v ? fmt::format("level {} met its SLOs in {} of {} verification runs{}",
                           static_cast<std::size_t>(v->value), v->met, v->runs,
                           v->held          ? ""
                           : capacity_level ? " (it should meet in all)"
                                            : " (it should miss in all)")
             : std::string();
}

// How the server held up: the verdict, then each overload and the recovery after it.
void print_recovery_lines(const json::object& r) {
    fmt::print("recovery   {}\n", r.at("verdict").as_string().c_str());
    std::string list;
    for (const auto& v : r.at("overloads").as_array()) {
        const auto& o = v.as_object();
        const auto& after = o.at("recovery");
        list += fmt::format(
            "{}level {} ({}): {}", list.empty() ? "" : "; ",
            o.at("level").to_number<std::uint64_t>(), o.at("folder").as_string().c_str(),
            after.is_null() ? std::string("not watched")
            : after.at("recovered").as_bool()
                ? fmt::format("back after {:.1f} s", after.at("waited_s").to_number<double>())
                : fmt::format("NOT back after {:.1f} s", after.at("waited_s").to_number<double>()));
    }
    if (!list.empty())
        fmt::print("overloads  {}\n", list);
}

// The capacity search's lines: its notes, the capacity and why it stops there, the
// verification, the energy at the capacity level and what the search cost.
void print_capacity_lines(const serve_job& job, const sweep_result& result,
                          const json::object& summary) {
    const auto& capacity = *result.capacity;
    const std::string_view limited = to_string(capacity.limited_by);
    for (const auto& note : capacity.notes)
        fmt::print("search     {}\n", note);
    fmt::print("capacity   {} sessions{} ({})\n", capacity.sessions,
               limited == "max-level" ? " or more" : "",
               limited == "slo"           ? fmt::format("level {} missed the SLOs",
                                                        capacity.first_failing_level.value_or(0))
               : limited == "client"      ? "the client could not keep its schedule beyond it: "
                                            "add client cores or processes"
               : limited == "max-level"   ? "every probed level met the SLOs; raise --max-level"
               : limited == "unreachable" ? "the server could not be reached"
                                          : "interrupted");
    if (capacity.boundary_held)
        fmt::print("verified   boundary {}: {}{}{}\n",
                   *capacity.boundary_held ? "held" : "NOT held",
                   verification_words(capacity.capacity_check, true),
                   capacity.capacity_check && capacity.failing_check ? "; " : "",
                   verification_words(capacity.failing_check, false));
    if (const auto* rec = find_pointer(summary, "/capacity/recovery"); rec && rec->is_object())
        print_recovery_lines(rec->get_object());
    if (const auto* e = find_pointer(summary, "/capacity/energy_j_per_session_second");
        e && e->is_number())
        fmt::print("energy     {:.3f} J per session-second of input at the capacity level "
                   "(docs/telemetry.md)\n",
                   e->to_number<double>());
    std::size_t runs = 0, looks = 0;
    double wall = 0, waited = 0;
    for (const auto& l : result.levels)
        for (const auto& r : l.runs) {
            ++runs;
            if (const auto* v = find_pointer(r.summary, "/resources/wall_s"); v && v->is_number())
                wall += v->to_number<double>();
            if (r.recovery) {
                looks += r.recovery->looks;
                waited += r.recovery->waited_s;
            }
        }
    fmt::print(
        "cost       {} runs of {} levels, {:.1f} min of sessions plus {:g} s settle "
        "pauses each{}\n",
        runs,
        std::set<std::size_t>(capacity.probed_levels.begin(), capacity.probed_levels.end()).size(),
        wall / 60, to_seconds(job.sweep.settle),
        job.sweep.recovery.on()
            ? fmt::format("; {:.1f} min waiting for recovery ({} looks)", waited / 60, looks)
            : std::string());
}

} // namespace

runtime::run_verdict execute_serve(const serve_job& job) {
    const auto& s = job.options;
    const auto& w = job.sweep;
    const auto& out = job.out;
    if (w.telemetry) {
        w.telemetry->start(out / "telemetry.jsonl"); // each run's window: docs/telemetry.md
        w.telemetry->measure_idle_baseline();        // before the first level
    }
    fmt::print("pacer serve: {} against {} ({}, {} pacing); writes about {}{} ({} free)\n",
               s.find_capacity ? "capacity search" : "sweep", w.url,
               w.realtime ? "protocol " + s.protocol : "profile " + std::string(w.profile->name),
               s.pacing, format_bytes(job.disk_estimate), s.find_capacity ? " or more" : "",
               format_bytes(job.disk_free));
    auto& observer = *job.observer;
    observer.sweep_starting();
    const auto result = run_sweep(w, out, observer);
    const double sweep_end_s = to_seconds(clock::now());
    observer.sweep_ended();
    if (w.telemetry)
        w.telemetry->stop();

    const auto summary = serve_summary(job, result, sweep_end_s);
    runtime::write_new_file(out / "summary.json", json_text(summary) + "\n");
    std::optional<fs::path> report; // once, for the whole sweep
    if (!s.no_report && job.report)
        report = job.report(out);

    if (const auto& st = result.warm_until_stable)
        print_warm_line(*st);
    if (result.capacity)
        print_capacity_lines(job, result, summary);
    if (const auto line = job.transport_line ? job.transport_line(w.endpoint) : std::string();
        !line.empty())
        fmt::print("transport  {}\n", line);
    fmt::print("results    {}{}\n", (out / "summary.json").string(),
               report ? ", " + report->string() : std::string());
    if (!s.export_format.empty() && job.tables)
        if (const auto tables = job.tables(out, s.export_format))
            fmt::print("tables     {}\n", tables->string());
    if (result.interrupted)
        fmt::print("INTERRUPTED by a signal: the summary covers the levels that ran\n");
    runtime::run_verdict verdict;
    verdict.interrupted = result.interrupted;
    verdict.client_fell_behind = result.client_fell_behind;
    verdict.server_failed = result.server_failed;
    return verdict;
}

} // namespace pacer::sweep

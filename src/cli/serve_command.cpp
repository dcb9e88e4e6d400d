// `pacer serve`: concurrency sweeps with the serving metrics of docs/protocol.md §4-5, level
// validity (did the client keep its schedule?) and a capacity search against SLOs. This file
// declares and checks the options, prints the plan (--dry-run) and the table, starts the
// built-in mock when no --url is given, and calls the `sweep` module, which runs the levels.

#include <pacer/cli/auto_report.hpp>
#include <pacer/cli/checks.hpp>
#include <pacer/cli/client_options.hpp>
#include <pacer/cli/command_line.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/input_audio.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/cli/telemetry_options.hpp>
#include <pacer/core/json_text.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/slo.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/run/live_metrics.hpp>
#include <pacer/run/progress.hpp>
#include <pacer/runtime/audio_codec.hpp>
#include <pacer/runtime/audio_file.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/server/native_mock.hpp>
#include <pacer/sweep/sweep.hpp>
#include <pacer/telemetry/metrics_listener.hpp>
#include <pacer/telemetry/recorder.hpp>
#include <pacer/trace/disk_estimate.hpp>

#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <set>
#include <tuple>
#include <unistd.h>

namespace pacer::cli {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

struct serve_settings {
    std::string url;
    std::vector<std::string> audio;
    std::string duration = "10s";
    std::string profile = "nemotron";
    std::string protocol = "native"; ///< native, openai-realtime or vllm-realtime
    std::string turns = "server-vad";
    std::string scenario = "single"; ///< `--scenario` (docs/scenarios.md)
    std::string model;
    std::string concurrencies = "1,2,4,8";
    std::size_t concurrency = 0;
    std::size_t warmup_runs = 0;
    std::optional<std::size_t> warmup_level; ///< default: the first level the plan runs
    std::size_t repeats = 1;
    std::string settle; ///< default: 5s with --find-capacity, else 0s
    std::optional<std::size_t> confirm, verify_repeats; ///< --find-capacity only
    std::string server_metrics;
    telemetry_settings telemetry; ///< --gpu-telemetry & co. (not --server-metrics: above)
    std::string metrics_listen;
    bool warm_until_stable = false;
    double stable_power_pct = 3, stable_temperature_c = 1;
    std::string stable_window = "30s", stable_max_wait = "10m";
    bool stable_rule_given = false; ///< one of the --stable-* options was typed
    double stagger_ms = 0;
    std::string pacing = "realtime";
    double startup_reserve_ms = 80;
    std::string timeout; // default: the longest input + 60 s
    std::string output;
    std::size_t threads = 1;
    double loop_lag_limit_ms = 20;
    double send_lateness_limit_ms = 20;
    bool find_capacity = false;
    std::string slo;
    std::size_t max_level = 1024;
    std::size_t start_level = 1;
    double resolution = 0.05;
    bool drop_traces = false;
    bool dry_run = false;
    std::string progress = "auto";
    bool no_report = false;
    std::string export_format;   ///< --export csv|jsonl: the tables at the end ("": none)
    run::client_settings client; // wss:// trust and handshake headers
};

bool use_color() {
    const char* term = std::getenv("TERM");
    return ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR") && term &&
           std::string_view(term) != "dumb";
}

std::string cell_ms(const json::value* v) {
    return v && v->is_number() ? fmt::format("{:.0f}", v->to_number<double>() * 1e3) : "-";
}

std::string cell_ratio(const json::value* v) {
    return v && v->is_number() ? fmt::format("{:.4f}", v->to_number<double>()) : "-";
}

const json::value* path(const json::object& o, std::initializer_list<std::string_view> keys) {
    const json::value* v = nullptr;
    const json::object* cur = &o;
    for (auto k : keys) {
        if (!cur)
            return nullptr;
        v = cur->if_contains(k);
        cur = v && v->is_object() ? &v->get_object() : nullptr;
    }
    return v;
}

void print_header() {
    fmt::print("{:>6} {:>3} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}  {}\n", "level", "rep",
               "admitted", "ok", "ttfa p50", "ttfa p95", "unit miss", "underrun", "late p99",
               "lag p99", "client timing");
    fmt::print("{:>6} {:>3} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}\n", "", "", "", "",
               "ms", "ms", "rate", "ratio", "send ms", "loop ms");
}

void print_row(const sweep::level_run& r, bool color) {
    const auto& a = r.summary.at("aggregate").as_object();
    auto count = [&](std::string_view k) {
        const auto* v = a.if_contains(k);
        return v && v->is_number() ? v->to_number<std::uint64_t>() : std::uint64_t{0};
    };
    std::string verdict = r.valid ? "valid" : "NOT VALID";
    if (r.unreachable) {
        verdict = *r.unreachable; // not a client-timing verdict: nothing reached the server
    } else if (!r.valid) {
        std::string why;
        for (const auto& p : r.summary.at("client_timing_problems").as_array())
            why += (why.empty() ? "" : "; ") + std::string(p.as_string());
        verdict += " (" + why + ")";
    }
    if (const auto* slo = r.summary.if_contains("slo"))
        verdict += slo->at("met").as_bool() ? ", SLO met" : ", SLO missed";
    if (const auto* t = r.summary.if_contains("try");
        t && t->is_string() && t->get_string() != "search")
        verdict += fmt::format(" [{} {}]", std::string_view(t->get_string()),
                               r.summary.at("attempt").to_number<std::uint64_t>());
    const std::string line = fmt::format(
        "{:>6} {:>3} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}  ", r.concurrency, r.repeat,
        fmt::format("{}/{}", count("admitted_sessions"), count("attempted_sessions")),
        fmt::format("{}", count("successful_sessions")), cell_ms(path(a, {"ttfa_s", "p50"})),
        cell_ms(path(a, {"ttfa_s", "p95"})),
        // A level nothing reached measured no miss and no underrun: "-", not 1.0.
        cell_ratio(r.unreachable ? nullptr : path(a, {"units", "unit_miss_rate"})),
        cell_ratio(r.unreachable ? nullptr : a.if_contains("underrun_ratio")),
        cell_ms(path(a, {"send_lateness_s", "p99"})),
        fmt::format("{:.1f}", r.loop_lag_p99_s * 1e3));
    if (color && !r.valid)
        fmt::print("{}{}\n", line, fmt::format(fg(fmt::terminal_color::red), "{}", verdict));
    else
        fmt::print("{}{}\n", line, verdict);
    if (const auto* rt = path(a, {"realtime"}); rt && rt->is_object()) {
        const auto& f = rt->get_object();
        auto pair = [&](std::string_view key) {
            return fmt::format("{}/{}", cell_ms(path(f, {key, "p50"})),
                               cell_ms(path(f, {key, "p95"})));
        };
        fmt::print("{:>10} from utterance end p50/p95 ms: first audio {}, first transcript {}, "
                   "final transcript {}; rtf p95 {}\n",
                   "", pair("first_audio_from_utterance_end_s"),
                   pair("first_transcript_from_utterance_end_s"),
                   pair("final_transcript_from_utterance_end_s"), [&] {
                       const auto* v = path(f, {"real_time_factor", "p95"});
                       return v && v->is_number() ? fmt::format("{:.2f}", v->to_number<double>())
                                                  : std::string("-");
                   }());
    }
    if (const auto* t = path(a, {"turns", "all"}); t && t->is_object()) {
        const auto& f = t->get_object();
        auto pair = [&](std::string_view key) {
            return fmt::format("{}/{}", cell_ms(path(f, {key, "p50"})),
                               cell_ms(path(f, {key, "p95"})));
        };
        const auto n = [&](std::string_view key) {
            const auto* v = f.if_contains(key);
            return v && v->is_number() ? v->to_number<std::uint64_t>() : std::uint64_t{0};
        };
        fmt::print("{:>10} turns p50/p95 ms: first audio from turn end {}, interrupt latency {} "
                   "({} of {} turns answered, {} interrupted)\n",
                   "", pair("ttfa_from_speech_end_s"), pair("interrupt_latency_s"), n("answered"),
                   n("turns"), n("interrupted"));
    }
    if (const auto* view = r.summary.if_contains("server_view"); view && view->is_object()) {
        const auto& v = view->get_object();
        fmt::print("{:>10} server view: unit latency p50/p95 {}/{} ms (the client's unit lag "
                   "{}/{} ms){}\n",
                   "", cell_ms(v.if_contains("server_unit_latency_p50_s")),
                   cell_ms(v.if_contains("server_unit_latency_p95_s")),
                   cell_ms(v.if_contains("client_unit_lag_p50_s")),
                   cell_ms(v.if_contains("client_unit_lag_p95_s")), [&]() -> std::string {
                       const auto* e = path(r.summary, {"server_stats", "error"});
                       return e && e->is_string()
                                  ? fmt::format("; {}", std::string_view(e->get_string()))
                                  : "";
                   }());
    }
    if (r.server_failed && !r.unreachable && !r.errors.empty()) {
        const auto& top = r.errors.front();
        fmt::print("{:>10} {} failed, {} rejected; most frequent error ({} session(s), {} "
                   "distinct): {}\n",
                   "", r.failed, r.rejected, top.sessions, r.errors.size(), top.what);
    }
    std::fflush(stdout);
}

// The levels of the plan: --concurrency N or --concurrencies a,b,c.
std::vector<std::size_t> parse_levels(const serve_settings& s) {
    std::vector<std::size_t> levels;
    if (s.concurrency > 0)
        return {s.concurrency};
    std::string_view rest = s.concurrencies;
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const auto item = rest.substr(0, comma);
        rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
        std::size_t v = 0;
        const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (ec != std::errc() || p != item.data() + item.size() || v == 0 || v > max_sessions)
            throw usage_error(fmt::format("--concurrencies '{}': each level must be a whole "
                                          "number from 1 to {} (e.g. 1,2,4,8)",
                                          s.concurrencies, max_sessions));
        if (std::find(levels.begin(), levels.end(), v) != levels.end())
            throw usage_error(
                fmt::format("--concurrencies '{}': level {} appears twice", s.concurrencies, v));
        levels.push_back(v);
    }
    if (levels.empty())
        throw usage_error("--concurrencies needs at least one level");
    return levels;
}

// What the sweep shows while it runs: the live progress line (one phase per level) and the
// table, a row per run of a level.
class serve_printer final : public sweep::sweep_observer {
public:
    /// `listening`: --metrics-listen serves counters() and level() (from another thread).
    serve_printer(run::progress_reporter& progress, bool color, bool listening)
        : progress_(progress), color_(color), listening_(listening) {}

    session::live_counters* level_starting(const std::string& label, double expected_s) override {
        // The label names the run's concurrency: "warmup c4", "level c8 (repeat 2)".
        if (const auto c = label.find(" c"); c != std::string::npos)
            level_.store(std::strtoull(label.c_str() + c + 2, nullptr, 10),
                         std::memory_order_relaxed);
        if (progress_.on()) {
            progress_.begin(label, expected_s);
            return &progress_.counters();
        }
        if (!listening_)
            return nullptr;
        listened_.reset(); // each run's totals, as the progress line's
        return &listened_;
    }
    /// The totals of the run going on (or of the last one): the progress line's when it is on.
    const session::live_counters& counters() const {
        return progress_.on() ? progress_.counters() : listened_;
    }
    /// The concurrency of the run going on (or of the last one); nullopt before the first.
    std::optional<std::size_t> level() const {
        const auto l = level_.load(std::memory_order_relaxed);
        return l ? std::optional<std::size_t>(l) : std::nullopt;
    }
    void level_ended() override { progress_.end(); }
    void warmup_done(std::size_t index, const sweep::level_run& run) override {
        const auto ok = std::count_if(run.sessions.begin(), run.sessions.end(),
                                      [](const auto& x) { return x.success(); });
        fmt::print("warmup {} ({} session{}, not part of the levels): {} of {} succeeded -> {}\n",
                   index, run.concurrency, run.concurrency == 1 ? "" : "s", ok, run.sessions.size(),
                   run.valid ? "client timing valid" : "client timing NOT valid");
    }
    void levels_starting() override { print_header(); }
    void run_done(const sweep::level_run& run) override { print_row(run, color_); }
    void settling(double seconds) override {
        if (progress_.on()) // between phases: no progress line is on screen
            fmt::print(stderr, "settle: {:g} s idle before the next run (--settle)\n", seconds);
    }
    void stopped_unreachable() override { fmt::print("stopped: the server cannot be reached\n"); }

private:
    run::progress_reporter& progress_;
    bool color_;
    bool listening_;
    session::live_counters listened_; // --metrics-listen without a progress line
    std::atomic<std::size_t> level_{0};
};

// The bytes the plan writes: every level's traces and receipts (warm-ups included). With
// --drop-traces, only the largest level's traces are on disk at once. A capacity search is
// estimated by its doubling levels (bisection adds more): a lower bound.
std::uint64_t serve_disk_estimate(const serve_settings& s, std::span<const std::size_t> levels,
                                  std::span<const double> input_duration_s) {
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

// What `serve` would do, as checked: `--dry-run` prints it instead of running.
void print_serve_plan(const serve_settings& s, const sweep::sweep_options& w,
                      std::span<const std::size_t> levels, const fs::path& out,
                      std::size_t descriptors, std::uint64_t disk, std::uint64_t disk_free) {
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
                   s.model.empty() ? "" : ", model " + s.model, sweep::wire_sample_rate(w.realtime),
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
        for (auto c : levels)
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
    if (w.server_metrics)
        fmt::print("  server     its stats from {} before and after each run\n",
                   w.server_metrics_url);
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
    fmt::print("  output     {} (c<level>/, summary.json{}{})\n", out.string(),
               s.no_report ? "" : ", report.html",
               s.export_format.empty() ? "" : ", tables-" + s.export_format + "/");
    fmt::print("  descriptors about {} needed, limit {}\n", descriptors,
               runtime::descriptor_limit());
    fmt::print("  disk       about {} of traces and receipts{}, {} free\n", format_bytes(disk),
               s.drop_traces ? " (--drop-traces: one level's traces at a time)" : "",
               format_bytes(disk_free));
}

// The sweep's telemetry: its whole window (the first run's common start to the end), and the
// energy per session-second of input at the capacity level (the mean over its runs that met
// their SLOs, each a window of its own).
void add_sweep_telemetry(json::object& summary, const sweep::sweep_result& result,
                         telemetry::recorder& recorder, double end_s) {
    std::optional<double> start_s;
    double input_s = 0, output_s = 0;
    for (const auto& l : result.levels)
        for (const auto& r : l.runs) {
            const auto* t = path(r.summary, {"common_start_s"});
            if (!start_s && t && t->is_number())
                start_s = t->to_number<double>();
            if (const auto* w = r.summary.if_contains("telemetry"); w && w->is_object()) {
                if (const auto* v = w->as_object().if_contains("input_audio_s");
                    v && v->is_number())
                    input_s += v->to_number<double>();
                if (const auto* v = path(w->as_object(), {"output_audio_s"}); v && v->is_number())
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
                const auto* met = path(r.summary, {"slo", "met"});
                const auto* j = path(r.summary, {"telemetry", "j_per_input_audio_s"});
                if (r.valid && (!met || (met->is_bool() && met->as_bool())) && j &&
                    j->is_number()) {
                    sum += j->to_number<double>();
                    ++n;
                }
            }
    summary["capacity"].as_object()["energy_j_per_session_second"] =
        n ? json::value(sum / static_cast<double>(n)) : json::value(nullptr);
}

// --scenario (what every session of every run says, checked and loaded as `run` does) and
// --slo, whose turn SLOs need a scenario with turns or barge-ins.
void take_scenario_and_slos(const serve_settings& s, sweep::sweep_options& w) {
    w.conversation = load_scenario(s.scenario, sweep::wire_sample_rate(w.realtime), !w.realtime);
    if (w.conversation && s.pacing == "lockstep")
        throw usage_error("--pacing lockstep streams one utterance unit by unit: a --scenario "
                          "of several turns streams on the 80 ms grid (--pacing realtime)");
    try {
        w.slos = metrics::parse_slos(
            s.slo, {static_cast<bool>(w.conversation), w.conversation.barge_in()});
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
}

int serve(const serve_settings& s) {
    // Validate everything before anything is created.
    const auto* profile = protocol::find_profile(s.profile);
    if (!profile)
        throw usage_error(fmt::format("--profile '{}' is not known: use nemotron or minicpmo "
                                      "(or their full names)",
                                      s.profile));
    sweep::sweep_options w;
    w.url = s.url;
    w.profile = profile;
    w.endpoint = url_option(s.url);
    apply_client_settings(s.client, w.endpoint); // bad headers, a missing key: before any file
    if (s.pacing != "realtime" && s.pacing != "lockstep")
        throw usage_error(
            fmt::format("--pacing must be realtime or lockstep (got '{}')", s.pacing));
    if (const auto p = protocol_option(s.protocol, s.model)) {
        if (s.pacing != "realtime")
            throw usage_error(fmt::format("--pacing {} is the native protocol's; --protocol {} "
                                          "streams on the 80 ms grid",
                                          s.pacing, s.protocol));
        if (profile != &protocol::default_profile())
            throw usage_error(fmt::format("--profile {} is the native protocol's; --protocol {} "
                                          "negotiates its own session",
                                          s.profile, s.protocol));
        w.realtime = p;
    }
    model_in_url(w.endpoint, w.realtime, s.model);
    w.turns = turns_option(s.turns);
    if (s.pacing == "lockstep" && profile->continuous)
        throw usage_error(fmt::format("--pacing lockstep needs a per-unit profile such as "
                                      "minicpmo; {} speaks continuously",
                                      profile->name));
    if (s.repeats == 0)
        throw usage_error("--repeats must be at least 1");
    if (s.threads == 0)
        throw usage_error("--threads must be at least 1");
    if (!(s.stagger_ms >= 0) || !(s.startup_reserve_ms >= 0))
        throw usage_error("--stagger-ms and --startup-reserve-ms must be >= 0");
    if (!(s.loop_lag_limit_ms > 0) || !(s.send_lateness_limit_ms > 0))
        throw usage_error("--loop-lag-limit-ms and --send-lateness-limit-ms must be > 0");
    if (!s.timeout.empty()) {
        const auto timeout = parse_duration(s.timeout);
        if (!timeout || timeout->count() == 0)
            throw usage_error(
                fmt::format("--timeout '{}' is not a positive duration such as 90s", s.timeout));
        w.timeout = std::chrono::duration_cast<duration>(*timeout);
    }
    std::vector<std::size_t> levels;
    if (s.find_capacity) {
        if (s.start_level == 0 || s.max_level < s.start_level)
            throw usage_error("--start-level must be >= 1 and <= --max-level");
        if (!(s.resolution >= 0 && s.resolution < 1))
            throw usage_error("--resolution must be in [0, 1)");
    } else {
        levels = parse_levels(s);
        if (s.confirm || s.verify_repeats)
            throw usage_error("--confirm and --verify-repeats shape the capacity search: add "
                              "--find-capacity, or drop them");
    }
    if (s.warmup_level && s.warmup_runs == 0)
        throw usage_error("--warmup-level sets the size of the warm-up runs: add --warmup-runs N "
                          "(e.g. --warmup-runs 1), or drop it");
    w.warmup_level = s.warmup_level    ? *s.warmup_level
                     : s.find_capacity ? s.start_level
                                       : levels.front();
    if (s.warm_until_stable) {
        if (s.telemetry.gpu.empty())
            throw usage_error("--warm-until-stable watches the GPUs' power and temperature: add "
                              "--gpu-telemetry nvml");
        telemetry::stability_rule rule;
        rule.power_fraction = s.stable_power_pct / 100;
        rule.temperature_c = s.stable_temperature_c;
        for (auto [text, name, into] :
             {std::tuple{&s.stable_window, "--stable-window", &rule.window},
              std::tuple{&s.stable_max_wait, "--stable-max-wait", &rule.max_wait}}) {
            const auto d = parse_duration(*text);
            if (!d || d->count() <= 0)
                throw usage_error(
                    fmt::format("{} '{}' is not a positive duration such as 30s", name, *text));
            *into = std::chrono::duration_cast<std::chrono::nanoseconds>(*d);
        }
        if (rule.max_wait < rule.window)
            throw usage_error(fmt::format("--stable-max-wait {} is shorter than --stable-window "
                                          "{}: the GPUs could never be judged steady",
                                          s.stable_max_wait, s.stable_window));
        w.warm_until_stable = rule;
    } else if (s.stable_rule_given) {
        throw usage_error("--stable-power-pct, --stable-temperature-c, --stable-window and "
                          "--stable-max-wait shape --warm-until-stable: add it, or drop them");
    }
    if (s.settle.empty()) {
        w.settle = s.find_capacity ? std::chrono::seconds(5) : duration::zero();
    } else {
        const auto settle = parse_duration(s.settle);
        if (!settle)
            throw usage_error(
                fmt::format("--settle '{}' is not a duration such as 5s or 0s", s.settle));
        w.settle = std::chrono::duration_cast<duration>(*settle);
    }
    if (!s.server_metrics.empty()) {
        try {
            w.server_metrics = transport::parse_get_url(s.server_metrics, "--server-metrics");
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
        w.server_metrics_url = s.server_metrics;
    }
    take_scenario_and_slos(s, w);
    if (s.find_capacity &&
        !std::any_of(w.slos.begin(), w.slos.end(),
                     [](const metrics::slo_check& c) { return c.name == "success-rate"; }))
        w.slos.push_back(metrics::default_success_slo()); // every session must succeed unless told
    if (s.audio.empty()) {
        w.inputs.push_back(
            protocol::pcm_input::silence(silence_bytes(silence_duration(s.duration, "10s"))));
    }
    if (s.audio.empty())
        w.conversions.push_back(silence_conversion(sweep::wire_sample_rate(w.realtime)));
    std::vector<std::optional<std::vector<std::uint8_t>>> direct_wire; // from each file
    for (const auto& a : s.audio) {
        auto in = load_input_audio(a, sweep::wire_sample_rate(w.realtime));
        w.inputs.push_back(protocol::pcm_input(std::move(in.pcm)));
        w.conversions.push_back(std::move(in.conversion));
        direct_wire.push_back(std::move(in.wire));
    }
    if (s.timeout.empty()) {
        duration longest{};
        for (const auto& in : w.inputs)
            longest = std::max(longest, w.conversation.length(in.size()));
        w.timeout = longest + std::chrono::duration_cast<duration>(default_timeout_margin);
    }
    for (const auto& in : w.inputs) {
        const double d = to_seconds(w.conversation.length(in.size()));
        if (to_seconds(w.timeout) <= d)
            throw usage_error(
                fmt::format("--timeout {} must be longer than the input ({:.2f} s)", s.timeout, d));
        w.input_duration_s.push_back(d);
    }
    // The rest of the plan, as given.
    w.protocol = s.protocol;
    w.turns_name = s.turns;
    w.model = s.model;
    w.audio = s.audio;
    w.silence = s.duration;
    w.levels = levels;
    w.warmup_runs = s.warmup_runs;
    w.repeats = s.repeats;
    w.threads = s.threads;
    w.stagger_ms = s.stagger_ms;
    w.pacing = s.pacing;
    w.startup_reserve_ms = s.startup_reserve_ms;
    w.limits = {s.loop_lag_limit_ms, s.send_lateness_limit_ms};
    w.drop_traces = s.drop_traces;
    w.find_capacity = s.find_capacity;
    w.capacity = {s.start_level, s.max_level, s.resolution, s.confirm.value_or(1),
                  s.verify_repeats.value_or(2)};
    w.slo = s.slo;
    const fs::path out = s.output.empty() ? default_output_dir("serve") : fs::path(s.output);
    if (fs::exists(out))
        throw usage_error(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            out.string()));
    const std::size_t largest =
        s.find_capacity ? s.max_level : *std::max_element(levels.begin(), levels.end());
    const auto disk = serve_disk_estimate(s, levels, w.input_duration_s);
    const std::uint64_t disk_free = ensure_free_space(out, disk);
    runtime::ensure_descriptors(largest * 3 + 64);
    // NVML loaded here (not in a dry run): a missing library is exit 2 before any file.
    auto telemetry = open_telemetry(s.telemetry, s.metrics_listen, s.dry_run);
    if (s.dry_run) {
        print_serve_plan(s, w, levels, out, largest * 3 + 64, disk, disk_free);
        for (const auto& line : telemetry.plan)
            fmt::print("  telemetry  {}\n", line);
        if (const auto& r = w.warm_until_stable)
            fmt::print(
                "  warm       back-to-back warm-ups of {} session(s) until every GPU's power "
                "is within {:g} % and its temperature within {:g} °C over {:g} s (at most "
                "{:g} s)\n",
                w.warmup_level, r->power_fraction * 100, r->temperature_c, to_seconds(r->window),
                to_seconds(r->max_wait));
        return runtime::exit_ok;
    }
    if (w.realtime) // once, before any session: the sessions share the resampled inputs
        for (std::size_t i = 0; i < w.inputs.size(); ++i)
            w.wire_inputs.push_back(i < direct_wire.size() && direct_wire[i]
                                        ? protocol::pcm_input(std::move(*direct_wire[i]))
                                        : w.inputs[i].at_rate(protocol::input_sample_rate,
                                                              sweep::wire_sample_rate(w.realtime)));
    // Without --url: the native mock of this profile, in this process on a thread of its own
    // (it shares the client's cores; a real server, or `pacer native-mock` as its own process,
    // is what a measurement wants).
    std::unique_ptr<local_mock> mock;
    if (s.url.empty()) {
        mock =
            std::make_unique<local_mock>([profile, rt = w.realtime](boost::asio::io_context& io) {
                server::native_mock_options o;
                o.profile = profile;
                o.realtime = rt;
                return std::make_unique<server::native_mock>(io, o);
            });
        w.endpoint = transport::parse_ws_url(mock->url());
        model_in_url(w.endpoint, w.realtime, s.model);
        apply_client_settings(s.client, w.endpoint);
        w.url = mock->url() + " (built-in native mock)";
    }
    create_output_dir(out);
    if (telemetry.recorder) {
        w.telemetry = telemetry.recorder; // each run's window: docs/telemetry.md
        telemetry.recorder->start(out / "telemetry.jsonl");
        telemetry.recorder->measure_idle_baseline(); // before the first level
    }

    run::progress_reporter progress(
        *run::resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1));
    fmt::print("pacer serve: {} against {} ({}, {} pacing); writes about {}{} ({} free)\n",
               s.find_capacity ? "capacity search" : "sweep", w.url,
               w.realtime ? "protocol " + s.protocol : "profile " + std::string(profile->name),
               s.pacing, format_bytes(disk), s.find_capacity ? " or more" : "",
               format_bytes(disk_free));
    serve_printer printer(progress, use_color(), !s.metrics_listen.empty());
    // --metrics-listen: the running level's totals and its concurrency, on a thread of its own.
    std::optional<telemetry::metrics_listener> listener;
    if (!s.metrics_listen.empty()) {
        try {
            listener.emplace(s.metrics_listen, [&printer] {
                return run::live_metrics_text(printer.counters(), printer.level());
            });
        } catch (const telemetry::telemetry_error& e) {
            throw usage_error(e.what());
        }
        fmt::print(stderr, "pacer: serving the live counters at {} (--metrics-listen)\n",
                   listener->url());
        std::fflush(stderr);
    }
    const auto result = sweep::run_sweep(w, out, printer);
    const double sweep_end_s = to_seconds(clock::now());
    listener.reset();
    if (w.telemetry)
        w.telemetry->stop();

    sweep::summary_extras extras;
    extras.disk = json::object{
        {"estimated_bytes", disk},
        {"estimate_is_lower_bound", s.find_capacity},
        {"trace_bytes_per_session_second", trace::trace_bytes_per_session_second(s.protocol)},
        {"free_bytes", disk_free},
        {"drop_traces", s.drop_traces}};
    extras.transport = run::transport_json(w.endpoint); // every level's connections
    if (mock)
        extras.mock = mock->stop();
    auto summary = sweep::summary_json(w, result, std::move(extras));
    summary["command_line"] = recorded_command_line({"--header"}); // as `run` and `http` record it
    if (w.telemetry)
        add_sweep_telemetry(summary, result, *w.telemetry, sweep_end_s);
    runtime::write_new_file(out / "summary.json", json_text(summary) + "\n");
    std::optional<fs::path> report; // once, for the whole sweep
    if (!s.no_report)
        report = write_end_report(out);

    if (const auto& st = result.warm_until_stable) {
        const auto& o = *st;
        fmt::print(
            "warm       {} after {:.1f} s ({} warm-up run{}){}\n",
            o.at("stable").as_bool() ? "steady" : "NOT steady",
            o.at("waited_s").to_number<double>(), o.at("warmup_runs").to_number<std::uint64_t>(),
            o.at("warmup_runs").to_number<std::uint64_t>() == 1 ? "" : "s",
            o.at("stable").as_bool() ? std::string()
                                     : fmt::format(": {}; measured anyway (--stable-max-wait)",
                                                   o.at("why_not").as_string().c_str()));
    }
    if (result.capacity) {
        const auto& capacity = *result.capacity;
        const auto& limited = capacity.limited_by;
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
        auto check = [](const std::optional<sweep::verification>& v, bool capacity_level) {
            return v ? fmt::format("level {} met its SLOs in {} of {} verification runs{}",
                                   v->level, v->met, v->runs,
                                   v->held          ? ""
                                   : capacity_level ? " (it should meet in all)"
                                                    : " (it should miss in all)")
                     : std::string();
        };
        if (capacity.boundary_held)
            fmt::print("verified   boundary {}: {}{}{}\n",
                       *capacity.boundary_held ? "held" : "NOT held",
                       check(capacity.capacity_check, true),
                       capacity.capacity_check && capacity.failing_check ? "; " : "",
                       check(capacity.failing_check, false));
        if (const auto* e = path(summary, {"capacity", "energy_j_per_session_second"});
            e && e->is_number())
            fmt::print("energy     {:.3f} J per session-second of input at the capacity level "
                       "(docs/telemetry.md)\n",
                       e->to_number<double>());
        std::size_t runs = 0;
        double wall = 0;
        for (const auto& l : result.levels)
            for (const auto& r : l.runs) {
                ++runs;
                if (const auto* v = path(r.summary, {"resources", "wall_s"}); v && v->is_number())
                    wall += v->to_number<double>();
            }
        fmt::print(
            "cost       {} runs of {} levels, {:.1f} min of sessions plus {:g} s settle "
            "pauses each\n",
            runs,
            std::set<std::size_t>(capacity.probed_levels.begin(), capacity.probed_levels.end())
                .size(),
            wall / 60, to_seconds(w.settle));
    }
    if (const auto line = run::transport_line(w.endpoint); !line.empty())
        fmt::print("transport  {}\n", line);
    fmt::print("results    {}{}\n", (out / "summary.json").string(),
               report ? ", " + report->string() : std::string());
    if (!s.export_format.empty())
        if (const auto tables = write_end_tables(out, s.export_format))
            fmt::print("tables     {}\n", tables->string());
    if (result.interrupted)
        fmt::print("INTERRUPTED by a signal: the summary covers the levels that ran\n");
    runtime::run_verdict verdict;
    verdict.interrupted = result.interrupted;
    verdict.client_fell_behind = result.client_fell_behind;
    verdict.server_failed = result.server_failed;
    return runtime::exit_status(verdict);
}

} // namespace

command add_serve_command(CLI::App& app) {
    auto s = std::make_shared<serve_settings>();
    auto* sub = app.add_subcommand(
        "serve",
        "Concurrency sweep against a realtime speech server (docs/protocol.md §4-5). Levels run "
        "one "
        "after another; in each, every session negotiates first, then all stream from one "
        "common start 0.2 s after the last is ready. Writes c<level>/session-NNN/{trace.jsonl,"
        "input-send-receipts.json}, c<level>/summary.json, summary.json and report.html (unless "
        "--no-report), and prints a table (with a live progress line on stderr: --progress). "
        "A level is valid when the client kept its schedule: loop-lag p99 and every admitted "
        "session's send-lateness p99 within their limits, and at least one admission.\n"
        "A plan whose traces (about 125 kB/s a session; 145 with openai-realtime, 50 with "
        "vllm-realtime) the output folder's disk cannot hold is "
        "refused before it starts; --drop-traces keeps only one level's traces at a time.\n"
        "Exit status: 0 every level valid and every session succeeded; 1 pacer itself failed; "
        "2 bad input; 3 some level not valid (the client fell behind: it measured the client); "
        "4 the server failed or rejected sessions, or could not be reached (each level prints "
        "its most frequent error; with --find-capacity, only when the server could not be "
        "reached); 130 interrupted. When several apply, the first of 130, 3, 1, 4 wins.");
    sub->add_option("--url", s->url,
                    "Server, e.g. ws://127.0.0.1:8097/v1/realtime. Default: the built-in native "
                    "mock of --profile, in this process (a try-out: it shares the client's "
                    "cores; run `pacer native-mock` or a real server to measure). wss:// for "
                    "TLS (docs/tls.md)");
    add_client_options(*sub, s->client);
    // --server-metrics is the server's JSON stats here (below), not a Prometheus endpoint.
    add_telemetry_options(*sub, s->telemetry, s->metrics_listen, false);
    const char* warm = "Thermal equilibrium (docs/telemetry.md)";
    sub->add_flag("--warm-until-stable", s->warm_until_stable,
                  "Before the first level, run warm-ups of --warmup-level back to back until "
                  "every GPU's power and temperature are steady over --stable-window (or "
                  "--stable-max-wait has passed); summary.json's warm_until_stable says how long "
                  "it took. Needs --gpu-telemetry")
        ->group(warm);
    const auto given = [s](const auto&) { s->stable_rule_given = true; };
    sub->add_option("--stable-power-pct", s->stable_power_pct,
                    "Steady: (max - min) power over the window within this % of its mean")
        ->check(number_in(0, 100))
        ->capture_default_str()
        ->each(given)
        ->group(warm);
    sub->add_option("--stable-temperature-c", s->stable_temperature_c,
                    "Steady: max - min temperature over the window within this many °C")
        ->check(number_in(0, 100))
        ->capture_default_str()
        ->each(given)
        ->group(warm);
    sub->add_option("--stable-window", s->stable_window, "The window the rule is judged over")
        ->capture_default_str()
        ->each(given)
        ->group(warm);
    sub->add_option("--stable-max-wait", s->stable_max_wait,
                    "The longest wait: then the levels run anyway (said in the table and "
                    "summary.json)")
        ->capture_default_str()
        ->each(given)
        ->group(warm);
    auto* duration_opt =
        sub->add_option("-d,--duration", s->duration,
                        "Silent input per session when no --audio (at most 24h: silence is "
                        "generated per packet, never held)")
            ->capture_default_str();
    sub->add_option("--audio", s->audio,
                    "Input WAV files (any rate, channels and PCM/float encoding: mixed down to "
                    "mono and converted with libsamplerate to 16 kHz and the protocol's rate; "
                    "config.input_conversion records it); session i streams file i mod N; not "
                    "with -d (the files' lengths are the inputs')")
        ->expected(1, -1)
        ->excludes(duration_opt);
    sub->add_option("--profile", s->profile,
                    "Server profile: nemotron (VoiceChat, 80 ms units, 22.05 kHz, continuous, "
                    "output audio) or minicpmo (1000 ms units, 24 kHz, replies per question, "
                    "output audio and text). The sessions negotiate it; the levels record it")
        ->capture_default_str();
    sub->add_option("--protocol", s->protocol,
                    "Wire protocol: native (sglang-omni), openai-realtime or vllm-realtime "
                    "(docs/protocols.md). A realtime session is ready for the level's start gate "
                    "once its session.update is acknowledged (openai-realtime: session.updated; "
                    "vllm-realtime, which answers nothing: once the update and the starting "
                    "commit are sent); its level is judged by the client's timing and the "
                    "protocol's own checks (the native oracle does not apply); without --url the "
                    "built-in native mock speaks it")
        ->capture_default_str();
    sub->add_option("--turns", s->turns,
                    "openai-realtime turn handling: server-vad (stream, the server finds the "
                    "turns) or manual (commit + response.create at the input's end)")
        ->capture_default_str();
    add_scenario_option(*sub, s->scenario, "every session of every level (warm-ups too)",
                        "a turn of `input` streams the session's --audio file. Each run's and "
                        "level's aggregate gets per-turn figures (`turns`), each run's folder a "
                        "turns.jsonl, and --slo may judge turn-ttfa-p95 and "
                        "interrupt-latency-p95");
    sub->add_option("--model", s->model,
                    "vllm-realtime: the served model, named in session.update (required); "
                    "openai-realtime: added to --url's query as model=");
    auto* levels_opt = sub->add_option("--concurrencies", s->concurrencies, "Levels, e.g. 1,2,4,8")
                           ->capture_default_str();
    sub->add_option("-c,--concurrency", s->concurrency,
                    "A single level (instead of the list; not with --concurrencies)")
        ->check(whole_number(1, max_sessions))
        ->excludes(levels_opt);
    sub->add_option("--warmup-runs", s->warmup_runs,
                    "Warm-up runs before the levels (real time, no stagger), kept under "
                    "warmup-<i>/, printed, and never part of the levels or the capacity search")
        ->check(whole_number(0, 1000))
        ->capture_default_str();
    sub->add_option("--warmup-level", s->warmup_level,
                    "Sessions in each warm-up run, so that the server has seen that batch size "
                    "before any level is judged. Default: the first level the plan runs "
                    "(--start-level with --find-capacity). One session streams the first input "
                    "only; more stream the inputs round-robin like a level")
        ->check(whole_number(1, max_sessions));
    sub->add_option("--settle", s->settle,
                    "Idle time before every run but the first (warm-ups, levels, repeats, "
                    "confirmations, verifications), after every session of the run before has "
                    "closed: a real server drains its queues. Default: 5s with --find-capacity, "
                    "0s otherwise");
    sub->add_option("--server-metrics", s->server_metrics,
                    "The server's own stats endpoint, http://HOST:PORT/PATH (e.g. `pacer "
                    "native-mock`'s http://127.0.0.1:8097/stats): read with ?reset=1 before "
                    "each run and again after it; each run's summary.json records it "
                    "(server_stats) beside the client's unit lag (server_view), and the table "
                    "prints both");
    sub->add_option("--repeats", s->repeats,
                    "Run every level this many times (repeat-<r>/c<level>/); a level is valid "
                    "only if all its runs are")
        ->check(whole_number(1, 1000))
        ->capture_default_str();
    sub->add_option("--stagger-ms", s->stagger_ms,
                    "Session i of C starts stagger x i/C after the common start (0: one grid). "
                    "The default is 0, where run's is 80: a level measures the server with every "
                    "session on one grid from its start gate, the worst burst and the same at "
                    "every level (as the reference harness); run spreads its sessions' grids over "
                    "one 80 ms packet period")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--pacing", s->pacing,
                    "realtime (the 80 ms grid) or lockstep (per-unit profiles: wait for each "
                    "unit's sglang.unit.done before sending the next unit; measures time per "
                    "unit)")
        ->capture_default_str();
    sub->add_option("--startup-reserve-ms", s->startup_reserve_ms,
                    "Playback buffer before the simulated player starts (underrun metric)")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--timeout", s->timeout,
                    "Per-session deadline: admission, negotiation, exchange and close, e.g. 90s "
                    "or 2m30s. Default: the longest input + 60 s; a timeout not longer than an "
                    "input is refused");
    sub->add_option("-o,--output", s->output,
                    "Result folder; must not exist. Default: pacer-results/serve-<UTC time>")
        ->check(non_empty_path());
    sub->add_option("-t,--threads", s->threads, "Session contexts (one thread each)")
        ->check(whole_number(1, max_threads))
        ->capture_default_str();
    sub->add_flag("--drop-traces", s->drop_traces,
                  "Delete each level's trace.jsonl files once its metrics and summary.json are "
                  "written (receipts and summaries stay; `pacer replay` then has nothing to "
                  "check). A long sweep then needs room for one level's traces, not all");
    sub->add_option("--loop-lag-limit-ms", s->loop_lag_limit_ms,
                    "Validity: the session contexts' loop-lag p99 must not exceed this")
        ->check(number_in(0, max_ms, true))
        ->capture_default_str();
    sub->add_option("--send-lateness-limit-ms", s->send_lateness_limit_ms,
                    "Validity: every admitted session's send-lateness p99 must not exceed this")
        ->check(number_in(0, max_ms, true))
        ->capture_default_str();
    sub->add_flag("--find-capacity", s->find_capacity,
                  "Search levels (doubling from --start-level, then bisection) for the highest "
                  "valid level that meets every --slo; reports the capacity and each level's "
                  "evidence")
        ->group("Capacity search");
    sub->add_option("--slo", s->slo, metrics::slo_help())->group("Capacity search");
    sub->add_option("--start-level", s->start_level, "First level of the search")
        ->check(whole_number(1, max_sessions))
        ->capture_default_str()
        ->group("Capacity search");
    sub->add_option("--max-level", s->max_level, "Highest level the search may try")
        ->check(whole_number(1, max_sessions))
        ->capture_default_str()
        ->group("Capacity search");
    sub->add_option("--resolution", s->resolution,
                    "Stop bisecting when first-bad - last-good <= max(1, this x last-good)")
        ->check(number_in(0, 1))
        ->capture_default_str()
        ->group("Capacity search");
    sub->add_option("--confirm", s->confirm,
                    "Extra tries of a level that misses its SLOs or whose client timing is not "
                    "valid, each after --settle; the level fails only if every try fails "
                    "(default 1; a level whose client was not valid gets at least one more). "
                    "The first run of a new batch size, or right after an overload, can fail "
                    "once on a healthy server")
        ->check(whole_number(0, 100))
        ->group("Capacity search");
    sub->add_option("--verify-repeats", s->verify_repeats,
                    "At the end, run the capacity level and the first failing level this many "
                    "times each (default 2; 0: no verification). A capacity level that misses "
                    "in any of them counts as failing and the search goes on below it; a first "
                    "failing level that meets in all of them counts as good and the search goes "
                    "on above it; summary.json says whether the boundary held")
        ->check(whole_number(0, 100))
        ->group("Capacity search");
    add_progress_option(*sub, s->progress,
                        "the level, elapsed and ETA, sessions active/done/failed, packets sent and "
                        "late, loop lag max and errors so far",
                        "each level's end");
    add_end_output_options(*sub, s->no_report, s->export_format);
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return serve(*s); }};
}

} // namespace pacer::cli

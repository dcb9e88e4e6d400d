// `pacer serve`: concurrency sweeps with the serving metrics of docs/protocol.md §4-5, level
// validity (did the client keep its schedule?) and a capacity search against SLOs.

#include <pacer/cli/auto_report.hpp>
#include <pacer/cli/checks.hpp>
#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/input_audio.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/cli/outcome.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/cli/progress.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/level.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/metrics/realtime_level.hpp>
#include <pacer/metrics/slo.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/runtime/audio_file.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/server/native_mock.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
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
    std::string model;
    std::string concurrencies = "1,2,4,8";
    std::size_t concurrency = 0;
    std::size_t warmup_runs = 0;
    std::size_t repeats = 1;
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
    std::string export_format; ///< --export csv|jsonl: the tables at the end ("": none)
    client_settings client;    // wss:// trust and handshake headers
};

// Everything a level needs that does not change between levels.
struct sweep {
    const serve_settings& s;
    const protocol::profile& profile;
    transport::ws_endpoint endpoint;
    std::vector<std::shared_ptr<const std::vector<std::uint8_t>>> inputs;
    std::vector<double> input_duration_s; ///< per input
    /// openai-realtime / vllm-realtime (docs/protocols.md); nullopt: native.
    std::optional<protocol::realtime_protocol> realtime;
    protocol::realtime_turns turns = protocol::realtime_turns::server_vad;
    /// The inputs at the protocol's rate (realtime protocols), resampled once, in order.
    std::vector<std::shared_ptr<const std::vector<std::uint8_t>>> wire_inputs;
    /// How each input was read and converted (config.input_conversion), in order.
    json::array conversions;
    duration timeout{};
    std::vector<metrics::slo_check> slos;
    std::string url;                       ///< `--url`, or the built-in mock's address and name
    progress_reporter* progress = nullptr; ///< the live line (--progress), one phase per level
};

// One run of one level: its summary (as written to its folder) and its sessions.
struct level_run {
    std::size_t concurrency = 0;
    std::size_t repeat = 0;
    json::object summary;
    std::vector<metrics::level_session> sessions;
    /// Realtime protocols: the sessions with their protocol's figures (`sessions` holds the
    /// same sessions' status, admission and send lateness).
    std::vector<metrics::realtime_level_session> realtime_sessions;
    double loop_lag_p99_s = 0;
    bool valid = false;
    bool interrupted = false;
    /// Some session was admitted and the client's timing was not valid: it fell behind.
    bool client_fell_behind = false;
    /// Some session failed or was rejected; `unreachable` when none reached the server.
    bool server_failed = false;
    std::optional<std::string> unreachable; ///< "cannot connect to URL: connection refused"
    std::size_t failed = 0, rejected = 0;
    std::vector<error_count> errors; ///< distinct messages, most frequent first
};

std::optional<double> p99_of(std::vector<double> v) {
    return percentile(v, 0.99);
}

// Client timing validity (S-W, docs/protocol.md §5): the loop ticker has samples and its p99 is
// within the limit, every admitted session's send-lateness p99 is known and within the limit,
// and at least one session was admitted. Returns the reasons it does not hold.
std::vector<std::string> validity_problems(const serve_settings& s,
                                           std::optional<double> loop_lag_p99,
                                           std::span<const metrics::level_session> sessions) {
    std::vector<std::string> problems;
    const double lag_limit = s.loop_lag_limit_ms / 1e3, late_limit = s.send_lateness_limit_ms / 1e3;
    if (!loop_lag_p99)
        problems.emplace_back("the loop-lag ticker has no samples");
    else if (*loop_lag_p99 > lag_limit)
        problems.push_back(fmt::format("loop lag p99 {:.1f} ms > {:.0f} ms", *loop_lag_p99 * 1e3,
                                       s.loop_lag_limit_ms));
    std::size_t admitted = 0, over = 0;
    for (const auto& x : sessions) {
        if (!x.admitted.admitted)
            continue;
        ++admitted;
        over += !x.send_lateness_p99_s || *x.send_lateness_p99_s > late_limit;
    }
    if (over)
        problems.push_back(fmt::format("{} admitted session(s) with send-lateness p99 > {:.0f} ms "
                                       "or no sends",
                                       over, s.send_lateness_limit_ms));
    if (admitted == 0)
        problems.emplace_back("no session was admitted");
    return problems;
}

// What a realtime session's evaluation needs: the protocol, its turns, the input's length, the
// output rate the session asked for and the player's reserve.
metrics::realtime_context realtime_context(const sweep& w, double input_duration_s) {
    metrics::realtime_context c;
    c.protocol = *w.realtime;
    c.turns = w.turns;
    c.input_duration_s = input_duration_s;
    c.output_sample_rate = static_cast<double>(protocol::openai_sample_rate);
    c.startup_reserve_s = w.s.startup_reserve_ms / 1e3;
    return c;
}

std::size_t wire_sample_rate(const sweep& w) {
    return w.realtime == protocol::realtime_protocol::openai ? protocol::openai_sample_rate
                                                             : protocol::input_sample_rate;
}

// A level's (and the sweep's) record of the realtime protocol's settings.
void add_realtime_config(json::object& o, const sweep& w) {
    o["turns"] = w.realtime == protocol::realtime_protocol::openai ? json::value(w.s.turns)
                                                                   : json::value(nullptr);
    o["model"] = w.s.model.empty() ? json::value(nullptr) : json::value(w.s.model);
    o["wire_sample_rate"] = wire_sample_rate(w);
    o["resampler"] = wire_sample_rate(w) != protocol::input_sample_rate
                         ? "libsamplerate SRC_SINC_BEST_QUALITY"
                         : "none";
}

// Which checks decide a level's validity and its sessions' status: the client's timing
// always; the native protocol's session checks (docs/protocol.md §4.2), or the realtime
// protocol's own (the native replay oracle does not apply to those).
json::object validity_checks_json(const sweep& w) {
    const auto& s = w.s;
    json::array client{
        fmt::format("loop-lag p99 of the session contexts <= {:g} ms", s.loop_lag_limit_ms),
        fmt::format("every admitted session's send-lateness p99 <= {:g} ms",
                    s.send_lateness_limit_ms),
        "at least one session admitted"};
    json::array session;
    if (w.realtime) {
        for (auto& c : metrics::realtime_protocol_checks(realtime_context(w, 0)))
            session.emplace_back(std::move(c));
    } else {
        session = {"admitted and the session's files readable", "every append sent",
                   "sglang.input_audio.drained and session.closed received",
                   "no server error event, no client error line",
                   "output audio (continuous profiles) and response.done completed"};
    }
    return {{"protocol", s.protocol},
            {"client", std::move(client)},
            {"session", std::move(session)},
            {"oracle", w.realtime ? "not applicable: the replay oracle judges the native "
                                    "protocol only"
                                  : "not run by serve: `pacer replay` of a level runs it"}};
}

level_run run_level(const sweep& w, const fs::path& dir, std::size_t concurrency,
                    std::size_t repeat, bool warmup) {
    const auto& s = w.s;
    create_output_dir(dir);
    session::run_options ro;
    ro.sessions = concurrency;
    ro.threads = s.threads;
    ro.endpoint = w.endpoint;
    ro.inputs = warmup ? decltype(w.inputs){w.inputs.front()} : w.inputs;
    ro.timeout = w.timeout;
    ro.trace_root = dir;
    ro.stagger = warmup ? duration::zero() : from_seconds(s.stagger_ms / 1e3);
    ro.start_gate_lead = std::chrono::milliseconds(200);
    if (s.pacing == "lockstep" && !warmup)
        ro.lockstep_unit_bytes = static_cast<std::size_t>(w.profile.unit_ms) * 32;
    ro.profile = &w.profile;
    ro.realtime = w.realtime;
    ro.turns = w.turns;
    ro.model = s.model;
    if (w.realtime)
        ro.wire_inputs = warmup ? decltype(w.wire_inputs){w.wire_inputs.front()} : w.wire_inputs;
    if (w.progress && w.progress->on()) {
        // ETA: the longest input after the common start (0.2 s after the last is ready).
        double longest = 0;
        for (std::size_t i = 0; i < (warmup ? 1 : w.input_duration_s.size()); ++i)
            longest = std::max(longest, w.input_duration_s[i]);
        w.progress->begin(warmup ? std::string("warmup")
                          : s.repeats > 1
                              ? fmt::format("level c{} (repeat {})", concurrency, repeat)
                              : fmt::format("level c{}", concurrency),
                          longest + 0.2 + to_seconds(ro.stagger));
        ro.live = &w.progress->counters();
    }
    const double cpu_before = runtime::read_process_usage().cpu_s;
    auto outcome = session::run_duplex(ro);
    if (ro.live)
        w.progress->end(); // the terminal line is cleared before the level's row
    const auto usage = runtime::read_process_usage();

    level_run run;
    run.concurrency = concurrency;
    run.repeat = repeat;
    run.interrupted = outcome.interrupted;
    // Metrics come from the files on disk, as `pacer replay` would read them. They are
    // computed after the level's last session ended, so they cannot delay a send.
    metrics::session_params context;
    context.startup_reserve_s = s.startup_reserve_ms / 1e3;
    double input_max = 0;
    for (std::size_t i = 0; i < concurrency; ++i) {
        const auto folder = dir / trace::session_folder_name(static_cast<std::uint32_t>(i));
        context.input_duration_s = w.input_duration_s[warmup ? 0 : i % w.inputs.size()];
        input_max = std::max(input_max, *context.input_duration_s);
        std::optional<std::string> trace, receipts;
        std::vector<std::string> extra;
        try {
            trace = read_file_if_exists(folder / "trace.jsonl");
            receipts = read_file_if_exists(folder / "input-send-receipts.json");
        } catch (const std::exception& e) {
            extra.emplace_back(e.what());
        }
        if (i < outcome.sessions.size() && !outcome.sessions[i].trace_error.empty())
            extra.push_back("trace: " + outcome.sessions[i].trace_error);
        const auto trace_text = trace ? std::optional<std::string_view>(*trace) : std::nullopt;
        const auto receipts_text =
            receipts ? std::optional<std::string_view>(*receipts) : std::nullopt;
        if (w.realtime) {
            run.realtime_sessions.push_back(metrics::evaluate_realtime_session(
                static_cast<std::uint32_t>(i), trace_text, receipts_text,
                realtime_context(w, *context.input_duration_s), extra));
            run.sessions.push_back(run.realtime_sessions.back().base);
            continue;
        }
        run.sessions.push_back(metrics::evaluate_session(static_cast<std::uint32_t>(i), trace_text,
                                                         receipts_text, w.profile, context, extra));
    }

    std::vector<double> lags;
    for (const auto& l : outcome.loop_lag_s)
        lags.insert(lags.end(), l.begin(), l.end());
    const auto lag_p99 = p99_of(lags);
    run.loop_lag_p99_s = lag_p99.value_or(0);
    const auto problems = validity_problems(s, lag_p99, run.sessions);
    run.valid = problems.empty() && !outcome.interrupted;
    // What the server did: failures, rejections, the errors, and whether it could be reached.
    std::vector<connect_outcome> attempts;
    std::vector<std::vector<std::string>> session_errors;
    bool any_admitted = false;
    for (const auto& x : run.sessions) {
        attempts.push_back({x.admitted.admitted, x.admitted.rejected, x.errors});
        session_errors.push_back(x.errors);
        any_admitted = any_admitted || x.admitted.admitted;
        run.failed += x.status == metrics::session_status::failed;
        run.rejected += x.status == metrics::session_status::rejected;
    }
    run.client_fell_behind = any_admitted && !problems.empty();
    run.server_failed = run.failed + run.rejected > 0;
    run.errors = count_errors(session_errors, false);
    if (const auto reason = unreachable_reason(attempts))
        run.unreachable =
            fmt::format("cannot connect to {}: {}", s.url.empty() ? w.url : s.url, *reason);

    auto& o = run.summary;
    o["concurrency"] = concurrency;
    o["repeat"] = repeat;
    o["warmup"] = warmup;
    o["input_duration_s"] = input_max;
    if (ro.inputs.size() == 1) // `pacer replay` of a session folder reads this
        o["config"] = json::object{{"input_duration_s", input_max}};
    o["common_start_s"] =
        outcome.common_start_s ? json::value(*outcome.common_start_s) : json::value(nullptr);
    o["configured_sessions"] = outcome.ready_sessions;
    o["profile"] = w.realtime ? json::value(nullptr) : json::value(w.profile.name);
    o["protocol"] = s.protocol;
    if (w.realtime)
        add_realtime_config(o, w);
    o["pacing"] = ro.lockstep_unit_bytes ? "lockstep" : "realtime";
    o["playback_startup_reserve_s"] = context.startup_reserve_s;
    o["stagger_s"] = to_seconds(ro.stagger);
    o["loop_lag_s"] = metrics::distribution_json(std::move(lags));
    o["loop_lag_limit_s"] = s.loop_lag_limit_ms / 1e3;
    o["send_lateness_limit_s"] = s.send_lateness_limit_ms / 1e3;
    o["client_timing_valid"] = run.valid;
    json::array reasons;
    for (const auto& p : problems)
        reasons.emplace_back(p);
    if (outcome.interrupted)
        reasons.emplace_back("interrupted by a signal");
    o["client_timing_problems"] = std::move(reasons);
    o["validity_checks"] = validity_checks_json(w);
    o["unreachable"] = run.unreachable ? json::value(*run.unreachable) : json::value(nullptr);
    json::array errors;
    for (const auto& e : run.errors)
        errors.push_back({{"message", e.what}, {"sessions", e.sessions}});
    o["errors"] = std::move(errors); // distinct errors, most frequent first
    o["traces_dropped"] = s.drop_traces;
    json::array sessions;
    if (w.realtime)
        for (const auto& x : run.realtime_sessions)
            sessions.push_back(x.to_json());
    else
        for (const auto& x : run.sessions)
            sessions.push_back(x.to_json());
    o["sessions"] = std::move(sessions);
    o["aggregate"] = w.realtime ? metrics::aggregate_realtime_level(run.realtime_sessions)
                                : metrics::aggregate_level(run.sessions, w.profile);
    if (!w.slos.empty())
        o["slo"] = metrics::evaluate_slos(w.slos, o.at("aggregate").as_object());
    const double wall = outcome.wall_s;
    const auto waits = metrics::sum_trace_waits(outcome.sessions);
    o["resources"] =
        json::object{{"wall_s", wall},
                     {"client_cpu_s", usage.cpu_s - cpu_before},
                     {"client_cpu_cores", wall > 0 ? (usage.cpu_s - cpu_before) / wall : 0.0},
                     {"writer_cpu_s", outcome.writer_cpu_s},
                     {"peak_rss_bytes", usage.peak_rss_bytes},
                     {"trace_bytes", outcome.writer.bytes},
                     {"trace_channel_waits", waits.waits},
                     {"trace_channel_wait_s", waits.wait_s}};
    write_new_file(dir / "summary.json", json::serialize(o) + "\n");
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

void print_row(const level_run& r, bool color) {
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
    const std::string line = fmt::format(
        "{:>6} {:>3} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}  ", r.concurrency, r.repeat,
        fmt::format("{}/{}", count("admitted_sessions"), count("attempted_sessions")),
        fmt::format("{}", count("successful_sessions")), cell_ms(path(a, {"ttfa_s", "p50"})),
        cell_ms(path(a, {"ttfa_s", "p95"})), cell_ratio(path(a, {"units", "unit_miss_rate"})),
        cell_ratio(a.if_contains("underrun_ratio")), cell_ms(path(a, {"send_lateness_s", "p99"})),
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

// One level of the plan, `repeats` times; the level's pooled entry for the top summary.
struct level_result {
    std::size_t concurrency = 0;
    std::vector<level_run> runs;
    bool valid = true;
    bool slo_met = true;
    bool interrupted = false;
    bool client_fell_behind = false;
    bool server_failed = false;
    bool unreachable = false;
    json::object entry;
};

// `second_try`: the capacity search runs a level whose client timing was not valid once more,
// in c<level>-again/.
level_result run_plan_level(const sweep& w, const fs::path& out, std::size_t c, bool color,
                            bool second_try = false) {
    level_result lr;
    lr.concurrency = c;
    std::vector<metrics::level_session> pooled;
    std::vector<metrics::realtime_level_session> pooled_realtime;
    double lag_p99_max = 0;
    const std::string name = fmt::format("c{}{}", c, second_try ? "-again" : "");
    for (std::size_t r = 1; r <= w.s.repeats; ++r) {
        const fs::path dir =
            w.s.repeats > 1 ? out / fmt::format("repeat-{}", r) / name : out / name;
        auto run = run_level(w, dir, c, r, false);
        print_row(run, color);
        lr.valid = lr.valid && run.valid;
        lr.client_fell_behind = lr.client_fell_behind || run.client_fell_behind;
        lr.server_failed = lr.server_failed || run.server_failed;
        lr.unreachable = lr.unreachable || run.unreachable.has_value();
        lag_p99_max = std::max(lag_p99_max, run.loop_lag_p99_s);
        pooled.insert(pooled.end(), run.sessions.begin(), run.sessions.end());
        pooled_realtime.insert(pooled_realtime.end(), run.realtime_sessions.begin(),
                               run.realtime_sessions.end());
        lr.interrupted = run.interrupted;
        lr.runs.push_back(std::move(run));
        if (lr.interrupted || lr.unreachable)
            break;
    }
    lr.entry["concurrency"] = c;
    lr.entry["second_try"] = second_try;
    lr.entry["repeats"] = lr.runs.size();
    lr.entry["client_timing_valid"] = lr.valid;
    lr.entry["loop_lag_p99_s"] = lag_p99_max;
    auto aggregate = w.realtime ? metrics::aggregate_realtime_level(pooled_realtime)
                                : metrics::aggregate_level(pooled, w.profile);
    if (!w.slos.empty()) {
        auto slo = metrics::evaluate_slos(w.slos, aggregate);
        lr.slo_met = slo.at("met").as_bool();
        lr.entry["slo"] = std::move(slo);
    }
    lr.entry["aggregate"] = std::move(aggregate);
    return lr;
}

json::object config_json(const sweep& w, std::span<const std::size_t> levels) {
    const auto& s = w.s;
    json::array audio, plan;
    for (const auto& a : s.audio)
        audio.emplace_back(a);
    for (auto c : levels)
        plan.push_back(c);
    json::object c{{"url", w.url},
                   {"audio", std::move(audio)},
                   {"profile", w.realtime ? json::value(nullptr) : json::value(w.profile.name)},
                   {"protocol", s.protocol},
                   {"levels", std::move(plan)},
                   {"warmup_runs", s.warmup_runs},
                   {"repeats", s.repeats},
                   {"stagger_ms", s.stagger_ms},
                   {"pacing", s.pacing},
                   {"startup_reserve_ms", s.startup_reserve_ms},
                   {"timeout_s", to_seconds(w.timeout)},
                   {"threads", s.threads},
                   {"loop_lag_limit_ms", s.loop_lag_limit_ms},
                   {"send_lateness_limit_ms", s.send_lateness_limit_ms},
                   {"start_lead_s", 0.2},
                   {"drop_traces", s.drop_traces}};
    if (s.audio.empty())
        c["silence"] = s.duration;
    if (w.realtime)
        add_realtime_config(c, w);
    c["input_conversion"] = w.conversions;
    c["validity_checks"] = validity_checks_json(w);
    if (s.find_capacity)
        c["find_capacity"] = json::object{{"start_level", s.start_level},
                                          {"max_level", s.max_level},
                                          {"resolution", s.resolution},
                                          {"slo", s.slo}};
    return c;
}

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
        const auto t = trace_bytes_estimate(sessions, d);
        traces += t;
        largest = std::max(largest, t);
        receipts += receipt_bytes_estimate(sessions, d);
    };
    for (std::size_t i = 0; i < s.warmup_runs; ++i)
        add(1, input_duration_s.front());
    for (std::size_t r = 0; r < s.repeats; ++r)
        for (auto c : plan)
            add(c, longest);
    return receipts + (s.drop_traces ? largest : traces);
}

// What `serve` would do, as checked: `--dry-run` prints it instead of running.
void print_serve_plan(const sweep& w, std::span<const std::size_t> levels, const fs::path& out,
                      std::size_t descriptors, std::uint64_t disk, std::uint64_t disk_free) {
    const auto& s = w.s;
    fmt::print("pacer serve --dry-run: checked; nothing started, nothing written\n");
    fmt::print("  target     {}\n", s.url.empty()
                                        ? fmt::format("the built-in native mock of {} {} (in this "
                                                      "process, any free loopback port)",
                                                      w.realtime ? "protocol" : "profile",
                                                      w.realtime ? s.protocol : w.profile.name)
                                        : s.url);
    if (w.realtime)
        fmt::print("  protocol   {}{}{}, input at {} Hz, start gate after {}\n", s.protocol,
                   w.realtime == protocol::realtime_protocol::openai ? ", turns " + s.turns : "",
                   s.model.empty() ? "" : ", model " + s.model, wire_sample_rate(w),
                   w.realtime == protocol::realtime_protocol::openai
                       ? "session.updated"
                       : "session.update and the starting commit");
    else
        fmt::print("  profile    {}, {} pacing\n", w.profile.name, s.pacing);
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
    fmt::print("  runs       {} repeat(s) per level, {} warmup run(s)\n", s.repeats, s.warmup_runs);
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
               w.s.no_report ? "" : ", report.html",
               w.s.export_format.empty() ? "" : ", tables-" + w.s.export_format + "/");
    fmt::print("  descriptors about {} needed, limit {}\n", descriptors,
               runtime::descriptor_limit());
    fmt::print("  disk       about {} of traces and receipts{}, {} free\n", format_bytes(disk),
               s.drop_traces ? " (--drop-traces: one level's traces at a time)" : "",
               format_bytes(disk_free));
}

int serve(const serve_settings& s) {
    // Validate everything before anything is created.
    const auto* profile = protocol::find_profile(s.profile);
    if (!profile)
        throw usage_error(fmt::format("--profile '{}' is not known: use nemotron or minicpmo "
                                      "(or their full names)",
                                      s.profile));
    sweep w{s, *profile, {}, {}, {}, {}, {}, {}, {}, {}, {}, s.url};
    w.endpoint = url_option(s.url);
    apply_client_settings(s.client, w.endpoint); // bad headers, a missing key: before any file
    if (s.pacing != "realtime" && s.pacing != "lockstep")
        throw usage_error(
            fmt::format("--pacing must be realtime or lockstep (got '{}')", s.pacing));
    if (s.protocol != "native") {
        protocol::realtime_protocol p{};
        if (!protocol::parse_realtime_protocol(s.protocol, p))
            throw usage_error(fmt::format("--protocol '{}' is not known: use native, "
                                          "openai-realtime or vllm-realtime",
                                          s.protocol));
        if (p == protocol::realtime_protocol::vllm && s.model.empty())
            throw usage_error("--protocol vllm-realtime needs --model (the served model)");
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
    if (s.turns != "server-vad" && s.turns != "manual")
        throw usage_error(
            fmt::format("--turns '{}' is not known: use server-vad or manual", s.turns));
    w.turns = s.turns == "manual" ? protocol::realtime_turns::manual
                                  : protocol::realtime_turns::server_vad;
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
    }
    try {
        w.slos = metrics::parse_slos(s.slo);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    if (s.find_capacity &&
        !std::any_of(w.slos.begin(), w.slos.end(),
                     [](const metrics::slo_check& c) { return c.name == "success-rate"; }))
        w.slos.push_back(metrics::default_success_slo()); // every session must succeed unless told
    if (s.audio.empty()) {
        const auto d = parse_duration(s.duration);
        if (!d || d->count() == 0)
            throw usage_error(
                fmt::format("--duration '{}' is not a positive duration such as 10s", s.duration));
        w.inputs.push_back(std::make_shared<const std::vector<std::uint8_t>>(runtime::silence(*d)));
    }
    if (s.audio.empty())
        w.conversions.push_back(silence_conversion(wire_sample_rate(w)));
    std::vector<std::optional<std::vector<std::uint8_t>>> direct_wire; // from each file
    for (const auto& a : s.audio) {
        auto in = load_input_audio(a, wire_sample_rate(w));
        w.inputs.push_back(std::make_shared<const std::vector<std::uint8_t>>(std::move(in.pcm)));
        w.conversions.push_back(std::move(in.conversion));
        direct_wire.push_back(std::move(in.wire));
    }
    if (s.timeout.empty()) {
        std::size_t longest = 0;
        for (const auto& in : w.inputs)
            longest = std::max(longest, in->size());
        w.timeout = schedule::input_duration(longest) +
                    std::chrono::duration_cast<duration>(default_timeout_margin);
    }
    for (const auto& in : w.inputs) {
        const double d = to_seconds(schedule::input_duration(in->size()));
        if (to_seconds(w.timeout) <= d)
            throw usage_error(
                fmt::format("--timeout {} must be longer than the input ({:.2f} s)", s.timeout, d));
        w.input_duration_s.push_back(d);
    }
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
    if (s.dry_run) {
        print_serve_plan(w, levels, out, largest * 3 + 64, disk, disk_free);
        return exit_ok;
    }
    if (w.realtime) // once, before any session: the sessions share the resampled inputs
        for (std::size_t i = 0; i < w.inputs.size(); ++i)
            w.wire_inputs.push_back(std::make_shared<const std::vector<std::uint8_t>>(
                i < direct_wire.size() && direct_wire[i]
                    ? std::move(*direct_wire[i])
                    : protocol::resample_pcm16(*w.inputs[i], protocol::input_sample_rate,
                                               wire_sample_rate(w))));
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
        apply_client_settings(s.client, w.endpoint);
        w.url = mock->url() + " (built-in native mock)";
    }
    create_output_dir(out);

    const bool color = use_color();
    progress_reporter progress(*resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1));
    w.progress = &progress;
    fmt::print("pacer serve: {} against {} ({}, {} pacing); writes about {}{} ({} free)\n",
               s.find_capacity ? "capacity search" : "sweep", w.url,
               w.realtime ? "protocol " + s.protocol : "profile " + std::string(profile->name),
               s.pacing, format_bytes(disk), s.find_capacity ? " or more" : "",
               format_bytes(disk_free));
    bool interrupted = false;
    json::array runs, level_entries;
    for (std::size_t i = 1; i <= s.warmup_runs && !interrupted; ++i) {
        auto run = run_level(w, out / fmt::format("warmup-{}", i), 1, 0, true);
        fmt::print("warmup {}: {} -> {}\n", i,
                   run.sessions.front().success() ? "succeeded" : "failed",
                   run.valid ? "client timing valid" : "client timing NOT valid");
        interrupted = run.interrupted;
    }
    print_header();
    std::vector<level_result> results;
    auto probe = [&](std::size_t c, bool second_try = false) -> const level_result& {
        results.push_back(run_plan_level(w, out, c, color, second_try));
        interrupted = interrupted || results.back().interrupted;
        return results.back();
    };
    json::object capacity;
    if (!interrupted && s.find_capacity) {
        // Doubling until a level fails its SLOs, then bisection between the last good level
        // and the first bad one. A level whose client timing is not valid twice in a row ends
        // the search: beyond it, the figures would measure the client, not the server. (One
        // second try, because a single stall of this host, such as the kernel writing back the
        // previous levels' traces, must not end a search that later levels would pass.)
        std::size_t good = 0, c = s.start_level;
        std::optional<std::size_t> bad;
        std::string limited_by = "max-level";
        json::array probes;
        bool second_try = false;
        while (!interrupted) {
            const auto& r = probe(c, second_try);
            probes.push_back(c);
            if (r.interrupted)
                break;
            if (r.unreachable) {
                limited_by = "unreachable";
                break;
            }
            if (!r.valid) {
                if (!second_try) {
                    second_try = true;
                    continue;
                }
                limited_by = "client";
                break;
            }
            second_try = false;
            if (r.slo_met) {
                good = c;
                if (!bad && c == s.max_level)
                    break;
                c = bad ? (good + *bad) / 2 : std::min(c * 2, s.max_level);
            } else {
                bad = c;
                limited_by = "slo";
                c = (good + *bad) / 2;
            }
            if (bad && (*bad - good <= std::max<std::size_t>(
                                           1, static_cast<std::size_t>(
                                                  s.resolution * static_cast<double>(good))) ||
                        c <= good))
                break;
        }
        capacity["sessions"] = good;
        capacity["first_failing_level"] = bad ? json::value(*bad) : json::value(nullptr);
        capacity["limited_by"] = interrupted ? "interrupted" : limited_by;
        capacity["probed_levels"] = std::move(probes);
        capacity["slo"] = s.slo;
    } else {
        for (auto c : levels) {
            if (interrupted)
                break;
            if (probe(c).unreachable) {
                fmt::print("stopped: the server cannot be reached\n");
                break;
            }
        }
    }
    bool all_valid = true;
    run_verdict verdict;
    verdict.interrupted = interrupted;
    for (auto& r : results) {
        all_valid = all_valid && r.valid;
        verdict.client_fell_behind = verdict.client_fell_behind || r.client_fell_behind;
        // A capacity search drives the server past its capacity on purpose: the failures of
        // the levels beyond it are the search's evidence, not a failed command.
        verdict.server_failed =
            verdict.server_failed || (s.find_capacity ? r.unreachable : r.server_failed);
        for (auto& run : r.runs)
            runs.push_back(std::move(run.summary));
        level_entries.push_back(std::move(r.entry));
    }

    json::object summary;
    summary["schema_version"] = 1;
    summary["command"] = "serve";
    std::vector<std::size_t> probed;
    for (const auto& r : results)
        probed.push_back(r.concurrency);
    summary["config"] = config_json(w, s.find_capacity ? probed : levels);
    summary["disk"] =
        json::object{{"estimated_bytes", disk},
                     {"estimate_is_lower_bound", s.find_capacity},
                     {"trace_bytes_per_session_second", trace_bytes_per_session_second},
                     {"free_bytes", disk_free},
                     {"drop_traces", s.drop_traces}};
    summary["runs"] = std::move(runs);
    summary["levels"] = std::move(level_entries);
    if (s.find_capacity)
        summary["capacity"] = capacity;
    summary["client_timing_valid"] = all_valid;
    summary["interrupted"] = interrupted;
    summary["transport"] = transport_json(w.endpoint); // every level's connections
    if (mock)
        summary["mock"] = mock->stop();
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
    write_new_file(out / "summary.json", json::serialize(summary) + "\n");
    std::optional<fs::path> report; // once, for the whole sweep
    if (!s.no_report)
        report = write_end_report(out);

    if (s.find_capacity) {
        const auto& limited = capacity.at("limited_by").as_string();
        fmt::print("capacity   {} sessions{} ({})\n", capacity.at("sessions").as_uint64(),
                   limited == "max-level" ? " or more" : "",
                   limited == "slo"           ? fmt::format("level {} missed the SLOs",
                                                            capacity.at("first_failing_level").as_uint64())
                   : limited == "client"      ? "the client could not keep its schedule beyond it: "
                                                "add client cores or processes"
                   : limited == "max-level"   ? "every probed level met the SLOs; raise --max-level"
                   : limited == "unreachable" ? "the server could not be reached"
                                              : "interrupted");
    }
    if (const auto line = transport_line(w.endpoint); !line.empty())
        fmt::print("transport  {}\n", line);
    fmt::print("results    {}{}\n", (out / "summary.json").string(),
               report ? ", " + report->string() : std::string());
    if (!s.export_format.empty())
        if (const auto tables = write_end_tables(out, s.export_format))
            fmt::print("tables     {}\n", tables->string());
    if (interrupted)
        fmt::print("INTERRUPTED by a signal: the summary covers the levels that ran\n");
    return exit_status(verdict);
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
        "A plan whose traces (about 110 kB/s a session) the output folder's disk cannot hold is "
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
    sub->add_option("--audio", s->audio,
                    "Input WAV files (any rate, channels and PCM/float encoding: mixed down to "
                    "mono and converted with libsamplerate to 16 kHz and the protocol's rate; "
                    "config.input_conversion records it); session i streams file i mod N")
        ->expected(1, -1);
    sub->add_option("-d,--duration", s->duration, "Silent input per session when no --audio")
        ->capture_default_str();
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
    sub->add_option("--model", s->model,
                    "vllm-realtime: the served model, named in session.update (required)");
    sub->add_option("--concurrencies", s->concurrencies, "Levels, e.g. 1,2,4,8")
        ->capture_default_str();
    sub->add_option("-c,--concurrency", s->concurrency, "A single level (instead of the list)")
        ->check(whole_number(1, max_sessions));
    sub->add_option("--warmup-runs", s->warmup_runs,
                    "Single-session runs before the levels (first input, real time, no stagger), "
                    "kept under warmup-<i>/ and left out of the levels")
        ->check(whole_number(0, 1000))
        ->capture_default_str();
    sub->add_option("--repeats", s->repeats,
                    "Run every level this many times (repeat-<r>/c<level>/); a level is valid "
                    "only if all its runs are")
        ->check(whole_number(1, 1000))
        ->capture_default_str();
    sub->add_option("--stagger-ms", s->stagger_ms,
                    "Session i of C starts stagger x i/C after the common start (0: one grid)")
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
                    "Result folder; must not exist. Default: pacer-results/serve-<UTC time>");
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
    sub->add_option("--progress", s->progress,
                    "Live progress on stderr: the level, elapsed and ETA, sessions "
                    "active/done/failed, packets sent and late, loop lag max and errors so far. "
                    "auto: on when stderr is a terminal (one line refreshed 4 times a second); "
                    "always: also into a pipe or file (a line every 10 s and one at each level's "
                    "end); never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
    add_end_output_options(*sub, s->no_report, s->export_format);
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return serve(*s); }};
}

} // namespace pacer::cli

// `pacer native-mock` (native_mock.hpp): the options, the mock's state across sessions and its
// stats. One session's loop and replies are native_session.cpp, native_replies.cpp and
// native_realtime.cpp.

#include <pacer/core/bad_input.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/server/mock_process.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include "native_session.hpp"
#include <charconv>
#include <stdexcept>
#include <string>

namespace pacer::server {

namespace asio = boost::asio;

namespace {

// In the order of `peer_fault`.
constexpr std::string_view fault_names[] = {
    "none",           "server_error", "delayed_fatal", "nonfatal_error", "timeout",
    "malformed_json", "nonfinite",    "disconnect",    "linger",         "close_without_update",
};

// `x` as a JSON number in plain decimals (never `1E0`): nanosecond resolution, trailing zeros
// dropped.
std::string plain(double x) {
    std::string s = fmt::format("{:.9f}", x);
    while (s.size() > 2 && s.back() == '0' && s[s.size() - 2] != '.')
        s.pop_back();
    return s;
}

std::string plain(std::optional<double> x, double scale = 1) {
    return x ? plain(*x * scale) : std::string("null");
}

// The word of `--protocol` for the mock's protocol.
std::string_view protocol_name(const native_mock_options& o) {
    if (!o.realtime)
        return "native";
    switch (*o.realtime) {
    case protocol::realtime_protocol::openai:
        return "openai-realtime";
    case protocol::realtime_protocol::vllm:
        return "vllm-realtime";
    case protocol::realtime_protocol::vllm_omni:
        break;
    }
    return "vllm-omni";
}

std::size_t parse_index(std::string_view text) {
    std::size_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        throw std::invalid_argument("");
    return v;
}

} // namespace

peer_fault parse_peer_fault(std::string_view name) {
    return static_cast<peer_fault>(detail::parse_choice(fault_names, name, "--fault"));
}

session_set session_set::parse(const std::string_view text) {
    session_set s;
    std::string_view list = text;
    try {
        while (true) {
            const auto comma = list.find(',');
            const auto item = list.substr(0, comma);
            const auto dash = item.find('-');
            const std::size_t first = parse_index(item.substr(0, dash));
            const std::size_t last =
                dash == std::string_view::npos ? first : parse_index(item.substr(dash + 1));
            if (last < first)
                throw std::invalid_argument("");
            s.ranges_.emplace_back(first, last);
            if (comma == std::string_view::npos)
                break;
            list.remove_prefix(comma + 1);
        }
    } catch (const std::invalid_argument&) {
        throw bad_input(fmt::format(
            "--fault-sessions must list session indices like 0,2,5-7 (got '{}')", text));
    }
    return s;
}

bool session_set::contains(std::size_t index) const {
    for (const auto& [first, last] : ranges_)
        if (first <= index && index <= last)
            return true;
    return false;
}

std::string granted_capabilities(const native_mock_options& o) {
    // The profile's output modalities, exactly: the reference oracle of the MiniCPM-o profile
    // that asks for audio and text fails a grant of audio alone.
    return fmt::format(
        R"({{"interaction":"native","native_full_duplex":true,"proactive_output":false,)"
        R"("turn_control":[null],"client_commit":false,"input_modalities":["audio"],)"
        R"("output_modalities":{},"input_audio_format":{{"type":"audio/pcm","rate":16000}},)"
        R"("output_audio_format":{{"type":"audio/pcm","rate":{}}},"native_unit_ms":{},)"
        R"("first_unit_ms":{},"microturn_ms":null,"tail_policy":"pad",)"
        R"("supports_server_interrupt":false,"supports_truncate":false,"supports_resume":false,)"
        R"("partial_style":"append_only","pressure_policy":"reject","strict_order":true,)"
        R"("rejections":[],"limits":{{"max_input_bytes":1920000,"max_input_chunks":128,)"
        R"("max_output_bytes":4194304,"max_output_events":256,"max_responses":128,)"
        R"("max_segments":256,"max_history_chars":65536,"session_timeout_s":240,)"
        R"("cleanup_timeout_s":30}}}})",
        protocol::output_modalities_json(*o.profile), o.output_sample_rate, o.profile->unit_ms,
        o.profile->unit_ms);
}

void print_native_mock_plan(const native_mock_options& o, std::size_t threads,
                            const std::string& stats_output, std::string_view fault_sessions) {
    const std::string_view fault = fault_names[static_cast<std::size_t>(o.fault)];
    server::print_mock_process_plan("native-mock", o, stats_output);
    fmt::print("  protocol   {}\n", protocol_name(o));
    fmt::print("  profile    {}, output {}, bursts of {} unit(s){}\n", o.profile->name,
               o.output_sample_rate == 0 ? std::string("at the profile's rate")
                                         : fmt::format("{} Hz", o.output_sample_rate),
               o.burst_units,
               o.profile->continuous
                   ? std::string()
                   : fmt::format(", a question every {} unit(s)", o.question_every));
    fmt::print("  threads    {}\n", threads);
    fmt::print("  capacity   unit latency {:g} ms + {:g} ms per other open session\n",
               o.unit_latency.count(), o.per_session_cost.count());
    fmt::print("  worker     {}\n",
               o.service_time.count() > 0
                   ? fmt::format("{:g} ms of one shared worker per unit, first in first out",
                                 o.service_time.count())
                   : std::string("none (no --service-ms)"));
    fmt::print("  cold start {}\n",
               o.cold_start_extra.count() > 0
                   ? fmt::format("+{:g} ms per unit for {:g} s after each new high-water mark of "
                                 "open sessions",
                                 o.cold_start_extra.count(), o.cold_start_window.count())
                   : std::string("none (no --cold-start-ms)"));
    fmt::print("  overload   {}\n",
               o.overload_penalty.count() > 0
                   ? fmt::format("+{:g} ms per unit for {:g} s after a unit whose modelled lag "
                                 "exceeded one unit ({} ms)",
                                 o.overload_penalty.count(), o.recovery.count(),
                                 o.realtime == protocol::realtime_protocol::vllm_omni
                                     ? 1000
                                     : o.profile->unit_ms)
                   : std::string("none (no --overload-penalty-ms)"));
    if (o.realtime == protocol::realtime_protocol::openai)
        fmt::print("  turns      server VAD unless the session sets turn_detection null: speech "
                   "at >= {:g} dBFS RMS per 80 ms, stopped after {:g} ms below; replies of {:g} "
                   "ms of audio; cancels take {:g} ms\n",
                   o.vad_threshold_dbfs, o.vad_silence.count(), o.reply.count(),
                   o.cancel_reaction.count());
    if (o.realtime == protocol::realtime_protocol::vllm_omni)
        fmt::print("  vllm-omni  /v1/realtime?duplex=1 and /v1/duplex; 1000 ms units (the first at "
                   "1030 ms); replies of {:g} ms in {:g} ms deltas{}; playback_commit_policy {} "
                   "unless the session sets it; ref_audio {}; {}; over --max-sessions an error "
                   "event (resource_exhausted)\n",
                   o.reply.count(), o.reply_delta.count(),
                   o.beta_audio_names ? " (beta names)" : "",
                   o.ack_only ? "ack_only" : "commit_all_on_done",
                   o.require_ref_audio ? "required" : "optional",
                   o.listen_every == 0 ? std::string("every commit answered by a reply")
                                       : fmt::format("1 answered commit in {} gets response.listen",
                                                     o.listen_every));
    // Formatted, not `" in sessions " + std::string(...)`: GCC 12 at -O3 warns -Wrestrict
    // (a false positive) inside the inlined string insert that operator+ makes of it.
    if (fault == "none")
        fmt::print("  fault      none\n");
    else
        fmt::print("  fault      {} in sessions {}\n", fault,
                   fault_sessions.empty() ? std::string_view("all") : fault_sessions);
}

namespace {

// The options, normalised (a rate of 0 becomes the profile's) and checked.
native_mock_options checked(native_mock_options o) {
    if (o.profile == nullptr || o.profile->name == "qwen3-omni-half-duplex")
        throw bad_input(
            "--profile must be nemotron or minicpmo (the legacy qwen3 protocol is not mocked)");
    if (o.output_sample_rate == 0)
        o.output_sample_rate = o.profile->output_sample_rate;
    if (o.output_sample_rate < 8000 || o.output_sample_rate > 192000)
        throw bad_input("--output-sample-rate must be within 8000..192000 Hz");
    if (o.burst_units == 0)
        throw bad_input("--burst-units must be >= 1");
    if (o.question_every == 0)
        throw bad_input("--question-every must be >= 1");
    auto finite_ms = [](double v) { return v >= 0 && v <= 3.6e6; }; // at most an hour
    if (!finite_ms(o.unit_latency.count()))
        throw bad_input("--unit-latency-ms must be a finite number >= 0");
    if (!finite_ms(o.per_session_cost.count()))
        throw bad_input("--per-session-cost-ms must be a finite number >= 0");
    if (!finite_ms(o.service_time.count()))
        throw bad_input("--service-ms must be a number of ms within 0..3600000");
    if (!finite_ms(o.cold_start_extra.count()))
        throw bad_input("--cold-start-ms must be a number of ms within 0..3600000");
    if (!finite_ms(o.vad_silence.count()) || o.vad_silence.count() < 80)
        throw bad_input("--vad-silence-ms must be a number of ms within 80..3600000");
    if (!finite_ms(o.reply.count()))
        throw bad_input("--reply-ms must be a number of ms within 0..3600000");
    if (!(o.reply_delta.count() >= 10 && o.reply_delta.count() <= 3.6e6))
        throw bad_input("--reply-delta-ms must be a number of ms within 10..3600000");
    if (!finite_ms(o.cancel_reaction.count()))
        throw bad_input("--cancel-reaction-ms must be a number of ms within 0..3600000");
    if (!(o.vad_threshold_dbfs >= -120 && o.vad_threshold_dbfs <= 0))
        throw bad_input("--vad-threshold-dbfs must be a number within -120..0");
    if (!(o.cold_start_window.count() > 0 && o.cold_start_window.count() <= 3600))
        throw bad_input("--cold-start-s must be a number of seconds within (0, 3600]");
    if (!finite_ms(o.overload_penalty.count()))
        throw bad_input("--overload-penalty-ms must be a number of ms within 0..3600000");
    if (!(o.recovery.count() > 0 && o.recovery.count() <= 86400))
        throw bad_input("--recovery-s must be a number of seconds within (0, 86400]");
    return o;
}

// vllm-omni's host: `/v1/duplex` beside `/v1/realtime`, and capacity told in the session.
native_mock_options hosted(native_mock_options o) {
    if (o.realtime == protocol::realtime_protocol::vllm_omni) {
        o.alias_path = "/v1/duplex";
        o.capacity_error_in_session = true;
    }
    return o;
}

template <class Rep, class Period>
duration ticks(std::chrono::duration<Rep, Period> d) {
    return std::chrono::duration_cast<duration>(d);
}

} // namespace

native_mock::native_mock(asio::io_context& ctx, native_mock_options options)
    : mock_server(detail::make_sessions<detail::native_sessions>(ctx, hosted(std::move(options)))) {
}

native_mock::native_mock(std::span<asio::io_context* const> contexts, native_mock_options options)
    : mock_server(
          detail::make_sessions<detail::native_sessions>(contexts, hosted(std::move(options)))) {}

namespace detail {

awaitable<void> native_sessions::run_session(ws_stream& ws, const session_start& start) {
    native_session session(*this, ws, start);
    co_await session.run(start);
}

native_sessions::native_sessions(std::shared_ptr<mock_host> h, native_mock_options opts)
    : mock_sessions(std::move(h)), options(checked(std::move(opts))),
      granted(granted_capabilities(options)), worker_on(options.service_time.count() > 0),
      worker(ticks(options.service_time)),
      cold(ticks(options.cold_start_extra), ticks(options.cold_start_window)),
      overload(ticks(options.overload_penalty), ticks(options.recovery),
               std::chrono::milliseconds(options.realtime == protocol::realtime_protocol::vllm_omni
                                             ? 1000
                                             : options.profile->unit_ms)),
      shards(host->shard_count()), since(clock::now().time_since_epoch().count()) {}

awaitable<stats_window> native_sessions::take_window(std::size_t i, bool reset) {
    stats_window w = shards[i].window;
    if (reset)
        shards[i].window = stats_window{};
    co_return w;
}

awaitable<std::optional<std::string>> native_sessions::get(std::string target) {
    const std::string_view t = target;
    const auto mark = t.find('?');
    if (t.substr(0, mark) != "/stats")
        co_return std::nullopt;
    bool reset = false;
    for (std::string_view query = mark == std::string_view::npos ? "" : t.substr(mark + 1);
         !query.empty();) {
        const auto amp = query.find('&');
        reset = reset || query.substr(0, amp) == "reset=1";
        query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    }
    // Each thread's window is read (and reset) on that thread, one after the other: no lock
    // in the sessions' path, at the price of a window that is not one instant across threads.
    stats_window merged;
    for (std::size_t i = 0; i < shards.size(); ++i)
        merged.merge(co_await asio::co_spawn(host->shard_executor(i), take_window(i, reset),
                                             pacer::use_awaitable));
    const auto now = clock::now();
    std::string doc = stats_document(merged, now);
    if (reset) {
        since.store(now.time_since_epoch().count());
        cold_starts_before.store(cold.count());
        overloads_before.store(overload.overloads());
    }
    co_return doc;
}

// The units queued at the shared worker at `now`: its backlog in whole units (0 without one).
std::uint64_t native_sessions::pending_units(time_point now) const {
    const auto backlog = worker.backlog(now);
    if (!worker_on || backlog <= duration::zero())
        return 0;
    return static_cast<std::uint64_t>((backlog + worker.service() - duration(1)) /
                                      worker.service());
}

std::string native_sessions::stats_document(const stats_window& w, time_point now) const {
    constexpr double fractions[] = {0.50, 0.90, 0.95, 0.99};
    auto dist = [&](const log_histogram& h, double scale) {
        const auto d = h.summarize(fractions);
        return fmt::format(
            R"({{"count":{},"mean":{},"p50":{},"p90":{},"p95":{},"p99":{},"max":{}}})", d.n,
            plain(d.mean, scale), plain(d.at(0.50), scale), plain(d.at(0.90), scale),
            plain(d.at(0.95), scale), plain(d.at(0.99), scale), plain(d.max, scale));
    };
    // Appended piece by piece, not `("," or "") + std::to_string(n)`: GCC 12 at -O3 warns
    // -Wrestrict (a false positive) inside the string insert that operator+ inlines.
    std::string per_thread;
    for (const auto n : host->sessions_per_shard()) {
        if (!per_thread.empty())
            per_thread += ',';
        per_thread += std::to_string(n);
    }
    return fmt::format(
        R"({{"since_s":{},"now_s":{},"sessions_open":{},"sessions_started":{},"units":{},)"
        R"("unit_latency_s":{},"queue_wait_s":{},"batch_size":{},"backlog_s":{},)"
        R"("cold_starts":{},"cold_units":{},"high_water_sessions":{},"threads":{},)"
        R"("sessions_per_thread":[{}],"pending_units":{},"overloads":{},"overloaded_units":{},)"
        R"("degraded_s":{},"responses_completed":{},"responses_cancelled":{},)"
        R"("playback_acks":{},"playback_ack_errors":{},"deferred_commits":{}}})",
        plain(to_seconds(time_point(duration(since.load())))), plain(to_seconds(now)),
        host->open_sessions(), w.sessions_started, w.units, dist(w.unit_latency_s, 1),
        dist(w.queue_wait_s, 1), dist(w.batch_size, 1 / batch_scale),
        plain(to_seconds(worker.backlog(now))), cold.count() - cold_starts_before.load(),
        w.cold_units, cold.high_water(), shards.size(), per_thread, pending_units(now),
        overload.overloads() - overloads_before.load(), w.overloaded_units,
        plain(to_seconds(overload.degraded(now))), w.responses_completed, w.responses_cancelled,
        w.playback_acks, w.playback_ack_errors, w.deferred_commits);
}

// vllm-omni's options and counts in the --stats-output document.
void native_sessions::add_omni_stats(boost::json::object& o) const {
    o["require_ref_audio"] = options.require_ref_audio;
    o["playback_commit_policy"] = options.ack_only ? "ack_only" : "commit_all_on_done";
    o["beta_audio_names"] = options.beta_audio_names;
    o["model_turns"] = options.model_turns;
    o["listen_every"] = options.listen_every;
    o["reply_ms"] = options.reply.count();
    o["reply_delta_ms"] = options.reply_delta.count();
    o["cancel_reaction_ms"] = options.cancel_reaction.count();
    std::uint64_t acks = 0, mismatch = 0, not_found = 0, too_late = 0, deferred = 0, listens = 0,
                  event_acks = 0, heartbeats = 0, capacity = 0;
    for (const auto& shard : shards) {
        acks += shard.playback_acks;
        mismatch += shard.ack_mismatch;
        not_found += shard.ack_not_found;
        too_late += shard.ack_too_late;
        deferred += shard.deferred_commits;
        listens += shard.listens;
        event_acks += shard.event_acks;
        heartbeats += shard.heartbeats;
        capacity += shard.capacity_errors;
    }
    o["playback_acks"] = acks;
    o["playback_ack_errors"] = boost::json::object{{"playback_item_mismatch", mismatch},
                                                   {"playback_item_not_found", not_found},
                                                   {"playback_ack_too_late", too_late}};
    o["deferred_commits"] = deferred;
    o["listens"] = listens;
    o["event_acks"] = event_acks;
    o["heartbeats"] = heartbeats;
    o["capacity_errors"] = capacity;
}

boost::json::object native_sessions::stats() const {
    const auto& s = *this;
    boost::json::object o = host->stats();
    o["profile"] = s.options.profile->name;
    o["protocol"] = protocol_name(s.options);
    o["output_sample_rate"] = s.options.output_sample_rate;
    o["burst_units"] = s.options.burst_units;
    o["unit_latency_ms"] = s.options.unit_latency.count();
    o["per_session_cost_ms"] = s.options.per_session_cost.count();
    o["service_ms"] = s.options.service_time.count();
    o["cold_start_ms"] = s.options.cold_start_extra.count();
    o["cold_start_s"] = s.options.cold_start_window.count();
    o["overload_penalty_ms"] = s.options.overload_penalty.count();
    o["recovery_s"] = s.options.recovery.count();
    if (s.options.realtime == protocol::realtime_protocol::vllm_omni)
        add_omni_stats(o);
    if (s.options.realtime == protocol::realtime_protocol::openai) {
        o["vad_threshold_dbfs"] = s.options.vad_threshold_dbfs;
        o["vad_silence_ms"] = s.options.vad_silence.count();
        o["reply_ms"] = s.options.reply.count();
        o["cancel_reaction_ms"] = s.options.cancel_reaction.count();
    }
    // Read once every thread has stopped (or on the one thread): each shard's counts as they are.
    std::uint64_t appends = 0, units = 0, responses = 0, cancelled = 0, faults = 0, vad_cancels = 0,
                  speech_started = 0, speech_stopped = 0, truncates = 0;
    std::vector<double> lags;
    stats_window window;
    for (const auto& shard : s.shards) {
        appends += shard.appends;
        units += shard.units;
        responses += shard.responses;
        cancelled += shard.cancelled;
        vad_cancels += shard.vad_cancels;
        speech_started += shard.speech_started;
        speech_stopped += shard.speech_stopped;
        truncates += shard.truncates;
        faults += shard.faults;
        lags.insert(lags.end(), shard.unit_output_lag_s.begin(), shard.unit_output_lag_s.end());
        window.merge(shard.window);
    }
    o["appends"] = appends;
    o["units"] = units;
    o["responses"] = responses;
    o["responses_cancelled"] = cancelled;
    o["responses_cancelled_by_vad"] = vad_cancels;
    o["speech_started"] = speech_started;
    o["speech_stopped"] = speech_stopped;
    o["truncates"] = truncates;
    o["faults_injected"] = faults;
    o["unit_output_lag_s"] = to_json(summarize(lags, pacing_fractions));
    o["cold_starts"] = s.cold.count();
    o["high_water_sessions"] = s.cold.high_water();
    o["overloads"] = s.overload.overloads();
    o["server_stats"] = boost::json::parse(stats_document(window, clock::now()));
    return o;
}

} // namespace detail

} // namespace pacer::server

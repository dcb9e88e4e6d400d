// `pacer serve`'s options checked into its sweep (serve_checks.hpp).

#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/input_audio.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/sweep/serve_checks.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace pacer::sweep {

namespace {

using session::default_timeout_margin;
using session::max_sessions;

// The runs: their number and sizes, the limits, the timeout as given, the levels (or the
// search's bounds) and the warm-ups' level.
void check_levels(const serve_options& s, sweep_options& w) {
    if (s.repeats == 0)
        throw bad_input("--repeats must be at least 1");
    if (s.threads == 0)
        throw bad_input("--threads must be at least 1");
    if (!(s.stagger_ms >= 0) || !(s.startup_reserve_ms >= 0))
        throw bad_input("--stagger-ms and --startup-reserve-ms must be >= 0");
    if (!(s.loop_lag_limit_ms > 0) || !(s.send_lateness_limit_ms > 0))
        throw bad_input("--loop-lag-limit-ms and --send-lateness-limit-ms must be > 0");
    if (!s.timeout.empty()) {
        const auto timeout = parse_duration(s.timeout);
        if (!timeout || timeout->count() == 0)
            throw bad_input(
                fmt::format("--timeout '{}' is not a positive duration such as 90s", s.timeout));
        w.timeout = std::chrono::duration_cast<duration>(*timeout);
    }
    if (s.find_capacity) {
        if (s.start_level == 0 || s.max_level < s.start_level)
            throw bad_input("--start-level must be >= 1 and <= --max-level");
        if (!(s.resolution >= 0 && s.resolution < 1))
            throw bad_input("--resolution must be in [0, 1)");
        if (s.growth && !(*s.growth > 1 && *s.growth <= 2))
            throw bad_input(fmt::format("--growth {:g} must be > 1 and <= 2: the factor by which "
                                        "a level may exceed the last good one after a miss",
                                        *s.growth));
    } else {
        w.levels = s.concurrency > 0 ? std::vector<std::size_t>{s.concurrency}
                                     : parse_levels(s.concurrencies, max_sessions);
        if (s.confirm || s.verify_repeats || s.growth)
            throw bad_input("--confirm, --verify-repeats and --growth shape the capacity "
                            "search: add --find-capacity, or drop them");
    }
    if (s.warmup_level && s.warmup_runs == 0)
        throw bad_input("--warmup-level sets the size of the warm-up runs: add --warmup-runs N "
                        "(e.g. --warmup-runs 1), or drop it");
    w.warmup_level = s.warmup_level    ? *s.warmup_level
                     : s.find_capacity ? s.start_level
                                       : w.levels.front();
}

// --warm-until-stable and its rule (--stable-*), which needs GPU telemetry.
void check_warm_rule(const serve_options& s, bool gpu_telemetry, bool stable_rule_given,
                     sweep_options& w) {
    if (!s.warm_until_stable) {
        if (stable_rule_given)
            throw bad_input("--stable-power-pct, --stable-temperature-c, --stable-window and "
                            "--stable-max-wait shape --warm-until-stable: add it, or drop them");
        return;
    }
    if (!gpu_telemetry)
        throw bad_input("--warm-until-stable watches the GPUs' power and temperature: add "
                        "--gpu-telemetry nvml");
    telemetry::stability_rule rule;
    rule.power_fraction = s.stable_power_pct / 100;
    rule.temperature_c = s.stable_temperature_c;
    for (auto [text, name, into] :
         {std::tuple{&s.stable_window, "--stable-window", &rule.window},
          std::tuple{&s.stable_max_wait, "--stable-max-wait", &rule.max_wait}}) {
        const auto d = parse_duration(*text);
        if (!d || d->count() <= 0)
            throw bad_input(
                fmt::format("{} '{}' is not a positive duration such as 30s", name, *text));
        *into = std::chrono::duration_cast<std::chrono::nanoseconds>(*d);
    }
    if (rule.max_wait < rule.window)
        throw bad_input(fmt::format("--stable-max-wait {} is shorter than --stable-window "
                                    "{}: the GPUs could never be judged steady",
                                    s.stable_max_wait, s.stable_window));
    w.warm_until_stable = rule;
}

// --recovery and --recovery-max (the default: a canary with the search, nothing without).
void check_recovery(const serve_options& s, sweep_options& w) {
    const std::string_view r =
        s.recovery.empty() ? (s.find_capacity ? "canary" : "none") : std::string_view(s.recovery);
    w.recovery.canary = r == "canary" || r == "canary,stats" || r == "stats,canary";
    w.recovery.stats = r == "stats" || r == "canary,stats" || r == "stats,canary";
    if (!w.recovery.on() && r != "none")
        throw bad_input(fmt::format(
            "--recovery '{}' is not known: use canary, stats, canary,stats or none", s.recovery));
    if (w.recovery.stats && !w.server_stats)
        throw bad_input("--recovery stats reads the server's pending work from --server-stats "
                        "URL[#POINTER]: add it (e.g. native-mock's http://HOST:PORT/stats)");
    const auto max = parse_duration(s.recovery_max);
    if (!max)
        throw bad_input(
            fmt::format("--recovery-max '{}' is not a duration such as 120s", s.recovery_max));
    w.recovery.max = std::chrono::duration_cast<duration>(*max);
    if (w.recovery.canary && to_seconds(w.recovery.max) < canary_input_s)
        throw bad_input(fmt::format("--recovery-max {} is shorter than one canary ({:g} s of "
                                    "input): give at least {:g}s",
                                    s.recovery_max, canary_input_s, canary_input_s));
}

// --settle (its default depends on the search) and --server-stats.
void check_settle_and_stats(const serve_options& s, sweep_options& w) {
    if (s.settle.empty()) {
        w.settle = s.find_capacity ? std::chrono::seconds(5) : duration::zero();
    } else {
        const auto settle = parse_duration(s.settle);
        if (!settle)
            throw bad_input(
                fmt::format("--settle '{}' is not a duration such as 5s or 0s", s.settle));
        w.settle = std::chrono::duration_cast<duration>(*settle);
    }
    if (!s.server_stats.empty()) {
        // URL#POINTER: the fragment, never sent, is where --recovery stats reads pending work.
        const auto hash = s.server_stats.find('#');
        w.server_stats_url = s.server_stats.substr(0, hash);
        if (hash != std::string::npos) {
            w.stats_pointer = s.server_stats.substr(hash + 1);
            if (w.stats_pointer.empty() || w.stats_pointer.front() != '/')
                throw bad_input(fmt::format("--server-stats {}: the part after # must be a "
                                            "JSON pointer such as /pending_units",
                                            s.server_stats));
        }
        w.server_stats = transport::parse_http_url(w.server_stats_url, "--server-stats",
                                                   transport::url_use::get);
    }
    check_recovery(s, w);
}

} // namespace

void check_runs(const serve_options& s, bool gpu_telemetry, bool stable_rule_given,
                sweep_options& w) {
    check_levels(s, w);
    check_warm_rule(s, gpu_telemetry, stable_rule_given, w);
    check_settle_and_stats(s, w);
}

direct_wire take_inputs(const serve_options& s, sweep_options& w) {
    if (s.audio.empty()) {
        w.inputs.push_back(protocol::pcm_input::silence(
            runtime::silence_bytes(runtime::silence_duration(s.duration, "10s"))));
        w.conversions.push_back(runtime::silence_conversion(wire_sample_rate(w.realtime)));
    }
    direct_wire direct;
    for (const auto& a : s.audio) {
        auto in = runtime::load_input_audio(a, wire_sample_rate(w.realtime));
        w.inputs.push_back(protocol::pcm_input(std::move(in.pcm)));
        w.conversions.push_back(std::move(in.conversion));
        direct.push_back(std::move(in.wire));
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
            throw bad_input(
                fmt::format("--timeout {} must be longer than the input ({:.2f} s)", s.timeout, d));
        w.input_duration_s.push_back(d);
    }
    return direct;
}

std::size_t serve_descriptors(const serve_job& job) {
    const auto& levels = job.sweep.levels;
    const std::size_t largest = job.options.find_capacity
                                    ? job.options.max_level
                                    : *std::max_element(levels.begin(), levels.end());
    return largest * 3 + 64;
}

} // namespace pacer::sweep

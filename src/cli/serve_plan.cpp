// `pacer serve`'s options checked into a sweep::serve_job (serve_plan.hpp): every option and
// input checked, in the order a person reads them, before anything is created.

#include <pacer/cli/checks.hpp>
#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/input_audio.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/cli/serve_plan.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/slo.hpp>
#include <pacer/runtime/resources.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace pacer::cli {

namespace fs = std::filesystem;

namespace {

// The target: the profile, the URL with the client's settings (bad headers, a missing key:
// before any file), the pacing and the protocol with its model and turns.
void check_target(const serve_settings& s, sweep::sweep_options& w) {
    const auto* profile = protocol::find_profile(s.profile);
    if (!profile)
        throw usage_error(fmt::format("--profile '{}' is not known: use nemotron or minicpmo "
                                      "(or their full names)",
                                      s.profile));
    w.url = s.url;
    w.profile = profile;
    w.endpoint = url_option(s.url);
    apply_client_settings(s.client, w.endpoint);
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
}

// The runs: their number and sizes, the limits, the timeout as given, the levels (or the
// search's bounds) and the warm-ups' level.
void check_runs(const serve_settings& s, sweep::sweep_options& w) {
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
    if (s.find_capacity) {
        if (s.start_level == 0 || s.max_level < s.start_level)
            throw usage_error("--start-level must be >= 1 and <= --max-level");
        if (!(s.resolution >= 0 && s.resolution < 1))
            throw usage_error("--resolution must be in [0, 1)");
    } else {
        try {
            w.levels = s.concurrency > 0 ? std::vector<std::size_t>{s.concurrency}
                                         : sweep::parse_levels(s.concurrencies, max_sessions);
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
        if (s.confirm || s.verify_repeats)
            throw usage_error("--confirm and --verify-repeats shape the capacity search: add "
                              "--find-capacity, or drop them");
    }
    if (s.warmup_level && s.warmup_runs == 0)
        throw usage_error("--warmup-level sets the size of the warm-up runs: add --warmup-runs N "
                          "(e.g. --warmup-runs 1), or drop it");
    w.warmup_level = s.warmup_level    ? *s.warmup_level
                     : s.find_capacity ? s.start_level
                                       : w.levels.front();
}

// --warm-until-stable and its rule (--stable-*), which needs GPU telemetry.
void check_warm_rule(const serve_settings& s, sweep::sweep_options& w) {
    if (!s.warm_until_stable) {
        if (s.stable_rule_given)
            throw usage_error("--stable-power-pct, --stable-temperature-c, --stable-window and "
                              "--stable-max-wait shape --warm-until-stable: add it, or drop them");
        return;
    }
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
}

// --settle (its default depends on the search) and --server-metrics.
void check_settle_and_stats(const serve_settings& s, sweep::sweep_options& w) {
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
}

// --scenario (what every session of every run says, checked and loaded as `run` does) and
// --slo, whose turn SLOs need a scenario with turns or barge-ins; a capacity search judges
// every session's success unless told otherwise.
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
    if (s.find_capacity &&
        !std::any_of(w.slos.begin(), w.slos.end(),
                     [](const metrics::slo_check& c) { return c.name == "success-rate"; }))
        w.slos.push_back(metrics::default_success_slo());
}

// The inputs (silence of --duration, or the --audio files), the timeout they imply and their
// lengths; returns each file's input converted straight to the protocol's rate.
direct_wire take_inputs(const serve_settings& s, sweep::sweep_options& w) {
    if (s.audio.empty()) {
        w.inputs.push_back(
            protocol::pcm_input::silence(silence_bytes(silence_duration(s.duration, "10s"))));
        w.conversions.push_back(silence_conversion(sweep::wire_sample_rate(w.realtime)));
    }
    direct_wire direct;
    for (const auto& a : s.audio) {
        auto in = load_input_audio(a, sweep::wire_sample_rate(w.realtime));
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
            throw usage_error(
                fmt::format("--timeout {} must be longer than the input ({:.2f} s)", s.timeout, d));
        w.input_duration_s.push_back(d);
    }
    return direct;
}

} // namespace

sweep::serve_job check_serve(const serve_settings& s, direct_wire& direct) {
    sweep::serve_job job;
    job.options = s;
    auto& w = job.sweep;
    check_target(s, w);
    check_runs(s, w);
    check_warm_rule(s, w);
    check_settle_and_stats(s, w);
    take_scenario_and_slos(s, w);
    direct = take_inputs(s, w);
    sweep::take_given(s, w);
    job.out = s.output.empty() ? default_output_dir("serve") : fs::path(s.output);
    if (fs::exists(job.out))
        throw usage_error(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            job.out.string()));
    job.disk_estimate = sweep::disk_estimate(s, w);
    job.disk_free = ensure_free_space(job.out, job.disk_estimate);
    runtime::ensure_descriptors(serve_descriptors(job));
    return job;
}

std::size_t serve_descriptors(const sweep::serve_job& job) {
    const auto& levels = job.sweep.levels;
    const std::size_t largest = job.options.find_capacity
                                    ? job.options.max_level
                                    : *std::max_element(levels.begin(), levels.end());
    return largest * 3 + 64;
}

} // namespace pacer::cli

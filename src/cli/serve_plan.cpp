// `pacer serve`'s options checked into a sweep::serve_job (serve_plan.hpp): every option and
// input checked, in the order a person reads them, before anything is created; what needs only
// the sweep is sweep's (sweep/serve_checks.hpp).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/serve_plan.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/metrics/slo.hpp>
#include <pacer/runtime/output_dir.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/session/scenario_plan.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace pacer::cli {

namespace fs = std::filesystem;

namespace {

// The target: the profile, the URL with the client's settings (bad headers, a missing key:
// before any file), the pacing and the protocol with its model and turns.
void check_target(const serve_settings& s, sweep::sweep_options& w) {
    const auto* profile = protocol::find_profile(s.profile);
    if (!profile)
        throw bad_input(fmt::format("--profile '{}' is not known: use nemotron or minicpmo "
                                    "(or their full names)",
                                    s.profile));
    w.url = s.url;
    w.profile = profile;
    w.endpoint = run::url_option(s.url);
    run::apply_client_settings(s.client, w.endpoint);
    if (s.pacing != "realtime" && s.pacing != "lockstep")
        throw bad_input(fmt::format("--pacing must be realtime or lockstep (got '{}')", s.pacing));
    if (const auto p = run::protocol_option(s.protocol, s.model)) {
        if (s.pacing != "realtime")
            throw bad_input(fmt::format("--pacing {} is the native protocol's; --protocol {} "
                                        "streams on the 80 ms grid",
                                        s.pacing, s.protocol));
        if (profile != &protocol::default_profile())
            throw bad_input(fmt::format("--profile {} is the native protocol's; --protocol {} "
                                        "negotiates its own session",
                                        s.profile, s.protocol));
        w.realtime = p;
    }
    run::model_in_url(w.endpoint, w.realtime, s.model);
    w.turns = run::turns_option(s.turns);
    const auto omni = run::omni_option(s.omni, w.realtime, s.turns);
    w.chunk = omni.chunk;
    w.omni = omni.settings;
    if (s.pacing == "lockstep" && profile->continuous)
        throw bad_input(fmt::format("--pacing lockstep needs a per-unit profile such as "
                                    "minicpmo; {} speaks continuously",
                                    profile->name));
}

// --scenario (what every session of every run says, checked and loaded as `run` does) and
// --slo, whose turn SLOs need a scenario with turns or barge-ins; a capacity search judges
// every session's success unless told otherwise.
void take_scenario_and_slos(const serve_settings& s, sweep::sweep_options& w) {
    w.conversation =
        session::load_scenario(s.scenario, sweep::wire_sample_rate(w.realtime), !w.realtime);
    w.conversation.voice = s.voice;
    if (w.conversation && s.pacing == "lockstep")
        throw bad_input("--pacing lockstep streams one utterance unit by unit: a --scenario "
                        "of several turns streams on the 80 ms grid (--pacing realtime)");
    w.slos =
        metrics::parse_slos(s.slo, {static_cast<bool>(w.conversation), w.conversation.barge_in()});
    if (s.find_capacity &&
        !std::any_of(w.slos.begin(), w.slos.end(),
                     [](const metrics::slo_check& c) { return c.name == "success-rate"; }))
        w.slos.push_back(metrics::default_success_slo());
}

} // namespace

sweep::serve_job check_serve(const serve_settings& s, sweep::direct_wire& direct) {
    if (const auto& m = s.telemetry.server_metrics; m.ends_with("/stats"))
        throw bad_input(fmt::format("--server-metrics {} scrapes a Prometheus endpoint; the "
                                    "server's JSON stats are --server-stats {} (renamed)",
                                    m, m));
    sweep::serve_job job;
    job.options = s;
    auto& w = job.sweep;
    check_target(s, w);
    sweep::check_runs(s, !s.telemetry.gpu.empty(), s.stable_rule_given, w);
    take_scenario_and_slos(s, w);
    direct = sweep::take_inputs(s, w);
    sweep::take_given(s, w);
    job.out = s.output.empty() ? runtime::default_output_dir("serve") : fs::path(s.output);
    if (fs::exists(job.out))
        throw bad_input(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            job.out.string()));
    job.disk_estimate = sweep::disk_estimate(s, w);
    job.disk_free = runtime::ensure_free_space(job.out, job.disk_estimate);
    runtime::ensure_descriptors(sweep::serve_descriptors(job));
    return job;
}

} // namespace pacer::cli

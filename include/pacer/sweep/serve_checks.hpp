#pragma once
// `pacer serve`'s options checked into the sweep they resolve to, for what needs no connection
// and no other module's knowledge: the runs (their number and sizes, the limits, the timeout,
// the levels or the search's bounds, the warm-ups), the `--warm-until-stable` rule, `--settle`
// and `--server-metrics`, and the inputs. The command (src/cli/serve_plan.cpp) calls them in
// the order a person reads the options, between its own checks of the target (the URL with the
// client's settings) and of the scenario, so the first mistake is the one reported.
//
// Bad input throws bad_input: one line, before anything is created.

#include <pacer/sweep/serve_job.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace pacer::sweep {

/// The runs, the warm-up rule (`gpu_telemetry`: --gpu-telemetry was given, which the rule
/// needs; `stable_rule_given`: one of --stable-* was typed, which needs the rule), `--settle`
/// (its default depends on the search) and `--server-metrics`, into `w`.
void check_runs(const serve_options& s, bool gpu_telemetry, bool stable_rule_given,
                sweep_options& w);

/// Each --audio file's input converted straight to the protocol's rate (nullopt: resample the
/// 16 kHz input), as load_input_audio gives it.
using direct_wire = std::vector<std::optional<std::vector<std::uint8_t>>>;

/// The inputs (silence of --duration, or the --audio files) into `w`, with the timeout they
/// imply and their lengths under `w.conversation` (checked before: the scenario); returns each
/// file's input converted straight to the protocol's rate.
direct_wire take_inputs(const serve_options& s, sweep_options& w);

/// The descriptors the job's largest level needs (three a session, and 64).
std::size_t serve_descriptors(const serve_job& job);

} // namespace pacer::sweep

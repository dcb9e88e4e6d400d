#pragma once
// `--scenario` (docs/scenarios.md): the conversation every session of `run` and `serve` plays,
// its turns' audio loaded as `--audio` is (module runtime's: runtime/input_audio.hpp, whose
// names this header also brings into pacer::cli); `pacer run`'s input, both together.

#include <pacer/runtime/input_audio.hpp>
#include <pacer/session/runner.hpp>

#include <string>

namespace CLI {
class App;
}

namespace pacer::run {
struct run_job; // run/run_job.hpp
}

namespace pacer::cli {

using runtime::load_input_audio;
using runtime::loaded_input;
using runtime::max_input_duration;
using runtime::silence_bytes;
using runtime::silence_conversion;
using runtime::silence_duration;

/// `--scenario NAME` of `run` and `serve`: `single` (an empty plan: today's session), a
/// built-in (`multi-turn`, `barge-in`), or a scenario JSON file checked whole, its turns' own
/// audio loaded as `--audio` is for sessions whose wire rate is `wire_rate` (silence turns held
/// nowhere; a turn of `input` streams each session's own input). `native`: the native protocol,
/// which streams one continuous input (`pause_audio none` is refused). Every mistake is a usage
/// error, one line naming the scenario and the field.
session::conversation_plan load_scenario(const std::string& name, std::size_t wire_rate,
                                         bool native);

/// The input of `pacer run` into `job` (its options, protocol and processes set): --audio, or
/// --duration of silence, with its conversion record (config.input_conversion), and --scenario
/// with its turns' audio at the protocol's rate; `input_length` is what one session streams.
/// A usage error for anything wrong, such as a multi-turn scenario with --processes.
void load_run_input(run::run_job& job);

/// Declares `--scenario` on `command` (run and serve take one grammar): the built-in names or
/// a file, with `where` saying what plays it and `results` what it adds to the result folder.
void add_scenario_option(CLI::App& command, std::string& scenario, const std::string& where,
                         const std::string& results);

} // namespace pacer::cli

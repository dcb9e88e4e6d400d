#pragma once
// `--scenario` (docs/scenarios.md) loaded into the conversation every session of `pacer run`
// and `pacer serve` plays (runner.hpp's conversation_plan): a built-in or a scenario JSON file,
// checked whole, its turns' audio loaded as `--audio` is (runtime/input_audio.hpp). The
// commands declare the option (src/cli/checks.cpp: add_scenario_option).

#include <pacer/session/runner.hpp>

#include <cstddef>
#include <string>

namespace pacer::session {

/// `--scenario NAME` of `run` and `serve`: `single` (an empty plan: today's session), a
/// built-in (`multi-turn`, `barge-in`), or a scenario JSON file checked whole, its turns' own
/// audio loaded as `--audio` is for sessions whose wire rate is `wire_rate` (silence turns held
/// nowhere; a turn of `input` streams each session's own input). `native`: the native protocol,
/// which streams one continuous input (`pause_audio none` is refused). Every mistake throws
/// bad_input (core/bad_input.hpp), one line naming the scenario and the field.
conversation_plan load_scenario(const std::string& name, std::size_t wire_rate, bool native);

} // namespace pacer::session

#pragma once
// Conversation scenarios (`--scenario FILE|single|multi-turn|barge-in`, docs/scenarios.md): what
// one session says, as a list of user turns. Each turn is some audio (a WAV file, the run's own
// input, or generated silence) followed by a pause (fixed, or drawn from a seeded uniform
// distribution: think time), optionally with a barge-in (`interrupt_after`: the next turn starts
// this long after the assistant's audio for this turn began). Sans-io: this parses and checks
// the text and draws the pauses; the CLI loads the audio, the session machines stream it.
//
// The schema (every field but `turns` optional):
//
//   {"pause_audio": "silence" | "none",          // what the pauses carry (default silence)
//    "seed": 7,                                   // the pause draws' seed (default 0)
//    "turns": [
//      {"audio": "input" | "FILE.wav" | "silence:DURATION",
//       "pause": "DURATION" | {"min": "DURATION", "max": "DURATION"},
//       "interrupt_after": "DURATION"}, ...]}
//
// DURATION is pacer's duration text (`0.3s`, `300ms`, `1m`). A file path is relative to the
// scenario file's folder. The last turn's pause and `interrupt_after` mean nothing (the session
// ends after it) and are refused, so that a scenario says what it does.

#include <pacer/core/clock.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::schedule {

/// A pause: fixed (`min == max`) or uniform in [min, max], drawn per session and turn.
struct pause_spec {
    duration min{};
    duration max{};
    bool fixed() const { return min == max; }
};

struct turn_spec {
    enum class source { input, file, silence };
    source what = source::input;
    std::string file;   ///< `file`: the WAV path (resolved against the scenario's folder)
    duration silence{}; ///< `silence`: its length (> 0)
    pause_spec pause;   ///< after the turn's audio (none after the last turn)
    /// Barge-in: the next turn starts this long after the assistant's first audio for this
    /// turn (on the first grid slot not before it), or after the pause when the assistant
    /// has not begun speaking by then.
    std::optional<duration> interrupt_after;
};

struct scenario {
    std::string name; ///< `single`, `multi-turn`, `barge-in`, or the file's path
    std::vector<turn_spec> turns;
    bool pause_packets = true; ///< pauses are silence packets (true) or no packets
    std::uint64_t seed = 0;

    /// Today's one-utterance session: one turn of the run's input, nothing else.
    bool single() const { return turns.size() == 1 && turns[0].what == turn_spec::source::input; }
    bool barge_in() const;
};

/// The most turns a scenario may hold, and the longest pause or silence it may name.
inline constexpr std::size_t max_turns = 1000;
inline constexpr std::chrono::hours max_scenario_duration{1};

/// Parses and checks a scenario's JSON text; `source` names it in errors and `base_dir` (may
/// be empty) resolves relative audio paths. Throws `bad_input` with one line per mistake,
/// e.g. "scenario x.json: turns[1].pause: '3q' is not a duration such as 0.3s".
scenario parse_scenario(std::string_view text, std::string_view source,
                        std::string_view base_dir = {});

/// The built-in scenarios (`single`, `multi-turn`, `barge-in`); nullopt for any other name.
std::optional<scenario> builtin_scenario(std::string_view name);

/// The pause after each turn for one session (the last turn's is zero): fixed pauses as
/// given, uniform ones drawn from `xoshiro256ss(scenario.seed ^ session_seed)`, rounded down
/// to the nanosecond. The same arguments give the same pauses on every machine.
std::vector<duration> draw_pauses(const scenario& s, std::uint64_t session_seed);

} // namespace pacer::schedule

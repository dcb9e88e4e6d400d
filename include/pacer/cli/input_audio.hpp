#pragma once
// `--audio FILE` for `run` and `serve`: any WAV file, mixed down to mono and converted to the
// rates the sessions need (16 kHz for pacer's packet grid and the native and vllm-realtime
// protocols; the protocol's own rate, e.g. openai-realtime's 24 kHz, straight from the file),
// and the record of the conversion for summary.json. And `--scenario` (docs/scenarios.md): the
// conversation every session of `run` and `serve` plays, its turns' audio loaded the same way;
// `pacer run`'s input, both together.

#include <pacer/core/clock.hpp>
#include <pacer/session/runner.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace pacer::run {
struct run_job; // run/run_job.hpp
}

namespace pacer::cli {

struct loaded_input {
    std::vector<std::uint8_t> pcm;                 ///< 16 kHz mono PCM16 (the grid's input)
    std::optional<std::vector<std::uint8_t>> wire; ///< at `wire_rate`, when that is not 16 kHz
    /// `{file, source_rate, source_channels, source_encoding, mixed_down, rate, converter,
    /// wire_rate, wire_converter}`.
    boost::json::object conversion;
};

/// Reads `file` for sessions whose wire rate is `wire_rate`. A file pacer cannot use is a
/// usage error (one line naming the file and the reason).
loaded_input load_input_audio(const std::string& file, std::size_t wire_rate);

/// The longest input `--duration` generates (documented in `--help` and docs/cli.md): a
/// longer run is a `--rate` open loop, or several runs. Silence is never held in memory
/// (protocol/pcm_input.hpp), so the limit is a bound on the folders' sizes, not on memory.
inline constexpr std::chrono::hours max_input_duration{24};

/// `--duration` of generated silence: a positive duration such as `example`, at most
/// `max_input_duration`, else a usage error (one line).
duration silence_duration(const std::string& text, std::string_view example);

/// `length` of 16 kHz mono PCM16 silence, in bytes (whole samples, at least one).
std::size_t silence_bytes(duration length);

/// The conversion record of generated silence (16 kHz mono, nothing converted) at `wire_rate`.
boost::json::object silence_conversion(std::size_t wire_rate);

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

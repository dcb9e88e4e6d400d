#pragma once
// `--audio FILE` and `--duration D` of silence for `run` and `serve`: any WAV file, mixed down
// to mono and converted to the rates the sessions need (16 kHz for pacer's packet grid and the
// native and vllm-realtime protocols; the protocol's own rate, e.g. openai-realtime's 24 kHz,
// straight from the file), and the record of the conversion for summary.json. A file or a
// duration pacer cannot use is a bad_input (core/bad_input.hpp), one line.

#include <pacer/core/clock.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::runtime {

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

} // namespace pacer::runtime

#pragma once
// `--audio FILE` for `run` and `serve`: any WAV file, mixed down to mono and converted to the
// rates the sessions need (16 kHz for pacer's packet grid and the native and vllm-realtime
// protocols; the protocol's own rate, e.g. openai-realtime's 24 kHz, straight from the file),
// and the record of the conversion for summary.json.

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

/// The conversion record of generated silence (16 kHz mono, nothing converted) at `wire_rate`.
boost::json::object silence_conversion(std::size_t wire_rate);

} // namespace pacer::cli

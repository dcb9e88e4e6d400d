#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/runtime/audio_file.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/input_audio.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace pacer::runtime {

duration silence_duration(const std::string& text, std::string_view example) {
    const auto d = parse_duration(text);
    if (!d || d->count() == 0)
        throw bad_input(
            fmt::format("--duration '{}' is not a positive duration such as {}", text, example));
    if (*d > max_input_duration)
        throw bad_input(fmt::format("--duration {} is longer than the longest input pacer "
                                    "generates, {}h (for longer, use --rate or several runs)",
                                    text, max_input_duration.count()));
    return std::chrono::duration_cast<duration>(*d);
}

std::size_t silence_bytes(duration length) {
    const auto samples = std::max<std::int64_t>(
        1, std::chrono::duration_cast<std::chrono::microseconds>(length).count() * 16 / 1000);
    return static_cast<std::size_t>(samples) * 2;
}

loaded_input load_input_audio(const std::string& file, std::size_t wire_rate) {
    loaded_input in;
    auto grid = read_input_audio(file, 16000);
    in.pcm = std::move(grid.pcm);
    const auto& c = grid.conversion;
    in.conversion = {{"file", file},
                     {"source_rate", c.source_rate},
                     {"source_channels", c.source_channels},
                     {"source_encoding", c.source_encoding},
                     {"mixed_down", c.mixed_down()},
                     {"rate", c.rate},
                     {"converter", c.converter},
                     {"wire_rate", wire_rate},
                     {"wire_converter", c.converter}};
    if (wire_rate != 16000) {
        auto wire = read_input_audio(file, static_cast<int>(wire_rate));
        in.conversion["wire_converter"] = wire.conversion.converter;
        in.wire = std::move(wire.pcm);
    }
    return in;
}

boost::json::object silence_conversion(std::size_t wire_rate) {
    return {
        {"file", nullptr},
        {"source_rate", 16000},
        {"source_channels", 1},
        {"source_encoding", "silence"},
        {"mixed_down", false},
        {"rate", 16000},
        {"converter", "none"},
        {"wire_rate", wire_rate},
        {"wire_converter", wire_rate == 16000 ? "none" : "libsamplerate SRC_SINC_BEST_QUALITY"}};
}

} // namespace pacer::runtime

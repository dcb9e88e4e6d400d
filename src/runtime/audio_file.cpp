#include <pacer/runtime/audio_file.hpp>

#include <fmt/format.h>
#include <sndfile.h>

#include <memory>
#include <stdexcept>

namespace pacer::runtime {

std::vector<std::uint8_t> read_input_wav(const std::filesystem::path& path) {
    SF_INFO info{};
    std::unique_ptr<SNDFILE, decltype(&sf_close)> file(sf_open(path.c_str(), SFM_READ, &info),
                                                       &sf_close);
    if (!file)
        throw std::runtime_error(
            fmt::format("--audio {}: {}", path.string(), sf_strerror(nullptr)));
    const int major = info.format & SF_FORMAT_TYPEMASK;
    const int subtype = info.format & SF_FORMAT_SUBMASK;
    if (major != SF_FORMAT_WAV || subtype != SF_FORMAT_PCM_16 || info.samplerate != 16000 ||
        info.channels != 1) {
        SF_FORMAT_INFO sub{};
        sub.format = subtype;
        sf_command(nullptr, SFC_GET_FORMAT_INFO, &sub, sizeof sub);
        throw std::runtime_error(fmt::format(
            "--audio {}: expected a 16 kHz mono PCM16 WAV file, got {} Hz, {} channel(s), {}{}",
            path.string(), info.samplerate, info.channels, sub.name ? sub.name : "unknown encoding",
            major == SF_FORMAT_WAV ? "" : " (not a WAV container)"));
    }
    if (info.frames <= 0)
        throw std::runtime_error(fmt::format("--audio {}: the file has no samples", path.string()));
    std::vector<std::int16_t> samples(static_cast<std::size_t>(info.frames));
    const sf_count_t got = sf_readf_short(file.get(), samples.data(), info.frames);
    if (got <= 0)
        throw std::runtime_error(fmt::format("--audio {}: cannot read samples: {}", path.string(),
                                             sf_strerror(file.get())));
    std::vector<std::uint8_t> pcm(static_cast<std::size_t>(got) * 2);
    for (std::size_t i = 0; i < static_cast<std::size_t>(got); ++i) {
        const auto v = static_cast<std::uint16_t>(samples[i]);
        pcm[2 * i] = static_cast<std::uint8_t>(v & 0xff); // little-endian on the wire
        pcm[2 * i + 1] = static_cast<std::uint8_t>(v >> 8);
    }
    return pcm;
}

std::vector<std::uint8_t> silence(duration length) {
    const auto samples = std::max<std::int64_t>(
        1, std::chrono::duration_cast<std::chrono::microseconds>(length).count() * 16 / 1000);
    return std::vector<std::uint8_t>(static_cast<std::size_t>(samples) * 2, 0);
}

} // namespace pacer::runtime

#include <pacer/core/bad_input.hpp>
#include <pacer/runtime/audio_codec.hpp>
#include <pacer/runtime/audio_file.hpp>

#include <fmt/format.h>
#include <sndfile.h>

#include <memory>
#include <samplerate.h>
#include <stdexcept>

namespace pacer::runtime {

namespace {

std::vector<std::uint8_t> to_bytes(const std::vector<short>& samples) {
    std::vector<std::uint8_t> pcm(samples.size() * 2);
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const auto v = static_cast<std::uint16_t>(samples[i]);
        pcm[2 * i] = static_cast<std::uint8_t>(v & 0xff); // little-endian on the wire
        pcm[2 * i + 1] = static_cast<std::uint8_t>(v >> 8);
    }
    return pcm;
}

std::string encoding_name(int subtype) {
    SF_FORMAT_INFO sub{};
    sub.format = subtype;
    sf_command(nullptr, SFC_GET_FORMAT_INFO, &sub, sizeof sub);
    return sub.name ? sub.name : "unknown encoding";
}

} // namespace

input_audio read_input_audio(const std::filesystem::path& path, int rate) {
    SF_INFO info{};
    std::unique_ptr<SNDFILE, decltype(&sf_close)> file(sf_open(path.c_str(), SFM_READ, &info),
                                                       &sf_close);
    if (!file)
        throw bad_input(fmt::format("--audio {}: {}", path.string(), sf_strerror(nullptr)));
    const int major = info.format & SF_FORMAT_TYPEMASK;
    const int subtype = info.format & SF_FORMAT_SUBMASK;
    if (major != SF_FORMAT_WAV && major != SF_FORMAT_WAVEX) {
        SF_FORMAT_INFO container{};
        container.format = major;
        sf_command(nullptr, SFC_GET_FORMAT_INFO, &container, sizeof container);
        throw bad_input(fmt::format(
            "--audio {}: not a WAV file ({}); convert it to WAV first, e.g. with sox or ffmpeg",
            path.string(), container.name ? container.name : "an unknown container"));
    }
    switch (subtype) {
    case SF_FORMAT_PCM_U8:
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_16:
    case SF_FORMAT_PCM_24:
    case SF_FORMAT_PCM_32:
    case SF_FORMAT_FLOAT:
    case SF_FORMAT_DOUBLE:
    case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW:
        break;
    default:
        throw bad_input(fmt::format("--audio {}: the WAV encoding {} is not supported "
                                    "(PCM of 8 to 32 bits, float, double, A-law or "
                                    "mu-law are)",
                                    path.string(), encoding_name(subtype)));
    }
    if (info.samplerate < min_input_rate || info.samplerate > max_input_rate)
        throw bad_input(fmt::format("--audio {}: a sample rate of {} Hz is not supported "
                                    "({} to {} Hz are)",
                                    path.string(), info.samplerate, min_input_rate,
                                    max_input_rate));
    if (info.frames <= 0 || info.channels <= 0)
        throw bad_input(fmt::format("--audio {}: the file has no samples", path.string()));
    input_audio out;
    auto& c = out.conversion;
    c.source_rate = info.samplerate;
    c.source_channels = info.channels;
    c.source_encoding = encoding_name(subtype);
    c.rate = rate;
    const auto frames = static_cast<std::size_t>(info.frames);
    if (subtype == SF_FORMAT_PCM_16 && info.channels == 1 && info.samplerate == rate) {
        std::vector<short> samples(frames);
        const sf_count_t got = sf_readf_short(file.get(), samples.data(), info.frames);
        if (got <= 0)
            throw bad_input(fmt::format("--audio {}: cannot read samples: {}", path.string(),
                                        sf_strerror(file.get())));
        samples.resize(static_cast<std::size_t>(got));
        c.converter = "none";
        out.pcm = to_bytes(samples);
        return out;
    }
    // Decode to float (libsndfile scales every encoding to [-1, 1]), average the channels,
    // then convert the rate.
    const auto channels = static_cast<std::size_t>(info.channels);
    std::vector<float> interleaved(frames * channels);
    const sf_count_t got = sf_readf_float(file.get(), interleaved.data(), info.frames);
    if (got <= 0)
        throw bad_input(fmt::format("--audio {}: cannot read samples: {}", path.string(),
                                    sf_strerror(file.get())));
    interleaved.resize(static_cast<std::size_t>(got) * channels);
    auto mono = mix_down(interleaved, info.channels);
    std::vector<float> converted;
    if (info.samplerate == rate) {
        converted = std::move(mono);
    } else {
        try {
            converted = resample(mono, info.samplerate, rate);
        } catch (const std::runtime_error& e) {
            throw bad_input(fmt::format("--audio {}: {}", path.string(), e.what()));
        }
    }
    if (converted.empty())
        throw bad_input(
            fmt::format("--audio {}: too short to convert to {} Hz", path.string(), rate));
    c.converter = info.samplerate == rate ? "none" : "libsamplerate SRC_SINC_BEST_QUALITY";
    std::vector<short> samples(converted.size());
    src_float_to_short_array(converted.data(), samples.data(), static_cast<int>(converted.size()));
    out.pcm = to_bytes(samples);
    return out;
}

std::vector<std::uint8_t> read_input_wav(const std::filesystem::path& path) {
    return read_input_audio(path, 16000).pcm;
}

std::vector<std::uint8_t> silence(duration length) {
    const auto samples = std::max<std::int64_t>(
        1, std::chrono::duration_cast<std::chrono::microseconds>(length).count() * 16 / 1000);
    return std::vector<std::uint8_t>(static_cast<std::size_t>(samples) * 2, 0);
}

} // namespace pacer::runtime

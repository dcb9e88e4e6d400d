#include <pacer/runtime/audio_codec.hpp>

#include <fmt/format.h>
#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <samplerate.h>
#include <stdexcept>

namespace pacer::runtime {

namespace fs = std::filesystem;

namespace {

struct sndfile_closer {
    void operator()(SNDFILE* f) const { sf_close(f); }
};

std::string encoding_of(int format) {
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_16:
        return "pcm16";
    case SF_FORMAT_PCM_24:
        return "pcm24";
    case SF_FORMAT_PCM_32:
        return "pcm32";
    case SF_FORMAT_PCM_U8:
        return "pcm_u8";
    case SF_FORMAT_PCM_S8:
        return "pcm_s8";
    case SF_FORMAT_FLOAT:
        return "float32";
    case SF_FORMAT_DOUBLE:
        return "float64";
    default:
        return fmt::format("0x{:x}", format & SF_FORMAT_SUBMASK);
    }
}

} // namespace

decoded_audio read_audio_mono(const fs::path& path) {
    SF_INFO info{};
    std::unique_ptr<SNDFILE, sndfile_closer> f(sf_open(path.c_str(), SFM_READ, &info));
    if (!f)
        throw std::runtime_error(
            fmt::format("cannot read {}: {}", path.string(), sf_strerror(nullptr)));
    if (info.frames <= 0 || info.channels <= 0)
        throw std::runtime_error(fmt::format("cannot read {}: no audio", path.string()));
    std::vector<float> inter(static_cast<std::size_t>(info.frames) * info.channels);
    const auto got = sf_readf_float(f.get(), inter.data(), info.frames);
    decoded_audio d;
    d.channels = info.channels;
    d.pcm16 = (info.format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_16;
    d.encoding = encoding_of(info.format);
    d.mono.rate = info.samplerate;
    inter.resize(static_cast<std::size_t>(std::max<sf_count_t>(got, 0)) *
                 static_cast<std::size_t>(info.channels));
    d.mono.samples = mix_down(inter, info.channels);
    return d;
}

std::vector<float> mix_down(std::span<const float> interleaved, int channels) {
    const auto width = static_cast<std::size_t>(channels);
    std::vector<float> mono(interleaved.size() / width);
    for (std::size_t i = 0; i < mono.size(); ++i) {
        float sum = 0;
        for (std::size_t c = 0; c < width; ++c)
            sum += interleaved[i * width + c];
        mono[i] = sum / float(channels);
    }
    return mono;
}

std::vector<float> resample(std::span<const float> in, int from, int to) {
    if (from == to || in.empty())
        return {in.begin(), in.end()};
    const double ratio = double(to) / from;
    std::vector<float> out(static_cast<std::size_t>(std::ceil(double(in.size()) * ratio)) + 16);
    SRC_DATA d{};
    d.data_in = in.data();
    d.input_frames = static_cast<long>(in.size());
    d.data_out = out.data();
    d.output_frames = static_cast<long>(out.size());
    d.src_ratio = ratio;
    if (const int rc = src_simple(&d, SRC_SINC_BEST_QUALITY, 1); rc != 0)
        throw std::runtime_error(fmt::format("resampler: {}", src_strerror(rc)));
    out.resize(static_cast<std::size_t>(d.output_frames_gen));
    return out;
}

std::vector<std::uint8_t> resample_pcm16(std::span<const std::uint8_t> pcm, std::size_t from,
                                         std::size_t to) {
    if (from == to || pcm.empty())
        return {pcm.begin(), pcm.end()};
    const std::size_t n = pcm.size() / 2;
    std::vector<short> in(n);
    for (std::size_t i = 0; i < n; ++i)
        in[i] = static_cast<short>(pcm[2 * i] | (pcm[2 * i + 1] << 8));
    std::vector<float> fin(n);
    src_short_to_float_array(in.data(), fin.data(), static_cast<int>(n));
    const auto fout = resample(fin, static_cast<int>(from), static_cast<int>(to));
    const auto m = fout.size();
    std::vector<short> out(m);
    src_float_to_short_array(fout.data(), out.data(), static_cast<int>(m));
    std::vector<std::uint8_t> bytes(2 * m);
    for (std::size_t i = 0; i < m; ++i) {
        const auto u = static_cast<std::uint16_t>(out[i]);
        bytes[2 * i] = static_cast<std::uint8_t>(u & 0xff);
        bytes[2 * i + 1] = static_cast<std::uint8_t>(u >> 8);
    }
    return bytes;
}

std::vector<std::uint8_t> to_pcm16(std::span<const float> samples) {
    std::vector<std::uint8_t> pcm(samples.size() * 2);
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const long q = std::lround(double(samples[i]) * 32768.0);
        const auto v = static_cast<std::int16_t>(std::clamp<long>(q, -32768, 32767));
        const auto u = static_cast<std::uint16_t>(v);
        pcm[2 * i] = static_cast<std::uint8_t>(u & 0xff);
        pcm[2 * i + 1] = static_cast<std::uint8_t>(u >> 8);
    }
    return pcm;
}

void write_wav_pcm16(const fs::path& path, std::span<const std::uint8_t> pcm, int rate) {
    SF_INFO info{};
    info.samplerate = rate;
    info.channels = 1;
    info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
    std::unique_ptr<SNDFILE, sndfile_closer> f(sf_open(path.c_str(), SFM_WRITE, &info));
    if (!f)
        throw std::runtime_error(
            fmt::format("cannot write {}: {}", path.string(), sf_strerror(nullptr)));
    std::vector<short> s(pcm.size() / 2);
    for (std::size_t i = 0; i < s.size(); ++i)
        s[i] = static_cast<short>(static_cast<std::uint16_t>(pcm[2 * i] | (pcm[2 * i + 1] << 8)));
    if (sf_write_short(f.get(), s.data(), static_cast<sf_count_t>(s.size())) !=
        static_cast<sf_count_t>(s.size()))
        throw std::runtime_error(
            fmt::format("cannot write {}: {}", path.string(), sf_strerror(f.get())));
}

void write_wav_float_as_pcm16(const fs::path& path, std::span<const float> samples, int rate) {
    write_wav_pcm16(path, to_pcm16(samples), rate);
}

} // namespace pacer::runtime

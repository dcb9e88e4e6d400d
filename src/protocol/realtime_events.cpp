#include <pacer/protocol/pcm_input.hpp>
#include <pacer/protocol/realtime_events.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <samplerate.h>
#include <stdexcept>

namespace pacer::protocol {

bool parse_realtime_protocol(std::string_view name, realtime_protocol& out) {
    if (name == "openai-realtime")
        out = realtime_protocol::openai;
    else if (name == "vllm-realtime")
        out = realtime_protocol::vllm;
    else
        return false;
    return true;
}

std::string openai_session_update(std::string_view event_id, realtime_turns turns,
                                  std::size_t rate) {
    const boost::json::object format{{"type", "audio/pcm"}, {"rate", rate}};
    boost::json::object input{{"format", format}};
    if (turns == realtime_turns::server_vad)
        input["turn_detection"] = boost::json::object{{"type", "server_vad"}};
    else
        input["turn_detection"] = nullptr;
    const boost::json::object session{
        {"type", "realtime"},
        {"output_modalities", boost::json::array{"audio"}},
        {"audio", boost::json::object{{"input", input}, {"output", {{"format", format}}}}}};
    return boost::json::serialize(boost::json::object{
        {"type", "session.update"}, {"event_id", event_id}, {"session", session}});
}

std::string vllm_session_update(std::string_view event_id, std::string_view model) {
    return boost::json::serialize(
        boost::json::object{{"type", "session.update"}, {"event_id", event_id}, {"model", model}});
}

void realtime_append(std::string& out, std::string_view event_id, std::string_view audio_b64) {
    out.clear();
    out += R"({"type":"input_audio_buffer.append","event_id":")";
    out += event_id;
    out += R"(","audio":")";
    out += audio_b64;
    out += R"("})";
}

std::string realtime_commit(std::string_view event_id, realtime_protocol p, bool final_input) {
    if (p == realtime_protocol::vllm)
        return fmt::format(R"({{"type":"input_audio_buffer.commit","event_id":"{}","final":{}}})",
                           event_id, final_input);
    return fmt::format(R"({{"type":"input_audio_buffer.commit","event_id":"{}"}})", event_id);
}

std::string response_create(std::string_view event_id) {
    return fmt::format(R"({{"type":"response.create","event_id":"{}"}})", event_id);
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
    const double ratio = double(to) / double(from);
    std::vector<float> fout(static_cast<std::size_t>(std::ceil(double(n) * ratio)) + 16);
    SRC_DATA d{};
    d.data_in = fin.data();
    d.input_frames = static_cast<long>(n);
    d.data_out = fout.data();
    d.output_frames = static_cast<long>(fout.size());
    d.src_ratio = ratio;
    if (const int rc = src_simple(&d, SRC_SINC_BEST_QUALITY, 1); rc != 0)
        throw std::runtime_error(fmt::format("resampler: {}", src_strerror(rc)));
    const auto m = static_cast<std::size_t>(d.output_frames_gen);
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

std::span<const std::uint8_t> rate_packet(std::span<const std::uint8_t> pcm, std::size_t rate,
                                          std::size_t seq, std::size_t count) {
    const std::size_t size = rate * 2 * 80 / 1000;
    const std::size_t begin = std::min(seq * size, pcm.size());
    const std::size_t end = seq + 1 >= count ? pcm.size() : std::min(begin + size, pcm.size());
    return pcm.subspan(begin, end - begin);
}

std::span<const std::uint8_t> pcm_input::bytes(std::size_t offset, std::size_t n) const {
    const std::size_t begin = std::min(offset, size_);
    const std::size_t end = std::min(begin + n, size_);
    if (held_)
        return std::span<const std::uint8_t>(*held_).subspan(begin, end - begin);
    static constexpr std::array<std::uint8_t, max_packet_bytes> zero_packet{};
    if (end - begin > zero_packet.size())
        throw std::logic_error("silence is read a packet at a time");
    return std::span<const std::uint8_t>(zero_packet).first(end - begin);
}

pcm_input pcm_input::at_rate(std::size_t from, std::size_t to) const {
    if (held_)
        return pcm_input(resample_pcm16(*held_, from, to));
    return silence(size_ / 2 * to / from * 2);
}

} // namespace pacer::protocol

#include <pacer/protocol/pcm_input.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/runtime/audio_codec.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace pacer::protocol {

bool parse_realtime_protocol(std::string_view name, realtime_protocol& out) {
    if (name == "openai-realtime")
        out = realtime_protocol::openai;
    else if (name == "vllm-realtime")
        out = realtime_protocol::vllm;
    else if (name == "vllm-omni")
        out = realtime_protocol::vllm_omni;
    else
        return false;
    return true;
}

std::size_t wire_sample_rate(realtime_protocol p) {
    return p == realtime_protocol::openai ? openai_sample_rate : input_sample_rate;
}

pcm_input at_wire_rate(const pcm_input& pcm, realtime_protocol p) {
    return p == realtime_protocol::openai ? pcm.at_rate(input_sample_rate, openai_sample_rate)
                                          : pcm;
}

std::string realtime_session_update(std::string_view event_id, realtime_protocol p,
                                    realtime_turns turns, std::string_view model) {
    return p == realtime_protocol::openai ? openai_session_update(event_id, turns)
                                          : vllm_session_update(event_id, model);
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

std::string response_cancel(std::string_view event_id) {
    return fmt::format(R"({{"type":"response.cancel","event_id":"{}"}})", event_id);
}

std::string item_truncate(std::string_view event_id, std::string_view item_id,
                          std::uint64_t audio_end_ms) {
    boost::json::object o{{"type", "conversation.item.truncate"},
                          {"event_id", event_id},
                          {"item_id", item_id},
                          {"content_index", 0},
                          {"audio_end_ms", audio_end_ms}};
    return boost::json::serialize(o);
}

namespace {

// Where packet `seq` of `count` lies in `bytes` at `rate` Hz: [first, second).
std::pair<std::size_t, std::size_t> packet_range(std::size_t bytes, std::size_t rate,
                                                 std::size_t seq, std::size_t count) {
    const std::size_t size = packet_bytes_at(rate);
    const std::size_t begin = std::min(seq * size, bytes);
    return {begin, seq + 1 >= count ? bytes : std::min(begin + size, bytes)};
}

} // namespace

std::span<const std::uint8_t> rate_packet(std::span<const std::uint8_t> pcm, std::size_t rate,
                                          std::size_t seq, std::size_t count) {
    const auto [begin, end] = packet_range(pcm.size(), rate, seq, count);
    return pcm.subspan(begin, end - begin);
}

std::span<const std::uint8_t> pcm_input::rate_packet(std::size_t rate, std::size_t seq,
                                                     std::size_t count) const {
    const auto [begin, end] = packet_range(size_, rate, seq, count);
    return bytes(begin, end - begin);
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
        return pcm_input(runtime::resample_pcm16(*held_, from, to));
    return silence(size_ / 2 * to / from * 2);
}

} // namespace pacer::protocol

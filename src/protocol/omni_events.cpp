#include <pacer/core/base64.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/omni_events.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <iterator>

namespace pacer::protocol {

namespace json = boost::json;

std::string omni_session_update(std::string_view event_id, const omni_update& u) {
    json::object session{
        {"modalities", json::array{"audio", "text"}},
        {"input_audio_format", "pcm16"},
        {"output_audio_format", "pcm16"},
        {"sample_rate_hz", input_sample_rate},
        {"audio", json::object{{"input", json::object{{"sample_rate_hz", input_sample_rate}}},
                               {"output", json::object{{"sample_rate_hz", omni_output_rate}}}}},
        {"playback_commit_policy", "ack_only"},
        {"extra_body", json::object{{"auto_response", u.turns != omni_turns::model}}},
    };
    if (!u.model.empty())
        session["model"] = u.model;
    if (u.turns == omni_turns::server_vad)
        session["turn_detection"] = json::object{{"type", "server_vad"}};
    else
        session["turn_detection"] = nullptr;
    if (!u.ref_audio.empty())
        session["ref_audio"] = u.ref_audio;
    if (!u.instructions.empty())
        session["instructions"] = u.instructions;
    return json::serialize(
        json::object{{"type", "session.update"}, {"event_id", event_id}, {"session", session}});
}

void omni_append(std::string& out, std::string_view event_id, std::string_view audio_b64,
                 std::int64_t duration_ms, std::span<const std::string> video_frames) {
    out.clear();
    out += R"({"type":"input_audio_buffer.append","event_id":")";
    out += event_id;
    out += R"(","audio":")";
    out += audio_b64;
    out += R"(","duration_ms":)";
    fmt::format_to(std::back_inserter(out), "{}", duration_ms);
    if (!video_frames.empty()) {
        out += R"(,"video_frames":[)";
        for (std::size_t k = 0; k < video_frames.size(); ++k) {
            out += k == 0 ? R"(")" : R"(,")";
            out += video_frames[k]; // base64: nothing to escape
            out += '"';
        }
        out += ']';
    }
    out += '}';
}

bool omni_closes_unit(std::int64_t sent_ms, std::int64_t chunk_ms) {
    constexpr std::int64_t first = 1030, unit = 1000;
    const std::int64_t end = sent_ms + chunk_ms;
    if (chunk_ms <= 0 || end < first)
        return false;
    // The last boundary at or before `end`: first + n × unit; it closes here if after sent_ms.
    const std::int64_t boundary = first + (end - first) / unit * unit;
    return boundary > sent_ms;
}

std::string_view omni_synthetic_frame() {
    // A valid 1×1 PNG (one grey pixel): the smallest image a vision encoder will decode.
    return "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5Er"
           "kJggg==";
}

std::string omni_commit(std::string_view event_id) {
    return fmt::format(R"({{"type":"input_audio_buffer.commit","event_id":"{}"}})", event_id);
}

std::string omni_event_ack(std::int64_t server_event_seq) {
    return fmt::format(R"({{"type":"session.event_ack","server_event_seq":{}}})", server_event_seq);
}

std::string omni_heartbeat(std::string_view event_id) {
    return fmt::format(R"({{"type":"session.heartbeat","event_id":"{}"}})", event_id);
}

std::string omni_playback_ack(std::string_view event_id, std::string_view response_id,
                              std::int64_t played_ms) {
    return json::serialize(json::object{{"type", "playback.ack"},
                                        {"event_id", event_id},
                                        {"response_id", response_id},
                                        {"item_id", fmt::format("item_{}", response_id)},
                                        {"played_ms", played_ms},
                                        {"committed_ms", played_ms}});
}

std::string omni_output_clear(std::string_view event_id) {
    return fmt::format(R"({{"type":"output_audio_buffer.clear","event_id":"{}"}})", event_id);
}

std::string omni_close(std::string_view event_id) {
    return fmt::format(R"({{"type":"session.close","event_id":"{}"}})", event_id);
}

std::string wav_data_url(std::string_view bytes) {
    std::string url = "data:audio/wav;base64,";
    base64_append(url, bytes.data(), bytes.size());
    return url;
}

} // namespace pacer::protocol

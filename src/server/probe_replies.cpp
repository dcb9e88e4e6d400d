#include <pacer/server/detail/mock_host.hpp>
#include <pacer/server/detail/probe_replies.hpp>

#include <charconv>
#include <initializer_list>

namespace pacer::server::detail {

namespace {

constexpr std::string_view audio_head =
    R"({"type":"response.output_audio.delta","event_id":"server_)";
constexpr std::string_view audio_middle =
    R"(","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":")";
constexpr std::string_view transcript_head =
    R"({"type":"response.output_audio_transcript.delta","event_id":"server_)";
constexpr std::string_view transcript_tail =
    R"(","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"a"})";
constexpr std::string_view unit_head = R"({"type":"sglang.unit.done","event_id":"server_)";
constexpr std::string_view unit_middle = R"(","unit_id":"unit_)";
constexpr std::string_view unit_tail = R"("})";

// One text frame whose payload is `parts`, concatenated.
void append_parts(std::string& out, std::initializer_list<std::string_view> parts) {
    std::size_t n = 0;
    for (const auto part : parts)
        n += part.size();
    append_frame_header(out, n);
    for (const auto part : parts)
        out.append(part);
}

} // namespace

probe_replies::probe_replies(std::string_view audio_b64)
    : audio_tail_(std::string(audio_middle).append(audio_b64).append(R"("})")) {}

void probe_replies::append(std::string& out, std::uint64_t reply, std::uint64_t event,
                           std::int64_t seq) const {
    char id_digits[24];
    const std::string_view id(id_digits,
                              std::to_chars(id_digits, id_digits + sizeof id_digits, event).ptr);
    switch (reply % 3) {
    case 0:
        append_parts(out, {audio_head, id, audio_tail_});
        break;
    case 1:
        append_parts(out, {transcript_head, id, transcript_tail});
        break;
    default: {
        char seq_digits[24];
        const std::string_view unit(
            seq_digits, std::to_chars(seq_digits, seq_digits + sizeof seq_digits, seq).ptr);
        append_parts(out, {unit_head, id, unit_middle, unit, unit_tail});
        break;
    }
    }
}

} // namespace pacer::server::detail

// The probe mock's replies, built once and copied per append, must be byte for byte the frames
// it formatted per append before (the text below is that formatting, kept as the reference).

#include <pacer/server/detail/mock_host.hpp>
#include <pacer/server/detail/probe_replies.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace {

using pacer::server::detail::append_frame;
using pacer::server::detail::append_frame_header;
using pacer::server::detail::probe_replies;

std::string reference(std::uint64_t reply, std::uint64_t event, std::int64_t seq,
                      const std::string& audio) {
    std::string text;
    switch (reply % 3) {
    case 0:
        text = fmt::format(
            R"({{"type":"response.output_audio.delta","event_id":"server_{}","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"{}"}})",
            event, audio);
        break;
    case 1:
        text = fmt::format(
            R"({{"type":"response.output_audio_transcript.delta","event_id":"server_{}","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"a"}})",
            event);
        break;
    default:
        text = fmt::format(
            R"({{"type":"sglang.unit.done","event_id":"server_{}","unit_id":"unit_{}"}})", event,
            seq);
        break;
    }
    std::string frame;
    append_frame(frame, text);
    return frame;
}

TEST(probe_replies, are_the_frames_the_mock_formatted_before) {
    // 80 ms at 22.05 kHz (4704 characters: a 16-bit length) and a short one (7-bit length).
    for (const std::string& audio : {std::string(4704, 'Q'), std::string("AAAA")}) {
        const probe_replies replies(audio);
        for (const std::uint64_t reply : {0, 1, 2, 3, 4, 5, 301})
            for (const std::uint64_t event :
                 {std::uint64_t{0}, std::uint64_t{9}, std::uint64_t{123456789},
                  std::numeric_limits<std::uint64_t>::max()})
                for (const std::int64_t seq : {std::int64_t{0}, std::int64_t{-3}, std::int64_t{42},
                                               std::numeric_limits<std::int64_t>::min()}) {
                    std::string out = "kept";
                    replies.append(out, reply, event, seq);
                    EXPECT_EQ(out, "kept" + reference(reply, event, seq, audio))
                        << reply << " " << event << " " << seq;
                }
    }
}

TEST(append_frame_header, is_append_frame_without_the_payload) {
    for (const std::size_t n : {0u, 125u, 126u, 65535u, 65536u}) {
        const std::string payload(n, 'x');
        std::string whole, header;
        append_frame(whole, payload, n % 2 == 1);
        append_frame_header(header, n, n % 2 == 1);
        EXPECT_EQ(header + payload, whole) << n;
    }
}

} // namespace

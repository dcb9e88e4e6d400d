// The hot-path scanner must judge every frame exactly as the DOM parser does.

#include <pacer/core/base64.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/events.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace {

using pacer::protocol::event_scanner;
using pacer::protocol::frame_parser;

const std::vector<std::string> corpus = {
    R"({"type":"session.created","session":{"id":"s"}})",
    R"({"type":"response.output_audio.delta","delta":"AAAA","sglang":{"unit_id":"unit_0"}})",
    R"({"type":"error","sglang":{"fatal":true},"error":{"code":"x"}})",
    R"({"type":"error","sglang":{"fatal":false}})",
    R"({"type":"error","sglang":{"fatal":1}})",
    R"({"type":"error","sglang":{"fatal":0.0}})",
    R"({"type":"error","sglang":{"fatal":"yes"}})",
    R"({"type":"error","sglang":{"fatal":""}})",
    R"({"type":"error","sglang":{"fatal":null}})",
    R"({"type":"error","sglang":{"fatal":[0]}})",
    R"({"type":"error","sglang":{"fatal":{}}})",
    R"({"type":"error","sglang":{"other":{"fatal":true}}})",
    R"({"type":"error","fatal":true})",
    R"({"type":"error","x":{"sglang":{"fatal":true}}})",
    R"({"sglang":{"fatal":true},"type":"error"})",
    R"({"type":"a","type":"b"})",
    R"({"type":5})",
    R"({"type":{"x":"y"}})",
    R"({"type":["x"]})",
    R"({"type":null})",
    R"({"kind":"x"})",
    R"({"nested":{"type":"x"}})",
    R"([1,2])",
    R"("type")",
    R"(42)",
    R"({"type":"x")",
    R"({"type":"x"} trailing)",
    R"({"type":"x","v":NaN})",
    R"({"type":"x","v":Infinity})",
    R"({"type":"x","v":1e999})",
    "",
    "not json",
    "{\"type\":\n\"pretty\"}",
    R"({"type":"esc\"aped\u00e9"})",
};

TEST(event_scanner, agrees_with_the_dom_parser_on_every_frame) {
    event_scanner scanner;
    frame_parser parser;
    for (const auto& frame : corpus) {
        const char* dom_error = parser.parse(frame);
        const char* scan_error = scanner.scan(frame);
        EXPECT_EQ(dom_error == nullptr, scan_error == nullptr) << frame;
        if (dom_error && scan_error) {
            EXPECT_STREQ(dom_error, scan_error) << frame;
        }
        if (!dom_error && !scan_error) {
            EXPECT_EQ(scanner.type(), parser.type()) << frame;
            EXPECT_EQ(scanner.fatal(), pacer::protocol::is_fatal_error(parser.object())) << frame;
        }
    }
}

TEST(event_scanner, long_strings_split_in_parts_are_captured_whole) {
    // A type longer than the parser's internal chunks, and a 64 kB payload before it.
    const std::string type(5000, 't');
    const std::string frame =
        R"({"delta":")" + std::string(65536, 'A') + R"(","type":")" + type + R"("})";
    event_scanner scanner;
    ASSERT_EQ(scanner.scan(frame), nullptr);
    EXPECT_EQ(scanner.type(), type);
    // Reusable: a second, different frame.
    ASSERT_EQ(scanner.scan(R"({"type":"session.closed"})"), nullptr);
    EXPECT_EQ(scanner.type(), "session.closed");
    EXPECT_FALSE(scanner.fatal());
}

} // namespace

namespace {

// Regressions found by fuzz/fuzz_server_event (seeds kept in fuzz/corpus/server_event/).
TEST(event_scanner, a_truncated_frame_does_not_leak_into_the_next) {
    event_scanner scanner;
    EXPECT_NE(scanner.scan(R"({"type)"), nullptr); // ends inside a key
    ASSERT_EQ(scanner.scan(R"({"type":"x"})"), nullptr);
    EXPECT_EQ(scanner.type(), "x");
    EXPECT_NE(scanner.scan(R"({"type":"ab)"), nullptr); // ends inside a string
    ASSERT_EQ(scanner.scan(R"({"type":"y"})"), nullptr);
    EXPECT_EQ(scanner.type(), "y");
}

TEST(event_scanner, the_last_duplicate_sglang_wins) {
    event_scanner scanner;
    ASSERT_EQ(scanner.scan(R"({"type":"error","sglang":{"fatal":true},"sglang":{}})"), nullptr);
    EXPECT_FALSE(scanner.fatal());
    ASSERT_EQ(scanner.scan(R"({"type":"error","sglang":{},"sglang":{"fatal":true}})"), nullptr);
    EXPECT_TRUE(scanner.fatal());
}

TEST(malformed_frame_message, ill_formed_utf8_is_replaced) {
    for (std::string bad :
         {std::string("\xC0\x80"), std::string("\xED\xA0\x80"), std::string("\xF5\x80\x80\x80"),
          std::string("\xF4\x90\x80\x80"), std::string("\xE0\x80\x80")}) {
        const auto message = pacer::protocol::malformed_frame_message("x" + bad + "y", "r");
        EXPECT_NE(message.find("\xEF\xBF\xBD"), std::string::npos);
        EXPECT_EQ(message.find(bad), std::string::npos);
    }
    // Well-formed multi-byte characters pass unchanged.
    const std::string good = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
    EXPECT_NE(pacer::protocol::malformed_frame_message(good, "r").find(good), std::string::npos);
}

// The mocks read the client's appends with the scanner: `event_id`, `sglang.seq` and the
// decoded size of `audio` must be what the DOM the mocks used before gives.
TEST(event_scanner, reads_an_append_as_the_dom_does) {
    const std::string long_audio = std::string(8000, 'A') + "AA==";
    const std::string escaped_audio = std::string(5000, 'A') + R"(\u0041\u003d=)";
    const std::vector<std::string> appends = {
        R"({"type":"input_audio_buffer.append","event_id":"ev_1","audio":"AAAA","sglang":{"seq":7}})",
        R"({"sglang":{"seq":3},"audio":"AAA=","event_id":"e","type":"input_audio_buffer.append"})",
        R"({"type":"a","audio":"AA==","sglang":{"seq":-2}})",
        R"({"type":"a","audio":"A=","sglang":{"seq":18446744073709551615}})",
        R"({"type":"a","audio":"AAAAAAA=","sglang":{"seq":1.0}})",
        R"({"type":"a","audio":5,"sglang":{"seq":"1"},"event_id":5})",
        R"({"type":"a","audio":["AAAA"],"sglang":[{"seq":1}],"event_id":["x"]})",
        R"({"type":"a","sglang":{"seq":1},"sglang":{"x":2}})",
        R"({"type":"a","sglang":{"seq":1},"sglang":5})",
        R"({"type":"a","sglang":{"seq":1,"seq":null}})",
        R"({"type":"a","sglang":{"x":{"seq":4}},"x":{"seq":5},"seq":6})",
        R"({"type":"a","event_id":"one","event_id":"two","audio":"AAAAAAAA","audio":"AA=="})",
        R"({"type":"a","event_id":"one","event_id":null,"audio":"AAAA","audio":{}})",
        R"({"type":"a","event_id":"esc\"aped\u00e9","x":{"event_id":"no","audio":"AAAA"}})",
        R"({"type":"a","audio":")" + long_audio + R"(","event_id":")" + std::string(3000, 'e') +
            R"("})",
        R"({"type":"a","audio":")" + escaped_audio + R"("})",
        R"({"type":"a","audio":""})",
        R"({"type":"a"})",
    };
    event_scanner scanner;
    frame_parser parser;
    for (const auto& frame : appends) {
        ASSERT_EQ(parser.parse(frame), nullptr) << frame;
        ASSERT_EQ(scanner.scan(frame), nullptr) << frame;
        const auto& event = parser.object();
        const auto* id = event.if_contains("event_id");
        EXPECT_EQ(scanner.event_id(), id && id->is_string() ? std::string(id->get_string()) : "")
            << frame;
        std::optional<std::int64_t> seq;
        if (const auto* sg = event.if_contains("sglang"); sg && sg->is_object())
            if (const auto* s = sg->get_object().if_contains("seq"); s && s->is_int64())
                seq = s->get_int64();
        EXPECT_EQ(scanner.seq(), seq) << frame;
        std::size_t audio = 0;
        if (const auto* a = event.if_contains("audio"); a && a->is_string())
            audio = pacer::base64_decoded_size(a->get_string());
        EXPECT_EQ(scanner.audio_decoded_size(), audio) << frame;
    }
    // Nothing of an append survives into the next frame.
    ASSERT_EQ(scanner.scan(R"({"type":"session.close"})"), nullptr);
    EXPECT_EQ(scanner.event_id(), "");
    EXPECT_EQ(scanner.seq(), std::nullopt);
    EXPECT_EQ(scanner.audio_decoded_size(), 0u);
}

// An output audio delta's PCM size comes from its `delta` (multi-turn sessions time the
// assistant's audio with it, docs/scenarios.md), split across parser chunks or not.
TEST(event_scanner, SizesAnAudioDeltasPcm) {
    event_scanner scanner;
    const std::string pcm(3840, 'x');
    std::string b64;
    pacer::base64_append(b64, reinterpret_cast<const std::uint8_t*>(pcm.data()), pcm.size());
    const std::string frame = R"({"type":"response.output_audio.delta","response_id":"r",)"
                              R"("delta":")" +
                              b64 + R"(","item_id":"item_1"})";
    ASSERT_EQ(scanner.scan(frame), nullptr);
    EXPECT_EQ(scanner.audio_decoded_size(), 3840u);
    ASSERT_EQ(scanner.scan(R"({"type":"response.output_audio.delta","delta":"AAA="})"), nullptr);
    EXPECT_EQ(scanner.audio_decoded_size(), 2u);
}

} // namespace

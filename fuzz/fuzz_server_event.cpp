// Differential fuzzing of the two readers of server frames: the DOM-free `event_scanner` of the
// receive hot path and the DOM `frame_parser`. They must agree on every input: both accept or
// both reject (with the same reason), and on acceptance give the same `type`, the same
// `sglang.fatal` judgement and the same append fields the mocks read (`event_id`, `sglang.seq`,
// the decoded size of `audio` or `delta`). `malformed_frame_message` must give one valid UTF-8 line
// for any bytes, since it goes into the JSONL trace.

#include <pacer/core/base64.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/events.hpp>

#include "fail.hpp"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace {

using pacer::fuzz::fail;

// Well-formed UTF-8 as Unicode Table 3-7 defines it: no overlong forms, no surrogates, nothing
// above U+10FFFF, no truncated sequences.
bool valid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len = 0;
        unsigned char lo = 0x80, hi = 0xbf; // the range of the second byte
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            if (c == 0xe0)
                lo = 0xa0;
            if (c == 0xed)
                hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            if (c == 0xf0)
                lo = 0x90;
            if (c == 0xf4)
                hi = 0x8f;
        } else {
            return false;
        }
        if (i + len > s.size())
            return false;
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        if (c1 < lo || c1 > hi)
            return false;
        for (std::size_t k = 2; k < len; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80)
                return false;
        i += len;
    }
    return true;
}

void check_message(std::string_view frame, std::string_view reason) {
    const std::string message = pacer::protocol::malformed_frame_message(frame, reason);
    if (!valid_utf8(message))
        fail("malformed_frame_message is not valid UTF-8", message);
    if (message.find('\n') != std::string::npos)
        fail("malformed_frame_message contains a newline", message);
}

// One frame through both readers; they must agree.
void check_frame(pacer::protocol::event_scanner& scanner, pacer::protocol::frame_parser& parser,
                 std::string_view frame) {
    const char* scan_error = scanner.scan(frame);
    const char* parse_error = parser.parse(frame);
    if ((scan_error == nullptr) != (parse_error == nullptr))
        fail(scan_error ? "scanner rejects what the parser accepts"
                        : "scanner accepts what the parser rejects",
             scan_error ? scan_error : parse_error);
    if (scan_error) {
        // The scanner documents "the same words as frame_parser::parse".
        if (std::string_view(scan_error) != std::string_view(parse_error))
            fail("scanner and parser give different reasons",
                 std::string(scan_error) + " / " + parse_error);
        check_message(frame, parse_error);
    } else {
        if (scanner.type() != parser.type())
            fail("scanner and parser disagree on type", scanner.type());
        if (scanner.fatal() != pacer::protocol::is_fatal_error(parser.object()))
            fail("scanner and is_fatal_error disagree on sglang.fatal",
                 scanner.fatal() ? "scanner: fatal" : "scanner: not fatal");
        const auto& event = parser.object();
        const auto* id = event.if_contains("event_id");
        if (scanner.event_id() !=
            (id && id->is_string() ? std::string_view(id->get_string()) : std::string_view()))
            fail("scanner and parser disagree on event_id", std::string(scanner.event_id()));
        std::optional<std::int64_t> seq;
        if (const auto* sg = event.if_contains("sglang"); sg && sg->is_object())
            if (const auto* q = sg->get_object().if_contains("seq"); q && q->is_int64())
                seq = q->get_int64();
        if (scanner.seq() != seq)
            fail("scanner and parser disagree on sglang.seq",
                 scanner.seq() ? std::to_string(*scanner.seq()) : "scanner: none");
        // The scanner sizes whichever of `audio` and `delta` came last in the text. The DOM
        // keeps a repeated key at its first place, so it cannot tell that order when both keys
        // are present: then either size is right.
        const auto decoded_size = [&](const char* key) -> std::optional<std::size_t> {
            const auto* v = event.if_contains(key);
            if (!v)
                return std::nullopt;
            return v->is_string() ? pacer::base64_decoded_size(v->get_string()) : 0;
        };
        const auto audio = decoded_size("audio");
        const auto delta = decoded_size("delta");
        const std::size_t size = scanner.audio_decoded_size();
        const bool agrees = audio && delta ? size == *audio || size == *delta
                                           : size == audio.value_or(delta.value_or(0));
        if (!agrees)
            fail("scanner and parser disagree on the audio size", std::to_string(size));
        check_message(frame, "expected a JSON object");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view frame(reinterpret_cast<const char*>(data), size);
    // A session reuses one scanner and one parser frame after frame, so state left behind by
    // one frame must not change the next. Fresh objects per input keep every crash
    // reproducible from its one input: the frame, its first half (often cut inside a key or a
    // string), then the frame again.
    pacer::protocol::event_scanner scanner;
    pacer::protocol::frame_parser parser;
    check_frame(scanner, parser, frame);
    check_frame(scanner, parser, frame.substr(0, size / 2));
    check_frame(scanner, parser, frame);
    return 0;
}

// Unit tests of the client event builders, the frame parser and base64 (docs/protocol.md §1.3, 1.4,
// 1.5 and 6).

#include <pacer/core/base64.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/events.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace {

namespace json = boost::json;
namespace protocol = pacer::protocol;
using protocol::server_event;

std::set<std::string> keys_of(const json::object& o) {
    std::set<std::string> keys;
    for (const auto& kv : o)
        keys.emplace(kv.key());
    return keys;
}

bool is_lower_hex_32(std::string_view id) {
    if (id.size() != 32)
        return false;
    for (char c : id)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

// Whether `s` is well-formed UTF-8 (no truncated or stray sequences).
bool is_valid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t len = 0;
        if (c < 0x80)
            len = 1;
        else if ((c & 0xE0) == 0xC0)
            len = 2;
        else if ((c & 0xF0) == 0xE0)
            len = 3;
        else if ((c & 0xF8) == 0xF0)
            len = 4;
        else
            return false;
        if (i + len > s.size())
            return false;
        for (std::size_t k = 1; k < len; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
                return false;
        i += len;
    }
    return true;
}

std::size_t code_points(std::string_view s) {
    std::size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
            ++n;
    return n;
}

// Deterministic "PCM": 2561 bytes, so that the last packet is a 1-byte tail.
std::vector<std::uint8_t> test_pcm(std::size_t size) {
    std::vector<std::uint8_t> pcm(size);
    for (std::size_t i = 0; i < size; ++i)
        pcm[i] = static_cast<std::uint8_t>((i * 131 + 7) & 0xff);
    return pcm;
}

// ---------------------------------------------------------------------------------------------
// Client events (docs/protocol.md §1.3)

TEST(protocol_events, append_event_has_exactly_the_reference_fields) {
    const auto pcm = test_pcm(2561);
    const std::string id(32, 'a');
    for (std::uint64_t seq : {0u, 1u}) {
        const std::size_t begin = seq * 2560;
        const std::size_t size = seq == 0 ? 2560 : 1;
        std::string out;
        protocol::append_event(out, id, std::span(pcm).subspan(begin, size), seq);

        const json::value v = json::parse(out);
        ASSERT_TRUE(v.is_object()) << out;
        const auto& o = v.as_object();
        EXPECT_EQ(keys_of(o), (std::set<std::string>{"type", "event_id", "audio", "sglang"}));
        EXPECT_EQ(o.at("type").as_string(), "input_audio_buffer.append");
        EXPECT_EQ(o.at("event_id").as_string(), id);

        // The audio decodes to exactly the PCM slice of this packet.
        const auto audio = o.at("audio").as_string();
        const auto decoded = pacer::base64_decode(std::string_view(audio.data(), audio.size()));
        ASSERT_TRUE(decoded.has_value());
        EXPECT_EQ(*decoded, std::string(reinterpret_cast<const char*>(pcm.data()) + begin, size));

        const auto& sglang = o.at("sglang").as_object();
        EXPECT_EQ(keys_of(sglang), (std::set<std::string>{"seq", "t_start_ms"}));
        EXPECT_EQ(sglang.at("seq").to_number<std::uint64_t>(), seq);
        ASSERT_TRUE(sglang.at("t_start_ms").is_double()) << out;
        EXPECT_EQ(sglang.at("t_start_ms").as_double(), static_cast<double>(seq) * 80.0);
    }
}

TEST(protocol_events, append_t_start_ms_is_written_as_a_float) {
    const auto pcm = test_pcm(4);
    std::string out;
    protocol::append_event(out, "0123456789abcdef0123456789abcdef", pcm, 1);
    EXPECT_NE(out.find(R"("sglang":{"seq":1,"t_start_ms":80.0})"), std::string::npos) << out;
    protocol::append_event(out, "0123456789abcdef0123456789abcdef", pcm, 0);
    EXPECT_NE(out.find(R"("t_start_ms":0.0})"), std::string::npos) << out;
    // A long input: seq 123456 starts at 9876480 ms, still an exact float.
    protocol::append_event(out, "0123456789abcdef0123456789abcdef", pcm, 123456);
    EXPECT_NE(out.find(R"("seq":123456,"t_start_ms":9876480.0})"), std::string::npos) << out;
    const auto v = json::parse(out);
    EXPECT_EQ(v.at("sglang").at("t_start_ms").as_double(), 9876480.0);
}

TEST(protocol_events, append_event_replaces_the_buffer_content) {
    const auto pcm = test_pcm(2560);
    std::string out = "stale content that must disappear";
    protocol::append_event(out, std::string(32, 'b'), pcm, 3);
    const auto first = out;
    EXPECT_NO_THROW((void)json::parse(out));
    // Reusing the buffer for the next packet gives the same bytes as a fresh one.
    protocol::append_event(out, std::string(32, 'c'), pcm, 4);
    std::string fresh;
    protocol::append_event(fresh, std::string(32, 'c'), pcm, 4);
    EXPECT_EQ(out, fresh);
    EXPECT_NE(out, first);
}

TEST(protocol_events, event_ids_are_32_lowercase_hex_and_unique) {
    protocol::event_id_source ids(42);
    std::unordered_set<std::string> seen;
    for (int i = 0; i < 10000; ++i) {
        const auto id = ids.next();
        ASSERT_TRUE(is_lower_hex_32(id)) << id.view();
        ASSERT_TRUE(seen.emplace(id.view()).second) << "repeat at " << i;
    }
    // A seeded source is reproducible.
    protocol::event_id_source a(7), b(7);
    for (int i = 0; i < 10; ++i)
        EXPECT_EQ(a.next().view(), b.next().view());
    EXPECT_NE(protocol::event_id_source(1).next(), protocol::event_id_source(2).next());
}

// Each session's source is seeded by `unique_id_seed`: seeds never repeat within a process,
// the process nonce stays put, and sources so seeded share no id (across processes the nonce
// differs; tests/integration ScaleE2E.WorkersAndRunsShareNoEventId checks that end to end).
TEST(protocol_events, unique_id_seeds_give_sessions_disjoint_ids) {
    EXPECT_EQ(protocol::process_nonce(), protocol::process_nonce());
    std::unordered_set<std::uint64_t> seeds;
    for (int i = 0; i < 100000; ++i)
        ASSERT_TRUE(seeds.insert(protocol::unique_id_seed(0x9ac3e5)).second) << "repeat at " << i;
    std::unordered_set<std::string> seen;
    for (int session = 0; session < 200; ++session) {
        protocol::event_id_source ids(protocol::unique_id_seed(0x9ac3e5));
        for (int i = 0; i < 200; ++i)
            ASSERT_TRUE(seen.emplace(ids.next().view()).second) << session << "/" << i;
    }
}

TEST(protocol_events, session_update_shape) {
    const std::string id = "00112233445566778899aabbccddeeff";
    const auto text = protocol::session_update(id);
    const auto v = json::parse(text);
    ASSERT_TRUE(v.is_object());
    const auto& o = v.as_object();
    EXPECT_EQ(keys_of(o), (std::set<std::string>{"type", "event_id", "session"}));
    EXPECT_EQ(o.at("type").as_string(), "session.update");
    EXPECT_EQ(o.at("event_id").as_string(), id);
    EXPECT_EQ(json::serialize(o.at("session")), R"({"output_modalities":["audio"]})");
}

TEST(protocol_events, session_update_asks_for_the_profiles_output_modalities) {
    // The reference profiles: VoiceChat asks for audio, MiniCPM-o for audio and text.
    const std::string id = "00112233445566778899aabbccddeeff";
    const auto session_of = [&](std::string_view name) {
        const auto* p = protocol::find_profile(name);
        EXPECT_NE(p, nullptr) << name;
        return json::serialize(
            json::parse(protocol::session_update(id, *p)).as_object().at("session"));
    };
    EXPECT_EQ(session_of("nemotron"), R"({"output_modalities":["audio"]})");
    EXPECT_EQ(session_of("nemotron-voicechat-pr2188"), R"({"output_modalities":["audio"]})");
    EXPECT_EQ(session_of("minicpmo"), R"({"output_modalities":["audio","text"]})");
    EXPECT_EQ(session_of("minicpmo-native-pr2377"), R"({"output_modalities":["audio","text"]})");
    EXPECT_EQ(protocol::output_modalities_json(*protocol::find_profile("minicpmo")),
              R"(["audio","text"])");
}

TEST(protocol_events, input_audio_end_and_session_close_shapes) {
    const std::string id = "ffeeddccbbaa99887766554433221100";
    for (const auto& [text, type] :
         {std::pair{protocol::input_audio_end(id), "sglang.input_audio.end"},
          std::pair{protocol::session_close(id), "session.close"}}) {
        const auto v = json::parse(text);
        ASSERT_TRUE(v.is_object()) << text;
        const auto& o = v.as_object();
        EXPECT_EQ(keys_of(o), (std::set<std::string>{"type", "event_id"})) << text;
        EXPECT_EQ(o.at("type").as_string(), type);
        EXPECT_EQ(o.at("event_id").as_string(), id);
    }
}

TEST(protocol_events, profiles) {
    const auto& def = protocol::default_profile();
    EXPECT_EQ(def.name, "nemotron-voicechat-pr2188");
    EXPECT_EQ(def.unit_ms, 80);
    EXPECT_EQ(def.output_sample_rate, 22050);
    EXPECT_TRUE(def.continuous);
    EXPECT_EQ(protocol::find_profile("nemotron"), &def);
    const auto* minicpm = protocol::find_profile("minicpmo-native-pr2377");
    ASSERT_NE(minicpm, nullptr);
    EXPECT_EQ(minicpm->unit_ms, 1000);
    EXPECT_EQ(minicpm->output_sample_rate, 24000);
    EXPECT_FALSE(minicpm->continuous);
    EXPECT_FALSE(minicpm->stop_requires_eos);
    EXPECT_EQ(protocol::find_profile("no-such-profile"), nullptr);
}

// ---------------------------------------------------------------------------------------------
// Server events (docs/protocol.md §1.4)

TEST(protocol_events, classify_every_known_server_event) {
    const std::pair<std::string_view, server_event> known[] = {
        {"session.created", server_event::session_created},
        {"session.updated", server_event::session_updated},
        {"sglang.input_audio.accepted", server_event::input_accepted},
        {"sglang.unit.done", server_event::unit_done},
        {"response.created", server_event::response_created},
        {"response.output_audio.delta", server_event::output_audio_delta},
        {"response.output_audio.done", server_event::output_audio_done},
        {"response.output_audio_transcript.delta", server_event::transcript_delta},
        {"response.output_audio_transcript.done", server_event::transcript_done},
        {"response.output_text.delta", server_event::text_delta},
        {"response.output_text.done", server_event::text_done},
        {"response.done", server_event::response_done},
        {"sglang.input_audio.ended", server_event::input_ended},
        {"sglang.input_audio.drained", server_event::input_drained},
        {"session.closed", server_event::session_closed},
        {"error", server_event::error},
    };
    std::set<server_event> kinds;
    for (const auto& [type, kind] : known) {
        EXPECT_EQ(protocol::classify_server_event(type), kind) << type;
        kinds.insert(kind);
    }
    // Every kind but `unknown` has exactly one type.
    EXPECT_EQ(kinds.size(), protocol::server_event_count - 1);

    for (std::string_view other : {"", "session.update", "response.audio.delta", "ERROR",
                                   "session.created ", "sglang.unit", "error.x"})
        EXPECT_EQ(protocol::classify_server_event(other), server_event::unknown) << other;
}

TEST(protocol_events, is_fatal_error) {
    auto obj = [](std::string_view text) { return json::parse(text).as_object(); };
    EXPECT_TRUE(protocol::is_fatal_error(obj(R"({"type":"error","sglang":{"fatal":true}})")));
    EXPECT_FALSE(protocol::is_fatal_error(obj(R"({"type":"error","sglang":{"fatal":false}})")));
    EXPECT_FALSE(protocol::is_fatal_error(obj(R"({"type":"error","error":{"code":"x"}})")));
    EXPECT_FALSE(protocol::is_fatal_error(obj(R"({"type":"error","sglang":{}})")));
    EXPECT_FALSE(protocol::is_fatal_error(obj(R"({"type":"error","sglang":null})")));
    EXPECT_FALSE(protocol::is_fatal_error(obj(R"({"type":"error","sglang":[true]})")));
    EXPECT_FALSE(protocol::is_fatal_error(obj(R"({"type":"error","fatal":true})")));
    // Python's bool(): non-zero numbers and non-empty strings are truthy, null and 0 are not.
    EXPECT_TRUE(protocol::is_fatal_error(obj(R"({"type":"error","sglang":{"fatal":1}})")));
    EXPECT_TRUE(protocol::is_fatal_error(obj(R"({"type":"error","sglang":{"fatal":"yes"}})")));
    EXPECT_FALSE(protocol::is_fatal_error(obj(R"({"type":"error","sglang":{"fatal":0}})")));
    EXPECT_FALSE(protocol::is_fatal_error(obj(R"({"type":"error","sglang":{"fatal":null}})")));
    EXPECT_FALSE(protocol::is_fatal_error(obj(R"({"type":"error","sglang":{"fatal":""}})")));
}

// ---------------------------------------------------------------------------------------------
// frame_parser (docs/protocol.md §1.5 step 2)

TEST(frame_parser, parses_an_object_with_a_string_type) {
    protocol::frame_parser p;
    ASSERT_EQ(p.parse(R"({"type":"session.created","event_id":"server_1","session":{"id":"s"}})"),
              nullptr);
    EXPECT_EQ(p.type(), "session.created");
    EXPECT_EQ(p.object().at("event_id").as_string(), "server_1");
    EXPECT_EQ(p.object().at("session").at("id").as_string(), "s");
}

TEST(frame_parser, rejects_a_non_object) {
    protocol::frame_parser p;
    for (std::string_view frame : {"[1]", "1", "\"session.created\"", "null", "true"}) {
        const char* reason = p.parse(frame);
        ASSERT_NE(reason, nullptr) << frame;
        EXPECT_STREQ(reason, "expected a JSON object") << frame;
    }
}

TEST(frame_parser, rejects_a_missing_or_non_string_type) {
    protocol::frame_parser p;
    for (std::string_view frame :
         {R"({})", R"({"event_id":"x"})", R"({"type":1})", R"({"type":null})",
          R"({"type":["error"]})", R"({"type":{"name":"error"}})", R"({"Type":"error"})"}) {
        const char* reason = p.parse(frame);
        ASSERT_NE(reason, nullptr) << frame;
        EXPECT_STREQ(reason, "missing string 'type'") << frame;
    }
}

TEST(frame_parser, rejects_malformed_json) {
    protocol::frame_parser p;
    for (std::string_view frame :
         {"", "{", R"({"type":)", R"({"type":"x",})", R"({'type':'x'})", R"({"type":"x"} trailing)",
          R"({"type":"x"}{"type":"y"})", "not json"}) {
        const char* reason = p.parse(frame);
        ASSERT_NE(reason, nullptr) << "accepted: " << frame;
        EXPECT_GT(std::string_view(reason).size(), 0u) << frame;
    }
}

TEST(frame_parser, rejects_nan_and_infinity) {
    protocol::frame_parser p;
    for (std::string_view frame :
         {R"({"type":"x","v":NaN})", R"({"type":"x","v":Infinity})",
          R"({"type":"x","v":-Infinity})", R"({"type":"x","v":nan})", R"({"type":"x","v":inf})"}) {
        EXPECT_NE(p.parse(frame), nullptr) << "accepted: " << frame;
    }
}

TEST(frame_parser, is_reusable_many_times) {
    protocol::frame_parser p;
    const std::string big_delta(64 * 1024, 'A'); // larger than the parser's initial block
    for (int i = 0; i < 5000; ++i) {
        switch (i % 4) {
        case 0: {
            const std::string frame =
                R"({"type":"sglang.input_audio.accepted","seq":)" + std::to_string(i) + "}";
            ASSERT_EQ(p.parse(frame), nullptr) << frame;
            EXPECT_EQ(p.type(), "sglang.input_audio.accepted");
            EXPECT_EQ(p.object().at("seq").to_number<int>(), i);
            break;
        }
        case 1:
            ASSERT_NE(p.parse(R"({"type":"x",)"), nullptr);
            break;
        case 2: {
            const std::string frame =
                R"({"type":"response.output_audio.delta","delta":")" + big_delta + R"("})";
            ASSERT_EQ(p.parse(frame), nullptr);
            EXPECT_EQ(p.type(), "response.output_audio.delta");
            EXPECT_EQ(p.object().at("delta").as_string().size(), big_delta.size());
            break;
        }
        case 3:
            ASSERT_NE(p.parse("[]"), nullptr);
            break;
        }
    }
    // After all that, a plain frame still parses correctly.
    ASSERT_EQ(p.parse(R"({"type":"session.closed","reason":"client_closed"})"), nullptr);
    EXPECT_EQ(p.type(), "session.closed");
    EXPECT_EQ(p.object().at("reason").as_string(), "client_closed");
}

// ---------------------------------------------------------------------------------------------
// Error messages (docs/protocol.md §6)

TEST(malformed_frame_message, format) {
    EXPECT_EQ(protocol::malformed_frame_message("{bad", "ValueError: r"),
              "ValueError: malformed server frame '{bad': ValueError: r");
}

// The excerpt between "frame " and ": <reason>", decoded from Python's repr of a string.
std::string excerpt_of(const std::string& message, std::string_view reason) {
    const std::string_view prefix = "ValueError: malformed server frame ";
    EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
    const std::string suffix = ": " + std::string(reason);
    EXPECT_GE(message.size(), prefix.size() + suffix.size() + 2);
    EXPECT_EQ(message.substr(message.size() - suffix.size()), suffix) << message;
    const std::string quoted =
        message.substr(prefix.size(), message.size() - prefix.size() - suffix.size());
    const char q = quoted.front();
    EXPECT_TRUE((q == '\'' || q == '"') && quoted.back() == q) << quoted;
    std::string out;
    for (std::size_t i = 1; i + 1 < quoted.size(); ++i) {
        if (quoted[i] == q) {
            ADD_FAILURE() << "an unescaped quote inside " << quoted;
            return {};
        }
        if (quoted[i] != '\\') {
            out += quoted[i];
            continue;
        }
        const char e = quoted[++i];
        if (e == 'n')
            out += '\n';
        else if (e == 'r')
            out += '\r';
        else if (e == 't')
            out += '\t';
        else if (e == 'x') {
            const auto c = std::stoi(quoted.substr(i + 1, 2), nullptr, 16);
            // \x80..\x9f stand for U+0080..U+009F (two UTF-8 bytes); below, one byte.
            if (c >= 0x80) {
                out += static_cast<char>(0xc2);
                out += static_cast<char>(c);
            } else {
                out += static_cast<char>(c);
            }
            i += 2;
        } else
            out += e; // \\, \' or \"
    }
    return out;
}

TEST(malformed_frame_message, quotes_and_escapes_as_pythons_repr) {
    // Checked against Python 3: repr("it's") is "it's"; repr('a"b\'c') is 'a"b\'c';
    // repr('\x01\x7f\x85é\t') is '\x01\x7f\x85é\t'.
    EXPECT_EQ(protocol::malformed_frame_message("it's", "r"),
              R"(ValueError: malformed server frame "it's": r)");
    EXPECT_EQ(protocol::malformed_frame_message("a\"b'c", "r"),
              R"(ValueError: malformed server frame 'a"b\'c': r)");
    EXPECT_EQ(protocol::malformed_frame_message("\x01\x7f\xc2\x85\xc3\xa9\t", "r"),
              R"(ValueError: malformed server frame '\x01\x7f\x85)"
              "\xc3\xa9"
              R"(\t': r)");
}

// The reason for what the scanner refused, as the reference client's `json.loads` and checks
// word it (each expected string printed by Python 3.11 for the same frame).
TEST(reference_decode_error, words_each_refusal_as_the_reference_client) {
    protocol::event_scanner scanner;
    auto reason = [&](std::string_view frame) {
        const char* r = scanner.scan(frame);
        EXPECT_NE(r, nullptr) << frame;
        return r ? protocol::reference_decode_error(frame, r, scanner.error_offset())
                 : std::string();
    };
    EXPECT_EQ(reason(R"({"type":"response.output_audio.delta","delta":)"),
              "JSONDecodeError: Expecting value: line 1 column 47 (char 46)");
    EXPECT_EQ(reason("not json"), "JSONDecodeError: Expecting value: line 1 column 1 (char 0)");
    EXPECT_EQ(reason(""), "JSONDecodeError: Expecting value: line 1 column 1 (char 0)");
    EXPECT_EQ(reason(R"({"type":"x"}  junk)"),
              "JSONDecodeError: Extra data: line 1 column 15 (char 14)");
    EXPECT_EQ(reason("{\"a\":\n  x}"),
              "JSONDecodeError: Expecting value: line 2 column 3 (char 8)");
    EXPECT_EQ(reason(R"({"type":"x","v":NaN})"), "ValueError: nonfinite JSON number: NaN");
    EXPECT_EQ(reason(R"({"v":-Infinity})"), "ValueError: nonfinite JSON number: -Infinity");
    EXPECT_EQ(reason(R"({"v":Infinity})"), "ValueError: nonfinite JSON number: Infinity");
    EXPECT_EQ(reason("[1]"), "ValueError: server event must be a JSON object");
    EXPECT_EQ(reason(R"({"type":1})"), "ValueError: server event type must be a string");
    // Where Python names the syntax error more precisely, pacer says "Expecting value" at the
    // same position (Python: "Expecting property name enclosed in double quotes: line 1
    // column 2 (char 1)").
    EXPECT_EQ(reason("{not valid json"),
              "JSONDecodeError: Expecting value: line 1 column 2 (char 1)");
}

TEST(malformed_frame_message, escapes_the_frame_as_one_printable_line) {
    const std::string frame = "{\"type\":\n\t\"x\\";
    const auto message = protocol::malformed_frame_message(frame, "reason");
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(excerpt_of(message, "reason"), frame);
}

TEST(malformed_frame_message, truncates_to_200_characters) {
    const std::string frame =
        R"({"type":"response.output_text.delta","delta":")" + std::string(500, 'x') + R"("})";
    const auto message = protocol::malformed_frame_message(frame, "some reason");
    EXPECT_EQ(excerpt_of(message, "some reason"), frame.substr(0, 200));

    // Exactly 200 characters are kept whole.
    const std::string exact(200, 'y');
    EXPECT_EQ(excerpt_of(protocol::malformed_frame_message(exact, "r"), "r"), exact);
}

TEST(malformed_frame_message, truncation_never_splits_a_utf8_character) {
    // A frame with non-ASCII text (valid UTF-8, as every WebSocket text frame is) whose 200th
    // byte falls inside the 2-byte "é". The message goes into an `error` trace line, which must
    // stay valid UTF-8 JSON for the oracle; the reference keeps the first 200 *characters*.
    std::string frame = std::string(199, 'a');
    for (int i = 0; i < 50; ++i)
        frame += "\xC3\xA9"; // é
    const auto message = protocol::malformed_frame_message(frame, "r");
    EXPECT_TRUE(is_valid_utf8(message)) << "message ends in a truncated UTF-8 sequence";
    const auto excerpt = excerpt_of(message, "r");
    EXPECT_TRUE(is_valid_utf8(excerpt));
    EXPECT_EQ(frame.compare(0, excerpt.size(), excerpt), 0) << "excerpt is not a prefix";
    EXPECT_LE(code_points(excerpt), 200u);
    EXPECT_GE(code_points(excerpt), 199u);
}

// ---------------------------------------------------------------------------------------------
// base64 (standard alphabet, padded)

TEST(base64, rfc4648_vectors) {
    const std::pair<std::string_view, std::string_view> vectors[] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [plain, encoded] : vectors) {
        EXPECT_EQ(pacer::base64_encode(plain), encoded);
        const auto back = pacer::base64_decode(encoded);
        ASSERT_TRUE(back.has_value()) << encoded;
        EXPECT_EQ(*back, plain);
        EXPECT_EQ(pacer::base64_decoded_size(encoded), plain.size()) << encoded;
    }
}

TEST(base64, round_trips_every_length_0_to_10_and_every_byte) {
    for (std::size_t len = 0; len <= 10; ++len) {
        std::string bytes;
        for (std::size_t i = 0; i < len; ++i)
            bytes += static_cast<char>((i * 97 + len * 31 + 200) & 0xff);
        const auto encoded = pacer::base64_encode(bytes);
        EXPECT_EQ(encoded.size(), (len + 2) / 3 * 4) << len;
        EXPECT_EQ(pacer::base64_decoded_size(encoded), len) << encoded;
        const auto decoded = pacer::base64_decode(encoded);
        ASSERT_TRUE(decoded.has_value()) << encoded;
        EXPECT_EQ(*decoded, bytes) << len;
    }
    std::string all;
    for (int c = 0; c < 256; ++c)
        all += static_cast<char>(c);
    const auto encoded = pacer::base64_encode(all);
    EXPECT_EQ(encoded.find_first_not_of(
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
              std::string::npos);
    EXPECT_EQ(pacer::base64_decode(encoded), all);
}

TEST(base64, append_keeps_what_is_already_there) {
    std::string out = "prefix:";
    pacer::base64_append(out, "foo", 3);
    EXPECT_EQ(out, "prefix:Zm9v");
    pacer::base64_append(out, "f", 1);
    EXPECT_EQ(out, "prefix:Zm9vZg==");
    pacer::base64_append(out, nullptr, 0);
    EXPECT_EQ(out, "prefix:Zm9vZg==");
}

TEST(base64, invalid_input_is_rejected) {
    for (std::string_view bad : {"Z", "Zg", "Zg=", "Zm9vY", // not a multiple of 4
                                 "Zg=a", "Zm=v", "====", "A===", "Z===",
                                 "Zg==Zg==", // padding in the middle
                                 "Zm9 ", "Zm9\n", "Zm9v\n   ", "!!!!", "Zm-v", "Zm_v", "Zm9v Zm9v"})
        EXPECT_FALSE(pacer::base64_decode(bad).has_value()) << "accepted: \"" << bad << '"';
}

TEST(base64, decoded_size_without_decoding) {
    EXPECT_EQ(pacer::base64_decoded_size(""), 0u);
    EXPECT_EQ(pacer::base64_decoded_size("Zg=="), 1u);
    EXPECT_EQ(pacer::base64_decoded_size("Zm8="), 2u);
    EXPECT_EQ(pacer::base64_decoded_size("Zm9v"), 3u);
    EXPECT_EQ(pacer::base64_decoded_size("Zm9vYg=="), 4u);
    // A full 80 ms packet: 2560 bytes -> 3416 characters with one '='.
    const std::string packet(2560, '\x01');
    const auto encoded = pacer::base64_encode(packet);
    EXPECT_EQ(encoded.size(), 3416u);
    EXPECT_EQ(pacer::base64_decoded_size(encoded), 2560u);
}

} // namespace

#include <pacer/core/base64.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/protocol/opening.hpp>

#include <boost/json/error.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <random>
#include <sys/random.h>
#include <unistd.h>

namespace pacer::protocol {

namespace {

// The output modalities of the reference profiles: VoiceChat speaks audio only; MiniCPM-o
// asks for audio and text, and its session is granted both.
constexpr std::array<std::string_view, 1> audio_only{"audio"};
constexpr std::array<std::string_view, 2> audio_and_text{"audio", "text"};

constexpr std::array<profile, 3> profiles{{
    {"nemotron-voicechat-pr2188", "nemotron", 80, 22050, true, true, audio_only},
    {"minicpmo-native-pr2377", "minicpmo", 1000, 24000, false, false, audio_and_text},
    {"qwen3-omni-half-duplex", "qwen3", 20, 24000, false, false, audio_only},
}};

std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void append_event_id(std::string& out, std::string_view event_id) {
    out += R"("event_id":")";
    out += event_id; // 32 hex characters: nothing to escape
    out += '"';
}

std::string simple_event(std::string_view type, std::string_view event_id) {
    std::string out;
    out.reserve(96);
    out += R"({"type":")";
    out += type;
    out += "\",";
    append_event_id(out, event_id);
    out += '}';
    return out;
}

} // namespace

const profile& default_profile() {
    return profiles[0];
}

const profile* find_profile(std::string_view name) {
    for (const auto& p : profiles)
        if (p.name == name || p.alias == name)
            return &p;
    return nullptr;
}

event_id event_id_source::next() {
    static constexpr char hex[] = "0123456789abcdef";
    event_id id;
    for (std::size_t half = 0; half < 2; ++half) {
        std::uint64_t v = splitmix64(state_);
        for (std::size_t i = 0; i < 16; ++i, v >>= 4)
            id.chars[half * 16 + i] = hex[v & 0xf];
    }
    return id;
}

std::uint64_t process_nonce() {
    static const std::uint64_t nonce = [] {
        std::uint64_t v = 0;
        if (::getrandom(&v, sizeof v, 0) == static_cast<ssize_t>(sizeof v))
            return v;
        // No getrandom (a very old kernel, a sandbox): the C++ library's entropy source, the
        // clock and the process id still differ between processes.
        std::random_device device;
        v = (static_cast<std::uint64_t>(device()) << 32) ^ device();
        v ^=
            static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
        return v ^ (static_cast<std::uint64_t>(::getpid()) << 40);
    }();
    return nonce;
}

std::uint64_t unique_id_seed(std::uint64_t salt) {
    static std::atomic<std::uint64_t> calls{0};
    // splitmix64 turns distinct states into distinct outputs (it is a bijection), and the
    // states of one process differ by a multiple of its odd increment: no seed repeats.
    std::uint64_t state = (process_nonce() ^ salt) +
                          calls.fetch_add(1, std::memory_order_relaxed) * 0x9e3779b97f4a7c15ULL;
    return splitmix64(state);
}

std::string output_modalities_json(const profile& p) {
    std::string out = "[";
    for (const auto m : p.output_modalities) {
        if (out.size() > 1)
            out += ',';
        out += '"';
        out += m; // plain lowercase words: nothing to escape
        out += '"';
    }
    out += ']';
    return out;
}

std::string session_update(std::string_view event_id, const profile& p) {
    std::string out = R"({"type":"session.update",)";
    append_event_id(out, event_id);
    out += R"(,"session":{"output_modalities":)";
    out += output_modalities_json(p);
    out += "}}";
    return out;
}

void append_event_encoded(std::string& out, std::string_view event_id, std::string_view audio_b64,
                          std::uint64_t seq) {
    out.clear();
    out += R"({"type":"input_audio_buffer.append",)";
    append_event_id(out, event_id);
    out += R"(,"audio":")";
    out += audio_b64;
    out += R"(","sglang":{"seq":)";
    char digits[24];
    auto end = std::to_chars(digits, digits + sizeof digits, seq).ptr;
    out.append(digits, end);
    out += R"(,"t_start_ms":)";
    // seq * 80 is a whole number of milliseconds; the reference writes it as a float: 80.0
    end = std::to_chars(digits, digits + sizeof digits, seq * 80).ptr;
    out.append(digits, end);
    out += ".0}}";
}

void append_event(std::string& out, std::string_view event_id, std::span<const std::uint8_t> pcm,
                  std::uint64_t seq) {
    std::string audio;
    base64_append(audio, pcm.data(), pcm.size());
    append_event_encoded(out, event_id, audio, seq);
}

std::string input_audio_end(std::string_view event_id) {
    return simple_event("sglang.input_audio.end", event_id);
}

std::string session_close(std::string_view event_id) {
    return simple_event("session.close", event_id);
}

server_event classify_server_event(std::string_view type) {
    using enum server_event;
    struct entry {
        std::string_view type;
        server_event kind;
    };
    static constexpr entry table[] = {
        {"response.output_audio.delta", output_audio_delta},
        {"sglang.input_audio.accepted", input_accepted},
        {"sglang.unit.done", unit_done},
        {"response.output_audio_transcript.delta", transcript_delta},
        {"response.output_text.delta", text_delta},
        {"session.created", session_created},
        {"session.updated", session_updated},
        {"response.created", response_created},
        {"response.output_audio.done", output_audio_done},
        {"response.output_audio_transcript.done", transcript_done},
        {"response.output_text.done", text_done},
        {"response.done", response_done},
        {"sglang.input_audio.ended", input_ended},
        {"sglang.input_audio.drained", input_drained},
        {"session.closed", session_closed},
        {"error", error},
    };
    for (const auto& e : table)
        if (e.type == type)
            return e.kind;
    return unknown;
}

frame_parser::frame_parser() = default;

const char* frame_parser::parse(std::string_view frame) {
    object_ = nullptr;
    type_ = {};
    value_ = nullptr;
    parser_.reset();
    boost::system::error_code ec;
    parser_.write(frame.data(), frame.size(), ec);
    if (ec) {
        parser_.reset();
        static thread_local std::string reason;
        reason = ec.message();
        return reason.c_str();
    }
    value_ = parser_.release();
    object_ = value_.if_object();
    if (!object_)
        return "expected a JSON object";
    const auto* type = object_->if_contains("type");
    if (!type || !type->is_string()) {
        object_ = nullptr;
        return "missing string 'type'";
    }
    type_ = type->get_string();
    return nullptr;
}

namespace {

// The length of the well-formed UTF-8 sequence at the start of `s` (Unicode Table 3-7: no
// overlong forms, no surrogates, nothing above U+10FFFF), or 0 when there is none.
std::size_t utf8_sequence_length(std::string_view s) {
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    auto in = [&](std::size_t k, unsigned lo, unsigned hi) {
        return k < s.size() && byte(k) >= lo && byte(k) <= hi;
    };
    if (s.empty())
        return 0;
    const unsigned c = byte(0);
    if (c <= 0x7f)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return in(1, 0x80, 0xbf) ? 2 : 0;
    if (c == 0xe0)
        return in(1, 0xa0, 0xbf) && in(2, 0x80, 0xbf) ? 3 : 0;
    if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef)
        return in(1, 0x80, 0xbf) && in(2, 0x80, 0xbf) ? 3 : 0;
    if (c == 0xed)
        return in(1, 0x80, 0x9f) && in(2, 0x80, 0xbf) ? 3 : 0;
    if (c == 0xf0)
        return in(1, 0x90, 0xbf) && in(2, 0x80, 0xbf) && in(3, 0x80, 0xbf) ? 4 : 0;
    if (c >= 0xf1 && c <= 0xf3)
        return in(1, 0x80, 0xbf) && in(2, 0x80, 0xbf) && in(3, 0x80, 0xbf) ? 4 : 0;
    if (c == 0xf4)
        return in(1, 0x80, 0x8f) && in(2, 0x80, 0xbf) && in(3, 0x80, 0xbf) ? 4 : 0;
    return 0;
}

} // namespace

std::string malformed_frame_message(std::string_view frame, std::string_view reason) {
    // Like Python's repr of frame[:200]: the first 200 characters (code points, never a split
    // UTF-8 sequence), as one printable line. A byte that is not valid UTF-8 counts as one
    // character and is written as U+FFFD so the trace stays valid UTF-8 JSON.
    std::string excerpt;
    std::size_t i = 0;
    for (std::size_t chars = 0; i < frame.size() && chars < 200; ++chars) {
        const std::size_t len = utf8_sequence_length(frame.substr(i));
        const bool valid = len != 0;
        if (valid) {
            excerpt.append(frame.substr(i, len));
            i += len;
        } else {
            excerpt += "\xEF\xBF\xBD"; // U+FFFD, the replacement character
            ++i;
        }
    }
    // Python's repr: single quotes, unless the text holds one and no double quote.
    const char quote =
        excerpt.find('\'') != std::string::npos && excerpt.find('"') == std::string::npos ? '"'
                                                                                          : '\'';
    std::string out = "ValueError: malformed server frame ";
    out += quote;
    for (std::size_t k = 0; k < excerpt.size(); ++k) {
        const auto c = static_cast<unsigned char>(excerpt[k]);
        if (c == '\\' || c == static_cast<unsigned char>(quote)) {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            out += fmt::format("\\x{:02x}", c);
        } else if (c == 0xc2 && k + 1 < excerpt.size() &&
                   static_cast<unsigned char>(excerpt[k + 1]) <= 0x9f) {
            // U+0080..U+009F, the C1 controls: not printable, so Python writes \x80..\x9f.
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(excerpt[++k]));
        } else {
            out += static_cast<char>(c);
        }
    }
    out += quote;
    out += ": ";
    out += reason;
    return out;
}

std::string reference_decode_error(std::string_view frame, std::string_view scan_reason,
                                   std::size_t error_offset) {
    if (scan_reason == "expected a JSON object")
        return "ValueError: server event must be a JSON object";
    if (scan_reason == "missing string 'type'")
        return "ValueError: server event type must be a string";
    std::size_t at = std::min(error_offset, frame.size());
    // Python's json accepts NaN, Infinity and -Infinity as tokens and hands them to the
    // client's parse_constant, which refuses them.
    for (std::size_t from : {at > 0 ? at - 1 : at, at})
        for (const std::string_view token : {"-Infinity", "NaN", "Infinity"})
            if (frame.substr(from, token.size()) == token)
                return fmt::format("ValueError: nonfinite JSON number: {}", token);
    const bool extra =
        scan_reason == boost::json::make_error_code(boost::json::error::extra_data).message();
    if (extra) // Python reports extra data where it starts, after the whitespace
        while (at < frame.size() &&
               (frame[at] == ' ' || frame[at] == '\t' || frame[at] == '\n' || frame[at] == '\r'))
            ++at;
    // Python counts characters (code points), lines from 1 and columns from 1.
    std::size_t chars = 0, line = 1, line_start = 0;
    for (std::size_t k = 0; k < at; ++k) {
        const auto c = static_cast<unsigned char>(frame[k]);
        if ((c & 0xc0) == 0x80)
            continue; // a continuation byte: same character
        ++chars;
        if (c == '\n') {
            ++line;
            line_start = chars;
        }
    }
    return fmt::format("JSONDecodeError: {}: line {} column {} (char {})",
                       extra ? "Extra data" : "Expecting value", line, chars - line_start + 1,
                       chars);
}

opening_shape describe_opening(std::string_view frame) {
    boost::system::error_code ec;
    const auto v = boost::json::parse(frame, ec);
    opening_shape s;
    if (ec || !v.is_object())
        return s;
    const auto& o = v.get_object();
    if (const auto* session = o.if_contains("session"); session && session->is_object()) {
        s.session_object = true;
        s.sglang = session->get_object().contains("sglang");
    }
    const auto* id = o.if_contains("id");
    s.top_level_id = id && id->is_string();
    return s;
}

bool is_fatal_error(const boost::json::object& event) {
    const auto* sglang = event.if_contains("sglang");
    if (!sglang || !sglang->is_object())
        return false;
    const auto* fatal = sglang->get_object().if_contains("fatal");
    if (!fatal)
        return false;
    switch (fatal->kind()) {
    case boost::json::kind::bool_:
        return fatal->get_bool();
    case boost::json::kind::int64:
        return fatal->get_int64() != 0;
    case boost::json::kind::uint64:
        return fatal->get_uint64() != 0;
    case boost::json::kind::double_:
        return fatal->get_double() != 0;
    case boost::json::kind::string:
        return !fatal->get_string().empty();
    case boost::json::kind::array:
        return !fatal->get_array().empty();
    case boost::json::kind::object:
        return !fatal->get_object().empty();
    case boost::json::kind::null:
        return false;
    }
    return false;
}

} // namespace pacer::protocol

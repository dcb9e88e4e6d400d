#include <pacer/protocol/event_scanner.hpp>

#include <boost/json/basic_parser_impl.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace pacer::protocol {

namespace {

namespace json = boost::json;
using json::error_code;
using json::string_view;

// SAX handler: tracks depth and which key is current at depths 1 and 2, and captures the
// values of `type`, `event_id`, `response_id` and `audio` (depth 1) and of `sglang.fatal` and
// `sglang.seq` (depth 2). Everything else is validated and dropped. Keys are classified once, when
// they end, so a value costs one comparison of small integers.
struct scan_handler {
    static constexpr std::size_t max_array_size = -1;
    static constexpr std::size_t max_object_size = -1;
    static constexpr std::size_t max_string_size = -1;
    static constexpr std::size_t max_key_size = -1;

    enum class top_key : unsigned char { other, type, event_id, response_id, audio, sglang };
    enum class sglang_key : unsigned char { other, fatal, seq };

    int depth = 0;
    bool top_is_object = false;
    top_key key1 = top_key::other;       // the current key at depth 1
    sglang_key key2 = sglang_key::other; // the current key at depth 2
    std::string key_buf;
    bool in_sglang = false; // inside the depth-1 `sglang` object
    bool type_ok = false;
    std::string type;
    bool fatal = false;
    std::string string_buf;
    std::string event_id;    // empty unless the last `event_id` is a string
    std::string response_id; // empty unless the last `response_id` is a string
    bool has_seq = false;
    std::int64_t seq = 0;
    std::size_t audio_size = 0;  // characters of the last `audio` (0 unless it is a string)
    char audio_tail[2] = {0, 0}; // its last two characters

    void reset() {
        depth = 0;
        top_is_object = false;
        key1 = top_key::other;
        key2 = sglang_key::other;
        in_sglang = false;
        type_ok = false;
        type.clear();
        fatal = false;
        event_id.clear();
        response_id.clear();
        has_seq = false;
        seq = 0;
        audio_size = 0;
        audio_tail[0] = audio_tail[1] = 0;
        // A frame that ended inside a key or a string must not leak into the next frame.
        key_buf.clear();
        string_buf.clear();
    }

    bool at(top_key k) const { return depth == 1 && key1 == k; }
    bool at(sglang_key k) const { return depth == 2 && in_sglang && key2 == k; }
    bool at_type() const { return at(top_key::type); }
    bool at_fatal() const { return at(sglang_key::fatal); }

    // A scalar value at the current depth.
    void scalar(bool truthy) {
        if (at_type())
            type_ok = false;
        if (at_fatal())
            fatal = truthy;
    }

    void audio_part(string_view s) {
        audio_size += s.size();
        if (s.size() >= 2) {
            audio_tail[0] = s[s.size() - 2];
            audio_tail[1] = s[s.size() - 1];
        } else if (s.size() == 1) {
            audio_tail[0] = audio_tail[1];
            audio_tail[1] = s[0];
        }
    }

    bool on_document_begin(error_code&) { return true; }
    bool on_document_end(error_code&) { return true; }
    bool on_object_begin(error_code&) {
        if (depth == 0)
            top_is_object = true;
        if (at_type())
            type_ok = false;
        if (depth == 1 && key1 == top_key::sglang)
            in_sglang = true;
        ++depth;
        return true;
    }
    bool on_object_end(std::size_t n, error_code&) {
        --depth;
        if (depth == 1 && in_sglang && key1 == top_key::sglang)
            in_sglang = false;
        if (at_fatal())
            fatal = n > 0;
        return true;
    }
    bool on_array_begin(error_code&) {
        if (at_type())
            type_ok = false;
        ++depth;
        return true;
    }
    bool on_array_end(std::size_t n, error_code&) {
        --depth;
        if (at_fatal())
            fatal = n > 0;
        return true;
    }
    bool on_key_part(string_view s, std::size_t, error_code&) {
        if (depth <= 2)
            key_buf.append(s.data(), s.size());
        return true;
    }
    bool on_key(string_view s, std::size_t, error_code&) {
        if (depth <= 2) {
            key_buf.append(s.data(), s.size());
            // A repeated key replaces the earlier value (the last duplicate wins, as in
            // Boost.JSON and Python), so what was captured from that value starts over.
            if (depth == 1) {
                key1 = key_buf == "type"                          ? top_key::type
                       : key_buf == "event_id"                    ? top_key::event_id
                       : key_buf == "response_id"                 ? top_key::response_id
                       : key_buf == "audio" || key_buf == "delta" ? top_key::audio
                       : key_buf == "sglang"                      ? top_key::sglang
                                                                  : top_key::other;
                if (key1 == top_key::sglang) {
                    fatal = false;
                    has_seq = false;
                } else if (key1 == top_key::event_id) {
                    event_id.clear();
                } else if (key1 == top_key::response_id) {
                    response_id.clear();
                } else if (key1 == top_key::audio) {
                    audio_size = 0;
                    audio_tail[0] = audio_tail[1] = 0;
                }
            } else {
                key2 = key_buf == "fatal" ? sglang_key::fatal
                       : key_buf == "seq" ? sglang_key::seq
                                          : sglang_key::other;
                if (key2 == sglang_key::seq && in_sglang)
                    has_seq = false;
            }
            key_buf.clear();
        }
        return true;
    }
    bool on_string_part(string_view s, std::size_t, error_code&) {
        if (depth == 1) {
            if (key1 == top_key::audio)
                audio_part(s);
            else if (key1 == top_key::event_id)
                event_id.append(s.data(), s.size());
            else if (key1 == top_key::response_id)
                response_id.append(s.data(), s.size());
            else if (key1 == top_key::type)
                string_buf.append(s.data(), s.size());
        } else if (at_fatal()) {
            string_buf.append(s.data(), s.size());
        }
        return true;
    }
    bool on_string(string_view s, std::size_t n, error_code&) {
        if (at_type()) {
            string_buf.append(s.data(), s.size());
            type.swap(string_buf);
            type_ok = true;
        } else if (at(top_key::event_id)) {
            event_id.append(s.data(), s.size());
        } else if (at(top_key::response_id)) {
            response_id.append(s.data(), s.size());
        } else if (at(top_key::audio)) {
            audio_part(s);
        } else if (at_fatal()) {
            fatal = n > 0;
        }
        string_buf.clear();
        return true;
    }
    bool on_number_part(string_view, error_code&) { return true; }
    bool on_int64(std::int64_t i, string_view, error_code&) {
        scalar(i != 0);
        if (at(sglang_key::seq)) {
            has_seq = true;
            seq = i;
        }
        return true;
    }
    bool on_uint64(std::uint64_t u, string_view, error_code&) {
        scalar(u != 0);
        return true;
    }
    bool on_double(double d, string_view, error_code&) {
        scalar(d != 0);
        return true;
    }
    bool on_bool(bool b, error_code&) {
        scalar(b);
        return true;
    }
    bool on_null(error_code&) {
        scalar(false);
        return true;
    }
    bool on_comment_part(string_view, error_code&) { return true; }
    bool on_comment(string_view, error_code&) { return true; }
};

} // namespace

struct event_scanner::impl {
    json::basic_parser<scan_handler> parser{json::parse_options{}};
    std::string reason;
    std::size_t error_offset = 0;
};

event_scanner::event_scanner() : impl_(std::make_unique<impl>()) {}
event_scanner::~event_scanner() = default;

const char* event_scanner::scan(std::string_view frame) {
    auto& p = impl_->parser;
    p.reset();
    p.handler().reset();
    error_code ec;
    const std::size_t n = p.write_some(false, frame.data(), frame.size(), ec);
    impl_->error_offset = n;
    if (!ec && n != frame.size())
        ec = json::error::extra_data;
    if (ec) {
        impl_->reason = ec.message();
        return impl_->reason.c_str();
    }
    const auto& h = p.handler();
    if (!h.top_is_object)
        return "expected a JSON object";
    if (!h.type_ok)
        return "missing string 'type'";
    return nullptr;
}

std::size_t event_scanner::error_offset() const {
    return impl_->error_offset;
}

std::string_view event_scanner::type() const {
    return impl_->parser.handler().type;
}
bool event_scanner::fatal() const {
    return impl_->parser.handler().fatal;
}

std::string_view event_scanner::event_id() const {
    return impl_->parser.handler().event_id;
}

std::string_view event_scanner::response_id() const {
    return impl_->parser.handler().response_id;
}

std::optional<std::int64_t> event_scanner::seq() const {
    const auto& h = impl_->parser.handler();
    return h.has_seq ? std::optional<std::int64_t>(h.seq) : std::nullopt;
}

std::size_t event_scanner::audio_decoded_size() const {
    // base64_decoded_size's arithmetic, on the length and the last two characters.
    const auto& h = impl_->parser.handler();
    if (h.audio_size < 4)
        return 0;
    const std::size_t pad = (h.audio_tail[1] == '=') + (h.audio_tail[0] == '=');
    return h.audio_size / 4 * 3 - pad;
}

} // namespace pacer::protocol

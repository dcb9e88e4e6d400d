#include <pacer/protocol/event_scanner.hpp>

#include <boost/json/basic_parser_impl.hpp>

#include <string>

namespace pacer::protocol {

namespace {

namespace json = boost::json;
using json::error_code;
using json::string_view;

// SAX handler: tracks depth and the current key at depths 1 and 2, and captures the values of
// `type` (depth 1) and `sglang.fatal` (depth 2). Everything else is validated and dropped.
struct scan_handler {
    static constexpr std::size_t max_array_size = -1;
    static constexpr std::size_t max_object_size = -1;
    static constexpr std::size_t max_string_size = -1;
    static constexpr std::size_t max_key_size = -1;

    int depth = 0;
    bool top_is_object = false;
    std::string key1, key2; // the current key at depth 1 and 2
    std::string key_buf;
    bool in_sglang = false; // inside the depth-1 `sglang` object
    bool type_ok = false;
    std::string type;
    bool fatal = false;
    std::string string_buf;

    void reset() {
        depth = 0;
        top_is_object = false;
        key1.clear();
        key2.clear();
        in_sglang = false;
        type_ok = false;
        type.clear();
        fatal = false;
        // A frame that ended inside a key or a string must not leak into the next frame.
        key_buf.clear();
        string_buf.clear();
    }

    bool at_type() const { return depth == 1 && key1 == "type"; }
    bool at_fatal() const { return depth == 2 && in_sglang && key2 == "fatal"; }

    // A scalar value at the current depth.
    void scalar(bool truthy) {
        if (at_type())
            type_ok = false;
        if (at_fatal())
            fatal = truthy;
    }

    bool on_document_begin(error_code&) { return true; }
    bool on_document_end(error_code&) { return true; }
    bool on_object_begin(error_code&) {
        if (depth == 0)
            top_is_object = true;
        if (at_type())
            type_ok = false;
        if (depth == 1 && key1 == "sglang")
            in_sglang = true;
        ++depth;
        return true;
    }
    bool on_object_end(std::size_t n, error_code&) {
        --depth;
        if (depth == 1 && in_sglang && key1 == "sglang")
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
            (depth == 1 ? key1 : key2).swap(key_buf);
            key_buf.clear();
            // A repeated `sglang` replaces the earlier one (the last duplicate wins, as in
            // Boost.JSON and Python), so its `fatal` starts over.
            if (depth == 1 && key1 == "sglang")
                fatal = false;
        }
        return true;
    }
    bool on_string_part(string_view s, std::size_t, error_code&) {
        if (at_type() || at_fatal())
            string_buf.append(s.data(), s.size());
        return true;
    }
    bool on_string(string_view s, std::size_t n, error_code&) {
        if (at_type()) {
            string_buf.append(s.data(), s.size());
            type.swap(string_buf);
            type_ok = true;
        } else if (at_fatal()) {
            fatal = n > 0;
        }
        string_buf.clear();
        return true;
    }
    bool on_number_part(string_view, error_code&) { return true; }
    bool on_int64(std::int64_t i, string_view, error_code&) {
        scalar(i != 0);
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

} // namespace pacer::protocol

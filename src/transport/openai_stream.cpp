#include <pacer/transport/openai_stream.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace pacer::transport {

namespace json = boost::json;

namespace {

bool non_empty_string(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() && !v->get_string().empty();
}

std::optional<std::uint64_t> count(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v && v->is_uint64())
        return v->get_uint64();
    if (v && v->is_int64() && v->get_int64() >= 0)
        return static_cast<std::uint64_t>(v->get_int64());
    return std::nullopt;
}

} // namespace

openai_chunk read_openai_chunk(std::string_view data) {
    openai_chunk out;
    if (data == "[DONE]") {
        out.done = true;
        return out;
    }
    // The chunk's values live in a buffer on the stack (a chunk is a few hundred bytes; a
    // bigger one spills to the heap): no allocation per value, all freed at once.
    unsigned char storage[4096];
    json::monotonic_resource resource(storage, sizeof storage);
    boost::system::error_code ec;
    const json::value v = json::parse(data, ec, &resource);
    if (ec) {
        out.malformed = "data is not JSON: " + ec.message();
        return out;
    }
    if (!v.is_object()) {
        out.malformed = "data is not a JSON object";
        return out;
    }
    const auto& o = v.get_object();
    if (const auto* e = o.if_contains("error")) {
        const json::string* m = nullptr;
        if (e->is_object())
            if (const auto* mv = e->get_object().if_contains("message"); mv && mv->is_string())
                m = &mv->get_string();
        out.server_error = m && !m->empty() ? std::string(*m)
                           : e->is_string() ? std::string(e->get_string())
                                            : std::string("error chunk");
        return out;
    }
    if (const auto* c = o.if_contains("choices")) {
        if (!c->is_array()) {
            out.malformed = "choices is not an array";
            return out;
        }
        const auto& choices = c->get_array();
        if (!choices.empty() && choices[0].is_object()) {
            const auto& choice = choices[0].get_object();
            if (non_empty_string(choice, "text"))
                out.has_text = true;
            if (const auto* d = choice.if_contains("delta"); d && d->is_object())
                if (non_empty_string(d->get_object(), "content") ||
                    non_empty_string(d->get_object(), "reasoning_content"))
                    out.has_text = true;
        }
    }
    if (const auto* u = o.if_contains("usage"); u && u->is_object()) {
        const auto p = count(u->get_object(), "prompt_tokens");
        const auto n = count(u->get_object(), "completion_tokens");
        if (n)
            out.usage = openai_usage{p.value_or(0), *n};
    }
    return out;
}

std::uint64_t approx_tokens(std::string_view text) {
    std::uint64_t n = 0;
    bool in_word = false;
    for (char c : text) {
        const bool blank = c == ' ' || c == '\t' || c == '\r' || c == '\n';
        if (!blank && !in_word)
            ++n;
        in_word = !blank;
    }
    return n;
}

} // namespace pacer::transport

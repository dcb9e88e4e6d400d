#include <pacer/core/json_pointer.hpp>

#include <optional>

namespace pacer {

namespace {

// A token's key, or nothing for a '~' that is not `~0` or `~1` (as Boost refuses it).
std::optional<std::string> unescape(std::string_view token) {
    std::string key;
    key.reserve(token.size());
    for (std::size_t i = 0; i < token.size(); ++i) {
        if (token[i] != '~') {
            key += token[i];
            continue;
        }
        if (i + 1 == token.size() || (token[i + 1] != '0' && token[i + 1] != '1'))
            return std::nullopt;
        key += token[++i] == '0' ? '~' : '/';
    }
    return key;
}

} // namespace

const boost::json::value* find_pointer(const boost::json::object& root, std::string_view pointer) {
    // value::find_pointer needs a value: the first token is looked up here, the rest by Boost.
    if (pointer.empty() || pointer.front() != '/')
        return nullptr;
    const auto end = pointer.find('/', 1);
    const auto key = unescape(pointer.substr(1, end == std::string_view::npos ? end : end - 1));
    const auto* first = key ? root.if_contains(*key) : nullptr;
    if (!first || end == std::string_view::npos)
        return first;
    boost::system::error_code ec;
    const auto* v = first->find_pointer(pointer.substr(end), ec);
    return ec ? nullptr : v;
}

std::string pointer_token(std::string_view key) {
    std::string token;
    token.reserve(key.size());
    for (const char c : key) {
        if (c == '~')
            token += "~0";
        else if (c == '/')
            token += "~1";
        else
            token += c;
    }
    return token;
}

} // namespace pacer

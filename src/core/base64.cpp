#include <pacer/core/base64.hpp>

#include <boost/beast/core/detail/base64.hpp>

namespace pacer {

namespace b64 = boost::beast::detail::base64;

void base64_append(std::string& out, const void* bytes, std::size_t size) {
    const std::size_t old = out.size();
    out.resize(old + b64::encoded_size(size));
    const std::size_t n = b64::encode(out.data() + old, bytes, size);
    out.resize(old + n);
}

std::string base64_encode(std::string_view bytes) {
    std::string out;
    base64_append(out, bytes.data(), bytes.size());
    return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0)
        return std::nullopt;
    const std::size_t expected = base64_decoded_size(text);
    const std::size_t pad = text.size() / 4 * 3 - expected;
    std::string out(b64::decoded_size(text.size()), '\0');
    // Beast stops at the first padding or invalid character: all but the padding must be read.
    const auto [written, read] = b64::decode(out.data(), text.data(), text.size());
    if (read != text.size() - pad || written != expected)
        return std::nullopt;
    out.resize(written);
    return out;
}

std::size_t base64_decoded_size(std::string_view text) {
    if (text.size() < 4)
        return 0;
    std::size_t pad = 0;
    if (text.back() == '=')
        ++pad;
    if (text[text.size() - 2] == '=')
        ++pad;
    return text.size() / 4 * 3 - pad;
}

} // namespace pacer

// `base64_decode` reads the audio of server events. What it guarantees, checked here:
//  - it accepts only texts whose length is a multiple of 4, and the decoded size is
//    `base64_decoded_size(text)`;
//  - re-encoding the decoded bytes gives the text back, except the character before the
//    padding, whose unused low bits (4 with "==", 2 with "=") the decoder ignores: "QR==" and
//    "QQ==" both decode to "A" and only "QQ==" is canonical;
//  - any bytes survive encode-then-decode exactly.

#include <pacer/core/base64.hpp>

#include "fail.hpp"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using pacer::fuzz::fail;

int sextet(char c) {
    static constexpr std::string_view alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const auto i = alphabet.find(c);
    return i == std::string_view::npos ? -1 : static_cast<int>(i);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    if (const auto decoded = pacer::base64_decode(text)) {
        if (text.size() % 4 != 0)
            fail("accepted a length that is not a multiple of 4", text);
        if (decoded->size() != pacer::base64_decoded_size(text))
            fail("decoded size differs from base64_decoded_size", text);
        const std::string again = pacer::base64_encode(*decoded);
        if (again.size() != text.size())
            fail("re-encoding changes the length", text);
        const std::size_t pad = text.size() - text.find_last_not_of('=') - 1;
        if (text.size() >= 4 && pad > 2)
            fail("accepted more than two '='", text);
        // Every character but the one before the padding must come back exactly.
        const std::size_t last = pad == 0 ? text.size() : text.size() - pad - 1;
        if (std::string_view(again).substr(0, last) != text.substr(0, last) ||
            std::string_view(again).substr(text.size() - pad) != text.substr(text.size() - pad))
            fail("re-encoding differs beyond the character before the padding", text);
        if (pad > 0) {
            const int mask = pad == 2 ? 0x30 : 0x3c; // the bits that carry data
            const int a = sextet(text[last]), b = sextet(again[last]);
            if (a < 0 || b < 0 || (a & mask) != (b & mask))
                fail("the character before the padding differs in its data bits", text);
        }
    }

    const auto back = pacer::base64_decode(pacer::base64_encode(text));
    if (!back || *back != text)
        fail("encode then decode is not the identity");
    return 0;
}

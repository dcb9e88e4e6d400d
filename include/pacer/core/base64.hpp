#pragma once
// Base64 (standard alphabet, padded), as the realtime protocol carries PCM16 audio.
// Backed by Beast's codec, which pacer compiles anyway.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace pacer {

/// Appends the base64 encoding of `bytes` to `out` (no allocation when `out` has capacity).
void base64_append(std::string& out, const void* bytes, std::size_t size);

/// The encoding of `bytes`.
std::string base64_encode(std::string_view bytes);

/// The decoded bytes, or nullopt when `text` is not valid padded base64.
std::optional<std::string> base64_decode(std::string_view text);

/// The decoded length of a valid padded base64 text, without decoding it.
std::size_t base64_decoded_size(std::string_view text);

} // namespace pacer

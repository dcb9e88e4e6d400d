#pragma once
// SHA-256 digests, for fingerprints that must match across machines (schedule files).

#include <string>
#include <string_view>

namespace pacer {

/// The SHA-256 digest of `bytes` as 64 lowercase hexadecimal characters (OpenSSL EVP, in
/// src/core/openssl.cpp with pacer's other OpenSSL calls).
/// Throws `std::runtime_error` if OpenSSL fails (out of memory).
///
/// Example: `sha256_hex("abc") ==
/// "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`.
std::string sha256_hex(std::string_view bytes);

} // namespace pacer

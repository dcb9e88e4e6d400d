#include <pacer/core/openssl.hpp>
#include <pacer/core/sha256.hpp>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <array>
#include <memory>
#include <stdexcept>

namespace pacer {

std::string sha256_hex(std::string_view bytes) {
    const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                      &EVP_MD_CTX_free);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
        EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1 ||
        EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1)
        throw std::runtime_error("sha256: OpenSSL EVP digest failed");

    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * length);
    for (unsigned int i = 0; i < length; ++i) {
        out.push_back(hex[digest[i] >> 4]);
        out.push_back(hex[digest[i] & 0x0f]);
    }
    return out;
}

namespace openssl {

bool set_server_name(ssl_st* ssl, const std::string& host) {
    return ::SSL_set_tlsext_host_name(ssl, host.c_str()) != 0;
}

std::string verify_failure(const ssl_st* ssl) {
    const long verify = ::SSL_get_verify_result(ssl);
    return verify == X509_V_OK ? std::string() : ::X509_verify_cert_error_string(verify);
}

std::string first_error_reason(std::string_view fallback) {
    const unsigned long e = ::ERR_get_error();
    ::ERR_clear_error();
    if (e == 0)
        return std::string(fallback);
    std::array<char, 256> text{};
    ::ERR_error_string_n(e, text.data(), text.size());
    return text.data();
}

} // namespace openssl
} // namespace pacer

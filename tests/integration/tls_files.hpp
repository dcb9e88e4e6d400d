#pragma once
// A throwaway self-signed certificate and key for the TLS tests, made with OpenSSL's API (so
// CI needs no `openssl` tool).

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <utility>

namespace pacer::test {

// A self-signed P-256 certificate for 127.0.0.1 and localhost, valid for an hour, and its key.
inline void make_self_signed(const std::filesystem::path& cert, const std::filesystem::path& key) {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> pkey(EVP_EC_gen("P-256"), EVP_PKEY_free);
    ASSERT_TRUE(pkey);
    std::unique_ptr<X509, decltype(&X509_free)> x(X509_new(), X509_free);
    X509_set_version(x.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(x.get()), -60);
    X509_gmtime_adj(X509_getm_notAfter(x.get()), 3600);
    X509_set_pubkey(x.get(), pkey.get());
    X509_NAME* name = X509_get_subject_name(x.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("pacer test"), -1, -1, 0);
    X509_set_issuer_name(x.get(), name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x.get(), x.get(), nullptr, nullptr, 0);
    for (const auto& [nid, text] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"},
                                    std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
        X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, text);
        ASSERT_NE(ext, nullptr);
        X509_add_ext(x.get(), ext, -1);
        X509_EXTENSION_free(ext);
    }
    ASSERT_GT(X509_sign(x.get(), pkey.get(), EVP_sha256()), 0);
    FILE* c = std::fopen(cert.c_str(), "w");
    ASSERT_NE(c, nullptr);
    PEM_write_X509(c, x.get());
    std::fclose(c);
    FILE* k = std::fopen(key.c_str(), "w");
    ASSERT_NE(k, nullptr);
    PEM_write_PrivateKey(k, pkey.get(), nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(k);
}

} // namespace pacer::test

#include <pacer/core/bad_input.hpp>
#include <pacer/core/openssl.hpp>
#include <pacer/transport/detail/tls_context.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace pacer::transport {

namespace asio = boost::asio;

namespace {

bool is_ip_literal(const std::string& host) {
    boost::system::error_code ec;
    (void)asio::ip::make_address(host, ec);
    return !ec;
}

constexpr auto tls12_or_newer = asio::ssl::context::default_workarounds |
                                asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3 |
                                asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1;

} // namespace

std::shared_ptr<tls_client_context> make_tls_client_context(const std::string& ca_file,
                                                            bool insecure) {
    auto t = std::make_shared<tls_client_context>();
    t->ca_file = ca_file;
    t->insecure = insecure;
    auto& ctx = t->ctx;
    ctx.set_options(tls12_or_newer);
    if (insecure) {
        ctx.set_verify_mode(asio::ssl::verify_none);
        return t;
    }
    ctx.set_verify_mode(asio::ssl::verify_peer);
    boost::system::error_code ec;
    if (!ca_file.empty()) {
        ctx.load_verify_file(ca_file, ec);
        if (ec)
            throw bad_input(fmt::format("--ca-file {}: cannot load CA certificates ({})", ca_file,
                                        openssl::first_error_reason(ec.message())));
    } else {
        ctx.set_default_verify_paths(ec);
        if (ec)
            throw bad_input(fmt::format("cannot load the system CA store ({})",
                                        openssl::first_error_reason(ec.message())));
    }
    return t;
}

namespace detail {

std::string prepare_client_handshake(tls_stream& s, const tls_client_context& ctx,
                                     const std::string& host) {
    if (!is_ip_literal(host) && !openssl::set_server_name(s.native_handle(), host))
        return fmt::format("TLS: cannot set SNI {}", host);
    if (!ctx.insecure)
        s.set_verify_callback(asio::ssl::host_name_verification(host));
    return {};
}

std::string describe_handshake_failure(tls_stream& s, const tls_client_context& ctx,
                                       const boost::system::error_code& ec, const std::string& host,
                                       const std::string& port) {
    if (const auto why = openssl::verify_failure(s.native_handle()); !why.empty())
        return fmt::format("TLS handshake with {}:{}: certificate verify failed: {}{}", host, port,
                           why,
                           ctx.ca_file.empty() ? " (trusted: the system CA store; see --ca-file)"
                                               : fmt::format(" (trusted: {})", ctx.ca_file));
    return fmt::format("TLS handshake with {}:{}: {}", host, port, ec.message());
}

std::unique_ptr<asio::ssl::context> make_tls_server_context(const std::string& cert,
                                                            const std::string& key) {
    if (cert.empty() && key.empty())
        return nullptr;
    if (cert.empty() || key.empty())
        throw bad_input("--tls-cert and --tls-key go together: give both or neither");
    auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    ctx->set_options(tls12_or_newer);
    boost::system::error_code ec;
    ctx->use_certificate_chain_file(cert, ec);
    if (ec)
        throw bad_input(
            fmt::format("--tls-cert {}: cannot load a PEM certificate ({})", cert, ec.message()));
    ctx->use_private_key_file(key, asio::ssl::context::pem, ec);
    if (ec)
        throw bad_input(
            fmt::format("--tls-key {}: cannot load a PEM private key matching --tls-cert ({})", key,
                        ec.message()));
    return ctx;
}

} // namespace detail
} // namespace pacer::transport

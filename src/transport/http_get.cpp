#include <pacer/transport/http_get.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

namespace pacer::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string get_target::with_query(std::string_view key_value) const {
    return fmt::format("{}{}{}", target, target.find('?') == std::string::npos ? '?' : '&',
                       key_value);
}

get_target parse_get_url(std::string_view url, std::string_view flag) {
    const auto bad = [&](std::string_view why) {
        return std::invalid_argument(fmt::format("{} '{}' {}", flag, url, why));
    };
    if (!url.starts_with("http://"))
        throw bad("must start with http:// (e.g. http://127.0.0.1:8097/stats)");
    std::string_view rest = url.substr(7);
    if (rest.find('#') != std::string_view::npos)
        throw bad("must not have a fragment");
    get_target t;
    const auto slash = rest.find_first_of("/?");
    const std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos)
        t.target = rest[slash] == '/' ? std::string(rest.substr(slash))
                                      : "/" + std::string(rest.substr(slash));
    if (authority.find('@') != std::string_view::npos)
        throw bad("must not carry credentials");
    std::string_view host = authority, port;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos)
            throw bad("has an unclosed '['");
        host = authority.substr(1, close - 1);
        const auto after = authority.substr(close + 1);
        if (!after.empty() && after.front() != ':')
            throw bad("has bytes after ']'");
        if (!after.empty())
            port = after.substr(1);
    } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (host.empty())
        throw bad("has no host");
    if (!port.empty() || authority.ends_with(':')) {
        unsigned v = 0;
        const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
        if (ec != std::errc() || p != port.data() + port.size() || v == 0 || v > 65535)
            throw bad("has a port outside 1..65535");
        t.port = std::string(port);
    }
    t.host = std::string(host);
    return t;
}

get_result http_get(const get_target& url, std::string_view target,
                    std::chrono::milliseconds timeout) {
    get_result out;
    asio::io_context io;
    beast::tcp_stream stream(io);
    tcp::resolver resolver(io);
    beast::flat_buffer buffer;
    http::request<http::empty_body> req{http::verb::get, std::string(target), 11};
    req.set(http::field::host, url.host);
    req.set(http::field::connection, "close");
    http::response<http::string_body> res;
    auto fail = [&](std::string_view what, const boost::system::error_code& ec) {
        out.error = fmt::format("{} {}:{}: {}", what, url.host, url.port, ec.message());
    };
    stream.expires_after(timeout);
    resolver.async_resolve(url.host, url.port, [&](auto ec, tcp::resolver::results_type r) {
        if (ec)
            return fail("cannot resolve", ec);
        stream.async_connect(r, [&](auto ec, auto) {
            if (ec)
                return fail("cannot connect to", ec);
            http::async_write(stream, req, [&](auto ec, std::size_t) {
                if (ec)
                    return fail("cannot send to", ec);
                http::async_read(stream, buffer, res, [&](auto ec, std::size_t) {
                    if (ec)
                        return fail("no answer from", ec);
                    out.status = res.result_int();
                    out.body = std::move(res.body());
                    if (out.status < 200 || out.status >= 300)
                        out.error = fmt::format("HTTP {} from {}:{}{}", out.status, url.host,
                                                url.port, std::string(target));
                });
            });
        });
    });
    io.run();
    return out;
}

} // namespace pacer::transport

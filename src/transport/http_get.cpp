#include <pacer/transport/http_client.hpp>
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
    if (!url.starts_with("http://"))
        throw std::invalid_argument(fmt::format(
            "{} '{}' must start with http:// (e.g. http://127.0.0.1:8097/stats)", flag, url));
    if (url.find('#') != std::string_view::npos)
        throw std::invalid_argument(fmt::format("{} '{}' must not have a fragment", flag, url));
    // The authority is parsed as `pacer http`'s base URL is; the path and query are the target.
    const auto start = url.find_first_of("/?", 7);
    const auto ep = parse_http_url(url.substr(0, start), flag);
    get_target t;
    t.host = ep.host;
    t.port = ep.port;
    if (start != std::string_view::npos)
        t.target = url[start] == '/' ? std::string(url.substr(start))
                                     : "/" + std::string(url.substr(start));
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

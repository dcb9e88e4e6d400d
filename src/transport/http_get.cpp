#include <pacer/core/clock.hpp>
#include <pacer/transport/http_get.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <fmt/format.h>

#include <exception>

namespace pacer::transport {

namespace asio = boost::asio;

get_result http_get(const http_endpoint& url, std::string_view target,
                    std::chrono::milliseconds timeout) {
    asio::io_context io{1};
    http_pool pool(io.get_executor(), url);
    get_result out;
    http_body_sink sink;
    sink.on_data = [&](std::string_view bytes, time_point) {
        out.body.append(bytes);
        return true;
    };
    // The coroutine holds the headers by reference: they live until io.run() returns.
    const header_list headers{{"Accept", "*/*"}};
    http_exchange x;
    std::exception_ptr failure;
    asio::co_spawn(io, pool.get_stream(std::string(target), headers, clock::now() + timeout, sink),
                   [&](std::exception_ptr e, http_exchange r) {
                       failure = e;
                       x = std::move(r);
                   });
    io.run();
    out.status = x.status;
    if (failure)
        out.error = fmt::format("GET {}:{}{} failed", url.host, url.port, target);
    else if (x.error == http_error::status)
        out.error = fmt::format("HTTP {} from {}:{}{}", x.status, url.host, url.port, target);
    else if (x.error != http_error::none)
        out.error = fmt::format("{} {}:{}{}: {}", to_string(x.error), url.host, url.port, target,
                                x.message);
    return out;
}

} // namespace pacer::transport

// The keep-alive pool of `pacer http` (transport/http_client.hpp) on a real io_context against
// in-process servers: reuse, the retry of a pooled connection the server had closed, a non-2xx
// answer, a deadline. Nothing is timed: the io_context runs until the client is done.

#include <pacer/server/llm_mock.hpp>
#include <pacer/transport/http_client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace pacer::transport {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

const std::string body =
    R"({"model":"m","prompt":"a b","max_tokens":2,"stream":true,"stream_options":{"include_usage":true}})";

struct collected {
    std::vector<unsigned> statuses;
    std::string bytes;
    http_body_sink sink;
    collected() {
        sink.on_head = [this](unsigned s, time_point) { statuses.push_back(s); };
        sink.on_data = [this](std::string_view b, time_point) {
            bytes.append(b);
            return true;
        };
    }
};

// Runs `n` requests one after the other through one pool.
std::vector<http_exchange> sequential(asio::io_context& io, http_pool& pool, int n, collected& c,
                                      duration budget = std::chrono::seconds(30)) {
    std::vector<http_exchange> out;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            for (int i = 0; i < n; ++i)
                out.push_back(co_await pool.post_stream("/v1/completions", body, {},
                                                        clock::now() + budget, c.sink));
        },
        [&](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
            io.stop();
        });
    io.run();
    return out;
}

TEST(HttpPool, ReusesAKeepAliveConnectionAndStreamsTheWholeAnswer) {
    asio::io_context io{1};
    server::llm_mock_options o;
    o.ttft = o.itl = duration::zero();
    server::llm_mock mock(io, o);
    mock.listen();
    asio::co_spawn(io, mock.serve(), asio::detached);
    http_pool pool(io.get_executor(),
                   {"127.0.0.1", std::to_string(mock.port()), "", false, nullptr});
    collected c;
    const auto r = sequential(io, pool, 2, c);
    ASSERT_EQ(r.size(), 2u);
    for (const auto& x : r) {
        EXPECT_EQ(x.error, http_error::none) << x.message;
        EXPECT_EQ(x.status, 200u);
    }
    EXPECT_FALSE(r[0].reused);
    EXPECT_TRUE(r[1].reused);
    EXPECT_EQ(pool.connections_opened(), 1u);
    EXPECT_EQ(pool.connections_reused(), 1u);
    EXPECT_NE(c.bytes.find("\"completion_tokens\":2"), std::string::npos);
    EXPECT_NE(c.bytes.find("data: [DONE]"), std::string::npos);
}

// A server that answers one request per connection with `Connection: keep-alive`, then closes
// the connection anyway (an idle timeout that fired between two requests).
asio::awaitable<void> answer_once_then_close(tcp::acceptor& acceptor, int connections,
                                             http::status status, std::string text) {
    for (int i = 0; i < connections; ++i) {
        auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
        if (ec)
            co_return;
        beast::flat_buffer buffer;
        http::request<http::string_body> req;
        auto [rec, n] = co_await http::async_read(socket, buffer, req, use_tuple);
        if (rec)
            co_return;
        http::response<http::string_body> res{status, 11};
        res.keep_alive(true);
        res.body() = text;
        res.prepare_payload();
        co_await http::async_write(socket, res, use_tuple);
        boost::system::error_code ignored;
        socket.shutdown(tcp::socket::shutdown_both, ignored);
        socket.close(ignored);
    }
}

TEST(HttpPool, RetriesOnceWhenThePooledConnectionWasClosedByTheServer) {
    asio::io_context io{1};
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    asio::co_spawn(io, answer_once_then_close(acceptor, 2, http::status::ok, "data: [DONE]\n\n"),
                   asio::detached);
    http_pool pool(
        io.get_executor(),
        {"127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "", false, nullptr});
    collected c;
    const auto r = sequential(io, pool, 2, c);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].error, http_error::none) << r[0].message;
    EXPECT_EQ(r[1].error, http_error::none) << r[1].message;
    EXPECT_EQ(r[1].status, 200u);
    EXPECT_EQ(pool.connections_opened(), 2u);
}

TEST(HttpPool, SkipsEveryStalePooledConnectionBeforeOpeningANewOne) {
    asio::io_context io{1};
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    asio::co_spawn(io, answer_once_then_close(acceptor, 3, http::status::ok, "data: [DONE]\n\n"),
                   asio::detached);
    http_pool pool(
        io.get_executor(),
        {"127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "", false, nullptr});
    collected c;
    std::vector<http_exchange> out;
    const auto one = [&]() -> asio::awaitable<void> {
        out.push_back(co_await pool.post_stream("/v1/completions", body, {},
                                                clock::now() + std::chrono::seconds(30), c.sink));
    };
    // Two at once (two connections, both pooled then closed by the server), then a third.
    int done = 0;
    const auto count_done = [&](std::exception_ptr) {
        if (++done == 2)
            asio::co_spawn(io, one(), [&](std::exception_ptr) { io.stop(); });
    };
    asio::co_spawn(io, one(), count_done);
    asio::co_spawn(io, one(), count_done);
    io.run();
    ASSERT_EQ(out.size(), 3u);
    for (const auto& x : out)
        EXPECT_EQ(x.error, http_error::none) << x.message;
    EXPECT_EQ(pool.connections_opened(), 3u);
}

TEST(HttpPool, ANon2xxAnswerIsAStatusErrorWithTheStartOfItsBody) {
    asio::io_context io{1};
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    asio::co_spawn(io,
                   answer_once_then_close(acceptor, 1, http::status::service_unavailable,
                                          "{\"error\":\"busy\"}\n"),
                   asio::detached);
    http_pool pool(
        io.get_executor(),
        {"127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "", false, nullptr});
    collected c;
    const auto r = sequential(io, pool, 1, c);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].error, http_error::status);
    EXPECT_EQ(r[0].status, 503u);
    EXPECT_EQ(r[0].message, "HTTP 503: {\"error\":\"busy\"} ");
    EXPECT_TRUE(c.bytes.empty()); // a non-2xx body never reaches the sink
    EXPECT_EQ(c.statuses, std::vector<unsigned>{503});
}

TEST(HttpPool, ASilentServerEndsTheExchangeAtTheDeadline) {
    asio::io_context io{1};
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    tcp::socket held(io);
    acceptor.async_accept(held, [](boost::system::error_code) {}); // accepts, never answers
    http_pool pool(
        io.get_executor(),
        {"127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "", false, nullptr});
    collected c;
    const auto r = sequential(io, pool, 1, c, std::chrono::milliseconds(50));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].error, http_error::timeout) << r[0].message;
    EXPECT_EQ(pool.idle(), 0u); // a timed-out connection is never pooled
}

} // namespace
} // namespace pacer::transport

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
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace pacer::transport {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = pacer::use_tuple;

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
        [&]() -> pacer::awaitable<void> {
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
                   {"127.0.0.1", std::to_string(mock.port()), "", "", false, nullptr});
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
pacer::awaitable<void> answer_once_then_close(tcp::acceptor& acceptor, int connections,
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
        {"127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "", "", false, nullptr});
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
        {"127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "", "", false, nullptr});
    collected c;
    std::vector<http_exchange> out;
    const auto one = [&]() -> pacer::awaitable<void> {
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
        {"127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "", "", false, nullptr});
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
        {"127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "", "", false, nullptr});
    collected c;
    const auto r = sequential(io, pool, 1, c, std::chrono::milliseconds(50));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].error, http_error::timeout) << r[0].message;
    EXPECT_EQ(pool.idle(), 0u); // a timed-out connection is never pooled
}

// A server that sends the head and the first event of a chunked stream, then nothing more.
pacer::awaitable<void> stall_mid_body(tcp::acceptor& acceptor, tcp::socket& held) {
    auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
    if (ec)
        co_return;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    auto [rec, n] = co_await http::async_read(socket, buffer, req, use_tuple);
    if (rec)
        co_return;
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n"
                             "d\r\ndata: {\"a\":1}\r\n";
    co_await asio::async_write(socket, asio::buffer(head), use_tuple);
    held = std::move(socket); // open and silent until the test ends
}

TEST(HttpPool, AServerStallingMidStreamEndsTheExchangeAtTheDeadline) {
    asio::io_context io{1};
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    tcp::socket held(io);
    asio::co_spawn(io, stall_mid_body(acceptor, held), asio::detached);
    http_pool pool(
        io.get_executor(),
        {"127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "", "", false, nullptr});
    collected c;
    const auto r = sequential(io, pool, 1, c, std::chrono::milliseconds(100));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].error, http_error::timeout) << r[0].message;
    EXPECT_EQ(c.statuses, std::vector<unsigned>{200});
    EXPECT_EQ(c.bytes, "data: {\"a\":1}"); // what came before the stall reached the sink
    EXPECT_EQ(pool.idle(), 0u);
}

// The deadline belongs to one exchange: a connection pooled after it keeps working once that
// deadline has passed.
TEST(HttpPool, APooledConnectionOutlivesTheDeadlineOfTheRequestThatUsedIt) {
    asio::io_context io{1};
    server::llm_mock_options o;
    o.ttft = o.itl = duration::zero();
    server::llm_mock mock(io, o);
    mock.listen();
    asio::co_spawn(io, mock.serve(), asio::detached);
    http_pool pool(io.get_executor(),
                   {"127.0.0.1", std::to_string(mock.port()), "", "", false, nullptr});
    collected c;
    std::vector<http_exchange> out;
    asio::co_spawn(
        io,
        [&]() -> pacer::awaitable<void> {
            out.push_back(co_await pool.post_stream("/v1/completions", body, {},
                                                    clock::now() + std::chrono::milliseconds(200),
                                                    c.sink));
            asio::steady_timer past(co_await asio::this_coro::executor);
            past.expires_after(std::chrono::milliseconds(300)); // the first deadline passes
            co_await past.async_wait(use_tuple);
            out.push_back(co_await pool.post_stream(
                "/v1/completions", body, {}, clock::now() + std::chrono::seconds(30), c.sink));
        },
        [&](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
            io.stop();
        });
    io.run();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].error, http_error::none) << out[0].message;
    EXPECT_EQ(out[1].error, http_error::none) << out[1].message;
    EXPECT_TRUE(out[1].reused);
    EXPECT_EQ(pool.connections_opened(), 1u);
}

// A server on one keep-alive connection that keeps the raw bytes of each request (head and
// Content-Length bytes of body) and answers each with an empty SSE stream.
pacer::awaitable<void> capture_requests(tcp::acceptor& acceptor, int requests,
                                        std::vector<std::string>& raw) {
    auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
    if (ec)
        co_return;
    std::string buffer;
    for (int i = 0; i < requests; ++i) {
        auto [hec, head_end] = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer),
                                                               "\r\n\r\n", use_tuple);
        if (hec)
            co_return;
        const auto at = buffer.find("Content-Length: ");
        if (at == std::string::npos || at > head_end)
            co_return;
        const std::size_t length = std::stoul(buffer.substr(at + 16));
        if (buffer.size() < head_end + length) {
            auto [bec, n] = co_await asio::async_read(
                socket, asio::dynamic_buffer(buffer),
                asio::transfer_exactly(head_end + length - buffer.size()), use_tuple);
            if (bec)
                co_return;
        }
        raw.push_back(buffer.substr(0, head_end + length));
        buffer.erase(0, head_end + length);
        const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                   "Content-Length: 14\r\n\r\ndata: [DONE]\n\n";
        auto [wec, w] = co_await asio::async_write(socket, asio::buffer(answer), use_tuple);
        if (wec)
            co_return;
    }
}

// What Beast writes for the request the pool describes (the pool builds the head once per
// target and headers and writes it without Beast's serializer: it must be these bytes).
std::string beast_request(const std::string& host, const std::string& target,
                          const std::string& body, const header_list& headers) {
    http::request<http::string_body> req{http::verb::post, target, 11};
    req.set(http::field::host, host);
    req.set(http::field::user_agent, "pacer");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "text/event-stream");
    for (const auto& [name, value] : headers)
        req.set(name, value);
    req.body() = body;
    req.prepare_payload();
    req.keep_alive(true);
    std::ostringstream os;
    os << req;
    return os.str();
}

TEST(HttpPool, WritesTheBytesBeastWouldForEveryTargetHeadersAndBodyLength) {
    asio::io_context io{1};
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    std::vector<std::string> raw;
    asio::co_spawn(io, capture_requests(acceptor, 4, raw), asio::detached);
    http_pool pool(
        io.get_executor(),
        {"127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "", "", false, nullptr});
    const header_list custom = {
        {"user-agent", "bench/1"}, {"X-Trace", "a b"}, {"Content-Length", "7"}};
    struct sent {
        std::string target, body;
        header_list headers;
    };
    const std::vector<sent> requests = {{"/v1/completions", body, custom},
                                        {"/v1/completions", body + std::string(1000, ' '), custom},
                                        {"/api/v1/chat/completions", "{}", {}},
                                        {"/api/v1/chat/completions", "", {}}};
    collected c;
    std::vector<http_exchange> out;
    asio::co_spawn(
        io,
        [&]() -> pacer::awaitable<void> {
            for (const auto& r : requests)
                out.push_back(co_await pool.post_stream(
                    r.target, r.body, r.headers, clock::now() + std::chrono::seconds(30), c.sink));
        },
        [&](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
            io.stop();
        });
    io.run();
    ASSERT_EQ(out.size(), requests.size());
    ASSERT_EQ(raw.size(), requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        EXPECT_EQ(out[i].error, http_error::none) << out[i].message;
        EXPECT_EQ(raw[i], beast_request("127.0.0.1", requests[i].target, requests[i].body,
                                        requests[i].headers))
            << "request " << i;
    }
    EXPECT_EQ(pool.connections_opened(), 1u);
}

} // namespace
} // namespace pacer::transport

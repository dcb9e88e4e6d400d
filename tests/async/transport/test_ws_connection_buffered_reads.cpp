// The plain-TCP stream beneath the WebSockets (transport::detail::maybe_tls_stream) reads the
// socket through a buffer: one socket read takes every message a peer wrote at once, and the
// following messages are served from memory. Here the peer's bytes are all in the client's
// socket before the client reads (a bounded wait on `available()`, not a sleep); the count of
// socket reads shows as what is left in the socket (`available()`) and in the layer
// (`buffered_bytes()`) after the first message: nothing, and the rest of the write.

#include <pacer/server/detail/mock_host.hpp>
#include <pacer/server/probe_mock.hpp>
#include <pacer/transport/detail/maybe_tls_stream.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/detail/hybi13.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using pacer::server::detail::append_frame;
using pacer::transport::detail::maybe_tls_stream;

// Waits (bounded, polling the socket, no timing asserted) until `s` holds `bytes` unread.
bool wait_available(pacer::transport::detail::tcp_socket& s, std::size_t bytes) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (s.available() < bytes) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::yield();
    }
    return true;
}

struct connected_pair {
    asio::io_context ctx{1};
    tcp::acceptor acceptor{ctx, tcp::endpoint(asio::ip::address_v4::loopback(), 0)};
    websocket::stream<beast::tcp_stream> server{ctx};
    websocket::stream<maybe_tls_stream> client{ctx.get_executor()};

    connected_pair() {
        asio::co_spawn(
            ctx,
            [&]() -> pacer::awaitable<void> {
                co_await acceptor.async_accept(server.next_layer().socket(), pacer::use_awaitable);
                co_await server.async_accept(pacer::use_awaitable);
            },
            asio::detached);
        asio::co_spawn(
            ctx,
            [&]() -> pacer::awaitable<void> {
                co_await beast::get_lowest_layer(client).async_connect(acceptor.local_endpoint(),
                                                                       pacer::use_awaitable);
                co_await client.async_handshake("127.0.0.1", "/", pacer::use_awaitable);
            },
            asio::detached);
        ctx.run();
        ctx.restart();
    }
    pacer::transport::detail::tcp_socket& client_socket() {
        return beast::get_lowest_layer(client);
    }
};

TEST(buffered_reads, messages_written_at_once_take_one_socket_read) {
    connected_pair p;
    ASSERT_TRUE(p.client.is_open());
    ASSERT_TRUE(p.server.is_open());
    // An audio delta's size, then two small messages, as the probe mock answers an append.
    const std::vector<std::string> texts = {std::string(5000, 'a'), std::string(180, 'b'),
                                            std::string(90, 'c')};
    std::string batch;
    for (const auto& t : texts)
        append_frame(batch, t);
    asio::write(p.server.next_layer().socket(), asio::buffer(batch));
    ASSERT_TRUE(wait_available(p.client_socket(), batch.size()));

    std::vector<std::string> got;
    std::size_t socket_left = 99, layer_left = 0;
    asio::co_spawn(
        p.ctx,
        [&]() -> pacer::awaitable<void> {
            for (std::size_t i = 0; i < texts.size(); ++i) {
                beast::flat_buffer b;
                co_await p.client.async_read(b, pacer::use_awaitable);
                got.push_back(beast::buffers_to_string(b.data()));
                if (i == 0) {
                    socket_left = p.client_socket().available();
                    layer_left = p.client.next_layer().buffered_bytes();
                }
            }
        },
        asio::detached);
    p.ctx.run();
    p.ctx.restart();
    EXPECT_EQ(got, texts);
    EXPECT_EQ(socket_left, 0u) << "the first socket read left bytes in the socket";
    // The two small frames (headers of 4 and 2 bytes) wait in the layer.
    EXPECT_EQ(layer_left, texts[1].size() + 4 + texts[2].size() + 2);
    EXPECT_EQ(p.client.next_layer().buffered_bytes(), 0u);

    // A read that finds the layer empty waits for the socket; then the close handshake and
    // the teardown work through the layer.
    bool second_read = false, closed = false;
    boost::system::error_code server_end;
    asio::co_spawn(
        p.ctx,
        [&]() -> pacer::awaitable<void> {
            beast::flat_buffer b;
            co_await p.client.async_read(b, pacer::use_awaitable);
            second_read = beast::buffers_to_string(b.data()) == "later";
            co_await p.client.async_close(websocket::close_code::normal, pacer::use_awaitable);
            closed = true;
        },
        asio::detached);
    asio::co_spawn(
        p.ctx,
        [&]() -> pacer::awaitable<void> {
            co_await p.server.async_write(asio::buffer(std::string_view("later")),
                                          pacer::use_awaitable);
            beast::flat_buffer b;
            auto [ec, n] = co_await p.server.async_read(b, pacer::use_tuple);
            server_end = ec;
        },
        asio::detached);
    p.ctx.run();
    EXPECT_TRUE(second_read);
    EXPECT_TRUE(closed);
    EXPECT_EQ(server_end, websocket::error::closed);
}

TEST(buffered_reads, cancel_ends_a_read_waiting_on_an_empty_socket) {
    connected_pair p;
    boost::system::error_code read_ec;
    asio::co_spawn(
        p.ctx,
        [&]() -> pacer::awaitable<void> {
            beast::flat_buffer b;
            auto [ec, n] = co_await p.client.async_read(b, pacer::use_tuple);
            read_ec = ec;
        },
        asio::detached);
    asio::post(p.ctx, [&] { p.client_socket().cancel(); });
    p.ctx.run();
    EXPECT_EQ(read_ec, asio::error::operation_aborted);
}

// The server's first messages ride in the same TCP write as its 101 response: the client's
// handshake reads them along, and `ws_connection::read` must still give each of them.
TEST(buffered_reads, messages_behind_the_upgrade_response_are_kept) {
    asio::io_context ctx{1};
    tcp::acceptor acceptor(ctx, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    const std::vector<std::string> texts = {R"({"type":"session.created"})", std::string(3000, 'x'),
                                            "third"};
    asio::co_spawn(
        ctx,
        [&]() -> pacer::awaitable<void> {
            tcp::socket s = co_await acceptor.async_accept(pacer::use_awaitable);
            asio::streambuf request;
            co_await asio::async_read_until(s, request, "\r\n\r\n", pacer::use_awaitable);
            std::string head(asio::buffers_begin(request.data()),
                             asio::buffers_end(request.data()));
            const auto at = head.find("Sec-WebSocket-Key: ");
            std::string key = head.substr(at + 19, head.find("\r\n", at) - at - 19);
            websocket::detail::sec_ws_accept_type accept;
            websocket::detail::make_sec_ws_accept(accept, key);
            std::string out = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                              "Connection: upgrade\r\nSec-WebSocket-Accept: " +
                              std::string(accept.data(), accept.size()) + "\r\n\r\n";
            for (const auto& t : texts)
                append_frame(out, t);
            co_await asio::async_write(s, asio::buffer(out), pacer::use_awaitable);
            // The client's close frame (masked, code 1000: 8 bytes), answered with 1000; then
            // the server ends the TCP connection first, as a server does.
            std::array<char, 8> close_frame{};
            co_await asio::async_read(s, asio::buffer(close_frame), pacer::use_awaitable);
            const std::array<unsigned char, 4> reply{0x88, 0x02, 0x03, 0xe8};
            co_await asio::async_write(s, asio::buffer(reply), pacer::use_awaitable);
            s.shutdown(tcp::socket::shutdown_send);
            char byte;
            co_await s.async_read_some(asio::buffer(&byte, 1), pacer::use_tuple);
        },
        asio::detached);
    pacer::transport::ws_connection conn(ctx.get_executor());
    std::vector<std::string> got;
    boost::system::error_code connect_ec;
    asio::co_spawn(
        ctx,
        [&]() -> pacer::awaitable<void> {
            auto ep = pacer::transport::parse_ws_url(
                "ws://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/");
            auto r = co_await conn.connect(ep);
            connect_ec = r.ec;
            if (r.ec)
                co_return;
            for (std::size_t i = 0; i < texts.size(); ++i) {
                if (co_await conn.read())
                    break;
                got.emplace_back(conn.message());
            }
            co_await conn.close(std::chrono::seconds(5));
        },
        asio::detached);
    ctx.run();
    EXPECT_FALSE(connect_ec) << connect_ec.message();
    EXPECT_EQ(got, texts);
}

// The probe mock answers an append with its three replies in one write: the client's first
// socket read takes all three, and they come out in order.
TEST(buffered_reads, probe_mock_replies_to_an_append_arrive_in_one_read) {
    asio::io_context ctx{1};
    pacer::server::probe_mock mock(ctx, pacer::server::mock_options{});
    mock.listen();
    asio::co_spawn(ctx, mock.serve(), asio::detached);
    std::vector<std::string> types;
    std::size_t socket_left = 99, layer_left = 0;
    asio::co_spawn(
        ctx,
        [&]() -> pacer::awaitable<void> {
            websocket::stream<maybe_tls_stream> ws(co_await asio::this_coro::executor);
            co_await beast::get_lowest_layer(ws).async_connect(
                tcp::endpoint(asio::ip::address_v4::loopback(), mock.port()), pacer::use_awaitable);
            co_await ws.async_handshake("127.0.0.1", "/v1/realtime", pacer::use_awaitable);
            beast::flat_buffer b;
            co_await ws.async_read(b, pacer::use_awaitable); // session.created
            co_await ws.async_write(
                asio::buffer(std::string_view(R"({"type":"session.update","event_id":"u"})")),
                pacer::use_awaitable);
            b.clear();
            co_await ws.async_read(b, pacer::use_awaitable); // session.updated
            co_await ws.async_write(
                asio::buffer(std::string_view(
                    R"({"type":"input_audio_buffer.append","event_id":"a","audio":"AAAA","sglang":{"seq":0}})")),
                pacer::use_awaitable);
            for (int i = 0; i < 3; ++i) {
                b.clear();
                co_await ws.async_read(b, pacer::use_awaitable);
                const std::string m = beast::buffers_to_string(b.data());
                const auto at = m.find(R"("type":")") + 8;
                types.push_back(m.substr(at, m.find('"', at) - at));
                if (i == 0) {
                    socket_left = beast::get_lowest_layer(ws).available();
                    layer_left = ws.next_layer().buffered_bytes();
                }
            }
            mock.stop();
        },
        asio::detached);
    ctx.run();
    const std::vector<std::string> expected = {"response.output_audio.delta",
                                               "response.output_audio_transcript.delta",
                                               "sglang.unit.done"};
    EXPECT_EQ(types, expected);
    EXPECT_EQ(socket_left, 0u);
    EXPECT_GT(layer_left, 0u) << "the two small replies did not arrive with the first";
}

} // namespace

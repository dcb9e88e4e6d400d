// transport::detail::socket_deadline: the handshake deadline that replaced Beast's tcp_stream
// timeouts. Over a real loopback connection whose peer never writes: a deadline that passes
// closes the socket and ends the pending read; a disarmed one leaves the socket alone (checked
// by a later timer on the same context, which Asio runs after the earlier one); one destroyed
// with its socket before its handler runs touches neither (ASan would see it).

#include <pacer/core/awaitable.hpp>
#include <pacer/transport/detail/maybe_tls_stream.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <optional>

namespace {

namespace asio = boost::asio;
using pacer::transport::detail::socket_deadline;
using pacer::transport::detail::tcp_socket;
using tcp = asio::ip::tcp;

// A connected loopback pair on one context: `client` and the accepted `server`.
struct socket_pair {
    asio::io_context ctx{1};
    pacer::transport::detail::tcp_acceptor acceptor{
        ctx, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
    tcp_socket client{ctx};
    tcp_socket server{ctx};

    socket_pair() {
        client.connect(acceptor.local_endpoint());
        acceptor.accept(server);
    }
};

TEST(socket_deadline, a_passed_deadline_closes_the_socket_and_ends_the_pending_read) {
    socket_pair p;
    std::optional<boost::system::error_code> read_ec;
    bool fired = false;
    // Should the deadline not work, the peer's close ends the read (and the test fails)
    // instead of the test hanging.
    pacer::steady_timer backstop(p.ctx, std::chrono::seconds(20));
    backstop.async_wait([&](boost::system::error_code ec) {
        if (!ec)
            p.server.close();
    });
    asio::co_spawn(
        p.ctx,
        [&]() -> pacer::awaitable<void> {
            socket_deadline deadline(p.client, std::chrono::milliseconds(5));
            std::array<char, 16> byte{};
            auto [ec, n] = co_await p.client.async_read_some(asio::buffer(byte), pacer::use_tuple);
            read_ec = ec;
            fired = deadline.fired();
            backstop.cancel();
        },
        asio::detached);
    p.ctx.run();
    ASSERT_TRUE(read_ec.has_value());
    EXPECT_TRUE(*read_ec); // the peer never wrote: only the deadline could end the read
    EXPECT_TRUE(fired);
    EXPECT_FALSE(p.client.is_open());
}

TEST(socket_deadline, a_disarmed_deadline_leaves_the_socket_open) {
    socket_pair p;
    bool fired = true;
    asio::co_spawn(
        p.ctx,
        [&]() -> pacer::awaitable<void> {
            socket_deadline deadline(p.client, std::chrono::milliseconds(1));
            deadline.disarm();
            // Expires after the deadline would have: by the time it completes, Asio has run
            // the deadline's (cancelled) handler.
            pacer::steady_timer later(p.ctx, std::chrono::milliseconds(20));
            co_await later.async_wait(pacer::use_tuple);
            fired = deadline.fired();
        },
        asio::detached);
    p.ctx.run();
    EXPECT_FALSE(fired);
    EXPECT_TRUE(p.client.is_open());
}

TEST(socket_deadline, destroyed_with_its_socket_before_its_handler_runs) {
    asio::io_context ctx{1};
    {
        tcp_socket socket(ctx);
        socket.open(tcp::v4());
        socket_deadline deadline(socket, std::chrono::seconds(0)); // already due
    }                         // both gone; the handler is still queued
    EXPECT_GE(ctx.run(), 1U); // it ran, and touched neither
}

} // namespace

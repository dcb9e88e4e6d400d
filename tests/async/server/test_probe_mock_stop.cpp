// A stopped mock closes its open sessions, so its io_context always runs out of work: found
// when `pacer mock --fault huge_frame` ignored SIGINT after its peer had gone (the session was
// waiting on a socket whose error had already been reported). Here the client is alive and
// silent, the other way a session never ends by itself.
//
// Nothing here sleeps or times anything: the io_context either returns or not; a watchdog
// turns "not" into a failure instead of a hang (a liveness guard, not a timing assertion).

#include <pacer/server/probe_mock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

TEST(mock_stop, closes_a_session_whose_client_stays_silent) {
    asio::io_context ctx{1};
    pacer::server::probe_mock mock(ctx, pacer::server::mock_options{});
    mock.listen();
    asio::co_spawn(ctx, mock.serve(), asio::detached);

    std::string first;
    boost::system::error_code after_stop;
    bool read_after_stop = false;
    asio::co_spawn(
        ctx,
        [&]() -> pacer::awaitable<void> {
            beast::websocket::stream<beast::tcp_stream> ws(co_await asio::this_coro::executor);
            co_await beast::get_lowest_layer(ws).async_connect(
                tcp::endpoint(asio::ip::address_v4::loopback(), mock.port()), pacer::use_awaitable);
            co_await ws.async_handshake("127.0.0.1", "/v1/realtime", pacer::use_awaitable);
            beast::flat_buffer b;
            co_await ws.async_read(b, pacer::use_awaitable);
            first = beast::buffers_to_string(b.data());
            b.clear();
            // The mock now waits for session.update, which never comes: stop it.
            mock.stop();
            auto [ec, n] = co_await ws.async_read(b, pacer::use_tuple);
            after_stop = ec;
            read_after_stop = true;
        },
        asio::detached);

    std::promise<void> ran;
    auto returned = ran.get_future();
    std::thread runner([&] {
        ctx.run();
        ran.set_value();
    });
    if (returned.wait_for(60s) != std::future_status::ready) {
        ctx.stop();
        runner.join();
        FAIL() << "the stopped mock still had work: its open session was not closed";
    }
    runner.join();
    EXPECT_NE(first.find("\"session.created\""), std::string::npos) << first;
    EXPECT_TRUE(read_after_stop);
    EXPECT_TRUE(after_stop) << "the client should see its connection end";
    EXPECT_EQ(mock.stats().at("sessions_seen").as_uint64(), 1u);
}

} // namespace

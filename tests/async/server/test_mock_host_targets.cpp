// Which upgrade targets the mocks serve (src/server/mock_host.cpp): `/v1/realtime` with any
// query string, as OpenAI Realtime clients connect (`/v1/realtime?model=...`), for every mock and
// protocol; any other path gets HTTP 404. The query's parameter names and its `model` reach the
// mock's stats.
//
// A real client on loopback, the mock on the same io_context; a watchdog turns a hang into a
// failure (a liveness guard, not a timing assertion).

#include <pacer/server/native_mock.hpp>
#include <pacer/server/probe_mock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

struct answer {
    bool upgraded = false;
    unsigned status = 0; ///< the HTTP status of the answer (101 when upgraded)
};

using make_mock = std::function<std::unique_ptr<pacer::server::mock_server>(asio::io_context&)>;

/// The answer of a mock made by `make` to an upgrade request for each of `targets`, in order,
/// and the mock's stats afterwards.
std::pair<std::vector<answer>, boost::json::object>
answers(const make_mock& make, const std::vector<std::string>& targets) {
    asio::io_context ctx{1};
    auto mock = make(ctx);
    mock->listen();
    asio::co_spawn(ctx, mock->serve(), asio::detached);
    std::vector<answer> got;
    asio::co_spawn(
        ctx,
        [&]() -> pacer::awaitable<void> {
            for (const auto& target : targets) {
                beast::websocket::stream<beast::tcp_stream> ws(co_await asio::this_coro::executor);
                co_await beast::get_lowest_layer(ws).async_connect(
                    tcp::endpoint(asio::ip::address_v4::loopback(), mock->port()),
                    pacer::use_awaitable);
                beast::websocket::response_type res;
                auto [ec] = co_await ws.async_handshake(res, "127.0.0.1", target, pacer::use_tuple);
                got.push_back({!ec, res.result_int()});
                if (!ec) // the session answers session.created; leave it
                    co_await ws.async_close(beast::websocket::close_code::normal, pacer::use_tuple);
            }
            mock->stop();
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
        ADD_FAILURE() << "the client or the mock hung";
        return {};
    }
    runner.join();
    return {got, mock->stats()};
}

std::vector<std::string> strings(const boost::json::value& v) {
    std::vector<std::string> out;
    for (const auto& s : v.as_array())
        out.emplace_back(s.as_string());
    return out;
}

const std::vector<std::string> targets{"/v1/realtime",
                                       "/v1/realtime?model=gpt-realtime",
                                       "/v1/realtime?intent=test&model=org%2Fa+b",
                                       "/v1/realtime?",
                                       "/v1/other?model=gpt-realtime",
                                       "/v1/realtimex",
                                       "/v1/realtime/?model=m",
                                       "/"};
const std::vector<bool> served{true, true, true, true, false, false, false, false};

void expect_served(const make_mock& make) {
    const auto [got, stats] = answers(make, targets);
    ASSERT_EQ(got.size(), targets.size());
    for (std::size_t i = 0; i < targets.size(); ++i) {
        SCOPED_TRACE(targets[i]);
        EXPECT_EQ(got[i].upgraded, served[i]);
        EXPECT_EQ(got[i].status, served[i] ? 101u : 404u);
    }
    EXPECT_EQ(stats.at("sessions_seen").as_uint64(), 4u);
    // The parameter names of every request's query, and each model (decoded), sorted; the
    // refused requests' too.
    EXPECT_EQ(strings(stats.at("request_query_names")),
              (std::vector<std::string>{"intent", "model"}));
    EXPECT_EQ(strings(stats.at("request_models")),
              (std::vector<std::string>{"gpt-realtime", "m", "org/a b"}));
}

TEST(mock_targets, probe_mock_serves_the_realtime_path_with_any_query) {
    expect_served([](asio::io_context& io) {
        return std::make_unique<pacer::server::probe_mock>(io, pacer::server::mock_options{});
    });
}

TEST(mock_targets, native_mock_serves_the_realtime_path_with_any_query_in_every_protocol) {
    using pacer::protocol::realtime_protocol;
    for (const auto p :
         {std::optional<realtime_protocol>{}, std::optional(realtime_protocol::openai),
          std::optional(realtime_protocol::vllm)}) {
        SCOPED_TRACE(p ? static_cast<int>(*p) : -1);
        expect_served([p](asio::io_context& io) {
            pacer::server::native_mock_options o;
            o.realtime = p;
            return std::make_unique<pacer::server::native_mock>(io, o);
        });
    }
}

} // namespace

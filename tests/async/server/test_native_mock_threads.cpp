// The native mock on two threads in this process: sessions are handed to both threads in
// turn, what each thread counts is merged (in GET /stats while the mock runs, and in stats()
// once it has stopped), and the shared worker sees the units of both. Under TSan (CI) this is
// the check that no session state is touched from the other thread.
//
// Nothing here times anything: the asserts are counts; the run's own watchdog and the joins
// turn a hang into a failure.

#include <pacer/server/native_mock.hpp>
#include <pacer/session/runner.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <array>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace std::chrono_literals;

// GET `target` on 127.0.0.1:`port`: the body of a 200 answer.
std::string get(std::uint16_t port, const std::string& target) {
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    socket.connect({asio::ip::address_v4::loopback(), port});
    http::request<http::string_body> req{http::verb::get, target, 11};
    req.set(http::field::host, "127.0.0.1");
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    EXPECT_EQ(res.result(), http::status::ok) << res.body();
    return res.body();
}

TEST(MockThreads, SessionsLandOnEveryThreadAndTheirCountsMerge) {
    // Two contexts, one thread each; the first accepts.
    asio::io_context first{1}, second{1};
    std::array<asio::io_context*, 2> contexts{&first, &second};
    pacer::server::native_mock_options o;
    o.service_time = std::chrono::duration<double, std::milli>(1);
    pacer::server::native_mock mock(contexts, o);
    mock.listen();
    asio::co_spawn(first, mock.serve(), asio::detached);
    auto idle = asio::make_work_guard(second); // until the mock stops
    std::vector<std::thread> threads;
    for (auto* c : contexts)
        threads.emplace_back([c] { c->run(); });

    // Four sessions of 5 packets (0.4 s), from a client of its own.
    pacer::test::scratch_folder scratch("pacer-mock-threads");
    pacer::session::run_options r;
    r.sessions = 4;
    r.endpoint.host = "127.0.0.1";
    r.endpoint.port = std::to_string(mock.port());
    r.endpoint.target = "/v1/realtime";
    r.pcm = std::make_shared<const std::vector<std::uint8_t>>(5 * 2560, std::uint8_t{1});
    r.trace_root = scratch.path;
    r.handle_signals = false;
    const auto out = pacer::session::run_duplex(r);
    ASSERT_EQ(out.sessions.size(), 4u);

    // While the mock runs: each thread's window read on its thread, merged.
    const auto live = boost::json::parse(get(mock.port(), "/stats?reset=1")).as_object();
    EXPECT_EQ(live.at("sessions_started").to_number<int>(), 4) << boost::json::serialize(live);
    EXPECT_EQ(live.at("units").to_number<int>(), 4 * 5);
    EXPECT_EQ(live.at("unit_latency_s").at("count").to_number<int>(), 4 * 5);
    EXPECT_EQ(live.at("queue_wait_s").at("count").to_number<int>(), 4 * 5);
    EXPECT_EQ(boost::json::serialize(live.at("sessions_per_thread")), "[2,2]");
    // The reset emptied every thread's window.
    const auto after = boost::json::parse(get(mock.port(), "/stats")).as_object();
    EXPECT_EQ(after.at("units").to_number<int>(), 0);
    EXPECT_EQ(after.at("unit_latency_s").at("count").to_number<int>(), 0);

    asio::post(first, [&] {
        mock.stop();
        idle.reset();
    });
    for (auto& t : threads)
        t.join();
    const auto s = mock.stats();
    EXPECT_EQ(s.at("threads").to_number<int>(), 2);
    EXPECT_EQ(boost::json::serialize(s.at("sessions_per_thread")), "[2,2]");
    EXPECT_EQ(s.at("units").to_number<int>(), 4 * 5);
    EXPECT_EQ(s.at("unit_output_lag_s").at("n").to_number<int>(), 4 * 5);
    EXPECT_EQ(s.at("sessions_completed").to_number<int>(), 4);
    EXPECT_EQ(s.at("thread_cpu_s_per_thread").as_array().size(), 2u);
}

} // namespace

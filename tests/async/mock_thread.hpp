#pragma once
// The native mock on its own io_context thread, for async tests that run real sessions
// against it over loopback: listening once constructed, stopped and joined when destroyed.

#include <pacer/server/native_mock.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <string>
#include <thread>

namespace pacer::testing {

struct mock_thread {
    boost::asio::io_context io{1};
    server::native_mock mock;
    std::thread thread;

    explicit mock_thread(server::native_mock_options o) : mock(io, o) {
        mock.listen();
        boost::asio::co_spawn(io, mock.serve(), boost::asio::detached);
        thread = std::thread([this] { io.run(); });
    }
    ~mock_thread() {
        boost::asio::post(io, [this] { mock.stop(); });
        thread.join();
    }
    /// The mock's realtime endpoint on 127.0.0.1.
    transport::ws_endpoint endpoint() {
        transport::ws_endpoint ep;
        ep.host = "127.0.0.1";
        ep.port = std::to_string(mock.port());
        ep.target = "/v1/realtime";
        return ep;
    }
};

} // namespace pacer::testing

#pragma once
// The native mock on its own io_context thread, for async tests that run real sessions
// against it over loopback: listening once constructed, stopped and joined when destroyed.

#include <pacer/protocol/constants.hpp>
#include <pacer/server/native_mock.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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
    /// A run of `sessions` sessions against this mock, each streaming `packets` packets of the
    /// same bytes, its folders under `root`, with no signal handler (the test owns the process).
    session::run_options run_options(std::size_t sessions, std::size_t packets,
                                     const std::filesystem::path& root) {
        session::run_options o;
        o.sessions = sessions;
        o.endpoint = endpoint();
        o.pcm = std::make_shared<const std::vector<std::uint8_t>>(packets * protocol::packet_bytes,
                                                                  std::uint8_t{1});
        o.trace_root = root;
        o.handle_signals = false;
        return o;
    }
};

} // namespace pacer::testing

// A stop from outside (interrupt, deadline) that races a frame: the read in flight has already
// completed with the frame when the stop comes, so the cancellation cannot abort it. The
// session must then stop reading. Before the fix its receive loop started another read, which
// nothing cancelled any more (the exchange forwards only the first cancellation to its tasks):
// with a server that stays silent and open, the session outlived its deadline and any later
// interrupt (found with `pacer run --processes 2 --trace none`, a worker sent SIGTERM).
//
// The race is made certain, not likely: a scripted server sends session.updated and two more
// frames in one write, so the receiver's first socket read buffers all three and the later
// reads complete from that buffer, each through the context's queue. The interrupt comes from
// `on_streaming` (after append 0 was written), when the receiver's read of the last frame has
// already completed. Nothing sleeps; a watchdog turns a hang into a failure.

#include <pacer/protocol/constants.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using tcp = asio::ip::tcp;

// One unmasked server text frame (payload under 126 bytes).
std::string frame(const std::string& payload) {
    std::string f;
    f += static_cast<char>(0x81);
    f += static_cast<char>(payload.size());
    return f + payload;
}

TEST(session_stop_race, a_stop_racing_a_frame_still_ends_the_session) {
    const fs::path root =
        fs::temp_directory_path() / ("pacer-stop-race-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);

    // The server: session.created, then (after session.update) session.updated and two frames
    // of a type the client ignores, all in one write; then silent and open until the client
    // closes.
    asio::io_context server_io;
    tcp::acceptor acceptor(server_io, {asio::ip::make_address("127.0.0.1"), 0});
    const auto port = acceptor.local_endpoint().port();
    std::atomic<int> server_fd{-1};
    std::thread server([&] {
        try {
            beast::websocket::stream<tcp::socket> ws(acceptor.accept());
            server_fd = ws.next_layer().native_handle();
            ws.accept();
            ws.text(true);
            ws.write(asio::buffer(std::string(R"({"type":"session.created"})")));
            beast::flat_buffer in;
            ws.read(in); // session.update
            asio::write(ws.next_layer(), asio::buffer(frame(R"({"type":"session.updated"})") +
                                                      frame(R"({"type":"pacer.test.first"})") +
                                                      frame(R"({"type":"pacer.test.second"})")));
            for (;;) { // until the client closes (its close frame is answered by Beast)
                in.clear();
                ws.read(in);
            }
        } catch (const std::exception&) {
        }
    });

    bool hung = false;
    // The session context outlives the writer (the writer holds the session's done channel).
    asio::io_context io{1};
    {
        asio::io_context writer_io{1};
        pacer::trace::channel channel{writer_io.get_executor(), 1 << 12};
        pacer::trace::writer_options wo;
        wo.root = root;
        wo.what = pacer::trace::mode::none;
        pacer::trace::writer_core core(wo);
        asio::co_spawn(writer_io, pacer::trace::run_writer(channel, core), asio::detached);
        std::thread writer([&] { writer_io.run(); });

        pacer::session::interrupt_source interrupt;
        std::optional<pacer::session::session_result> result;
        pacer::session::session_options o;
        o.endpoint.host = "127.0.0.1";
        o.endpoint.port = std::to_string(port);
        o.endpoint.target = "/v1/realtime";
        o.pcm = std::make_shared<const std::vector<std::uint8_t>>(5 * pacer::protocol::packet_bytes,
                                                                  std::uint8_t{1});
        o.timeout = 20s;
        o.seed = 42;
        o.trace_lines = false;
        o.interrupt = &interrupt;
        o.on_streaming = [&] { interrupt.request(); };
        asio::co_spawn(io, pacer::session::run_duplex_session(std::move(o), channel),
                       [&](std::exception_ptr e, pacer::session::session_result r) {
                           if (e)
                               std::rethrow_exception(e);
                           result = std::move(r);
                       });
        auto done = std::async(std::launch::async, [&] { io.run(); });
        if (done.wait_for(60s) != std::future_status::ready) { // the liveness guard
            io.stop();
            done.wait();
            hung = true;
            ADD_FAILURE() << "the session did not end after the interrupt";
        }
        done.get();
        if (result) {
            EXPECT_TRUE(result->interrupted);
            EXPECT_EQ(result->appends_sent, 1u); // nothing more after packet 0
            std::vector<std::string> texts;      // as the trace's `error` lines word them
            for (const auto& f : result->failures)
                texts.push_back(pacer::reference_text(f));
            EXPECT_EQ(texts,
                      std::vector<std::string>{"Interrupted: the run was stopped by a signal"});
        }

        pacer::trace::record stop;
        stop.what = pacer::trace::record::kind::shutdown;
        channel.async_send(boost::system::error_code{}, std::move(stop), asio::use_future).get();
        writer.join();
    }
    // A hung session still holds its socket open: end the server's blocking read.
    // (Only then: otherwise the server has ended by itself and its descriptor is gone.)
    if (hung)
        ::shutdown(server_fd.load(), SHUT_RDWR);
    server.join();
    fs::remove_all(root);
}

} // namespace

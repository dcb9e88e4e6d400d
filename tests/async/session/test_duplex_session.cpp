// In-process session tests: `run_duplex_session` against the native mock in the same process
// (loopback, no subprocess), one session after another on one session context, for the edges
// of the protocol's completion rules (docs/protocol.md §1.5 step 4), admission, interrupts,
// and the release of a finished session's state.
//
// Nothing here times anything: outcomes are the session's result (errors, flags); a watchdog
// turns a hang into a failure (a liveness guard, not a timing assertion).

#include <pacer/protocol/constants.hpp>
#include <pacer/server/native_mock.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/session/error.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include "async/mock_thread.hpp"
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using pacer::server::peer_fault;
using pacer::session::run_duplex_session;
using pacer::session::session_options;
using pacer::session::session_result;
using pacer::session::session_states_alive;

// The native mock on its own thread and context.
using pacer::testing::mock_thread;

// The session's failures as its trace's `error` lines word them (the text exists only there).
std::vector<std::string> texts(const session_result& r) {
    std::vector<std::string> out;
    for (const auto& f : r.failures)
        out.push_back(pacer::reference_text(f));
    return out;
}

// The trace writer on its own thread, as the runner has it.
struct writer_thread {
    asio::io_context io{1};
    pacer::trace::channel channel{io.get_executor(), 1 << 12};
    pacer::trace::writer_core core;
    std::thread thread;

    explicit writer_thread(const fs::path& root) : core(options(root)) {
        asio::co_spawn(io, pacer::trace::run_writer(channel, core), asio::detached);
        thread = std::thread([this] { io.run(); });
    }
    static pacer::trace::writer_options options(const fs::path& root) {
        pacer::trace::writer_options o;
        o.root = root;
        return o;
    }
    ~writer_thread() {
        pacer::trace::record stop;
        stop.what = pacer::trace::record::kind::shutdown;
        channel.async_send(boost::system::error_code{}, std::move(stop), asio::use_future).get();
        thread.join();
    }
};

struct fixture : ::testing::Test {
    fs::path root;
    void SetUp() override {
        root = fs::temp_directory_path() /
               ("pacer-inprocess-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root);
        fs::create_directories(root);
    }
    void TearDown() override { fs::remove_all(root); }

    // 0.4 s of a tone-free input: 5 packets.
    static std::shared_ptr<const std::vector<std::uint8_t>> input(std::size_t packets = 5) {
        return std::make_shared<const std::vector<std::uint8_t>>(
            packets * pacer::protocol::packet_bytes, std::uint8_t{1});
    }

    // Runs `count` sessions one after another on one session context (sharing one interrupt
    // source), calling `after(i, result)` after each one's return. `during` (optional) runs on
    // the context once session 0 is streaming.
    std::vector<session_result>
    run(const pacer::transport::ws_endpoint& ep, std::size_t count,
        std::function<void(std::size_t, const session_result&)> after = {},
        std::function<void(session_options&)> adjust = {},
        std::function<void(pacer::session::interrupt_source&)> during = {}) {
        // The session context outlives the writer: the writer holds each session's done
        // channel (bound to the session context) until it has flushed that session.
        asio::io_context io{1};
        std::optional<writer_thread> writer_holder(std::in_place, root);
        auto& writer = *writer_holder;
        pacer::session::interrupt_source interrupt;
        std::vector<session_result> results;
        asio::co_spawn(
            io,
            [&]() -> pacer::awaitable<void> {
                for (std::size_t i = 0; i < count; ++i) {
                    session_options o;
                    o.index = static_cast<std::uint32_t>(i);
                    o.endpoint = ep;
                    o.pcm = input();
                    o.timeout = 20s;
                    o.seed = 42 + i;
                    o.interrupt = &interrupt;
                    if (during)
                        o.on_streaming = [&] { during(interrupt); };
                    if (adjust)
                        adjust(o);
                    auto r = co_await run_duplex_session(std::move(o), writer.channel);
                    // Let handlers the session cancelled on its way out run, then look.
                    co_await asio::post(co_await asio::this_coro::executor, pacer::use_awaitable);
                    if (after)
                        after(i, r);
                    results.push_back(std::move(r));
                }
            },
            [](std::exception_ptr e) {
                if (e)
                    std::rethrow_exception(e);
            });
        auto done = std::async(std::launch::async, [&] { io.run(); });
        if (done.wait_for(60s) != std::future_status::ready) {
            io.stop();
            done.wait();
            ADD_FAILURE() << "the sessions did not end";
        }
        done.get();
        writer_holder.reset(); // flushes and joins the writer while `io` still exists
        EXPECT_EQ(interrupt.subscribers(), 0u);
        return results;
    }

    // The trace lines' directions and event types, in order.
    std::vector<std::string> trace_of(std::uint32_t session) {
        std::ifstream in(root / pacer::trace::session_folder_name(session) / "trace.jsonl");
        std::vector<std::string> out;
        for (std::string line; std::getline(in, line);)
            out.push_back(line);
        return out;
    }
};

pacer::server::native_mock_options mock_options(peer_fault fault = peer_fault::none) {
    pacer::server::native_mock_options o;
    o.fault = fault;
    return o;
}

using session_inprocess = fixture;

// A finished session leaves nothing behind: its state (socket, timers, buffers) is gone when
// it returns, and it has left the interrupt source. (Before the rebuild, every finished session
// stayed alive, waiting on the context's interrupt timer, until the context ended.)
TEST_F(session_inprocess, finished_sessions_release_their_state_at_once) {
    mock_thread mock(mock_options());
    ASSERT_EQ(session_states_alive(), 0u);
    const auto results = run(mock.endpoint(), 5, [](std::size_t i, const session_result& r) {
        EXPECT_TRUE(r.complete) << "session " << i << ": "
                                << (texts(r).empty() ? "" : texts(r).front());
        EXPECT_EQ(session_states_alive(), 0u) << "after session " << i;
    });
    ASSERT_EQ(results.size(), 5u);
    for (const auto& r : results) {
        EXPECT_EQ(r.appends_sent, 5u);
        EXPECT_TRUE(r.session_start_s.has_value());
    }
}

TEST_F(session_inprocess, fatal_server_error_ends_without_close_or_client_error) {
    mock_thread mock(mock_options(peer_fault::server_error));
    const auto r = run(mock.endpoint(), 1).at(0);
    EXPECT_FALSE(r.complete);
    EXPECT_TRUE(texts(r).empty()) << texts(r).front(); // the server's error is traced, not ours
    const auto lines = trace_of(0);
    for (const auto& l : lines)
        EXPECT_EQ(l.find("\"session.close\""), std::string::npos) << l;
    EXPECT_EQ(session_states_alive(), 0u);
}

TEST_F(session_inprocess, nonfatal_server_error_stops_streaming_and_closes) {
    mock_thread mock(mock_options(peer_fault::nonfatal_error));
    const auto r = run(mock.endpoint(), 1).at(0);
    EXPECT_FALSE(r.complete);
    EXPECT_TRUE(texts(r).empty());
    EXPECT_LT(r.appends_sent, r.expected_appends);
    std::size_t closes = 0;
    for (const auto& l : trace_of(0))
        closes += l.find("\"session.close\"") != std::string::npos;
    EXPECT_EQ(closes, 1u);
}

// The receive loop fails: its error is the session's one error; nothing is sent after it.
TEST_F(session_inprocess, receive_failure_is_the_one_error_and_stops_the_driver) {
    for (const auto fault : {peer_fault::malformed_json, peer_fault::disconnect}) {
        mock_thread mock(mock_options(fault));
        const auto r = run(mock.endpoint(), 1).at(0);
        ASSERT_EQ(texts(r).size(), 1u);
        EXPECT_TRUE(texts(r)[0].starts_with(fault == peer_fault::malformed_json
                                                ? "ValueError: malformed server frame "
                                                : "ConnectionClosedError: received 1011"))
            << texts(r)[0];
        // The same failure as a code, with the data its text quotes.
        ASSERT_EQ(r.failures.size(), 1u);
        if (fault == peer_fault::malformed_json)
            EXPECT_EQ(r.failures[0].code, pacer::session::session_errc::malformed_frame);
        else
            EXPECT_EQ(r.failures[0].code, pacer::transport::transport_errc::closed_with_error);
        bool after_error = false;
        for (const auto& l : trace_of(0)) {
            if (l.find("\"direction\":\"error\"") != std::string::npos) {
                after_error = true;
            } else if (after_error) {
                EXPECT_EQ(l.find("\"direction\":\"send\""), std::string::npos) << l;
            }
        }
        EXPECT_TRUE(after_error);
        EXPECT_EQ(session_states_alive(), 0u);
    }
}

// The receive loop ends normally (session.closed, then the close) while the driver waits
// for session.updated: after its grace the driver is reported stalled, without a type prefix.
TEST_F(session_inprocess, driver_still_waiting_after_the_receive_loop_is_stalled) {
    mock_thread mock(mock_options(peer_fault::close_without_update));
    const auto r = run(mock.endpoint(), 1).at(0);
    EXPECT_EQ(texts(r), std::vector<std::string>{"driver stalled after the receive loop"});
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].code, pacer::session::session_errc::driver_stalled);
    EXPECT_EQ(r.appends_sent, 0u);
}

// The driver ends first (session.closed received) and the server keeps the socket open: the
// receive loop is stopped silently after its grace, and the session is complete.
TEST_F(session_inprocess, lingering_server_the_receive_loop_is_stopped_silently) {
    mock_thread mock(mock_options(peer_fault::linger));
    const auto r = run(mock.endpoint(), 1).at(0);
    EXPECT_TRUE(r.complete) << (texts(r).empty() ? "" : texts(r).front());
    EXPECT_TRUE(texts(r).empty());
}

TEST_F(session_inprocess, the_deadline_stops_a_silent_server) {
    mock_thread mock(mock_options(peer_fault::timeout));
    const auto r =
        run(mock.endpoint(), 1, {}, [](session_options& o) { o.timeout = 1500ms; }).at(0);
    EXPECT_EQ(texts(r), std::vector<std::string>{"Session timeout after 1.5s"});
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].code, pacer::session::session_errc::timeout);
    EXPECT_EQ(r.failures[0].detail, "1.5");
    EXPECT_FALSE(r.complete);
}

TEST_F(session_inprocess, admission_retries_denials_then_streams) {
    auto o = mock_options();
    o.reject_first = 2;
    mock_thread mock(o);
    const auto r =
        run(mock.endpoint(), 1, {}, [](session_options& so) { so.admission_backoff = 10ms; }).at(0);
    EXPECT_EQ(r.admission_denials, 2);
    EXPECT_TRUE(r.admitted);
    EXPECT_FALSE(r.rejected);
    EXPECT_TRUE(r.complete);
}

TEST_F(session_inprocess, admission_exhausted_is_a_rejection) {
    auto o = mock_options();
    o.reject_first = 100;
    mock_thread mock(o);
    const auto r =
        run(mock.endpoint(), 1, {}, [](session_options& so) { so.admission_backoff = 1ms; }).at(0);
    EXPECT_EQ(r.admission_denials, pacer::protocol::admission_retries + 1);
    EXPECT_TRUE(r.rejected);
    EXPECT_FALSE(r.admitted);
    EXPECT_TRUE(texts(r).empty());
}

// An interrupt while streaming: the session stops at once, records the interrupt, closes, and
// a session started after it does nothing.
TEST_F(session_inprocess, interrupt_stops_the_running_session_and_the_next_does_nothing) {
    mock_thread mock(mock_options());
    bool requested = false;
    const auto results =
        run(mock.endpoint(), 2, {}, {}, [&](pacer::session::interrupt_source& source) {
            if (!requested) {
                requested = true;
                source.request();
            }
        });
    ASSERT_EQ(results.size(), 2u);
    EXPECT_TRUE(results[0].interrupted);
    EXPECT_EQ(texts(results[0]),
              std::vector<std::string>{"Interrupted: the run was stopped by a signal"});
    ASSERT_EQ(results[0].failures.size(), 1u);
    EXPECT_EQ(results[0].failures[0].code, pacer::session::session_errc::interrupted);
    EXPECT_EQ(results[0].appends_sent, 1u); // nothing more after packet 0
    EXPECT_TRUE(results[1].interrupted);
    EXPECT_FALSE(results[1].admitted);
    EXPECT_EQ(session_states_alive(), 0u);
}

} // namespace

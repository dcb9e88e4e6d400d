// run_options::stagger_origin (`pacer run`'s stagger, docs/protocol.md §2.2): every session's
// phase is counted from the run's one origin, so a session never starts streaming before its
// phase, however early it negotiated. Runs the native mock in-process on loopback; nothing here
// is timed: the origin lies in the future and only its lower bound is asserted.

#include <pacer/protocol/constants.hpp>
#include <pacer/server/native_mock.hpp>
#include <pacer/session/runner.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include "async/mock_thread.hpp"
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

using pacer::testing::mock_thread;

TEST(RunnerStaggerOrigin, NoSessionStartsBeforeItsPhaseOfTheRunsOrigin) {
    const fs::path root =
        fs::temp_directory_path() / ("pacer-stagger-origin-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    mock_thread mock({});
    auto o = mock.run_options(4, 3, root);
    o.threads = 1;
    o.trace = pacer::trace::mode::none;
    o.stagger = 80ms;
    o.stagger_slots = 2; // sessions 0 and 1 at offset 0, sessions 2 and 3 at 40 ms
    // Far enough ahead that loopback sessions negotiate before it (if they do not, the bound
    // below still holds: it is the rule, not a timing).
    const auto origin = pacer::clock::now() + 400ms;
    o.stagger_origin = origin;
    const auto out = pacer::session::run_duplex(o);
    ASSERT_EQ(out.sessions.size(), 4u);
    for (const auto& r : out.sessions) {
        ASSERT_EQ(r.appends_sent, 3u) << r.index;
        const auto phase = origin + pacer::session::stagger_offset(r.index, 4, 80ms, 2);
        ASSERT_TRUE(r.session_start_s.has_value()) << r.index;
        EXPECT_GE(*r.session_start_s, pacer::to_seconds(phase)) << "session " << r.index;
    }
    fs::remove_all(root);
}

} // namespace

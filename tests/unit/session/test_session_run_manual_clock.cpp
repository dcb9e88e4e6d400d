// The session coroutine itself (src/session/session_run.hpp) under a manual clock: the
// program's coroutine, instantiated on the manual clock's timer (tests/unit/manual_timer.hpp)
// and a scripted connection (scripted_connection.hpp), driven by io_context::poll. Time moves
// only when the test moves it, so the pacing, the catch-up after a stall, the turn timeline,
// the admission backoff and the stops are checked to the tick, with no sleep and no real time.

#include <pacer/core/base64.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/session/error.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include "../../../src/session/session_run.hpp"
#include "unit/manual_timer.hpp"
#include "unit/scratch_folder.hpp"
#include "unit/session/scripted_connection.hpp"
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using pacer::duration;
using pacer::time_point;
using pacer::protocol::packet_bytes;
using pacer::session::session_errc;
using pacer::session::session_options;
using pacer::session::session_result;
using pacer::test::manual_clock;
using pacer::test::manual_io;
using pacer::test::scripted_connection;
using pacer::test::scripted_server;

// The native protocol's server events, as the native mock words them (the shapes the opening
// check accepts).
const std::string native_created =
    R"({"type":"session.created","event_id":"s1","session":{"id":"sess","object":"realtime.session","type":"realtime","sglang":{"granted":null}}})";
const std::string native_updated =
    R"({"type":"session.updated","event_id":"s2","session":{"id":"sess","object":"realtime.session","type":"realtime","sglang":{"granted":{}}}})";

std::string type_of(const std::string& frame) {
    return std::string(boost::json::parse(frame).as_object().at("type").as_string());
}

// A native server that answers every step at once: session.updated, then at the input's end
// ended + drained, then session.closed and the close.
void native_script(scripted_server& s, std::string_view frame) {
    const auto type = type_of(std::string(frame));
    if (type == "session.update")
        s.push(native_updated);
    else if (type == "sglang.input_audio.end") {
        s.push(R"({"type":"sglang.input_audio.ended","event_id":"s3","accepted_end_ms":0})");
        s.push(
            R"({"type":"sglang.input_audio.drained","event_id":"s4","accepted_end_ms":0,"consumed_ms":0})");
    } else if (type == "session.close") {
        s.push(R"({"type":"session.closed","event_id":"s5","reason":"client_closed"})");
        s.close();
    }
}

struct SessionManualClock : ::testing::Test {
    asio::io_context io{1};
    asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
    pacer::test::scratch_folder dir{"pacer-manual-session"};
    pacer::trace::channel channel{io.get_executor(), 1 << 12};
    pacer::trace::writer_core writer{writer_options(dir.path)};
    scripted_server server;
    std::optional<session_result> result;
    time_point t0;

    static pacer::trace::writer_options writer_options(const std::filesystem::path& root) {
        pacer::trace::writer_options o;
        o.root = root;
        return o;
    }

    void SetUp() override {
        manual_clock::reset();
        t0 = manual_clock::now();
        scripted_connection::server = &server;
        server.greeting = {native_created};
        server.on_frame = native_script;
    }
    void TearDown() override { scripted_connection::server = nullptr; }

    static session_options options(std::size_t packets) {
        session_options o;
        o.pcm = pacer::protocol::pcm_input(
            std::make_shared<const std::vector<std::uint8_t>>(packets * packet_bytes, 1));
        o.endpoint.host = "127.0.0.1";
        return o;
    }

    // Runs what is ready, the trace writer's part included, until nothing is.
    void pump() {
        for (;;) {
            const auto ran = io.poll();
            const auto taken = pacer::trace::drain(channel, writer, 1 << 16).taken;
            // (The writer batches on the real clock: an hour ahead flushes all it holds.)
            const auto flushed = writer.flush_due(pacer::clock::now() + 1h);
            if (ran == 0 && taken == 0 && flushed == 0)
                return;
        }
    }
    void run_until(time_point t) {
        manual_clock::run_until(t, [this] { pump(); });
    }
    void start(session_options o) {
        asio::co_spawn(
            io,
            [this, o = std::move(o)]() mutable -> pacer::awaitable<void> {
                result = co_await pacer::session::detail::run_cancellable<manual_io>(std::move(o),
                                                                                     channel);
            },
            asio::bind_cancellation_slot(caller.slot(), asio::detached));
    }
    asio::cancellation_signal caller; // the caller's cancellation
    // The client frames of one type, with their send instants.
    std::vector<time_point> sent(const std::string& type) const {
        std::vector<time_point> out;
        for (const auto& f : server.frames)
            if (type_of(f.frame) == type)
                out.push_back(f.at);
        return out;
    }
};

TEST_F(SessionManualClock, PacesAppendsOnTheAbsoluteGridAndEndsTheInputAfterTheLast) {
    start(options(6));
    run_until(t0 + 10s);
    ASSERT_TRUE(result);
    const auto appends = sent("input_audio_buffer.append");
    ASSERT_EQ(appends.size(), 6u);
    // Negotiated at once (no time passes without a wait): packet 0 anchors the grid at t0,
    // and packet k goes exactly on t0 + k x 80 ms.
    for (std::size_t k = 0; k < appends.size(); ++k)
        EXPECT_EQ(appends[k], t0 + static_cast<int>(k) * pacer::protocol::packet_period)
            << "packet " << k;
    // The end of input once the last packet has had its 80 ms on the wire.
    const auto end = sent("sglang.input_audio.end");
    ASSERT_EQ(end.size(), 1u);
    EXPECT_EQ(end[0], t0 + 6 * pacer::protocol::packet_period);
    EXPECT_TRUE(result->complete);
    EXPECT_EQ(result->appends_sent, 6u);
    EXPECT_EQ(result->late_appends, 0u);
    EXPECT_EQ(result->session_start_s, pacer::to_seconds(t0));
    EXPECT_TRUE(result->failures.empty());
    EXPECT_EQ(manual_clock::pending(), 0u); // every wait of the session has ended
}

TEST_F(SessionManualClock, CatchesUpAfterAStalledWriteAndKeepsTheGrid) {
    // The write of packet 2 takes 250 ms (a full TCP window): packets 3, 4 and 5, due while
    // it was pending, go at once when it completes; packet 6 is back on the grid.
    server.on_frame = [](scripted_server& s, std::string_view frame) {
        native_script(s, frame);
        if (type_of(std::string(frame)) == "input_audio_buffer.append" &&
            std::string(frame).find("\"seq\":1,") != std::string::npos)
            s.write_takes = 250ms;
    };
    start(options(8));
    run_until(t0 + 10s);
    ASSERT_TRUE(result);
    const auto appends = sent("input_audio_buffer.append");
    ASSERT_EQ(appends.size(), 8u);
    const auto p = pacer::protocol::packet_period;
    EXPECT_EQ(appends[2], t0 + 2 * p);
    const auto resumed = t0 + 2 * p + 250ms;
    EXPECT_EQ(appends[3], resumed);
    EXPECT_EQ(appends[4], resumed);
    EXPECT_EQ(appends[5], resumed);
    EXPECT_EQ(appends[6], t0 + 6 * p); // absolute: the stall did not shift the grid
    EXPECT_EQ(appends[7], t0 + 7 * p);
    EXPECT_EQ(result->stalled_sends, 1u);
    // Packets 3 (170 ms late) and 4 (90 ms) are past the 80 ms late line; 5 (10 ms) is not.
    EXPECT_EQ(result->late_appends, 2u);
    EXPECT_EQ(result->late_appends_after_send_stall, 2u);
    EXPECT_TRUE(result->complete);
}

TEST_F(SessionManualClock, BacksOffOnEach503AndStreamsOnceAdmitted) {
    server.declines = 2;
    start(options(2));
    run_until(t0 + 10s);
    ASSERT_TRUE(result);
    EXPECT_EQ(server.connects, 3);
    EXPECT_EQ(result->admission_denials, 2);
    const auto appends = sent("input_audio_buffer.append");
    ASSERT_EQ(appends.size(), 2u);
    // Two backoffs of 250 ms, then the grid from the third connection's negotiation.
    EXPECT_EQ(appends[0], t0 + 2 * pacer::protocol::admission_backoff);
    EXPECT_TRUE(result->complete);
}

TEST_F(SessionManualClock, TheDeadlineStopsASessionTheServerNeverAnswers) {
    server.greeting.clear(); // no session.created: the session waits for it
    auto o = options(4);
    o.timeout = 3s;
    start(std::move(o));
    run_until(t0 + 3s - 1ms);
    EXPECT_FALSE(result); // still waiting, one tick before its deadline
    run_until(t0 + 3s);
    ASSERT_TRUE(result);
    ASSERT_EQ(result->failures.size(), 1u);
    EXPECT_EQ(result->failures[0].code, make_error_code(session_errc::timeout));
    EXPECT_FALSE(result->complete);
    EXPECT_TRUE(server.frames.empty()); // nothing was sent
    EXPECT_EQ(manual_clock::pending(), 0u);
}

TEST_F(SessionManualClock, AnInterruptStopsStreamingAtOnceAndTheSessionStillEnds) {
    pacer::session::interrupt_source interrupt;
    auto o = options(20);
    o.interrupt = &interrupt;
    start(std::move(o));
    run_until(t0 + 400ms); // packets 0..5 have gone
    EXPECT_EQ(interrupt.subscribers(), 1u);
    interrupt.request();
    run_until(t0 + 10s);
    ASSERT_TRUE(result);
    EXPECT_EQ(sent("input_audio_buffer.append").size(), 6u); // nothing after the stop
    EXPECT_TRUE(sent("session.close").empty());              // no grace, nothing more sent
    EXPECT_TRUE(result->interrupted);
    ASSERT_EQ(result->failures.size(), 1u);
    EXPECT_EQ(result->failures[0].code, make_error_code(session_errc::interrupted));
    EXPECT_EQ(interrupt.subscribers(), 0u);
    EXPECT_EQ(manual_clock::pending(), 0u);
}

TEST_F(SessionManualClock, TheCallersCancellationStopsTheSessionAsAnInterruptDoes) {
    start(options(20));
    run_until(t0 + 400ms); // packets 0..5 have gone
    caller.emit(asio::cancellation_type::terminal);
    run_until(t0 + 10s);
    ASSERT_TRUE(result); // the result still comes, with the session's own record of the stop
    EXPECT_EQ(sent("input_audio_buffer.append").size(), 6u);
    EXPECT_TRUE(sent("session.close").empty());
    EXPECT_TRUE(result->interrupted);
    ASSERT_EQ(result->failures.size(), 1u);
    EXPECT_EQ(result->failures[0].code, make_error_code(session_errc::interrupted));
    EXPECT_EQ(manual_clock::pending(), 0u);
}

// openai-realtime with manual turns: two user turns, each committed and answered.
const std::string openai_created =
    R"({"type":"session.created","event_id":"e1","session":{"id":"sess","object":"realtime.session","type":"realtime"}})";
const std::string openai_updated =
    R"({"type":"session.updated","event_id":"e2","session":{"id":"sess","object":"realtime.session","type":"realtime"}})";

// 240 ms of 24 kHz PCM16 in one delta of response `response` (item `item_<response>`).
std::string audio_delta(const std::string& response) {
    const std::string item = "item_" + response;
    std::string b64;
    const std::vector<std::uint8_t> pcm(24000 * 2 * 240 / 1000, 0);
    pacer::base64_append(b64, pcm.data(), pcm.size());
    return R"({"type":"response.output_audio.delta","event_id":"d","response_id":")" + response +
           R"(","item_id":")" + item + R"(","output_index":0,"content_index":0,"delta":")" + b64 +
           R"("})";
}

TEST_F(SessionManualClock, RecordsTheTurnTimelineOfATwoTurnConversation) {
    server.greeting = {openai_created};
    server.on_frame = [](scripted_server& s, std::string_view frame) {
        if (type_of(std::string(frame)) == "session.update")
            s.push(openai_updated);
    };
    auto o = options(3);
    o.realtime = pacer::protocol::realtime_protocol::openai;
    o.turns = pacer::protocol::realtime_turns::manual;
    o.conversation.resize(2);
    o.conversation[0].pause = 400ms;
    start(std::move(o));
    const auto p = pacer::protocol::packet_period;
    // Turn 0: packets 0..2 at t0..t0+160 ms; its speech ends at t0 + 240 ms (commit and
    // response.create then). Its reply: 240 ms of audio 300 ms after the end.
    run_until(t0 + 3 * p + 300ms);
    ASSERT_EQ(sent("input_audio_buffer.commit").size(), 1u);
    EXPECT_EQ(sent("input_audio_buffer.commit")[0], t0 + 3 * p);
    EXPECT_EQ(sent("response.create").size(), 1u);
    server.push(audio_delta("r0"));
    server.push(
        R"({"type":"response.done","event_id":"e3","response":{"id":"r0","status":"completed"}})");
    // Turn 1 after the 400 ms pause (5 silence packets): its packets at t0 + 720 ms on.
    run_until(t0 + 3 * p + 400ms + 3 * p + 200ms);
    ASSERT_EQ(sent("input_audio_buffer.commit").size(), 2u);
    server.push(audio_delta("r1"));
    server.push(
        R"({"type":"response.done","event_id":"e4","response":{"id":"r1","status":"completed"}})");
    run_until(t0 + 10s);
    ASSERT_TRUE(result);
    ASSERT_EQ(result->turns.size(), 2u);
    const auto& t = result->turns;
    const auto s = [](time_point at) { return pacer::to_seconds(at); };
    EXPECT_EQ(t[0].start_s, s(t0));
    EXPECT_EQ(t[0].speech_end_s, s(t0 + 3 * p));
    EXPECT_EQ(t[0].commit_s, s(t0 + 3 * p));
    EXPECT_EQ(t[0].first_audio_s, s(t0 + 3 * p + 300ms));
    EXPECT_DOUBLE_EQ(t[0].audio_s, 0.24);
    const auto turn1 = t0 + 3 * p + 5 * p; // after turn 0's packets and the pause's
    EXPECT_EQ(t[1].start_s, s(turn1));
    EXPECT_EQ(t[1].speech_end_s, s(turn1 + 3 * p));
    EXPECT_EQ(t[1].first_audio_s, s(turn1 + 3 * p + 200ms));
    EXPECT_EQ(result->appends_sent, 3u + 5u + 3u);
    EXPECT_TRUE(result->complete);
    EXPECT_TRUE(result->failures.empty());
}

} // namespace

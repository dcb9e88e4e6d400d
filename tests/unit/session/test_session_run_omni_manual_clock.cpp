// The session coroutine (src/session/session_run.hpp) speaking vllm-omni (its row of the
// protocol table, src/session/omni_client.hpp) under a manual clock and a scripted server:
// the appends on the 200 ms grid, the handshake that starts with session.update, the event
// acks, and the listener's playback acks checked to the tick, with no sleep and no real time.

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

// A vllm-omni server as its docs word it: nothing until session.update; then session.created
// (not journaled) and session.updated; each commit answered by a reply of 250 ms of audio (one
// delta, 24 kHz PCM16: 12,000 bytes) and its done, all at once; each playback.ack acknowledged
// at once; session.close answered by session.closed and the close.
std::string frame_type(const std::string& frame) {
    return std::string(boost::json::parse(frame).as_object().at("type").as_string());
}

struct omni_server_state {
    int seq = 0;
    int replies = 0;
};
inline omni_server_state omni_state;

std::string with_seq(std::string body) {
    body.pop_back(); // the closing brace
    return body + ",\"server_event_seq\":" + std::to_string(++omni_state.seq) + "}";
}

void omni_script(scripted_server& s, std::string_view frame) {
    const auto type = frame_type(std::string(frame));
    if (type == "session.update") {
        s.push(
            R"({"type":"session.created","session":{"id":"duplex-1","object":"realtime.session","capabilities":{"chunk_period_ms":1000}}})");
        s.push(with_seq(
            R"({"type":"session.updated","session":{"id":"duplex-1","object":"realtime.session"}})"));
    } else if (type == "input_audio_buffer.commit") {
        const auto id = "resp_" + std::to_string(++omni_state.replies);
        std::string pcm;
        pacer::base64_append(pcm, std::vector<std::uint8_t>(12000, 0).data(), 12000);
        s.push(with_seq(R"({"type":"response.created","response_id":")" + id +
                        R"(","response":{"id":")" + id + R"(","status":"in_progress"}})"));
        s.push(with_seq(R"({"type":"response.speak","response_id":")" + id + R"("})"));
        s.push(with_seq(R"({"type":"response.output_audio.delta","response_id":")" + id +
                        R"(","delta":")" + pcm + R"(","metadata":{"audio_duration_ms":250}})"));
        s.push(with_seq(R"({"type":"response.output_audio_transcript.delta","response_id":")" + id +
                        R"(","delta":"hi"})"));
        s.push(with_seq(R"({"type":"response.done","response_id":")" + id +
                        R"(","response":{"id":")" + id + R"(","status":"completed"}})"));
    } else if (type == "playback.ack") {
        s.push(with_seq(
            R"({"type":"playback.acknowledged","event":{"type":"playback.acknowledged"}})"));
    } else if (type == "session.close") {
        s.push(with_seq(R"({"type":"session.closed","reason":"client_close"})"));
        s.close();
    }
}

struct SessionOmniManualClock : ::testing::Test {
    asio::io_context io{1};
    asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
    pacer::test::scratch_folder dir{"pacer-omni-session"};
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
        omni_state = {};
        t0 = manual_clock::now();
        scripted_connection::server = &server;
        server.on_frame = omni_script;
    }
    void TearDown() override { scripted_connection::server = nullptr; }

    // `chunks` of 200 ms of input, vllm-omni with manual turns and the default listener.
    static session_options options(std::size_t chunks) {
        session_options o;
        o.pcm = pacer::protocol::pcm_input(
            std::make_shared<const std::vector<std::uint8_t>>(chunks * 6400, 1));
        o.endpoint.host = "127.0.0.1";
        o.realtime = pacer::protocol::realtime_protocol::vllm_omni;
        o.chunk = 200ms;
        o.omni.heartbeat = 1h;
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
            if (frame_type(f.frame) == type)
                out.push_back(f.at);
        return out;
    }
};

// The whole flow, and the listener's acks on time: 200 ms and exactly 250 ms into the reply.
TEST_F(SessionOmniManualClock, AcknowledgesAReplyOnTimeAndEndsWithSessionClosed) {
    start(options(3));
    run_until(t0 + 10s);
    ASSERT_TRUE(result);
    ASSERT_FALSE(server.frames.empty());
    EXPECT_EQ(frame_type(server.frames.front().frame), "session.update"); // the first frame
    const auto appends = sent("input_audio_buffer.append");
    ASSERT_EQ(appends.size(), 3u);
    for (std::size_t k = 0; k < appends.size(); ++k)
        EXPECT_EQ(appends[k], t0 + static_cast<int>(k) * 200ms) << "chunk " << k;
    for (const auto& f : server.frames) {
        if (frame_type(f.frame) == "input_audio_buffer.append") {
            EXPECT_EQ(boost::json::parse(f.frame).at("duration_ms"), 200);
        }
    }
    const auto commits = sent("input_audio_buffer.commit");
    ASSERT_EQ(commits.size(), 1u);
    EXPECT_EQ(commits[0], t0 + 600ms); // the input's end
    // The reply came at the commit: acked 200 ms into its playback, and exactly at its end.
    std::vector<std::pair<time_point, std::int64_t>> acks;
    for (const auto& f : server.frames)
        if (frame_type(f.frame) == "playback.ack") {
            const auto ack = boost::json::parse(f.frame);
            EXPECT_EQ(ack.at("item_id"), "item_resp_1");
            acks.emplace_back(f.at, ack.at("played_ms").to_number<std::int64_t>());
        }
    ASSERT_EQ(acks.size(), 2u);
    EXPECT_EQ(acks[0].first, t0 + 800ms);
    EXPECT_EQ(acks[0].second, 200);
    EXPECT_EQ(acks[1].first, t0 + 850ms);
    EXPECT_EQ(acks[1].second, 250);
    // Every journaled event acknowledged (cumulatively), then the close.
    const auto event_acks = sent("session.event_ack");
    EXPECT_FALSE(event_acks.empty());
    const auto close = sent("session.close");
    ASSERT_EQ(close.size(), 1u);
    EXPECT_EQ(close[0], t0 + 850ms);
    EXPECT_TRUE(result->complete) << (result->failures.empty() ? "" : result->failures[0].detail);
    ASSERT_TRUE(result->omni);
    EXPECT_EQ(result->omni->acknowledged, 2u);
    EXPECT_EQ(result->omni->completed, 1u);
    EXPECT_EQ(result->omni->ack_round_trip_s.size(), 2u);
    EXPECT_DOUBLE_EQ(result->omni->audio_received_ms, 250);
    EXPECT_DOUBLE_EQ(result->omni->server_audio_ms, 250);
    EXPECT_TRUE(result->omni->stall.empty());
    EXPECT_EQ(manual_clock::pending(), 0u);
}

// With acks off, nothing is acknowledged and the session still ends once the reply played.
TEST_F(SessionOmniManualClock, SendsNoPlaybackAckWhenAcksAreOff) {
    auto o = options(2);
    o.omni.ack = false;
    start(std::move(o));
    run_until(t0 + 10s);
    ASSERT_TRUE(result);
    EXPECT_TRUE(sent("playback.ack").empty());
    EXPECT_EQ(sent("session.close").size(), 1u);
    EXPECT_TRUE(result->complete);
}

} // namespace

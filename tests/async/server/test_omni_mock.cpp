// native-mock's vllm-omni protocol (src/server/native_omni.cpp, omni_replies.cpp), driven over
// loopback by a scripted WebSocket client: the handshake (autostart=0, ref_audio), every
// event's server_event_seq, event acks and heartbeats, a reply with its cumulative
// audio_duration_ms, the ack_only stall and its release, each playback.ack error, barge-in by
// output_audio_buffer.clear, response.cancel and server VAD, the capacity error and the close.
//
// The mock runs on its own thread; the client blocks, and a watchdog shuts its socket down
// after 30 s (a liveness bound that turns a hang into a failed read, not a timing assertion;
// the replies cut by barge-in here would run for a minute). "Nothing was answered" is shown by
// order, not by waiting: a heartbeat sent after the commit comes back before any reply the
// mock would have queued for it (the capacity model's latency is 0 here).

#include <pacer/core/base64.hpp>
#include <pacer/server/native_mock.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "async/mock_thread.hpp"
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace json = boost::json;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using ms = std::chrono::duration<double, std::milli>;

// A scripted vllm-omni client: sends JSON events, reads the server's, and checks that every
// event carries server_event_seq, one more than the last.
struct omni_client {
    asio::io_context io;
    websocket::stream<tcp::socket> ws{io};
    std::int64_t last_seq = 0;
    std::vector<json::object> seen;

    std::mutex mutex;
    std::condition_variable cv;
    bool finished = false;
    std::thread watchdog;

    omni_client(std::uint16_t port, const std::string& target) {
        ws.next_layer().connect({asio::ip::address_v4::loopback(), port});
        const int fd = ws.next_layer().native_handle();
        watchdog = std::thread([this, fd] {
            std::unique_lock lock(mutex);
            if (!cv.wait_for(lock, std::chrono::seconds(30), [this] { return finished; }))
                ::shutdown(fd, SHUT_RDWR);
        });
        ws.handshake("127.0.0.1", target);
    }
    ~omni_client() {
        {
            const std::lock_guard lock(mutex);
            finished = true;
        }
        cv.notify_all();
        watchdog.join();
    }

    void send(const std::string& event) { ws.write(asio::buffer(event)); }

    json::object next() {
        beast::flat_buffer buffer;
        ws.read(buffer);
        auto v = json::parse(beast::buffers_to_string(buffer.data()));
        auto o = v.as_object();
        const auto* seq = o.if_contains("server_event_seq");
        EXPECT_TRUE(seq && seq->is_int64()) << json::serialize(o);
        if (seq && seq->is_int64()) {
            EXPECT_EQ(seq->as_int64(), last_seq + 1) << json::serialize(o);
            last_seq = seq->as_int64();
        }
        seen.push_back(o);
        return o;
    }

    // Reads until an event of `type`; the events before it are in `skipped`.
    json::object until(std::string_view type, std::vector<json::object>* skipped = nullptr) {
        for (;;) {
            auto o = next();
            if (o.at("type").as_string() == type)
                return o;
            if (skipped != nullptr)
                skipped->push_back(o);
        }
    }

    // `ms` of PCM16 at 16 kHz, every sample `value`, in appends of 200 ms.
    void append(int total_ms, std::int16_t value = 3000) {
        for (int sent = 0; sent < total_ms; sent += 200) {
            const int chunk = std::min(200, total_ms - sent);
            std::string pcm(static_cast<std::size_t>(chunk) * 32, '\0');
            for (std::size_t i = 0; i < pcm.size(); i += 2) {
                pcm[i] = static_cast<char>(value & 0xff);
                pcm[i + 1] = static_cast<char>((value >> 8) & 0xff);
            }
            send(R"({"type":"input_audio_buffer.append","audio":")" + pacer::base64_encode(pcm) +
                 R"(","duration_ms":)" + std::to_string(chunk) + "}");
        }
    }

    // Sends a heartbeat and reads up to its ack: the events the mock wrote before it.
    std::vector<json::object> sync() {
        send(R"({"type":"session.heartbeat"})");
        std::vector<json::object> before;
        until("session.heartbeat_ack", &before);
        return before;
    }

    // The update of the MiniCPM-o preset (ref_audio, ack_only) plus `extra` session fields.
    void open(const std::string& extra = {}) {
        send(R"({"type":"session.update","event_id":"evt_1","session":{"model":"m",)"
             R"("ref_audio":"data:audio/wav;base64,UklGRg==","turn_detection":null)" +
             extra + "}}");
        until("session.created");
        until("session.updated");
    }

    // One reply, read to its response.done: the events of it in order.
    std::vector<json::object> reply() {
        std::vector<json::object> events;
        events.push_back(until("response.created"));
        until("response.done", &events);
        events.push_back(seen.back());
        return events;
    }
};

std::string type(const json::object& o) {
    return std::string(o.at("type").as_string());
}

bool has_type(const std::vector<json::object>& events, std::string_view t) {
    for (const auto& e : events)
        if (e.at("type").as_string() == t)
            return true;
    return false;
}

pacer::server::native_mock_options omni(double reply_ms = 300, double delta_ms = 100) {
    pacer::server::native_mock_options o;
    o.realtime = pacer::protocol::realtime_protocol::vllm_omni;
    o.reply = ms(reply_ms);
    o.reply_delta = ms(delta_ms);
    return o;
}

// GET `target` on the mock: the JSON body.
json::object get(std::uint16_t port, const std::string& target) {
    namespace http = beast::http;
    asio::io_context io;
    tcp::socket socket(io);
    socket.connect({asio::ip::address_v4::loopback(), port});
    http::request<http::string_body> req{http::verb::get, target, 11};
    req.set(http::field::host, "127.0.0.1");
    http::write(socket, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    return json::parse(res.body()).as_object();
}

constexpr const char* duplex = "/v1/realtime?duplex=1&autostart=0&model=m";

TEST(OmniMock, HandshakeSequenceHeartbeatAndClose) {
    auto o = omni();
    o.require_ref_audio = true;
    pacer::testing::mock_thread mock(o);
    omni_client c(mock.mock.port(), duplex);
    c.send(R"({"type":"session.update","session":{"model":"m","ref_audio":)"
           R"("data:audio/wav;base64,UklGRg==","turn_detection":null}})");
    const auto created = c.next();
    ASSERT_EQ(type(created), "session.created");
    const auto& session = created.at("session").as_object();
    EXPECT_TRUE(session.at("id").as_string().starts_with("duplex-"));
    EXPECT_EQ(session.at("id").as_string().size(), 7u + 36u); // duplex-<uuid>
    EXPECT_EQ(session.at("model").as_string(), "m");
    EXPECT_EQ(session.at("capabilities").at("chunk_period_ms").as_int64(), 1000);
    EXPECT_TRUE(session.at("capabilities").at("supports_barge_in").as_bool());
    EXPECT_EQ(session.at("playback_commit_policy").as_string(), "ack_only");
    EXPECT_EQ(type(c.next()), "session.updated");
    c.send(R"({"type":"session.event_ack","server_event_seq":2})");
    c.send(R"({"type":"session.heartbeat"})");
    const auto ack = c.until("session.heartbeat_ack");
    EXPECT_EQ(ack.at("session_id"), session.at("id"));
    c.send(R"({"type":"session.close"})");
    const auto closed = c.until("session.closed");
    EXPECT_EQ(closed.at("reason").as_string(), "client_close");
    EXPECT_EQ(closed.at("session_id"), session.at("id"));
    const auto stats = get(mock.mock.port(), "/stats");
    EXPECT_EQ(stats.at("sessions_started").as_int64(), 1);
}

TEST(OmniMock, SessionWithoutRefAudioIsRefusedWhenRequired) {
    auto o = omni();
    o.require_ref_audio = true;
    pacer::testing::mock_thread mock(o);
    omni_client c(mock.mock.port(), duplex);
    c.send(R"({"type":"session.update","event_id":"evt_9","session":{"model":"m"}})");
    const auto e = c.next();
    ASSERT_EQ(type(e), "error");
    EXPECT_EQ(e.at("error").at("code").as_string(), "ref_audio_required");
    EXPECT_EQ(e.at("error").at("param").as_string(), "ref_audio");
    EXPECT_EQ(e.at("error").at("event_id").as_string(), "evt_9");
    beast::flat_buffer buffer;
    beast::error_code ec;
    c.ws.read(buffer, ec); // the handshake failed: the mock closes
    EXPECT_EQ(ec, websocket::error::closed);
}

TEST(OmniMock, AutostartAndTheDuplexAliasOpenAtOnce) {
    pacer::testing::mock_thread mock(omni());
    omni_client c(mock.mock.port(), "/v1/duplex?model=x");
    const auto created = c.next();
    ASSERT_EQ(type(created), "session.created");
    EXPECT_EQ(created.at("session").at("model").as_string(), "x");
    EXPECT_EQ(type(c.next()), "session.updated");
}

TEST(OmniMock, ReplyCarriesCumulativeAudioDurationAndUnitsAreCounted) {
    pacer::testing::mock_thread mock(omni(250, 100));
    omni_client c(mock.mock.port(), duplex);
    c.open();
    c.append(2200); // units close at 1030 and 2030 ms
    c.send(R"({"type":"input_audio_buffer.commit","event_id":"evt_c"})");
    const auto committed = c.until("input_audio_buffer.committed");
    EXPECT_FALSE(committed.at("event").at("response_create_deferred").as_bool());
    const auto events = c.reply();
    std::vector<std::string> types;
    std::vector<std::int64_t> cumulative;
    for (const auto& e : events) {
        types.push_back(type(e));
        if (type(e) == "response.output_audio.delta") {
            cumulative.push_back(e.at("metadata").at("audio_duration_ms").as_int64());
            const auto pcm = pacer::base64_decode(e.at("delta").as_string());
            ASSERT_TRUE(pcm);
            EXPECT_EQ(e.at("sample_rate_hz").as_int64(), 24000);
            const auto delta_ms = cumulative.size() == 1
                                      ? cumulative.back()
                                      : cumulative.back() - cumulative[cumulative.size() - 2];
            EXPECT_EQ(static_cast<std::int64_t>(pcm->size()), delta_ms * 48);
        }
    }
    EXPECT_EQ(cumulative, (std::vector<std::int64_t>{100, 200, 250}));
    const std::vector<std::string> expected{"response.created",
                                            "response.speak",
                                            "response.output_audio.delta",
                                            "response.output_audio_transcript.delta",
                                            "response.output_audio.delta",
                                            "response.output_audio_transcript.delta",
                                            "response.output_audio.delta",
                                            "response.output_audio_transcript.delta",
                                            "response.output_audio.done",
                                            "response.output_audio_transcript.done",
                                            "response.done"};
    EXPECT_EQ(types, expected);
    EXPECT_EQ(events.back().at("response").at("status").as_string(), "completed");
    EXPECT_EQ(events.front().at("response_id").as_string(), "resp_0");
    c.sync();
    const auto stats = get(mock.mock.port(), "/stats");
    EXPECT_EQ(stats.at("units").as_int64(), 2);
    EXPECT_EQ(stats.at("responses_completed").as_int64(), 1);
}

TEST(OmniMock, BetaNamesAndListenDecisions) {
    auto o = omni(100, 100);
    o.beta_audio_names = true;
    o.listen_every = 2;
    o.ack_only = false;
    pacer::testing::mock_thread mock(o);
    omni_client c(mock.mock.port(), duplex);
    c.open();
    c.append(400);
    c.send(R"({"type":"input_audio_buffer.commit"})");
    const auto events = c.reply();
    EXPECT_TRUE(has_type(events, "response.audio.delta"));
    EXPECT_TRUE(has_type(events, "response.audio_transcript.delta"));
    EXPECT_FALSE(has_type(events, "response.output_audio.delta"));
    c.append(400);
    c.send(R"({"type":"input_audio_buffer.commit"})");
    std::vector<json::object> before;
    const auto listen = c.until("response.listen", &before);
    EXPECT_FALSE(has_type(before, "response.created"));
    EXPECT_EQ(listen.at("response").at("status").as_string(), "listening");
}

TEST(OmniMock, AckOnlyDefersTheNextCommitUntilThePlaybackIsAcknowledged) {
    pacer::testing::mock_thread mock(omni(300, 100));
    omni_client c(mock.mock.port(), duplex);
    c.open(R"(,"playback_commit_policy":"ack_only")");
    c.append(400);
    c.send(R"({"type":"input_audio_buffer.commit"})");
    c.reply(); // resp_0: 300 ms, not acknowledged
    c.append(400);
    c.send(R"({"type":"input_audio_buffer.commit"})");
    const auto committed = c.until("input_audio_buffer.committed");
    EXPECT_TRUE(committed.at("event").at("response_create_deferred").as_bool());
    EXPECT_FALSE(has_type(c.sync(), "response.created")); // stalled
    // Half played: still busy.
    c.send(R"({"type":"playback.ack","response_id":"resp_0","item_id":"item_resp_0",)"
           R"("played_ms":150,"committed_ms":150})");
    const auto half = c.until("playback.acknowledged");
    EXPECT_EQ(half.at("event").at("played_ms").as_int64(), 150);
    EXPECT_FALSE(has_type(c.sync(), "response.created"));
    // Played to the end: the deferred commit is answered.
    c.send(R"({"type":"playback.ack","response_id":"resp_0","played_ms":300})");
    const auto full = c.until("playback.acknowledged");
    EXPECT_EQ(full.at("event").at("item_id").as_string(), "item_resp_0");
    EXPECT_TRUE(full.at("event").at("history_committed").as_bool());
    const auto second = c.reply();
    EXPECT_EQ(second.front().at("response_id").as_string(), "resp_1");
    EXPECT_EQ(second.back().at("response").at("status").as_string(), "completed");
    c.sync();
    const auto stats = get(mock.mock.port(), "/stats");
    EXPECT_EQ(stats.at("deferred_commits").as_int64(), 1);
    EXPECT_EQ(stats.at("playback_acks").as_int64(), 2);
    EXPECT_EQ(stats.at("responses_completed").as_int64(), 2);
}

TEST(OmniMock, PlaybackAckErrors) {
    pacer::testing::mock_thread mock(omni(100, 100));
    omni_client c(mock.mock.port(), duplex);
    c.open(R"(,"playback_commit_policy":"commit_all_on_done")");
    c.append(400);
    c.send(R"({"type":"input_audio_buffer.commit"})");
    c.reply(); // resp_0
    auto error_code = [&](const std::string& ack) {
        c.send(ack);
        const auto e = c.until("error");
        return std::string(e.at("error").at("code").as_string());
    };
    EXPECT_EQ(error_code(R"({"type":"playback.ack","response_id":"resp_0","item_id":)"
                         R"("item_resp_9","played_ms":10})"),
              "playback_item_mismatch");
    EXPECT_EQ(error_code(R"({"type":"playback.ack","response_id":"resp_7","played_ms":10})"),
              "playback_item_not_found");
    // Under commit_all_on_done the next commit is answered at once; resp_0, never acked
    // before it, can no longer be.
    c.append(400);
    c.send(R"({"type":"input_audio_buffer.commit"})");
    const auto committed = c.until("input_audio_buffer.committed");
    EXPECT_FALSE(committed.at("event").at("response_create_deferred").as_bool());
    c.reply(); // resp_1
    EXPECT_EQ(error_code(R"({"type":"playback.ack","response_id":"resp_0","played_ms":100})"),
              "playback_ack_too_late");
    c.sync();
    const auto stats = get(mock.mock.port(), "/stats");
    EXPECT_EQ(stats.at("playback_ack_errors").as_int64(), 3);
    EXPECT_EQ(stats.at("playback_acks").as_int64(), 0);
}

TEST(OmniMock, ClearCancelsTheReplyAndReleasesIt) {
    pacer::testing::mock_thread mock(omni(60'000, 100)); // a minute: still under way
    omni_client c(mock.mock.port(), duplex);
    c.open();
    c.append(400);
    c.send(R"({"type":"input_audio_buffer.commit"})");
    c.until("response.output_audio.delta");
    c.send(R"({"type":"output_audio_buffer.clear"})");
    const auto cleared = c.until("output_audio_buffer.cleared");
    EXPECT_EQ(cleared.at("response_id").as_string(), "resp_0");
    const auto done = c.next();
    ASSERT_EQ(type(done), "response.done");
    EXPECT_EQ(done.at("response").at("status").as_string(), "cancelled");
    EXPECT_EQ(done.at("response").at("status_details").at("reason").as_string(), "barge_in");
    // Cleared audio keeps nothing busy, even unacknowledged under ack_only.
    c.append(400);
    c.send(R"({"type":"input_audio_buffer.commit"})");
    const auto committed = c.until("input_audio_buffer.committed");
    EXPECT_FALSE(committed.at("event").at("response_create_deferred").as_bool());
    EXPECT_EQ(c.until("response.created").at("response_id").as_string(), "resp_1");
}

TEST(OmniMock, ResponseCancel) {
    pacer::testing::mock_thread mock(omni(60'000, 100));
    omni_client c(mock.mock.port(), duplex);
    c.open();
    c.append(400);
    c.send(R"({"type":"input_audio_buffer.commit"})");
    c.until("response.output_audio.delta");
    c.send(R"({"type":"response.cancel","response_id":"resp_0"})");
    std::vector<json::object> before;
    const auto done = c.until("response.done", &before);
    EXPECT_FALSE(has_type(before, "output_audio_buffer.cleared"));
    EXPECT_EQ(done.at("response").at("status_details").at("reason").as_string(),
              "client_cancelled");
    c.send(R"({"type":"response.cancel","event_id":"evt_x"})");
    const auto e = c.until("error");
    EXPECT_EQ(e.at("error").at("code").as_string(), "response_not_active");
    c.sync();
    EXPECT_EQ(get(mock.mock.port(), "/stats").at("responses_cancelled").as_int64(), 1);
}

TEST(OmniMock, ServerVadSpeechOverAReplyCancelsIt) {
    auto o = omni(60'000, 100);
    o.vad_silence = ms(200);
    pacer::testing::mock_thread mock(o);
    omni_client c(mock.mock.port(), duplex);
    c.open(R"(,"turn_detection":{"type":"server_vad","silence_duration_ms":200})");
    c.append(600);
    c.append(400, 0); // silence: speech stops, the mock commits and answers
    c.until("input_audio_buffer.speech_stopped");
    c.until("input_audio_buffer.committed");
    c.until("response.output_audio.delta");
    c.append(200); // speech over the reply
    c.until("input_audio_buffer.speech_started");
    const auto decision = c.until("overlap.decision");
    EXPECT_EQ(decision.at("reason").as_string(), "turn_detected");
    EXPECT_EQ(decision.at("action").as_string(), "barge_in");
    c.until("output_audio_buffer.cleared");
    const auto done = c.until("response.done");
    EXPECT_EQ(done.at("response").at("status").as_string(), "cancelled");
    EXPECT_EQ(done.at("response").at("status_details").at("reason").as_string(), "turn_detected");
}

TEST(OmniMock, ModelTurnsAnswerTheEndOfSpeechWithoutACommit) {
    auto o = omni(100, 100);
    o.model_turns = true;
    o.vad_silence = ms(200);
    pacer::testing::mock_thread mock(o);
    omni_client c(mock.mock.port(), duplex);
    c.open(); // turn_detection null
    c.append(600);
    c.append(400, 0); // the speech ends: the model answers on its own
    std::vector<json::object> before;
    const auto created = c.until("response.created", &before);
    EXPECT_EQ(created.at("response_id").as_string(), "resp_0");
    EXPECT_FALSE(has_type(before, "input_audio_buffer.speech_stopped")); // no VAD events
    EXPECT_FALSE(has_type(before, "input_audio_buffer.committed"));
    c.until("response.done");
    // A commit is recorded, not answered: the model has decided already.
    c.append(200, 0);
    c.send(R"({"type":"input_audio_buffer.commit"})");
    c.until("input_audio_buffer.committed");
    EXPECT_FALSE(has_type(c.sync(), "response.created"));
}

TEST(OmniMock, OverCapacityTheSessionIsToldResourceExhausted) {
    auto o = omni();
    o.max_sessions = 1;
    pacer::testing::mock_thread mock(o);
    omni_client first(mock.mock.port(), "/v1/realtime?duplex=1");
    EXPECT_EQ(type(first.next()), "session.created");
    omni_client second(mock.mock.port(), duplex);
    const auto e = second.next();
    ASSERT_EQ(type(e), "error");
    EXPECT_EQ(e.at("error").at("code").as_string(), "resource_exhausted");
    EXPECT_EQ(e.at("error").at("type").as_string(), "rate_limit_error");
    EXPECT_EQ(e.at("error").at("message").as_string(),
              "duplex_session_capacity_exhausted: limit=1");
    beast::flat_buffer buffer;
    beast::error_code ec;
    second.ws.read(buffer, ec);
    EXPECT_EQ(ec, websocket::error::closed);
    first.sync(); // the first session is unaffected
}

} // namespace

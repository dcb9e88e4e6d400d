// Unit tests of the sans-io machine of vLLM-Omni's full-duplex protocol (docs/protocols.md):
// each test drives `omni_session` by hand with a manual clock and scripted events, and reads
// the events from frames as the server sends them.

#include <pacer/protocol/omni_events.hpp>
#include <pacer/protocol/omni_session.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace {

using namespace std::chrono_literals;
using pacer::duration;
using pacer::time_point;
using pacer::protocol::classify_omni_event;
using pacer::protocol::omni_action;
using pacer::protocol::omni_event;
using pacer::protocol::omni_event_kind;
using pacer::protocol::omni_session;
using pacer::protocol::omni_session_options;
using pacer::protocol::omni_turns;
using pacer::protocol::read_omni_event;
using omni_kind = omni_action::kind;
using ev = omni_event_kind;

constexpr std::size_t chunk_bytes = 6400; // 200 ms of 16 kHz PCM16

struct omni_clock {
    time_point now = time_point{} + 1000s;
    void advance(duration d) { now += d; }
};

omni_session_options options(std::size_t chunks, omni_turns t = omni_turns::manual) {
    omni_session_options o;
    o.turns = t;
    o.pcm_bytes = chunks * chunk_bytes;
    o.heartbeat = 3600s; // out of the way unless a test looks at it
    return o;
}

omni_event event(ev k, std::string response = {}, std::int64_t seq = -1) {
    omni_event e;
    e.kind = k;
    e.response_id = std::move(response);
    if (seq >= 0)
        e.seq = seq;
    return e;
}

omni_event audio(std::string response, duration d) {
    auto e = event(ev::audio_delta, std::move(response));
    e.audio = d;
    return e;
}

omni_event done(std::string response, std::string status = "completed") {
    auto e = event(ev::response_done, std::move(response));
    e.status = std::move(status);
    return e;
}

omni_event error(std::string code) {
    auto e = event(ev::error);
    e.code = std::move(code);
    return e;
}

// The handshake: session.update goes first, the session waits for created and updated.
void open(omni_session& s, omni_clock& clock) {
    ASSERT_EQ(s.next(clock.now).what, omni_kind::send_update);
    EXPECT_EQ(s.next(clock.now).what, omni_kind::wait_event);
    s.on_event(event(ev::session_created), clock.now);
    EXPECT_EQ(s.next(clock.now).what, omni_kind::wait_event); // until session.updated
    s.on_event(event(ev::session_updated), clock.now);
}

// Streams every append on its deadline, through turn ends and commits, until the input's end
// (with manual turns its commit has then been returned); returns the origin.
time_point stream_all(omni_session& s, omni_clock& clock) {
    while (!s.input_end()) {
        const auto a = s.next(clock.now);
        if (a.what == omni_kind::send_append)
            s.append_sent(clock.now);
        else if (a.what == omni_kind::wait_event && a.at != time_point{})
            clock.now = a.at;
        else if (a.what != omni_kind::turn_end && a.what != omni_kind::send_commit) {
            ADD_FAILURE() << "unexpected step " << static_cast<int>(a.what);
            break;
        }
    }
    return s.origin().value_or(time_point{});
}

TEST(OmniEvents, ClassifiesGaAndBetaNames) {
    EXPECT_EQ(classify_omni_event("response.output_audio.delta"), ev::audio_delta);
    EXPECT_EQ(classify_omni_event("response.audio.delta"), ev::audio_delta);
    EXPECT_EQ(classify_omni_event("response.output_audio_transcript.delta"), ev::transcript_delta);
    EXPECT_EQ(classify_omni_event("response.audio_transcript.delta"), ev::transcript_delta);
    EXPECT_EQ(classify_omni_event("response.speak"), ev::speak);
    EXPECT_EQ(classify_omni_event("response.listen"), ev::listen);
    EXPECT_EQ(classify_omni_event("playback.acknowledged"), ev::playback_acknowledged);
    EXPECT_EQ(classify_omni_event("output_audio_buffer.cleared"), ev::output_cleared);
    EXPECT_EQ(classify_omni_event("session.heartbeat_ack"), ev::heartbeat_ack);
    EXPECT_EQ(classify_omni_event("session.closed"), ev::session_closed);
    EXPECT_EQ(classify_omni_event("input_audio_buffer.committed"), ev::committed);
    EXPECT_EQ(classify_omni_event("rate_limits.updated"), ev::other);
}

TEST(OmniEvents, ReadsWhatTheMachineNeedsFromEachFrame) {
    // An audio delta: its seq and the server's cumulative duration by key, its size given.
    auto e = read_omni_event("response.output_audio.delta",
                             R"({"type":"response.output_audio.delta","response_id":"r1",)"
                             R"("delta":"AAAA","metadata":{"audio_duration_ms": 1000},)"
                             R"("server_event_seq":17})",
                             "r1", 48000);
    EXPECT_EQ(e.kind, ev::audio_delta);
    EXPECT_EQ(e.seq, 17);
    EXPECT_EQ(e.audio, 1s); // 48,000 bytes at 24 kHz PCM16
    EXPECT_EQ(e.audio_duration_ms, 1000.0);
    e = read_omni_event("input_audio_buffer.committed",
                        R"({"type":"input_audio_buffer.committed","server_event_seq":3,)"
                        R"("event":{"type":"input.committed","response_create_deferred":true}})",
                        "", 0);
    EXPECT_TRUE(e.deferred);
    EXPECT_EQ(e.seq, 3);
    e = read_omni_event("response.done",
                        R"({"type":"response.done","response":{"id":"r2","status":"cancelled",)"
                        R"("status_details":{"type":"cancelled","reason":"barge_in"}}})",
                        "", 0);
    EXPECT_EQ(e.response_id, "r2");
    EXPECT_EQ(e.status, "cancelled");
    EXPECT_EQ(e.reason, "barge_in");
    e = read_omni_event("response.listen",
                        R"({"type":"response.listen","response":{"status":"listening",)"
                        R"("metadata":{"reason":"model_listen"}}})",
                        "", 0);
    EXPECT_EQ(e.reason, "model_listen");
    EXPECT_TRUE(e.response_id.empty());
    e = read_omni_event("error",
                        R"({"type":"error","error":{"type":"rate_limit_error",)"
                        R"("code":"resource_exhausted","message":"limit=4"}})",
                        "", 0);
    EXPECT_EQ(e.code, "resource_exhausted");
    e = read_omni_event(
        "error", R"({"type":"error","error":"gone","code":"session_resume_expired"})", "", 0);
    EXPECT_EQ(e.code, "session_resume_expired"); // the flat handshake shape
    e = read_omni_event("output_audio_buffer.cleared",
                        R"({"type":"output_audio_buffer.cleared","response_id":"r3"})", "r3", 0);
    EXPECT_EQ(e.kind, ev::output_cleared);
    EXPECT_EQ(e.response_id, "r3");
}

TEST(OmniEvents, BuildsTheClientEvents) {
    const auto update = boost::json::parse(pacer::protocol::omni_session_update(
        "e1", {"m", omni_turns::manual, "data:audio/wav;base64,UklG", ""}));
    const auto& session = update.at("session");
    EXPECT_EQ(update.at("type"), "session.update");
    EXPECT_EQ(session.at("ref_audio"), "data:audio/wav;base64,UklG");
    EXPECT_TRUE(session.at("turn_detection").is_null());
    EXPECT_EQ(session.at("playback_commit_policy"), "ack_only");
    EXPECT_EQ(session.at("audio").at("output").at("sample_rate_hz"), 24000);
    const auto vad = boost::json::parse(
        pacer::protocol::omni_session_update("e1", {"m", omni_turns::server_vad, "", ""}));
    EXPECT_EQ(vad.at("session").at("turn_detection").at("type"), "server_vad");
    std::string frame;
    pacer::protocol::omni_append(frame, "e2", "QUJD", 200);
    const auto append = boost::json::parse(frame);
    EXPECT_EQ(append.at("duration_ms"), 200);
    EXPECT_EQ(append.at("audio"), "QUJD");
    const auto ack = boost::json::parse(pacer::protocol::omni_playback_ack("e3", "r1", 1850));
    EXPECT_EQ(ack.at("item_id"), "item_r1");
    EXPECT_EQ(ack.at("played_ms"), 1850);
    EXPECT_EQ(ack.at("committed_ms"), 1850);
    EXPECT_EQ(boost::json::parse(pacer::protocol::omni_event_ack(48)).at("server_event_seq"), 48);
    EXPECT_EQ(pacer::protocol::wav_data_url("RIFF"), "data:audio/wav;base64,UklGRg==");
}

TEST(OmniSession, SendsSessionUpdateFirstAndAcknowledgesEventsCumulatively) {
    omni_clock clock;
    omni_session s(options(2));
    open(s, clock);
    s.on_event(event(ev::other, "", 1), clock.now);
    s.on_event(event(ev::heartbeat_ack, "", 2), clock.now);
    auto a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::send_event_ack);
    EXPECT_EQ(a.event_seq, 2);                                 // one ack up to the highest seq seen
    EXPECT_EQ(s.next(clock.now).what, omni_kind::send_append); // packet 0, unanchored
    EXPECT_EQ(s.counts().event_acks, 1u);
}

TEST(OmniSession, AppendsOnTheChunkGridAndCommitsAtTheEndWithManualTurns) {
    omni_clock clock;
    omni_session s(options(3));
    open(s, clock);
    EXPECT_EQ(s.expected_appends(), 3u);
    auto a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::send_append);
    s.append_sent(clock.now);
    const time_point origin = *s.origin();
    a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::wait_event);
    EXPECT_EQ(a.at, origin + 200ms); // the 200 ms grid
    clock.now = origin + 230ms;      // woken late: sent at once, the grid unmoved
    a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::send_append);
    EXPECT_EQ(a.at, origin + 200ms);
    s.append_sent(clock.now);
    EXPECT_EQ(s.next(clock.now).at, origin + 400ms);
    clock.now = origin + 400ms;
    ASSERT_EQ(s.next(clock.now).what, omni_kind::send_append);
    s.append_sent(clock.now);
    a = s.next(clock.now);
    EXPECT_EQ(a.at, origin + 600ms); // the end of input
    clock.now = a.at;
    EXPECT_EQ(s.next(clock.now).what, omni_kind::send_commit);
    EXPECT_EQ(s.counts().commits, 1u);
    EXPECT_EQ(s.next(clock.now).what, omni_kind::wait_event); // for the reply, however long
}

// The listener: a reply's audio plays from its arrival; played audio is acknowledged every
// 200 ms and once exactly at the end; the answer's round trip is measured.
TEST(OmniSession, TheListenerAcknowledgesPlayedAudioOnTimeAndExactlyAtTheEnd) {
    omni_clock clock;
    omni_session s(options(1));
    open(s, clock);
    stream_all(s, clock);
    ASSERT_EQ(s.unanswered(), 1u);
    s.on_event(event(ev::response_created, "r1"), clock.now);
    s.on_event(event(ev::speak, "r1"), clock.now);
    const time_point t0 = clock.now;
    s.on_event(audio("r1", 450ms), t0);
    s.on_event(event(ev::transcript_delta, "r1"), t0);
    auto a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::wait_event);
    EXPECT_EQ(a.at, t0 + 200ms); // the first ack is due 200 ms into the playback
    clock.now = a.at;
    a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::send_playback_ack);
    EXPECT_EQ(a.response_id, "r1");
    EXPECT_EQ(a.played_ms, 200);
    s.playback_ack_sent(clock.now);
    clock.advance(30ms);
    s.on_event(event(ev::playback_acknowledged), clock.now);
    EXPECT_EQ(s.next(clock.now).at, t0 + 400ms);
    clock.now = t0 + 400ms;
    a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::send_playback_ack);
    EXPECT_EQ(a.played_ms, 400);
    // The response is done; its last 50 ms still plays: the final ack waits for its end.
    s.on_event(done("r1"), clock.now);
    a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::wait_event);
    EXPECT_EQ(a.at, t0 + 450ms);
    clock.now = a.at;
    a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::send_playback_ack);
    EXPECT_EQ(a.played_ms, 450); // exactly the whole
    EXPECT_EQ(s.next(clock.now).what, omni_kind::send_close);
    EXPECT_TRUE(s.finished());
    s.on_event(event(ev::session_closed), clock.now);
    EXPECT_EQ(s.next(clock.now).what, omni_kind::done);
    EXPECT_TRUE(s.closed_by_server());
    ASSERT_EQ(s.counts().ack_round_trip_s.size(), 1u);
    EXPECT_NEAR(s.counts().ack_round_trip_s[0], 0.030, 1e-9);
    EXPECT_EQ(s.counts().playback_acks, 3u);
    EXPECT_EQ(s.counts().completed, 1u);
    EXPECT_TRUE(s.stall().empty());
}

TEST(OmniSession, DeltasPlaySerializedOneAfterTheOther) {
    omni_clock clock;
    omni_session s(options(1));
    open(s, clock);
    stream_all(s, clock);
    s.on_event(event(ev::response_created, "r1"), clock.now);
    const time_point t0 = clock.now;
    s.on_event(audio("r1", 300ms), t0);
    s.on_event(audio("r1", 300ms), t0 + 100ms); // queued behind the first: plays 300..600
    s.on_event(done("r1"), t0 + 100ms);
    clock.now = t0 + 500ms;
    auto a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::send_playback_ack); // overdue since 200 ms: what has played now
    EXPECT_EQ(a.played_ms, 500);
    a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::wait_event);
    EXPECT_EQ(a.at, t0 + 600ms); // the end of the queue, not 100 + 300 + 300 from arrival
}

TEST(OmniSession, OutputAudioBufferClearedDropsTheUnplayedTail) {
    omni_clock clock;
    omni_session s(options(1));
    open(s, clock);
    stream_all(s, clock);
    s.on_event(event(ev::response_created, "r1"), clock.now);
    const time_point t0 = clock.now;
    s.on_event(audio("r1", 1s), t0);
    s.on_event(event(ev::output_cleared, "r1"), t0 + 150ms);
    s.on_event(audio("r1", 200ms), t0 + 160ms); // after the clear: never played
    s.on_event(done("r1", "cancelled"), t0 + 170ms);
    clock.now = t0 + 170ms;
    auto a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::send_playback_ack);
    EXPECT_EQ(a.played_ms, 150); // what had played when the server cleared it
    EXPECT_EQ(s.counts().cancelled, 1u);
    EXPECT_EQ(s.counts().cleared, 1u);
    EXPECT_DOUBLE_EQ(s.counts().dropped_ms, 850 + 200);
}

TEST(OmniSession, EachPlaybackAckErrorIsCountedAndTolerated) {
    for (const char* code :
         {"playback_item_mismatch", "playback_item_not_found", "playback_ack_too_late"}) {
        omni_clock clock;
        omni_session s(options(1));
        open(s, clock);
        stream_all(s, clock);
        s.playback_ack_sent(clock.now);
        s.on_event(error(code), clock.now);
        EXPECT_FALSE(s.aborted()) << code;
        EXPECT_EQ(s.counts().ack_errors, 1u) << code;
        EXPECT_EQ(s.next(clock.now).what, omni_kind::wait_event) << code; // still for the reply
    }
}

TEST(OmniSession, ResourceExhaustedEndsTheSession) {
    omni_clock clock;
    omni_session s(options(3));
    ASSERT_EQ(s.next(clock.now).what, omni_kind::send_update);
    s.on_event(error("resource_exhausted"), clock.now);
    EXPECT_TRUE(s.aborted());
    EXPECT_EQ(s.next(clock.now).what, omni_kind::close);
    EXPECT_EQ(s.next(clock.now).what, omni_kind::done);
    EXPECT_FALSE(s.finished());
}

TEST(OmniSession, AListenDecisionAnswersACommit) {
    omni_clock clock;
    omni_session s(options(1));
    open(s, clock);
    stream_all(s, clock);
    EXPECT_EQ(s.unanswered(), 1u);
    s.on_event(event(ev::listen), clock.now);
    EXPECT_EQ(s.counts().listens, 1u);
    EXPECT_EQ(s.next(clock.now).what, omni_kind::send_close);
}

// Without acks the server (ack_only) defers the second turn's reply for ever: the session ends
// after the quiet period and reports the server's stall with its reason.
TEST(OmniSession, WithoutAcksTheSecondTurnIsDeferredAndReportedAsTheServersStall) {
    omni_clock clock;
    auto o = options(0);
    o.turn_plan = {{chunk_bytes, 400ms, {}}, {chunk_bytes, {}, {}}};
    o.ack = false;
    o.quiet = 2s;
    omni_session s(o);
    open(s, clock);
    // Turn 0's chunk, its end, its commit.
    ASSERT_EQ(s.next(clock.now).what, omni_kind::send_append);
    s.append_sent(clock.now);
    const time_point origin = *s.origin();
    clock.now = origin + 200ms;
    auto a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::turn_end);
    EXPECT_EQ(s.next(clock.now).what, omni_kind::send_commit);
    s.on_event(event(ev::response_created, "r1"), clock.now);
    s.on_event(audio("r1", 300ms), clock.now);
    s.on_event(done("r1"), clock.now);
    stream_all(s, clock); // the pause's silence and turn 1; its commit at the input's end
    EXPECT_EQ(s.counts().commits, 2u);
    auto deferred = event(ev::committed);
    deferred.deferred = true;
    s.on_event(deferred, clock.now);
    const time_point last = clock.now;
    a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::wait_event);
    EXPECT_EQ(a.at, last + 2s);
    clock.now = a.at;
    EXPECT_EQ(s.next(clock.now).what, omni_kind::send_close);
    EXPECT_TRUE(s.finished());
    EXPECT_EQ(s.counts().playback_acks, 0u);
    EXPECT_EQ(s.counts().deferred, 1u);
    EXPECT_EQ(s.unanswered(), 1u);
    EXPECT_EQ(s.stall(), "response_create_deferred");
}

TEST(OmniSession, AHeartbeatGoesOutOnItsOwnAbsoluteSchedule) {
    omni_clock clock;
    auto o = options(100);
    o.heartbeat = 1s;
    omni_session s(o);
    ASSERT_EQ(s.next(clock.now).what, omni_kind::send_update);
    const time_point created = clock.now;
    s.on_event(event(ev::session_created), clock.now);
    s.on_event(event(ev::session_updated), clock.now);
    ASSERT_EQ(s.next(clock.now).what, omni_kind::send_append);
    s.append_sent(clock.now);
    clock.now = created + 1s + 50ms; // a late wake: the next is still due at +2 s
    int heartbeats = 0;
    for (int i = 0; i < 8; ++i) {
        const auto a = s.next(clock.now);
        if (a.what == omni_kind::send_heartbeat)
            ++heartbeats;
        else if (a.what == omni_kind::send_append)
            s.append_sent(clock.now);
    }
    EXPECT_EQ(heartbeats, 1);
    const auto a = s.next(clock.now);
    ASSERT_EQ(a.what, omni_kind::wait_event);
    EXPECT_LE(a.at, created + 2s);
}

TEST(OmniSession, AnotherProtocolsOpeningEndsTheSessionAtOnce) {
    omni_clock clock;
    omni_session s(options(2));
    ASSERT_EQ(s.next(clock.now).what, omni_kind::send_update);
    pacer::protocol::opening_shape native;
    native.session_object = native.sglang = true;
    EXPECT_TRUE(s.check_opening("session.created", native).has_value());
    EXPECT_EQ(s.next(clock.now).what, omni_kind::close);
    // An openai-realtime-shaped session.created is vllm-omni's own shape.
    omni_session t(options(2));
    pacer::protocol::opening_shape openai;
    openai.session_object = true;
    EXPECT_FALSE(t.check_opening("session.created", openai).has_value());
}

} // namespace

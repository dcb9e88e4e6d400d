// Unit tests of the sans-io machine of the openai-realtime and vllm-realtime protocols
// (docs/protocols.md): each test drives `realtime_session` by hand with a manual clock.

#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/pcm_input.hpp>
#include <pacer/protocol/realtime_session.hpp>

#include <gtest/gtest.h>

#include "unit/manual_timer.hpp"
#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace {

using namespace std::chrono_literals;
using pacer::time_point;
using pacer::protocol::classify_realtime_event;
using pacer::protocol::realtime_action;
using pacer::protocol::realtime_event;
using pacer::protocol::realtime_protocol;
using pacer::protocol::realtime_session;
using pacer::protocol::realtime_session_options;
using pacer::protocol::realtime_turns;
using pacer::test::manual_clock;
using rt_kind = realtime_action::kind;

realtime_session_options options(realtime_protocol p, realtime_turns t, std::size_t packets) {
    realtime_session_options o;
    o.protocol = p;
    o.turns = t;
    o.pcm_bytes = packets * pacer::protocol::packet_bytes;
    return o;
}

// Streams every packet on the grid, each sent at its deadline; returns the origin.
time_point stream_all(realtime_session& s) {
    const std::size_t n = s.expected_appends();
    for (std::size_t i = 0; i < n; ++i) {
        auto a = s.next(manual_clock::now());
        if (a.what == rt_kind::wait_until) {
            EXPECT_EQ(a.seq, i);
            manual_clock::set(a.at);
            a = s.next(manual_clock::now());
        }
        EXPECT_EQ(a.what, rt_kind::send_append);
        EXPECT_EQ(a.seq, i);
        s.append_sent(manual_clock::now());
    }
    return *s.origin();
}

TEST(RealtimeEvents, ClassifiesGaAndBetaNames) {
    EXPECT_EQ(classify_realtime_event("response.output_audio.delta"), realtime_event::audio_delta);
    EXPECT_EQ(classify_realtime_event("response.audio.delta"), realtime_event::audio_delta);
    EXPECT_EQ(classify_realtime_event("response.output_audio_transcript.delta"),
              realtime_event::transcript_delta);
    EXPECT_EQ(classify_realtime_event("response.audio_transcript.delta"),
              realtime_event::transcript_delta);
    EXPECT_EQ(classify_realtime_event("response.done"), realtime_event::response_done);
    EXPECT_EQ(classify_realtime_event("rate_limits.updated"), realtime_event::rate_limits_updated);
    EXPECT_EQ(classify_realtime_event("transcription.delta"), realtime_event::transcription_delta);
    EXPECT_EQ(classify_realtime_event("transcription.done"), realtime_event::transcription_done);
    EXPECT_EQ(classify_realtime_event("input_audio_buffer.speech_stopped"),
              realtime_event::speech_stopped);
    EXPECT_EQ(classify_realtime_event("error"), realtime_event::error);
    EXPECT_EQ(classify_realtime_event("response.created"), realtime_event::other);
}

TEST(RealtimeSession, OpenAiManualCommitsAndCreatesAResponseThenClosesOnResponseDone) {
    manual_clock::reset();
    realtime_session s(options(realtime_protocol::openai, realtime_turns::manual, 3));
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::wait_event);
    s.on_event(realtime_event::session_created, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_update);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::wait_event); // until session.updated
    s.on_event(realtime_event::session_updated, manual_clock::now());
    const time_point origin = stream_all(s);
    EXPECT_EQ(s.appends_sent(), 3u);

    // Not before the grid's end: 3 x 80 ms after packet 0.
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, rt_kind::wait_until);
    EXPECT_EQ(a.at, origin + 240ms);
    manual_clock::set(a.at);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_commit);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_response);
    EXPECT_EQ(s.utterance_end(), origin + 240ms);

    manual_clock::jump(100ms);
    s.on_event(realtime_event::audio_delta, manual_clock::now());
    s.on_event(realtime_event::rate_limits_updated, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what,
              rt_kind::wait_event); // manual waits for response.done
    manual_clock::jump(10s);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::wait_event); // however long
    s.on_event(realtime_event::response_done, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::close);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::done);
    EXPECT_EQ(s.first_audio_at(), origin + 340ms);
}

TEST(RealtimeSession, OpenAiServerVadSendsNoCommitAndClosesAfterAQuietPeriod) {
    manual_clock::reset();
    auto o = options(realtime_protocol::openai, realtime_turns::server_vad, 2);
    o.quiet = 1s;
    realtime_session s(o);
    s.on_event(realtime_event::session_created, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_update);
    s.on_event(realtime_event::session_updated, manual_clock::now());
    const time_point origin = stream_all(s);
    manual_clock::set(origin + 160ms);
    s.on_event(realtime_event::speech_stopped, manual_clock::now());
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, rt_kind::wait_event); // no commit, no response.create: an event or the end
    EXPECT_EQ(a.at, origin + 160ms + 1s);

    // An event restarts the quiet period.
    manual_clock::jump(500ms);
    s.on_event(realtime_event::transcript_delta, manual_clock::now());
    a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, rt_kind::wait_event);
    EXPECT_EQ(a.at, manual_clock::now() + 1s);
    manual_clock::set(a.at);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::close);
    EXPECT_EQ(s.utterance_end(), origin + 160ms); // speech_stopped
    EXPECT_EQ(s.first_transcript_at(), origin + 660ms);
}

TEST(RealtimeSession, OpenAiServerVadClosesAtResponseDoneAfterTheInput) {
    manual_clock::reset();
    realtime_session s(options(realtime_protocol::openai, realtime_turns::server_vad, 2));
    s.on_event(realtime_event::session_created, manual_clock::now());
    s.next(manual_clock::now());
    s.on_event(realtime_event::session_updated, manual_clock::now());
    stream_all(s);
    // A response.done during the input (an earlier turn) does not end the session.
    s.on_event(realtime_event::response_done, manual_clock::now());
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, rt_kind::wait_until);
    manual_clock::set(a.at); // the input's end
    // The quiet period: the driver waits for an event (a response.done wakes it at once, so
    // the session ends there, not at the period's end).
    a = s.next(manual_clock::now());
    EXPECT_EQ(a.what, rt_kind::wait_event);
    EXPECT_GT(a.at, manual_clock::now());
    manual_clock::jump(50ms);
    s.on_event(realtime_event::response_done, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::close);
}

TEST(RealtimeSession, VllmStartsWithoutSessionUpdatedAndClosesOnTranscriptionDone) {
    manual_clock::reset();
    realtime_session s(options(realtime_protocol::vllm, realtime_turns::server_vad, 2));
    s.on_event(realtime_event::session_created, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_update);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_start); // commit final:false
    const time_point origin = stream_all(s);
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, rt_kind::wait_until);
    manual_clock::set(a.at);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_commit); // final:true
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::wait_event);
    manual_clock::jump(30ms);
    s.on_event(realtime_event::transcription_delta, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::wait_event);
    manual_clock::jump(70ms);
    s.on_event(realtime_event::transcription_done, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::close);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::done);
    EXPECT_EQ(s.utterance_end(), origin + 160ms);
    EXPECT_EQ(s.first_transcript_at(), origin + 190ms);
    EXPECT_EQ(s.final_transcript_at(), origin + 260ms);
    EXPECT_TRUE(s.finished());
}

TEST(RealtimeSession, AnErrorStopsStreamingAndCloses) {
    manual_clock::reset();
    realtime_session s(options(realtime_protocol::openai, realtime_turns::manual, 5));
    s.on_event(realtime_event::session_created, manual_clock::now());
    s.next(manual_clock::now());
    s.on_event(realtime_event::session_updated, manual_clock::now());
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, rt_kind::send_append);
    s.append_sent(manual_clock::now());
    s.on_event(realtime_event::error, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::close);
    EXPECT_EQ(s.appends_sent(), 1u);
    EXPECT_FALSE(s.finished());
}

// The wrong --protocol: the first event is another protocol's (protocol/opening.hpp), and the
// session ends at once (the next step closes the socket), before anything is sent.
TEST(RealtimeSession, AnotherProtocolsOpeningEndsTheSessionAtOnce) {
    using pacer::protocol::describe_opening;
    const auto native = describe_opening(
        R"({"type":"session.created","session":{"id":"s","sglang":{"granted":null}}})");
    const auto openai =
        describe_opening(R"({"type":"session.created","session":{"id":"s","type":"realtime"}})");
    const auto vllm = describe_opening(R"({"type":"session.created","id":"s","created":0})");
    struct expectation {
        realtime_protocol client;
        pacer::protocol::opening_shape server;
        const char* message;
    };
    const expectation cases[] = {
        {realtime_protocol::openai, vllm,
         "server's first event was 'session.created' in vllm-realtime's shape (a top-level 'id', "
         "no 'session' object), not the openai-realtime protocol's: is --protocol right?"},
        {realtime_protocol::openai, native,
         "server's first event was 'session.created' in native's shape (with 'session.sglang'), "
         "not the openai-realtime protocol's: is --protocol right?"},
        {realtime_protocol::vllm, openai,
         "server's first event was 'session.created' in openai-realtime's shape (a 'session' "
         "object without 'sglang'), not the vllm-realtime protocol's: is --protocol right?"},
        {realtime_protocol::vllm, native,
         "server's first event was 'session.created' in native's shape (with 'session.sglang'), "
         "not the vllm-realtime protocol's: is --protocol right?"},
    };
    for (const auto& c : cases) {
        manual_clock::reset();
        realtime_session s(options(c.client, realtime_turns::manual, 2));
        EXPECT_TRUE(s.checks_opening());
        EXPECT_EQ(s.check_opening("session.created", c.server),
                  std::optional<std::string>(c.message));
        EXPECT_TRUE(s.wrong_protocol());
        EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::close);
        EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::done);
        EXPECT_EQ(s.appends_sent(), 0u);
    }
    // Each protocol's own opening passes, and only the first event is checked.
    for (const auto& [client, own] :
         {std::pair{realtime_protocol::openai, openai}, std::pair{realtime_protocol::vllm, vllm}}) {
        realtime_session s(options(client, realtime_turns::manual, 2));
        EXPECT_EQ(s.check_opening("session.created", own), std::nullopt);
        EXPECT_FALSE(s.checks_opening());
        EXPECT_FALSE(s.wrong_protocol());
    }
    realtime_session s(options(realtime_protocol::openai, realtime_turns::manual, 2));
    EXPECT_EQ(s.check_opening("response.done", {}),
              std::optional<std::string>("server's first event was 'response.done', not the "
                                         "openai-realtime protocol's 'session.created': is "
                                         "--protocol right?"));
}

TEST(RealtimeSession, TheReceiverEndingEndsTheDriver) {
    manual_clock::reset();
    realtime_session s(options(realtime_protocol::vllm, realtime_turns::server_vad, 2));
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::wait_event);
    s.on_receiver_ended();
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::done);
}

TEST(RealtimeSession, AGivenOriginAnchorsTheGrid) {
    manual_clock::reset();
    auto o = options(realtime_protocol::openai, realtime_turns::manual, 2);
    o.origin = manual_clock::now() + 1s;
    realtime_session s(o);
    s.on_event(realtime_event::session_created, manual_clock::now());
    s.next(manual_clock::now());
    s.on_event(realtime_event::session_updated, manual_clock::now());
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, rt_kind::wait_until);
    EXPECT_EQ(a.at, *o.origin);
}

TEST(RealtimeSession, OpenAiJoinsTheGateOnlyAfterSessionUpdatedAndStreamsFromItsStart) {
    manual_clock::reset();
    auto o = options(realtime_protocol::openai, realtime_turns::manual, 2);
    o.gate = true;
    o.start_offset = 40ms;
    realtime_session s(o);
    s.on_event(realtime_event::session_created, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_update);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::wait_event); // not ready before the ack
    s.on_event(realtime_event::session_updated, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::join_gate);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::wait_event); // the gate has not opened
    const time_point start = manual_clock::now() + 200ms;
    s.gate_started(start);
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, rt_kind::wait_until);
    EXPECT_EQ(a.at, start + 40ms); // packet 0 on the common start + this session's offset
    EXPECT_EQ(s.given_origin(), start + 40ms);
    manual_clock::set(a.at);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_append);
}

TEST(RealtimeSession, VllmJoinsTheGateAfterItsStartingCommit) {
    manual_clock::reset();
    auto o = options(realtime_protocol::vllm, realtime_turns::server_vad, 2);
    o.gate = true;
    realtime_session s(o);
    s.on_event(realtime_event::session_created, manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_update);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::send_start);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::join_gate);
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::wait_event);
    s.on_event(realtime_event::error, manual_clock::now()); // an error while waiting: no stream
    EXPECT_EQ(s.next(manual_clock::now()).what, rt_kind::close);
    EXPECT_EQ(s.appends_sent(), 0u);
}

} // namespace

#include <pacer/protocol/realtime_events.hpp>
#include <pacer/runtime/audio_codec.hpp>

#include <boost/json/parse.hpp>

#include <cmath>
#include <vector>

namespace {

using namespace pacer::protocol;

TEST(RealtimeEventsBuild, OpenAiSessionUpdateNamesTheFormatsAndTurns) {
    const auto vad = boost::json::parse(openai_session_update("id", realtime_turns::server_vad));
    EXPECT_EQ(vad.at("type").as_string(), "session.update");
    const auto& in = vad.at("session").at("audio").at("input");
    EXPECT_EQ(in.at("format").at("type").as_string(), "audio/pcm");
    EXPECT_EQ(in.at("format").at("rate").to_number<int>(), 24000);
    EXPECT_EQ(in.at("turn_detection").at("type").as_string(), "server_vad");
    EXPECT_EQ(vad.at("session").at("audio").at("output").at("format").at("rate").to_number<int>(),
              24000);
    const auto manual = boost::json::parse(openai_session_update("id", realtime_turns::manual));
    EXPECT_TRUE(manual.at("session").at("audio").at("input").at("turn_detection").is_null());
}

TEST(RealtimeEventsBuild, VllmEventsCarryTheModelAndFinal) {
    const auto u = boost::json::parse(vllm_session_update("id", "org/model"));
    EXPECT_EQ(u.at("model").as_string(), "org/model");
    EXPECT_EQ(boost::json::parse(realtime_commit("id", realtime_protocol::vllm, true))
                  .at("final")
                  .as_bool(),
              true);
    EXPECT_EQ(boost::json::parse(realtime_commit("id", realtime_protocol::vllm, false))
                  .at("final")
                  .as_bool(),
              false);
    EXPECT_FALSE(boost::json::parse(realtime_commit("id", realtime_protocol::openai, false))
                     .as_object()
                     .contains("final"));
    std::string frame;
    realtime_append(frame, "id", "AAAA");
    EXPECT_EQ(boost::json::parse(frame).at("audio").as_string(), "AAAA");
    EXPECT_EQ(boost::json::parse(response_create("id")).at("type").as_string(), "response.create");
}

TEST(RealtimeEventsBuild, ParsesProtocolNames) {
    realtime_protocol p{};
    EXPECT_TRUE(parse_realtime_protocol("vllm-realtime", p));
    EXPECT_EQ(p, realtime_protocol::vllm);
    EXPECT_TRUE(parse_realtime_protocol("openai-realtime", p));
    EXPECT_EQ(p, realtime_protocol::openai);
    EXPECT_FALSE(parse_realtime_protocol("native", p));
}

TEST(RealtimeResample, PacketsAre3840BytesAt24KhzAndTheLastTakesTheRest) {
    std::vector<std::uint8_t> pcm(3840 * 2 + 100);
    const std::size_t count = 3;
    EXPECT_EQ(rate_packet(pcm, 24000, 0, count).size(), 3840u);
    EXPECT_EQ(rate_packet(pcm, 24000, 1, count).size(), 3840u);
    EXPECT_EQ(rate_packet(pcm, 24000, 2, count).size(), 100u);
    std::vector<std::uint8_t> longer(3840 * 2 + 4); // a resampler's extra samples
    EXPECT_EQ(rate_packet(longer, 24000, 1, 2).size(), 3844u);
}

// Issue 33 item 10: silence is never held, whatever its length; each packet is read from one
// static zero packet. A file's bytes are held once and shared by every copy.
TEST(PcmInput, SilenceIsReadAPacketAtATimeAndNeverHeld) {
    using pacer::protocol::pcm_input;
    const auto day = pcm_input::silence(86400ull * 32000); // 24 h of 16 kHz PCM16: 2.76 GB
    EXPECT_TRUE(day.is_silence());
    EXPECT_EQ(day.held(), nullptr);
    EXPECT_EQ(day.size(), 2'764'800'000u);
    const auto packet = day.bytes(std::size_t{1'000'000} * 2560, 2560);
    ASSERT_EQ(packet.size(), 2560u);
    EXPECT_TRUE(std::all_of(packet.begin(), packet.end(), [](auto b) { return b == 0; }));
    EXPECT_EQ(day.bytes(day.size() - 100, 2560).size(), 100u) << "the last packet is clipped";
    EXPECT_EQ(day.bytes(day.size(), 2560).size(), 0u);
    EXPECT_THROW((void)day.bytes(0, pcm_input::max_packet_bytes + 1), std::logic_error);
    // At openai-realtime's 24 kHz: still silence, 1.5 times as long, still not held.
    const auto wire = day.at_rate(16000, 24000);
    EXPECT_TRUE(wire.is_silence());
    EXPECT_EQ(wire.size(), 4'147'200'000u);

    // Held bytes: shared by copies, resampled when the rate changes.
    const pcm_input file(std::vector<std::uint8_t>{1, 0, 2, 0, 3, 0});
    const pcm_input copy = file;
    EXPECT_EQ(copy.held(), file.held());
    EXPECT_FALSE(file.is_silence());
    const auto middle = file.bytes(2, 2);
    EXPECT_EQ(std::vector<std::uint8_t>(middle.begin(), middle.end()),
              (std::vector<std::uint8_t>{2, 0}));
    EXPECT_EQ(*file.at_rate(16000, 24000).held(),
              pacer::runtime::resample_pcm16(*file.held(), 16000, 24000));
    pcm_input moved = file;
    const pcm_input taken = std::move(moved);
    EXPECT_EQ(taken.size(), 6u);
    EXPECT_TRUE(moved.empty()); // NOLINT(bugprone-use-after-move): a moved-from input is empty
    EXPECT_FALSE(static_cast<bool>(pcm_input{}));
}

} // namespace

#include <pacer/metrics/realtime.hpp>
#include <pacer/session/duplex_session.hpp>

namespace {

TEST(RealtimeMetrics, MeasuresFromTheUtteranceEndAndTheAnchor) {
    std::vector<pacer::session::session_result> s(2);
    s[0].session_start_s = 10.0;
    s[0].utterance_end_s = 12.0;
    s[0].first_transcript_s = 12.25;
    s[0].final_transcript_s = 12.5;
    s[1].session_start_s = 20.0; // no utterance end: only the anchor figures
    s[1].first_transcript_s = 21.0;
    const auto j = pacer::metrics::realtime_latency_json(s);
    EXPECT_TRUE(j.at("first_audio_from_anchor_s").is_null());
    EXPECT_EQ(j.at("first_transcript_from_utterance_end_s").at("count").to_number<int>(), 1);
    EXPECT_DOUBLE_EQ(j.at("first_transcript_from_utterance_end_s").at("p50").as_double(), 0.25);
    EXPECT_EQ(j.at("first_transcript_from_anchor_s").at("count").to_number<int>(), 2);
    EXPECT_DOUBLE_EQ(j.at("first_transcript_from_anchor_s").at("max").as_double(), 2.25);
    EXPECT_DOUBLE_EQ(j.at("final_transcript_from_utterance_end_s").at("p50").as_double(), 0.5);
}

} // namespace

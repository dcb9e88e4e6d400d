// Unit tests of the realtime protocols' serving evaluation (metrics/realtime_level.hpp): output
// gaps and the playback underrun of openai-realtime audio deltas, the latency figures and the
// protocol's own checks, from traces built by hand.

#include <pacer/core/base64.hpp>
#include <pacer/metrics/realtime_level.hpp>
#include <pacer/metrics/slo.hpp>

#include <boost/json/parse.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace pacer::metrics;
using pacer::protocol::realtime_protocol;
using pacer::protocol::realtime_turns;

// A base64 PCM16 delta of `ms` milliseconds at 24 kHz.
std::string audio(double ms) {
    const auto bytes = static_cast<std::size_t>(ms * 48); // 24,000 samples/s x 2 bytes
    std::vector<std::uint8_t> pcm(bytes, 0);
    std::string out;
    pacer::base64_append(out, pcm.data(), pcm.size());
    return out;
}

std::string line(std::string_view dir, double t, std::string event) {
    return fmt::format(R"({{"direction":"{}","time_s":{},"event":{}}})", dir, t, event) + "\n";
}

std::string delta(double t, double ms, std::string_view response = "r1") {
    return line("receive", t,
                fmt::format(R"({{"type":"response.output_audio.delta","response_id":"{}",)"
                            R"("delta":"{}"}})",
                            response, audio(ms)));
}

std::vector<trace_line> parse(const std::string& text) {
    auto p = parse_trace(text);
    EXPECT_TRUE(p.errors.empty());
    return p.lines;
}

TEST(RealtimeOutput, GapsAndExcessAreMeasuredWithinAResponse) {
    // 80 ms deltas at 10.00, 10.08, 10.30 (a 140 ms excess), then a second response.
    const auto trace = parse(delta(10.00, 80) + delta(10.08, 80) + delta(10.30, 80) +
                             delta(20.00, 80, "r2") + delta(20.08, 80, "r2"));
    const auto o = realtime_output_audio(trace, 24000, 0.080);
    EXPECT_EQ(o.audio_deltas, 5u);
    EXPECT_EQ(o.responses, 2u);
    ASSERT_EQ(o.gaps_s.size(), 3u); // no gap across responses (10.30 -> 20.00 is not one)
    EXPECT_NEAR(o.gaps_s[1], 0.22, 1e-9);
    EXPECT_NEAR(o.gap_excess_s[0], 0.0, 1e-9);
    EXPECT_NEAR(o.gap_excess_s[1], 0.14, 1e-9);
    EXPECT_NEAR(o.output_duration_s, 0.4, 1e-9);
}

TEST(RealtimeOutput, PlaybackUnderrunsWhenADeltaComesAfterTheBufferRanDry) {
    // Playback starts 80 ms after the first delta (10.08) with 80 ms buffered: dry at 10.16.
    // The second delta arrives at 10.30: 140 ms of silence. The other response is smooth.
    const auto trace = parse(delta(10.00, 80) + delta(10.30, 80) + delta(20.00, 80, "r2") +
                             delta(20.05, 80, "r2"));
    const auto o = realtime_output_audio(trace, 24000, 0.080);
    EXPECT_EQ(o.underrun.count, 1u);
    EXPECT_NEAR(o.underrun.total_s, 0.14, 1e-9);
    EXPECT_NEAR(o.underrun.worst_s, 0.14, 1e-9);
    ASSERT_TRUE(o.underrun_ratio);
    EXPECT_NEAR(*o.underrun_ratio, 0.14 / 0.32, 1e-9);
}

TEST(RealtimeOutput, AnInvalidDeltaIsAnError) {
    const auto trace =
        parse(line("receive", 1, R"({"type":"response.output_audio.delta","delta":"%%"})"));
    const auto o = realtime_output_audio(trace, 24000, 0.080);
    EXPECT_EQ(o.audio_deltas, 0u);
    ASSERT_EQ(o.errors.size(), 1u);
    EXPECT_FALSE(o.underrun_ratio);
}

std::string receipts(double start, int appends) {
    std::string a;
    for (int i = 0; i < appends; ++i)
        a += fmt::format(R"({}{{"event_id":"{:032}","seq":{},"scheduled_s":{},"start_s":{},)"
                         R"("completed_s":{}}})",
                         i ? "," : "", i, i, start + 0.08 * i, start + 0.08 * i, start + 0.08 * i);
    return fmt::format(R"({{"session_start_s":{},"admitted":true,"appends":[{}]}})", start, a);
}

std::string append(double t) {
    return line("send", t, R"({"type":"input_audio_buffer.append","audio":"AAAA"})");
}

TEST(RealtimeLevel, OpenAiManualFiguresFromTheCommitAndTheAnchor) {
    // 0.16 s of input: two appends from 100.0, the commit at 100.16, audio from 100.3.
    std::string t =
        line("receive", 99.9, R"({"type":"session.created"})") +
        line("receive", 99.95, R"({"type":"session.updated"})") + append(100.0) + append(100.08) +
        line("send", 100.16, R"({"type":"input_audio_buffer.commit"})") +
        line("send", 100.16, R"({"type":"response.create"})") +
        line("receive", 100.25,
             R"({"type":"response.output_audio_transcript.delta","delta":"hi"})") +
        delta(100.30, 80) + delta(100.38, 80) +
        line("receive", 100.40, R"({"type":"response.done","response":{"status":"completed"}})");
    realtime_context c;
    c.protocol = realtime_protocol::openai;
    c.turns = realtime_turns::manual;
    c.input_duration_s = 0.16;
    const auto s = evaluate_realtime_session(0, t, receipts(100.0, 2), c);
    EXPECT_TRUE(s.base.success()) << (s.base.errors.empty() ? "" : s.base.errors.front());
    const auto& f = s.figures;
    EXPECT_NEAR(*f.utterance_end_s, 100.16, 1e-9);
    EXPECT_NEAR(*f.first_audio_from_utterance_end_s, 0.14, 1e-9);
    EXPECT_NEAR(*f.first_audio_from_anchor_s, 0.30, 1e-9);
    EXPECT_NEAR(*f.first_transcript_from_utterance_end_s, 0.09, 1e-9);
    EXPECT_NEAR(*f.real_time_factor, 0.40 / 0.16, 1e-9);
    EXPECT_FALSE(f.final_transcript_from_utterance_end_s);
    EXPECT_NEAR(*s.base.session.ttfa_s, 0.30, 1e-9);
    ASSERT_EQ(f.output.gaps_s.size(), 1u);

    const realtime_level_session all[] = {s};
    const auto a = aggregate_realtime_level(all);
    EXPECT_EQ(a.at("successful_sessions").to_number<int>(), 1);
    EXPECT_NEAR(a.at("realtime").at("first_audio_from_utterance_end_s").at("p95").as_double(), 0.14,
                1e-9);
    // The SLOs read the aggregate.
    const auto slos = parse_slos("first-audio-p95=100ms,first-transcript-p95=100ms");
    const auto v = evaluate_slos(slos, a);
    EXPECT_FALSE(v.at("checks").as_array().at(0).at("met").as_bool());
    EXPECT_TRUE(v.at("checks").as_array().at(1).at("met").as_bool());
}

TEST(RealtimeLevel, TheProtocolsOwnChecksFailASession) {
    // openai manual without session.updated, one append of two, no response.done.
    std::string t = line("receive", 99.9, R"({"type":"session.created"})") + append(100.0) +
                    line("send", 100.16, R"({"type":"input_audio_buffer.commit"})");
    realtime_context c;
    c.protocol = realtime_protocol::openai;
    c.turns = realtime_turns::manual;
    c.input_duration_s = 0.16;
    const auto s = evaluate_realtime_session(0, t, receipts(100.0, 1), c);
    EXPECT_EQ(s.base.status, session_status::failed);
    const auto has = [&](std::string_view what) {
        for (const auto& e : s.base.errors)
            if (e.find(what) != std::string::npos)
                return true;
        return false;
    };
    EXPECT_TRUE(has("no session.updated"));
    EXPECT_TRUE(has("sent 1/2 input frames"));
    EXPECT_TRUE(has("no response.done"));
}

TEST(RealtimeLevel, VllmFinalTranscriptIsMeasuredFromTheFinalCommit) {
    std::string t = line("receive", 99.9, R"({"type":"session.created"})") +
                    line("send", 99.95, R"({"type":"input_audio_buffer.commit","final":false})") +
                    append(100.0) +
                    line("send", 100.08, R"({"type":"input_audio_buffer.commit","final":true})") +
                    line("receive", 100.05, R"({"type":"transcription.delta","delta":"w"})") +
                    line("receive", 100.28, R"({"type":"transcription.done","text":"w"})");
    realtime_context c;
    c.protocol = realtime_protocol::vllm;
    c.input_duration_s = 0.08;
    const auto s = evaluate_realtime_session(0, t, receipts(100.0, 1), c);
    EXPECT_TRUE(s.base.success()) << (s.base.errors.empty() ? "" : s.base.errors.front());
    EXPECT_NEAR(*s.figures.utterance_end_s, 100.08, 1e-9); // not the starting commit
    EXPECT_NEAR(*s.figures.final_transcript_from_utterance_end_s, 0.20, 1e-9);
    EXPECT_NEAR(*s.figures.first_transcript_from_utterance_end_s, -0.03, 1e-9); // streams early
    EXPECT_FALSE(s.figures.first_audio_from_anchor_s);
    // Without transcription.done the session fails the protocol's check.
    const auto cut = t.substr(0, t.rfind("{\"direction\":\"receive\",\"time_s\":100.28"));
    const auto f = evaluate_realtime_session(0, cut, receipts(100.0, 1), c);
    EXPECT_EQ(f.base.status, session_status::failed);
}

} // namespace

// End to end: `pacer run --protocol openai-realtime|vllm-realtime` against `pacer native-mock
// --protocol ...` as real processes on loopback (docs/protocols.md). Asserts the event flow
// each session's trace shows and the summary's records; never a speed (exit 0 or 3).

#include <pacer/runtime/audio_codec.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <cmath>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

struct protocol_run {
    temp_dir out;
    run_result run;
    value summary;
    value mock_stats;
    fs::path trace(int i) const {
        return out / "run" / fmt::format("session-{:03}", i) / "trace.jsonl";
    }
};

std::unique_ptr<protocol_run> run_protocol(const std::string& protocol,
                                           const std::vector<std::string>& run_flags) {
    auto r = std::make_unique<protocol_run>();
    fs::create_directories(r->out.path());
    const auto stats = r->out / "mock-stats.json";
    mock_process mock({"--protocol", protocol, "--stats-output", stats.string()}, "native-mock");
    std::vector<std::string> args{"run",      "--protocol",
                                  protocol,   "--url",
                                  mock.url(), "-c",
                                  "3",        "-d",
                                  "1s",       "--timeout",
                                  "20s",      "--keep-traces",
                                  "-o",       (r->out / "run").string()};
    args.insert(args.end(), run_flags.begin(), run_flags.end());
    r->run = run_pacer(args);
    EXPECT_EQ(mock.stop(), 0);
    r->mock_stats = read_json(stats);
    r->summary = read_json(r->out / "run" / "summary.json");
    return r;
}

TEST(ProtocolsE2E, OpenAiRealtimeManualTurnsCommitCreateAndEndAtResponseDone) {
    const auto r = run_protocol("openai-realtime", {"--turns", "manual"});
    EXPECT_TRUE(r->run.exit_code == 0 || r->run.exit_code == 3) << r->run.out;
    EXPECT_EQ(at(r->summary, {"config", "protocol"}).as_string(), "openai-realtime");
    EXPECT_EQ(at(r->summary, {"config", "wire_sample_rate"}).to_number<int>(), 24000);
    EXPECT_EQ(at(r->mock_stats, {"responses"}).to_number<int>(), 3);
    for (int i = 0; i < 3; ++i) {
        SCOPED_TRACE(i);
        const auto sent = types(r->trace(i), "send");
        ASSERT_FALSE(sent.empty());
        EXPECT_EQ(sent.front(), "session.update");
        EXPECT_EQ(count_of(sent, "input_audio_buffer.append"), 13u); // 1 s in 80 ms packets
        ASSERT_GE(sent.size(), 2u);
        EXPECT_EQ(sent[sent.size() - 2], "input_audio_buffer.commit");
        EXPECT_EQ(sent.back(), "response.create");
        const auto got = types(r->trace(i), "receive");
        EXPECT_GT(count_of(got, "response.output_audio.delta"), 0u);
        EXPECT_EQ(got.back(), "response.done");
        // 24 kHz on the wire: a full packet is 3,840 bytes (5,120 base64 characters).
        for (const auto& l : read_jsonl(r->trace(i)))
            if (at(l, {"direction"}).as_string() == "send" &&
                at(l, {"event", "type"}).as_string() == "input_audio_buffer.append") {
                EXPECT_EQ(at(l, {"event", "audio"}).as_string().size(), 5120u);
                break;
            }
    }
    EXPECT_EQ(at(r->summary, {"server", "realtime", "first_audio_from_anchor_s", "count"})
                  .to_number<int>(),
              3);
}

TEST(ProtocolsE2E, OpenAiRealtimeServerVadSendsNoCommitAndEndsAfterTheQuietPeriod) {
    const auto r = run_protocol("openai-realtime", {});
    EXPECT_TRUE(r->run.exit_code == 0 || r->run.exit_code == 3) << r->run.out;
    EXPECT_EQ(at(r->summary, {"config", "turns"}).as_string(), "server-vad");
    for (int i = 0; i < 3; ++i) {
        const auto sent = types(r->trace(i), "send");
        EXPECT_EQ(count_of(sent, "input_audio_buffer.commit"), 0u);
        EXPECT_EQ(count_of(sent, "response.create"), 0u);
        EXPECT_EQ(sent.back(), "input_audio_buffer.append");
    }
    EXPECT_EQ(at(r->mock_stats, {"sessions_completed"}).to_number<int>(), 3);
    // The input is silence: the mock's server VAD hears no speech, and nothing is answered.
    EXPECT_EQ(at(r->mock_stats, {"speech_started"}).to_number<int>(), 0);
    EXPECT_EQ(at(r->mock_stats, {"responses"}).to_number<int>(), 0);
}

// The wrong --protocol (issue 33 item 9): a native client against a vllm-realtime server, and an
// openai-realtime client against a native one. The first event tells, and the session ends at
// once with an error that says so (its only error: not the timeout's), nothing streamed.
TEST(ProtocolsE2E, TheWrongProtocolEndsTheSessionAtOnceNamingWhatArrived) {
    struct mismatch {
        std::string server, client, expected;
    };
    const mismatch cases[] = {
        {"vllm-realtime", "native",
         "server's first event was 'session.created' in vllm-realtime's shape (a top-level 'id', "
         "no 'session' object), not the native protocol's: is --protocol right?"},
        {"native", "openai-realtime",
         "server's first event was 'session.created' in native's shape (with 'session.sglang'), "
         "not the openai-realtime protocol's: is --protocol right?"},
    };
    for (const auto& m : cases) {
        SCOPED_TRACE(m.client + " against " + m.server);
        temp_dir out;
        mock_process mock({"--protocol", m.server}, "native-mock");
        const auto r =
            run_pacer({"run", "--protocol", m.client, "--url", mock.url(), "-c", "1", "-d", "1s",
                       "--timeout", "20s", "--keep-traces", "-o", out.path().string()});
        EXPECT_EQ(mock.stop(), 0);
        EXPECT_PRED1(server_failed_exit, r.exit_code) << r.out;
        EXPECT_NE(r.out.find(m.expected), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("by kind: wrong protocol 1 session"), std::string::npos) << r.out;
        const auto trace = out / "session-000" / "trace.jsonl";
        EXPECT_EQ(error_lines(trace), std::vector<std::string>{m.expected});
        EXPECT_EQ(count_of(types(trace, "send"), "input_audio_buffer.append"), 0u);
    }
}

// As OpenAI clients connect: the model in the URL's query, the query of --url kept, and the
// beta servers' header; the mock's stats show what the upgrade requests carried.
TEST(ProtocolsE2E, OpenAiRealtimeModelGoesIntoTheUrlQueryBesideItsOwnAndTheBetaHeaderArrives) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto stats = out / "mock-stats.json";
    mock_process mock({"--protocol", "openai-realtime", "--stats-output", stats.string()},
                      "native-mock");
    const auto r = run_pacer({"run", "--protocol", "openai-realtime", "--turns", "manual",
                              "--model", "org/gpt realtime", "--url", mock.url() + "?tenant=a%26b",
                              "--header", "OpenAI-Beta: realtime=v1", "-c", "2", "-d", "1s",
                              "--timeout", "20s", "-o", (out / "run").string()});
    EXPECT_TRUE(finished(r.exit_code)) << r.out;
    EXPECT_EQ(mock.stop(), 0);
    const auto s = read_json(stats);
    EXPECT_EQ(at(s, {"sessions_seen"}).to_number<int>(), 2);
    EXPECT_EQ(at(s, {"responses"}).to_number<int>(), 2);
    EXPECT_EQ(strings(at(s, {"request_models"})), std::vector<std::string>{"org/gpt realtime"});
    EXPECT_EQ(strings(at(s, {"request_query_names"})),
              (std::vector<std::string>{"model", "tenant"}));
    EXPECT_EQ(strings(at(s, {"openai_beta"})), std::vector<std::string>{"realtime=v1"});
    const auto summary = read_json(out / "run" / "summary.json");
    EXPECT_EQ(at(summary, {"config", "model"}).as_string(), "org/gpt realtime");
    EXPECT_EQ(strings(at(summary, {"transport", "headers"})),
              std::vector<std::string>{"OpenAI-Beta"});
}

TEST(ProtocolsE2E, OpenAiRealtimeModelAlreadyInTheUrlIsSentOnceAndAnotherIsBadInput) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto stats = out / "mock-stats.json";
    mock_process mock({"--protocol", "openai-realtime", "--stats-output", stats.string()},
                      "native-mock");
    const auto other =
        run_pacer({"run", "--protocol", "openai-realtime", "--model", "b", "--url",
                   mock.url() + "?model=a", "-d", "1s", "-o", (out / "other").string()});
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_NE(other.out.find("pacer: --model b and the model=a in --url differ: give one"),
              std::string::npos)
        << other.out;
    EXPECT_FALSE(fs::exists(out / "other"));
    const auto same = run_pacer({"run", "--protocol", "openai-realtime", "--turns", "manual",
                                 "--model", "a", "--url", mock.url() + "?model=a", "-c", "1", "-d",
                                 "1s", "--timeout", "20s", "-o", (out / "run").string()});
    EXPECT_TRUE(finished(same.exit_code)) << same.out;
    EXPECT_EQ(mock.stop(), 0);
    const auto s = read_json(stats);
    EXPECT_EQ(at(s, {"sessions_seen"}).to_number<int>(), 1);
    EXPECT_EQ(strings(at(s, {"request_models"})), std::vector<std::string>{"a"});
}

TEST(ProtocolsE2E, VllmRealtimeStartsCommitsFinalAndEndsAtTranscriptionDone) {
    const auto r = run_protocol("vllm-realtime", {"--model", "org/asr"});
    EXPECT_TRUE(r->run.exit_code == 0 || r->run.exit_code == 3) << r->run.out;
    EXPECT_EQ(at(r->summary, {"config", "model"}).as_string(), "org/asr");
    for (int i = 0; i < 3; ++i) {
        SCOPED_TRACE(i);
        std::vector<value> sent;
        for (const auto& l : read_jsonl(r->trace(i)))
            if (at(l, {"direction"}).as_string() == "send")
                sent.push_back(at(l, {"event"}));
        ASSERT_EQ(sent.size(), 16u); // update, start, 13 appends, final commit
        EXPECT_EQ(at(sent[0], {"model"}).as_string(), "org/asr");
        EXPECT_EQ(at(sent[1], {"type"}).as_string(), "input_audio_buffer.commit");
        EXPECT_FALSE(at(sent[1], {"final"}).as_bool());
        EXPECT_TRUE(at(sent[15], {"final"}).as_bool());
        const auto got = types(r->trace(i), "receive");
        EXPECT_GT(count_of(got, "transcription.delta"), 0u);
        EXPECT_EQ(got.back(), "transcription.done");
    }
    EXPECT_EQ(
        at(r->summary, {"server", "realtime", "final_transcript_from_utterance_end_s", "count"})
            .to_number<int>(),
        3);
}

TEST(ProtocolsE2E, VllmRealtimeWithoutAModelIsBadInput) {
    temp_dir out;
    const auto dir = out / "run";
    const auto r = run_pacer({"run", "--protocol", "vllm-realtime", "--url",
                              "ws://127.0.0.1:9/v1/realtime", "-d", "1s", "-o", dir.string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("pacer: --protocol vllm-realtime needs --model"), std::string::npos)
        << r.out;
    EXPECT_FALSE(fs::exists(dir));
}

TEST(ProtocolsE2E, OpenAiRealtimeOpenLoopRunsItsScheduleAgainstTheMock) {
    temp_dir out;
    fs::create_directories(out.path());
    mock_process mock({"--protocol", "openai-realtime"}, "native-mock");
    const auto dir = out / "run";
    const auto r = run_pacer({"run",
                              "--protocol",
                              "openai-realtime",
                              "--turns",
                              "manual",
                              "--url",
                              mock.url(),
                              "--arrival",
                              "poisson",
                              "--rate",
                              "10",
                              "--sessions",
                              "4",
                              "--seed",
                              "7",
                              "-d",
                              "1s",
                              "--timeout",
                              "20s",
                              "--keep-traces",
                              "--no-report",
                              "-o",
                              dir.string()});
    EXPECT_EQ(mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto summary = read_json(dir / "summary.json");
    EXPECT_EQ(at(summary, {"config", "protocol"}).as_string(), "openai-realtime");
    EXPECT_TRUE(fs::exists(dir / "schedule.json"));
    const auto& req = at(summary, {"open_loop", "requests"});
    EXPECT_EQ(at(req, {"scheduled"}).to_number<int>(), 4);
    EXPECT_EQ(at(req, {"dispatched"}).to_number<int>(), 4);
    EXPECT_EQ(at(req, {"failed"}).to_number<int>(), 0) << r.out;
    EXPECT_EQ(at(summary, {"open_loop", "latency_s", "n"}).to_number<int>(), 4);
    for (int i = 0; i < 4; ++i) {
        SCOPED_TRACE(i);
        const auto trace = dir / fmt::format("session-{:03}", i) / "trace.jsonl";
        const auto sent = types(trace, "send");
        ASSERT_FALSE(sent.empty());
        EXPECT_EQ(sent.front(), "session.update");
        EXPECT_EQ(count_of(sent, "input_audio_buffer.append"), 13u);
        EXPECT_EQ(sent.back(), "response.create");
        EXPECT_EQ(types(trace, "receive").back(), "response.done");
    }
    EXPECT_EQ(
        at(summary, {"server", "realtime", "first_audio_from_anchor_s", "count"}).to_number<int>(),
        4);
}

TEST(ProtocolsE2E, ProcessesPoolTheProtocolAndEverySessionsHandshake) {
    temp_dir out;
    fs::create_directories(out.path());
    mock_process mock({"--protocol", "openai-realtime"}, "native-mock");
    const auto dir = out / "run";
    const auto r = run_pacer({"run", "--protocol", "openai-realtime", "--turns", "manual", "--url",
                              mock.url(), "--processes", "2", "-c", "2", "-d", "1s", "--timeout",
                              "20s", "--no-report", "-o", dir.string()});
    EXPECT_EQ(mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto summary = read_json(dir / "summary.json");
    EXPECT_EQ(at(summary, {"protocol"}).as_string(), "openai-realtime");
    const auto& h = at(summary, {"transport", "handshake_s"});
    EXPECT_EQ(at(h, {"connections"}).to_number<int>(), 4);
    EXPECT_EQ(at(h, {"session_update_ack", "n"}).to_number<int>(), 4);
    EXPECT_EQ(at(h, {"upgrade", "n"}).to_number<int>(), 4);
    // Each worker's samples.json has every session's phases.
    const auto samples = read_json(dir / "worker-0" / "samples.json");
    for (const auto& session : at(samples, {"sessions"}).as_array()) {
        EXPECT_TRUE(at(session, {"handshake_s", "connect"}).is_number());
        EXPECT_TRUE(at(session, {"handshake_s", "session_update_ack"}).is_number());
    }
    // A worker's own summary has the ack too.
    const auto worker = read_json(dir / "worker-0" / "summary.json");
    EXPECT_EQ(at(worker, {"transport", "handshake_s", "session_update_ack", "n"}).to_number<int>(),
              2);
}

// A conversation (docs/scenarios.md): two turns of 0.5 s on one grid with silence between
// them, manual turns, and a barge-in 0.1 s into the reply. Asserts what went on the wire and
// the summary's per-turn records; never a speed. (About 2 s.)
TEST(ProtocolsE2E, OpenAiRealtimeScenarioCommitsEachTurnAndBargesIn) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto scenario = out / "talk.json";
    std::ofstream(scenario) << R"({"turns":[{"audio":"input","pause":"0.8s",)"
                               R"("interrupt_after":"0.1s"},{"audio":"input"}]})";
    const auto stats = out / "mock-stats.json";
    mock_process mock(
        {"--protocol", "openai-realtime", "--reply-ms", "1200", "--stats-output", stats.string()},
        "native-mock");
    const auto dir = out / "run";
    const auto r =
        run_pacer({"run", "--protocol", "openai-realtime", "--turns", "manual", "--url", mock.url(),
                   "-c", "2", "-d", "0.5s", "--scenario", scenario.string(), "--timeout", "20s",
                   "--keep-traces", "--no-report", "-o", dir.string()});
    EXPECT_EQ(mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto summary = read_json(dir / "summary.json");
    EXPECT_EQ(at(summary, {"config", "scenario"}).as_string(), scenario.string());
    const auto& all = at(summary, {"turns", "all"});
    EXPECT_EQ(at(all, {"turns"}).to_number<int>(), 4);
    EXPECT_EQ(at(summary, {"turns", "by_turn"}).as_array().size(), 2u);
    // The table's per-turn line stands in for the stream-start time to first audio.
    EXPECT_NE(r.out.find("  turns      "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(fmt::format("of {} answered", at(all, {"turns"}).to_number<int>())),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("stream start -> first audio delta"), std::string::npos) << r.out;
    int truncates = 0;
    for (int i = 0; i < 2; ++i) {
        SCOPED_TRACE(i);
        const auto trace = dir / fmt::format("session-{:03}", i) / "trace.jsonl";
        const auto sent = types(trace, "send");
        // One commit and one response.create per turn.
        EXPECT_EQ(count_of(sent, "input_audio_buffer.commit"), 2u);
        EXPECT_EQ(count_of(sent, "response.create"), 2u);
        // 0.5 s is 7 packets a turn; the pause's silence packets come on top (fewer when the
        // barge-in cuts it short), never more than its 10 slots.
        const auto appends = count_of(sent, "input_audio_buffer.append");
        EXPECT_GE(appends, 14u);
        EXPECT_LE(appends, 24u);
        // A barge-in: the truncate goes right after the barge-in's first append.
        const auto t = std::find(sent.begin(), sent.end(), "conversation.item.truncate");
        if (t != sent.end()) {
            ++truncates;
            ASSERT_NE(t, sent.begin());
            const auto before = *(t - 1);
            EXPECT_TRUE(before == "input_audio_buffer.append" || before == "response.cancel")
                << before;
        }
        EXPECT_EQ(sent.back(), "response.create");
        // The mock's replies: 1.2 s of audio in 15 deltas of 80 ms; the first, cancelled 0.1 s
        // in, stopped early (its deltas counted by response_id) and ended cancelled; the truncate
        // was acknowledged.
        std::size_t first_reply = 0, cancelled = 0, truncated = 0;
        for (const auto& l : read_jsonl(trace)) {
            if (at(l, {"direction"}).as_string() != "receive")
                continue;
            const auto& e = at(l, {"event"});
            const auto type = at(e, {"type"}).as_string();
            if (type == "response.output_audio.delta" &&
                at(e, {"response_id"}).as_string() == "response_0")
                ++first_reply;
            if (type == "response.done" && at(e, {"response", "status"}).as_string() == "cancelled")
                ++cancelled;
            if (type == "conversation.item.truncated")
                ++truncated;
        }
        if (t != sent.end()) {
            EXPECT_EQ(cancelled, 1u);
            EXPECT_EQ(truncated, 1u);
            EXPECT_LT(first_reply, 15u);
        }
    }
    // Every interrupted turn sent its truncate (and only those).
    EXPECT_EQ(at(all, {"interrupted"}).to_number<int>(), truncates);
    const auto mock_stats = read_json(stats);
    EXPECT_EQ(at(mock_stats, {"responses_cancelled"}).to_number<int>(), truncates);
    EXPECT_EQ(at(mock_stats, {"truncates"}).to_number<int>(), truncates);
    EXPECT_EQ(at(mock_stats, {"responses"}).to_number<int>(), 4 - truncates);
    // The interrupted replies' figures are there (their size is the mock's reaction, 20 ms,
    // plus up to a packet: not asserted on a loaded machine).
    EXPECT_EQ(at(all, {"interrupt_latency_s", "count"}).to_number<int>(), truncates);
}

// 16 kHz mono PCM16: `tone_s` of a 440 Hz tone at -6 dBFS, then `silence_s` of zeros.
void write_speech_wav(const fs::path& p, double tone_s, double silence_s) {
    const auto tone = static_cast<std::uint32_t>(16000 * tone_s);
    const auto frames = tone + static_cast<std::uint32_t>(16000 * silence_s);
    std::vector<std::uint8_t> pcm;
    pcm.reserve(2 * frames);
    for (std::uint32_t i = 0; i < frames; ++i) {
        const auto v = static_cast<std::uint16_t>(static_cast<std::int16_t>(
            i < tone ? std::lround(16000 * std::sin(2 * std::numbers::pi * 440.0 * i / 16000.0))
                     : 0));
        pcm.push_back(static_cast<std::uint8_t>(v & 0xff));
        pcm.push_back(static_cast<std::uint8_t>(v >> 8));
    }
    runtime::write_wav_pcm16(p, pcm, 16000);
}

// Server VAD against the mock's energy detector: two turns of speech (0.48 s of tone, then
// 0.32 s of silence, more than the mock's --vad-silence-ms 300), the second barging in 0.1 s
// after the first reply's audio. The mock hears each turn start and stop, answers each on its
// own, and cancels the first reply when the second turn's speech starts; the client records
// speech_stopped-referenced first-audio figures per turn. No speed asserted. (About 2.5 s.)
TEST(ProtocolsE2E, OpenAiRealtimeServerVadTurnsAreHeardAnsweredAndBargedInByTheMock) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto wav = out / "speech.wav";
    write_speech_wav(wav, 0.48, 0.32);
    const auto scenario = out / "talk.json";
    std::ofstream(scenario) << R"({"turns":[{"audio":"input","pause":"1s",)"
                               R"("interrupt_after":"0.1s"},{"audio":"input"}]})";
    const auto stats = out / "mock-stats.json";
    mock_process mock({"--protocol", "openai-realtime", "--vad-silence-ms", "300", "--reply-ms",
                       "640", "--stats-output", stats.string()},
                      "native-mock");
    const auto dir = out / "run";
    const auto r =
        run_pacer({"run", "--protocol", "openai-realtime", "--turns", "server-vad", "--url",
                   mock.url(), "-c", "2", "--audio", wav.string(), "--scenario", scenario.string(),
                   "--timeout", "20s", "--keep-traces", "--no-report", "-o", dir.string()});
    EXPECT_EQ(mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto mock_stats = read_json(stats);
    EXPECT_EQ(at(mock_stats, {"speech_started"}).to_number<int>(), 4);
    EXPECT_EQ(at(mock_stats, {"speech_stopped"}).to_number<int>(), 4);
    // Every turn got a response; each ended completed or cancelled by the next turn's speech.
    const int by_vad = at(mock_stats, {"responses_cancelled_by_vad"}).to_number<int>();
    EXPECT_EQ(at(mock_stats, {"responses_cancelled"}).to_number<int>(), by_vad);
    EXPECT_EQ(at(mock_stats, {"responses"}).to_number<int>() + by_vad, 4);
    const auto summary = read_json(dir / "summary.json");
    const auto& by_turn = at(summary, {"turns", "by_turn"}).as_array();
    ASSERT_EQ(by_turn.size(), 2u);
    for (const auto& t : by_turn)
        EXPECT_EQ(at(t, {"ttfa_from_speech_stopped_s", "count"}).to_number<int>(), 2);
    // A barge-in the client made was heard: its reply was cancelled by the server's VAD.
    EXPECT_GE(by_vad, at(summary, {"turns", "all", "interrupted"}).to_number<int>());
    for (int i = 0; i < 2; ++i) {
        SCOPED_TRACE(i);
        const auto trace = dir / fmt::format("session-{:03}", i) / "trace.jsonl";
        const auto sent = types(trace, "send");
        EXPECT_EQ(count_of(sent, "input_audio_buffer.commit"), 0u);
        EXPECT_EQ(count_of(sent, "response.create"), 0u);
        EXPECT_EQ(count_of(sent, "response.cancel"), 0u); // server VAD cancels by itself
        const auto got = types(trace, "receive");
        EXPECT_EQ(count_of(got, "input_audio_buffer.speech_started"), 2u);
        EXPECT_EQ(count_of(got, "input_audio_buffer.speech_stopped"), 2u);
        EXPECT_EQ(count_of(got, "input_audio_buffer.committed"), 2u);
        EXPECT_EQ(got.back(), "response.done");
    }
}

} // namespace
} // namespace pacer::test

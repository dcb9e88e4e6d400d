// End to end: `pacer serve --protocol openai-realtime|vllm-realtime` against `pacer native-mock
// --protocol ...` as real processes on loopback (docs/serving.md, docs/protocols.md): a tiny
// sweep (levels 1 and 2, 1 s of input). Asserts the start gate (every session of a level
// negotiated before the common start, and streams from it), the protocol's figures and the
// validity checks the summary names; never a speed (exit 0 or 3).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

struct sweep_run {
    temp_dir out;
    run_result run;
    value summary;
    fs::path dir() const { return out / "sweep"; }
};

std::unique_ptr<sweep_run> serve_protocol(const std::string& protocol,
                                          const std::vector<std::string>& flags) {
    auto r = std::make_unique<sweep_run>();
    fs::create_directories(r->out.path());
    mock_process mock({"--protocol", protocol}, "native-mock");
    std::vector<std::string> args{
        "serve", "--protocol", protocol,    "--url", mock.url(), "--concurrencies", "1,2",
        "-d",    "1s",         "--timeout", "20s",   "-o",       r->dir().string()};
    args.insert(args.end(), flags.begin(), flags.end());
    r->run = run_pacer(args);
    EXPECT_EQ(mock.stop(), 0);
    r->summary = read_json(r->dir() / "summary.json");
    return r;
}

// Every session of level `c` negotiated (the ack `ack` arrived, or for vLLM the starting commit
// went) before the level's common start, and packet 0's grid origin is that start.
void expect_gated(const fs::path& level, std::size_t c, std::string_view ack) {
    const auto s = read_json(level / "summary.json");
    ASSERT_FALSE(at(s, {"common_start_s"}).is_null());
    const double start = at(s, {"common_start_s"}).to_number<double>();
    EXPECT_EQ(at(s, {"configured_sessions"}).to_number<std::size_t>(), c);
    for (std::size_t i = 0; i < c; ++i) {
        SCOPED_TRACE(i);
        const auto session = level / fmt::format("session-{:03}", i);
        const auto receipts = read_json(session / "input-send-receipts.json");
        EXPECT_DOUBLE_EQ(at(receipts, {"session_start_s"}).to_number<double>(), start);
        std::optional<double> ready, first_append;
        for (const auto& l : read_jsonl(session / "trace.jsonl")) {
            const auto type = at(l, {"event", "type"}).as_string();
            const auto dir = at(l, {"direction"}).as_string();
            const double t = at(l, {"time_s"}).to_number<double>();
            if (!ready && ((dir == "receive" && type == ack) ||
                           (ack.empty() && dir == "send" && type == "input_audio_buffer.commit")))
                ready = t;
            if (!first_append && dir == "send" && type == "input_audio_buffer.append")
                first_append = t;
        }
        ASSERT_TRUE(ready && first_append);
        EXPECT_LT(*ready, start);        // ready before the gate opened
        EXPECT_GE(*first_append, start); // streams from the common start, not before
    }
}

TEST(ServeProtocolsE2E, OpenAiRealtimeSweepGatesEachLevelOnSessionUpdated) {
    const auto r = serve_protocol("openai-realtime", {"--turns", "manual"});
    EXPECT_TRUE(finished(r->run.exit_code)) << r->run.out;
    EXPECT_EQ(at(r->summary, {"config", "protocol"}).as_string(), "openai-realtime");
    EXPECT_EQ(at(r->summary, {"config", "wire_sample_rate"}).to_number<int>(), 24000);
    EXPECT_NE(
        at(r->summary, {"config", "validity_checks", "oracle"}).as_string().find("not applicable"),
        std::string::npos);
    ASSERT_EQ(at(r->summary, {"levels"}).as_array().size(), 2u);
    expect_gated(r->dir() / "c1", 1, "session.updated");
    expect_gated(r->dir() / "c2", 2, "session.updated");
    const auto c2 = read_json(r->dir() / "c2" / "summary.json");
    EXPECT_EQ(at(c2, {"protocol"}).as_string(), "openai-realtime");
    const auto& a = at(c2, {"aggregate"});
    EXPECT_EQ(at(a, {"successful_sessions"}).to_number<int>(), 2) << r->run.out;
    EXPECT_EQ(at(a, {"realtime", "first_audio_from_utterance_end_s", "n"}).to_number<int>(), 2);
    EXPECT_EQ(at(a, {"realtime", "first_transcript_from_anchor_s", "n"}).to_number<int>(), 2);
    EXPECT_EQ(at(a, {"realtime", "real_time_factor", "n"}).to_number<int>(), 2);
    EXPECT_GT(at(a, {"output_gap_s", "n"}).to_number<int>(), 0); // many deltas per response
    EXPECT_TRUE(at(a, {"underrun_ratio"}).is_number());
    EXPECT_GT(at(a, {"output_duration_s"}).to_number<double>(), 0.0);
    EXPECT_TRUE(fs::exists(r->dir() / "report.html")); // the report reads these summaries
    // The table names the protocol's figures under each level.
    EXPECT_NE(r->run.out.find("first audio"), std::string::npos) << r->run.out;
}

TEST(ServeProtocolsE2E, VllmRealtimeSweepGatesEachLevelAfterItsStartingCommit) {
    const auto r = serve_protocol("vllm-realtime", {"--model", "org/asr"});
    EXPECT_TRUE(finished(r->run.exit_code)) << r->run.out;
    EXPECT_EQ(at(r->summary, {"config", "model"}).as_string(), "org/asr");
    expect_gated(r->dir() / "c1", 1, "");
    expect_gated(r->dir() / "c2", 2, "");
    const auto c2 = read_json(r->dir() / "c2" / "summary.json");
    const auto& a = at(c2, {"aggregate"});
    EXPECT_EQ(at(a, {"successful_sessions"}).to_number<int>(), 2) << r->run.out;
    EXPECT_EQ(at(a, {"realtime", "final_transcript_from_utterance_end_s", "n"}).to_number<int>(),
              2);
    EXPECT_EQ(at(a, {"realtime", "first_audio_from_anchor_s", "n"}).to_number<int>(), 0);
    // The native replay oracle does not judge these traces, and says so.
    const auto replay = run_pacer({"replay", (r->dir() / "c2").string()});
    EXPECT_EQ(replay.exit_code, 2);
    EXPECT_NE(replay.out.find("replay checks the native protocol only"), std::string::npos)
        << replay.out;
    bool names_final = false;
    for (const auto& c : at(c2, {"validity_checks", "session"}).as_array())
        names_final = names_final || c.as_string().find("transcription.done") != std::string::npos;
    EXPECT_TRUE(names_final);
}

TEST(ServeProtocolsE2E, AnSloOnTheFirstTranscriptIsEvaluated) {
    const auto r = serve_protocol("vllm-realtime",
                                  {"--model", "org/asr", "--slo", "first-transcript-p95=30s"});
    EXPECT_TRUE(finished(r->run.exit_code)) << r->run.out;
    const auto c1 = read_json(r->dir() / "c1" / "summary.json");
    const auto& check = at(c1, {"slo", "checks"}).as_array().at(0);
    EXPECT_EQ(at(check, {"name"}).as_string(), "first-transcript-p95");
    EXPECT_TRUE(at(check, {"value"}).is_number());
}

TEST(ServeProtocolsE2E, OpenAiRealtimeModelGoesIntoTheUrlOfTheServerAndOfTheBuiltInMock) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto stats = out / "mock-stats.json";
    std::optional<mock_process> mock(
        std::in_place,
        std::vector<std::string>{"--protocol", "openai-realtime", "--stats-output", stats.string()},
        "native-mock");
    const auto given =
        run_pacer({"serve", "--protocol", "openai-realtime", "--turns", "manual", "--model",
                   "gpt-realtime", "--url", mock->url() + "?x=1", "--concurrencies", "1", "-d",
                   "1s", "--timeout", "20s", "-o", (out / "given").string()});
    EXPECT_TRUE(finished(given.exit_code)) << given.out;
    EXPECT_EQ(mock->stop(), 0);
    mock.reset();
    const auto s = read_json(stats);
    std::vector<std::string> models, names;
    for (const auto& m : at(s, {"request_models"}).as_array())
        models.emplace_back(m.as_string());
    for (const auto& n : at(s, {"request_query_names"}).as_array())
        names.emplace_back(n.as_string());
    EXPECT_EQ(models, std::vector<std::string>{"gpt-realtime"});
    EXPECT_EQ(names, (std::vector<std::string>{"model", "x"}));
    // Without --url the built-in mock is asked for /v1/realtime?model=..., and serves it.
    const auto built_in = run_pacer({"serve", "--protocol", "openai-realtime", "--turns", "manual",
                                     "--model", "gpt-realtime", "--concurrencies", "1", "-d", "1s",
                                     "--timeout", "20s", "-o", (out / "built-in").string()});
    EXPECT_TRUE(finished(built_in.exit_code)) << built_in.out;
    const auto c1 = read_json(out / "built-in" / "c1" / "summary.json");
    EXPECT_EQ(at(c1, {"aggregate", "successful_sessions"}).to_number<int>(), 1) << built_in.out;
}

TEST(ServeProtocolsE2E, RealtimeProtocolMistakesAreBadInput) {
    temp_dir out;
    const auto dir = out / "sweep";
    auto r = run_pacer({"serve", "--protocol", "vllm-realtime", "--url",
                        "ws://127.0.0.1:9/v1/realtime", "-d", "1s", "-o", dir.string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("pacer: --protocol vllm-realtime needs --model"), std::string::npos)
        << r.out;
    r = run_pacer({"serve", "--protocol", "openai-realtime", "--pacing", "lockstep", "--url",
                   "ws://127.0.0.1:9/v1/realtime", "-d", "1s", "-o", dir.string()});
    EXPECT_EQ(r.exit_code, 2);
    r = run_pacer({"serve", "--protocol", "grpc", "-d", "1s", "-o", dir.string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("--protocol 'grpc' is not known"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir));
}

// A conversation in every session of a level (docs/scenarios.md): two turns of 0.5 s, the
// second barging in 0.1 s into the reply to the first, manual turns. The level's row and its
// run's summary carry the per-turn figures (`turns`, the shape of `pacer run`'s) and the SLO
// verdicts on them; never a speed. (One level of 2 sessions: about 2 s.)
TEST(ServeProtocolsE2E, OpenAiRealtimeBargeInScenarioGivesTheLevelTurnsAndTheirSloVerdicts) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto scenario = out / "talk.json";
    std::ofstream(scenario) << R"({"turns":[{"audio":"input","pause":"0.8s",)"
                               R"("interrupt_after":"0.1s"},{"audio":"input"}]})";
    mock_process mock({"--protocol", "openai-realtime", "--reply-ms", "640"}, "native-mock");
    const auto dir = out / "sweep";
    const auto r = run_pacer({"serve",
                              "--protocol",
                              "openai-realtime",
                              "--turns",
                              "manual",
                              "--url",
                              mock.url(),
                              "-c",
                              "2",
                              "-d",
                              "0.5s",
                              "--scenario",
                              scenario.string(),
                              "--slo",
                              "turn-ttfa-p95=30s,interrupt-latency-p95=30s",
                              "--timeout",
                              "20s",
                              "--no-report",
                              "-o",
                              dir.string()});
    EXPECT_EQ(mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto summary = read_json(dir / "summary.json");
    EXPECT_EQ(at(summary, {"config", "scenario"}).as_string(), scenario.string());
    const auto& levels = at(summary, {"levels"}).as_array();
    ASSERT_EQ(levels.size(), 1u);
    const auto run = read_json(dir / "c2" / "summary.json");
    EXPECT_EQ(at(run, {"scenario"}).as_string(), scenario.string());
    EXPECT_EQ(at(run, {"aggregate", "successful_sessions"}).to_number<int>(), 2) << r.out;
    for (const auto* row : {&levels[0], &run}) {
        const auto& turns = at(*row, {"aggregate", "turns"});
        EXPECT_EQ(at(turns, {"by_turn"}).as_array().size(), 2u);
        const auto& all = at(turns, {"all"});
        EXPECT_EQ(at(all, {"turns"}).to_number<int>(), 4);
        const int interrupted = at(all, {"interrupted"}).to_number<int>();
        // The verdicts judge those figures: present where the level has them, missed where not.
        const auto& checks = at(*row, {"slo", "checks"}).as_array();
        ASSERT_EQ(checks.size(), 2u);
        EXPECT_EQ(at(checks[0], {"name"}).as_string(), "turn-ttfa-p95");
        EXPECT_EQ(at(checks[0], {"value"}), at(all, {"ttfa_from_speech_end_s", "p95"}));
        EXPECT_TRUE(at(checks[0], {"value"}).is_number()); // every turn of the mock is answered
        EXPECT_EQ(at(checks[1], {"name"}).as_string(), "interrupt-latency-p95");
        EXPECT_EQ(at(checks[1], {"value"}).is_number(), interrupted > 0);
        for (const auto& c : checks)
            EXPECT_EQ(at(c, {"met"}).as_bool(),
                      at(c, {"value"}).is_number() && at(c, {"value"}).to_number<double>() <= 30.0);
        EXPECT_TRUE(at(*row, {"slo", "met"}).is_bool());
    }
    // turns.jsonl: each session's turns, a line each, with the figure beside its reference.
    int rows = 0;
    for (const auto& row : read_jsonl(dir / "c2" / "turns.jsonl")) {
        ++rows;
        const auto& ttfa = at(row, {"ttfa_from_speech_end_s"});
        if (ttfa.is_number()) { // to the microsecond, as turns.jsonl writes its times
            EXPECT_NEAR(ttfa.to_number<double>(),
                        at(row, {"first_audio_s"}).to_number<double>() -
                            at(row, {"speech_end_s"}).to_number<double>(),
                        1e-6);
        }
    }
    EXPECT_EQ(rows, 4);
    // The table's row for the level names the turns: voice-to-voice where the turns had a voice,
    // else the first audio after the turn's end.
    EXPECT_TRUE(r.out.find("turns p50/p95 ms: voice-to-voice ") != std::string::npos ||
                r.out.find("turns p50/p95 ms: first audio from turn end ") != std::string::npos)
        << r.out;
}

// An SLO on turns or barge-ins needs a scenario that has them: refused before anything starts.
TEST(ServeProtocolsE2E, TurnSlosWithoutTheirScenarioAreBadInput) {
    temp_dir out;
    const auto dir = out / "sweep";
    auto r = run_pacer({"serve", "--protocol", "openai-realtime", "--url",
                        "ws://127.0.0.1:9/v1/realtime", "-d", "1s", "--slo", "turn-ttfa-p95=1s",
                        "-o", dir.string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_NE(r.out.find("turn-ttfa-p95 judges per-turn figures"), std::string::npos) << r.out;
    r = run_pacer({"serve", "--protocol", "openai-realtime", "--url",
                   "ws://127.0.0.1:9/v1/realtime", "-d", "1s", "--scenario", "multi-turn", "--slo",
                   "interrupt-latency-p95=1s", "-o", dir.string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("interrupt-latency-p95 judges barge-ins"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir));
}

} // namespace
} // namespace pacer::test

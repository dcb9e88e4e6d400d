// End to end: `pacer run --protocol vllm-omni` against `pacer native-mock --protocol vllm-omni`
// as real processes on loopback (docs/protocols.md, "vllm-omni"). With the listener's acks
// every turn of a three-turn conversation is answered; with `--ack never` the server's
// ack_only rule defers the second turn for ever, and pacer reports that as the server's stall
// with its reason, not as a failure of the client. Never a speed (exit 0 or 3).

#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

struct omni_run {
    temp_dir out;
    run_result run;
    value summary;
    value mock_stats;
    fs::path trace(int i) const {
        return out / "run" / fmt::format("session-{:03}", i) / "trace.jsonl";
    }
};

constexpr int sessions = 2;

std::unique_ptr<omni_run> run_omni(const std::vector<std::string>& run_flags,
                                   std::vector<std::string> mock_flags = {"--reply-ms", "400"},
                                   const std::string& scenario = "multi-turn") {
    auto r = std::make_unique<omni_run>();
    fs::create_directories(r->out.path());
    const auto stats = r->out / "mock-stats.json";
    mock_flags.insert(mock_flags.end(),
                      {"--protocol", "vllm-omni", "--stats-output", stats.string()});
    mock_process mock(mock_flags, "native-mock");
    std::vector<std::string> args{"run",
                                  "--protocol",
                                  "vllm-omni",
                                  "--url",
                                  mock.url(),
                                  "--turns",
                                  "manual",
                                  "--scenario",
                                  scenario,
                                  "-c",
                                  std::to_string(sessions),
                                  "-d",
                                  "1s",
                                  "--timeout",
                                  "40s",
                                  "--keep-traces",
                                  "-o",
                                  (r->out / "run").string()};
    args.insert(args.end(), run_flags.begin(), run_flags.end());
    r->run = run_pacer(args);
    EXPECT_EQ(mock.stop(), 0);
    r->mock_stats = read_json(stats);
    r->summary = read_json(r->out / "run" / "summary.json");
    return r;
}

std::vector<value> sent(const fs::path& trace, std::string_view type) {
    std::vector<value> out;
    for (const auto& l : read_jsonl(trace))
        if (at(l, {"direction"}).as_string() == "send" &&
            at(l, {"event", "type"}).as_string() == type)
            out.push_back(at(l, {"event"}));
    return out;
}

std::uint64_t omni(const value& summary, const char* key) {
    return at(summary, {"server", "omni", key}).to_number<std::uint64_t>();
}

TEST(OmniE2E, WithAcksEveryTurnOfAConversationIsAnswered) {
    const auto r = run_omni({});
    EXPECT_TRUE(r->run.exit_code == 0 || r->run.exit_code == 3) << r->run.out;
    EXPECT_EQ(at(r->summary, {"config", "protocol"}).as_string(), "vllm-omni");
    EXPECT_EQ(at(r->summary, {"config", "packet_ms"}).to_number<int>(), 200);
    EXPECT_EQ(omni(r->summary, "commits"), 3u * sessions);
    EXPECT_EQ(omni(r->summary, "responses"), 3u * sessions);
    EXPECT_EQ(omni(r->summary, "unanswered"), 0u);
    EXPECT_EQ(omni(r->summary, "stalled_sessions"), 0u);
    EXPECT_EQ(omni(r->summary, "ack_errors"), 0u);
    EXPECT_GE(omni(r->summary, "playback_acks"), 3u * sessions);
    EXPECT_EQ(omni(r->summary, "acknowledged"), omni(r->summary, "playback_acks"));
    EXPECT_EQ(
        at(r->summary, {"server", "omni", "ack_round_trip_s", "count"}).to_number<std::uint64_t>(),
        omni(r->summary, "playback_acks"));
    EXPECT_EQ(at(r->summary, {"turns", "all", "answered"}).to_number<int>(), 3 * sessions);
    EXPECT_EQ(at(r->mock_stats, {"playback_acks"}).to_number<std::uint64_t>(),
              omni(r->summary, "acknowledged"));
    EXPECT_NE(r->run.out.find("vllm-omni"), std::string::npos) << r->run.out;
    EXPECT_EQ(r->run.out.find("SERVER STALL"), std::string::npos) << r->run.out;
    for (int i = 0; i < sessions; ++i) {
        SCOPED_TRACE(i);
        const auto lines = read_jsonl(r->trace(i));
        const auto first_send = std::find_if(lines.begin(), lines.end(), [](const value& l) {
            return at(l, {"direction"}).as_string() == "send";
        });
        ASSERT_NE(first_send, lines.end());
        EXPECT_EQ(at(*first_send, {"event", "type"}).as_string(), "session.update");
        const auto appends = sent(r->trace(i), "input_audio_buffer.append");
        ASSERT_FALSE(appends.empty());
        EXPECT_EQ(at(appends.front(), {"duration_ms"}).to_number<int>(), 200);
        // The last ack of each reply is its whole audio (400 ms), once.
        int whole = 0;
        for (const auto& a : sent(r->trace(i), "playback.ack"))
            whole += at(a, {"played_ms"}).to_number<int>() == 400;
        EXPECT_EQ(whole, 3);
        EXPECT_FALSE(sent(r->trace(i), "session.event_ack").empty());
        EXPECT_EQ(sent(r->trace(i), "session.close").size(), 1u);
    }
}

// A barge-in over a reply still being generated (3 s of audio in 200 ms deltas): pacer's
// `output_audio_buffer.clear` goes out right after the barge-in's first packet, and the mock
// sends nothing of the reply due after its reaction (300 ms), then `output_audio_buffer.cleared`.
// The listener's audio stops there: the interruption latency is at least the mock's reaction
// and well short of the reply's unplayed tail.
TEST(OmniE2E, ABargeInsClearStopsTheReplyAfterTheMocksReaction) {
    const auto r = run_omni(
        {}, {"--reply-ms", "3000", "--reply-delta-ms", "200", "--cancel-reaction-ms", "300"},
        "barge-in");
    EXPECT_TRUE(r->run.exit_code == 0 || r->run.exit_code == 3) << r->run.out;
    EXPECT_EQ(omni(r->summary, "cleared"), 1u * sessions);
    int interrupted = 0;
    for (const auto& row : read_jsonl(r->out / "run" / "turns.jsonl")) {
        if (at(row, {"interrupted_s"}).is_null())
            continue;
        ++interrupted;
        const double latency = at(row, {"interrupt_latency_s"}).to_number<double>();
        EXPECT_GE(latency, 0.3) << boost::json::serialize(row);
        EXPECT_LT(latency, 3.0 - at(row, {"played_at_interrupt_s"}).to_number<double>())
            << boost::json::serialize(row);
        EXPECT_FALSE(at(row, {"output_stopped_s"}).is_null()) << boost::json::serialize(row);
    }
    EXPECT_EQ(interrupted, sessions);
    EXPECT_GT(omni(r->summary, "cancelled"), 0u);
}

TEST(OmniE2E, WithoutAcksTheSecondTurnIsDeferredAndReportedAsTheServersStall) {
    const auto r = run_omni({"--ack", "never"});
    EXPECT_TRUE(r->run.exit_code == 0 || r->run.exit_code == 3) << r->run.out;
    EXPECT_EQ(omni(r->summary, "playback_acks"), 0u);
    EXPECT_EQ(omni(r->summary, "responses"), 1u * sessions); // the first turn's only
    EXPECT_EQ(omni(r->summary, "deferred"), 2u * sessions);  // turns 2 and 3
    EXPECT_EQ(omni(r->summary, "unanswered"), 2u * sessions);
    EXPECT_EQ(omni(r->summary, "stalled_sessions"), 1u * sessions);
    EXPECT_EQ(at(r->summary, {"server", "omni", "stall_reasons", "response_create_deferred"})
                  .to_number<int>(),
              sessions);
    EXPECT_EQ(at(r->summary, {"turns", "all", "answered"}).to_number<int>(), sessions);
    EXPECT_NE(r->run.out.find("SERVER STALL"), std::string::npos) << r->run.out;
    EXPECT_NE(r->run.out.find("response_create_deferred"), std::string::npos) << r->run.out;
    // The server's stall, not the client's failure: no session recorded an error.
    EXPECT_TRUE(at(r->summary, {"server", "errors_by_kind"}).as_array().empty()) << r->run.out;
    EXPECT_EQ(at(r->mock_stats, {"deferred_commits"}).to_number<int>(), 2 * sessions);
}

TEST(OmniE2E, AServeSweepJudgesEveryLevelsSessionsAgainstTheMock) {
    temp_dir out;
    fs::create_directories(out.path());
    mock_process mock({"--protocol", "vllm-omni", "--reply-ms", "400"}, "native-mock");
    const auto r =
        run_pacer({"serve", "--protocol", "vllm-omni", "--turns", "manual", "--url", mock.url(),
                   "-d", "1s", "--concurrencies", "1,2", "-o", (out / "sweep").string()});
    EXPECT_EQ(mock.stop(), 0);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    const auto summary = read_json(out / "sweep" / "summary.json");
    const auto& levels = at(summary, {"levels"}).as_array();
    ASSERT_EQ(levels.size(), 2u);
    for (const auto& level : levels) {
        // Every session streamed its 200 ms chunks and got its reply: judged successful.
        EXPECT_EQ(at(level, {"aggregate", "successful_sessions"}).to_number<int>(),
                  at(level, {"aggregate", "attempted_sessions"}).to_number<int>())
            << r.out;
    }
}

} // namespace
} // namespace pacer::test

// End to end on loopback: `pacer mock` as its own process, `pacer run` against it.

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

std::uint64_t count(const value& v, std::initializer_list<const char*> path) {
    return at(v, path).to_number<std::uint64_t>();
}

// The receipts and the trace of one session agree, seq is contiguous, and scheduled_s lies
// on the session's 80 ms grid.
void check_session_files(const fs::path& dir, std::size_t expected_appends) {
    const auto receipts = read_json(dir / "input-send-receipts.json");
    const auto trace = read_jsonl(dir / "trace.jsonl");
    EXPECT_TRUE(at(receipts, {"admitted"}).as_bool());
    const auto& appends = at(receipts, {"appends"}).as_array();
    ASSERT_EQ(appends.size(), expected_appends);
    const double origin = at(receipts, {"session_start_s"}).to_number<double>();
    std::vector<const value*> traced;
    double last_time = 0;
    for (const auto& line : trace) {
        const double t = at(line, {"time_s"}).to_number<double>();
        EXPECT_GE(t, last_time) << "trace time regressed in " << dir;
        last_time = t;
        if (at(line, {"direction"}).as_string() == "send" &&
            at(line, {"event", "type"}).as_string() == "input_audio_buffer.append")
            traced.push_back(&line);
    }
    ASSERT_EQ(traced.size(), appends.size());
    for (std::size_t i = 0; i < appends.size(); ++i) {
        const auto& a = appends[i];
        EXPECT_EQ(count(a, {"seq"}), i);
        EXPECT_EQ(at(a, {"event_id"}), at(*traced[i], {"event", "event_id"}));
        EXPECT_EQ(count(*traced[i], {"event", "sglang", "seq"}), i);
        EXPECT_DOUBLE_EQ(at(a, {"start_s"}).to_number<double>(),
                         at(*traced[i], {"time_s"}).to_number<double>());
        EXPECT_NEAR(at(a, {"scheduled_s"}).to_number<double>(),
                    origin + 0.080 * static_cast<double>(i), 1e-6);
        EXPECT_GE(at(a, {"completed_s"}).to_number<double>(),
                  at(a, {"start_s"}).to_number<double>());
    }
}

TEST(RunE2E, SixteenSessionsCompleteWithConsistentArtifacts) {
    mock_process mock;
    temp_dir out;
    const auto r = run_pacer({"run", "--url", mock.url(), "-c", "16", "-d", "2s", "-o",
                              out.path().string(), "--keep-traces"});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto summary = read_json(out / "summary.json");
    EXPECT_EQ(r.exit_code, exit_for_pacing(summary)) << r.out;
    EXPECT_EQ(count(summary, {"pacing", "sessions", "complete"}), 16u);
    EXPECT_EQ(count(summary, {"pacing", "packets", "sent"}), 16u * 25u);
    EXPECT_EQ(count(summary, {"pacing", "packets", "expected"}), 16u * 25u);
    for (int i = 0; i < 16; ++i)
        check_session_files(out / ((i < 10 ? "session-00" : "session-0") + std::to_string(i)), 25);
    const auto samples = read_json(out / "samples.json");
    EXPECT_EQ(at(samples, {"sessions"}).as_array().size(), 16u);
    EXPECT_EQ(mock.stop(), 0);
}

TEST(RunE2E, MockWritesStatsOnSigint) {
    temp_dir dir;
    fs::create_directories(dir.path());
    const auto stats_path = dir / "mock-stats.json";
    mock_process mock({"--stats-output", stats_path.string()});
    const auto r = run_pacer(
        {"run", "--url", mock.url(), "-c", "2", "-d", "1s", "-o", (dir / "run").string()});
    EXPECT_TRUE(finished(r.exit_code)) << r.out;
    EXPECT_EQ(mock.stop(), 0);
    const auto stats = read_json(stats_path);
    EXPECT_EQ(count(stats, {"sessions_seen"}), 2u);
    EXPECT_EQ(count(stats, {"appends"}), 2u * 13u);
    EXPECT_EQ(count(stats, {"arrival_deviation_s", "n"}), 2u * 13u);
    // Folded into a histogram as the appends arrive (no per-packet container in the mock).
    EXPECT_TRUE(stats.as_object().contains("arrival_quantile_precision"));
    EXPECT_TRUE(at(stats, {"loop_lag_s"}).as_object().contains("p99"));
    EXPECT_TRUE(stats.as_object().contains("process_cpu_s"));
}

TEST(RunE2E, InjectedStallIsDetectedBothWays) {
    // A stall longer than two packet periods delays a packet of every streaming session by
    // more than one period (the late threshold), whatever the phases of the sessions' grids:
    // the detector must see it in every session and in the loop lag. A 60 ms stall is seen by
    // the loop monitor (10 ms ticks: a lag of at least S - 10 ms); the threshold is unit-tested
    // (pacing.late_means_more_than_one_period_off_the_grid), not timed here.
    mock_process mock;
    temp_dir long_stall, short_stall;
    const auto late =
        run_pacer({"run", "--url", mock.url(), "-c", "8", "-d", "3s", "-o",
                   long_stall.path().string(), "--inject-stall-ms", "250", "--stagger-ms", "0"});
    EXPECT_EQ(late.exit_code, 3) << late.out;
    const auto s1 = read_json(long_stall / "summary.json");
    EXPECT_EQ(count(s1, {"stalls_injected"}), 1u);
    EXPECT_EQ(count(s1, {"pacing", "sessions", "with_late_packet"}), 8u);
    EXPECT_FALSE(at(s1, {"pacing_qualified"}).as_bool());
    EXPECT_GE(count(s1, {"pacing", "loop_lag_s", "over_80ms"}), 1u);
    EXPECT_GE(at(s1, {"pacing", "loop_lag_s", "max"}).to_number<double>(), 0.240);

    const auto ok =
        run_pacer({"run", "--url", mock.url(), "-c", "8", "-d", "3s", "-o",
                   short_stall.path().string(), "--inject-stall-ms", "60", "--stagger-ms", "0"});
    const auto s2 = read_json(short_stall / "summary.json");
    EXPECT_EQ(ok.exit_code, at(s2, {"pacing_qualified"}).as_bool() ? 0 : 3) << ok.out;
    EXPECT_EQ(count(s2, {"stalls_injected"}), 1u);
    EXPECT_EQ(count(s2, {"pacing", "packets", "sent"}),
              count(s2, {"pacing", "packets", "expected"}));
    EXPECT_GE(at(s2, {"pacing", "loop_lag_s", "max"}).to_number<double>(), 0.050);
}

// Runs `sessions` sessions against a mock started with `mock_args`; returns the summary and
// the trace of session 0. Every faulty run still finishes with a valid summary.
struct fault_run {
    int exit_code;
    value summary;
    std::vector<value> trace;
};

fault_run run_against(std::vector<std::string> mock_args, std::size_t sessions = 1,
                      std::string duration = "1s", std::string timeout = "5s") {
    mock_process mock(std::move(mock_args));
    temp_dir out;
    const auto r =
        run_pacer({"run", "--url", mock.url(), "-c", std::to_string(sessions), "-d", duration,
                   "--timeout", timeout, "-o", out.path().string(), "--keep-traces"});
    fault_run f{r.exit_code, read_json(out / "summary.json"),
                read_jsonl(out / "session-000" / "trace.jsonl")};
    mock.stop();
    return f;
}

std::vector<std::string> error_messages(const std::vector<value>& trace) {
    std::vector<std::string> out;
    for (const auto& l : trace)
        if (at(l, {"direction"}).as_string() == "error")
            out.emplace_back(at(l, {"event", "message"}).as_string());
    return out;
}

TEST(RunE2E, FourDenialsRejectTheSession) {
    const auto f = run_against({"--reject-first", "4"});
    EXPECT_PRED1(server_failed_exit, f.exit_code);
    EXPECT_EQ(count(f.summary, {"pacing", "sessions", "rejected"}), 1u);
    EXPECT_EQ(count(f.summary, {"pacing", "sessions", "incomplete"}), 1u);
    ASSERT_EQ(f.trace.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(at(f.trace[i], {"direction"}).as_string(), "admission");
        EXPECT_EQ(at(f.trace[i], {"event", "type"}).as_string(), "connection_denied");
        EXPECT_EQ(count(f.trace[i], {"event", "attempt"}), i + 1);
        EXPECT_EQ(count(f.trace[i], {"event", "http_status"}), 503u);
    }
    EXPECT_TRUE(at(f.trace[3], {"event", "exhausted"}).as_bool());
}

TEST(RunE2E, ThreeDenialsThenAdmitted) {
    const auto f = run_against({"--reject-first", "3"});
    EXPECT_TRUE(finished(f.exit_code));
    EXPECT_EQ(count(f.summary, {"pacing", "sessions", "complete"}), 1u);
}

TEST(RunE2E, NonfatalServerErrorStopsStreamingAndClosesCleanly) {
    const auto f = run_against({"--fault", "server_error"});
    EXPECT_PRED1(server_failed_exit, f.exit_code);
    EXPECT_EQ(count(f.summary, {"pacing", "sessions", "incomplete"}), 1u);
    bool saw_error = false, sent_close = false, saw_closed = false, sent_eos = false;
    for (const auto& l : f.trace) {
        const auto dir = at(l, {"direction"}).as_string();
        const auto type = at(l, {"event"}).as_object().contains("type")
                              ? at(l, {"event", "type"}).as_string()
                              : boost::json::string();
        saw_error |= dir == "receive" && type == "error";
        sent_close |= dir == "send" && type == "session.close";
        sent_eos |= dir == "send" && type == "sglang.input_audio.end";
        saw_closed |= dir == "receive" && type == "session.closed";
    }
    EXPECT_TRUE(saw_error);
    EXPECT_FALSE(sent_eos) << "a nonfatal error skips the end of input";
    EXPECT_TRUE(sent_close);
    EXPECT_TRUE(saw_closed);
    EXPECT_LT(count(f.summary, {"pacing", "packets", "sent"}), 13u);
}

TEST(RunE2E, MalformedFrameIsRecorded) {
    const auto f = run_against({"--fault", "malformed"});
    EXPECT_PRED1(server_failed_exit, f.exit_code);
    const auto errors = error_messages(f.trace);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].rfind("ValueError: malformed server frame ", 0), 0u) << errors[0];
}

TEST(RunE2E, VanishingServerIsRecorded) {
    const auto f = run_against({"--fault", "vanish"});
    EXPECT_PRED1(server_failed_exit, f.exit_code);
    const auto errors = error_messages(f.trace);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].rfind("ConnectionClosedError: ", 0), 0u) << errors[0];
    EXPECT_EQ(count(f.summary, {"pacing", "sessions", "incomplete"}), 1u);
}

TEST(RunE2E, StalledServerTimesOut) {
    const auto f = run_against({"--fault", "stall"}, 1, "1s", "2.5s");
    EXPECT_PRED1(server_failed_exit, f.exit_code);
    const auto errors = error_messages(f.trace);
    EXPECT_EQ(errors, std::vector<std::string>{"Session timeout after 2.5s"});
}

TEST(RunE2E, FaultsHitOnlyTheirSessions) {
    const auto f = run_against({"--fault", "vanish", "--fault-every", "2"}, 4);
    EXPECT_PRED1(server_failed_exit, f.exit_code);
    EXPECT_EQ(count(f.summary, {"pacing", "sessions", "complete"}), 2u);
    EXPECT_EQ(count(f.summary, {"pacing", "sessions", "incomplete"}), 2u);
}

TEST(RunE2E, ExistingOutputFolderIsNeverTouched) {
    temp_dir out;
    fs::create_directories(out.path());
    { std::ofstream(out / "keep.txt") << "precious"; }
    const auto r = run_pacer({"run", "-c", "1", "-d", "1s", "-o", out.path().string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(slurp(out / "keep.txt"), "precious");
    EXPECT_EQ(std::distance(fs::directory_iterator(out.path()), fs::directory_iterator()), 1);
}

TEST(RunE2E, BadInputsAreRefusedBeforeAnythingIsWritten) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto wav = out / "stereo.wav";
    {
        // A 44.1 kHz stereo PCM16 WAV header with no samples: nothing to stream.
        std::ofstream f(wav, std::ios::binary);
        auto u32 = [&](std::uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
        auto u16 = [&](std::uint16_t v) { f.write(reinterpret_cast<const char*>(&v), 2); };
        f << "RIFF";
        u32(36);
        f << "WAVEfmt ";
        u32(16), u16(1), u16(2), u32(44100), u32(44100 * 4), u16(4), u16(16);
        f << "data";
        u32(0);
    }
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"run", "--audio", wav.string(), "-o", (out / "a").string()},
             {"run", "--audio", (out / "missing.wav").string(), "-o", (out / "b").string()},
             {"run", "-c", "0", "-o", (out / "c").string()},
             {"run", "-d", "soon", "-o", (out / "d").string()},
             {"run", "--url", "http://x", "-o", (out / "e").string()},
             {"run", "--no-such-flag"},
         }) {
        const auto r = run_pacer(args);
        EXPECT_EQ(r.exit_code, 2) << args[1];
    }
    EXPECT_FALSE(fs::exists(out / "a"));
    EXPECT_FALSE(fs::exists(out / "b"));
    EXPECT_FALSE(fs::exists(out / "c"));
}

TEST(RunE2E, BuiltInMockNeedsNoServer) {
    temp_dir out;
    const auto r = run_pacer({"run", "-c", "4", "-d", "1s", "-o", out.path().string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto summary = read_json(out / "summary.json");
    EXPECT_EQ(r.exit_code, exit_for_pacing(summary)) << r.out;
    // The table states the verdict the summary holds.
    EXPECT_NE(r.out.find(r.exit_code == 0 ? "PACING QUALIFIED" : "PACING UNQUALIFIED"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(count(summary, {"pacing", "sessions", "complete"}), 4u);
    EXPECT_FALSE(fs::exists(out / "session-000" / "trace.jsonl"))
        << "traces are removed without --keep-traces";
    EXPECT_TRUE(fs::exists(out / "session-000" / "input-send-receipts.json"));
}

// Nothing listens on the port: the run says so, as its headline, and exits 4 (the server could
// not be reached), not "PACING UNQUALIFIED" (nothing was sent, so nothing was late).
TEST(RunE2E, UnreachableServerIsSaidAsSuch) {
    const std::string url = "ws://127.0.0.1:" + closed_port() + "/v1/realtime";
    temp_dir out;
    const auto r =
        run_pacer({"run", "--url", url, "-c", "2", "-d", "1s", "-o", out.path().string()});
    EXPECT_EQ(r.exit_code, 4) << r.out;
    EXPECT_NE(r.out.find("cannot connect to " + url + ": connection refused"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("PACING UNQUALIFIED"), std::string::npos) << r.out;
    const auto summary = read_json(out / "summary.json");
    EXPECT_EQ(at(summary, {"server", "unreachable"}).as_string(), "connection refused");
}

// The same in the open loop: 4 however late the arrivals were dispatched on a loaded host
// (sessions that reached nobody measured nothing, so there is no client verdict).
TEST(RunE2E, OpenLoopAgainstAnUnreachableServerExitsFour) {
    const std::string url = "ws://127.0.0.1:" + closed_port() + "/v1/realtime";
    temp_dir out;
    const auto r = run_pacer({"run", "--url", url, "--rate", "50", "--sessions", "3", "-d", "1s",
                              "-o", out.path().string()});
    EXPECT_EQ(r.exit_code, 4) << r.out;
    const auto summary = read_json(out / "summary.json");
    EXPECT_EQ(at(summary, {"server", "unreachable"}).as_string(), "connection refused");
}

// The table says what the server did: time to first audio, and the errors grouped by kind.
TEST(RunE2E, TableShowsTimeToFirstAudioAndErrorsByKind) {
    mock_process mock({"--fault", "vanish", "--fault-every", "2"});
    temp_dir out;
    const auto r =
        run_pacer({"run", "--url", mock.url(), "-c", "4", "-d", "1s", "-o", out.path().string()});
    EXPECT_PRED1(server_failed_exit, r.exit_code) << r.out;
    EXPECT_NE(r.out.find("  server     time to first audio (stream start -> first audio delta) "
                         "p50 "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("  errors     by kind: ConnectionClosedError 2 session(s)"),
              std::string::npos)
        << r.out;
    const auto summary = read_json(out / "summary.json");
    const auto& kinds = at(summary, {"server", "errors_by_kind"}).as_array();
    ASSERT_FALSE(kinds.empty());
    EXPECT_EQ(at(kinds[0], {"kind"}).as_string(), "ConnectionClosedError");
    EXPECT_EQ(count(kinds[0], {"sessions"}), 2u);
    for (const auto& k : kinds) // the vanished sessions' follow-up errors, if any
        EXPECT_LE(count(k, {"sessions"}), 2u) << at(k, {"kind"}).as_string();
    // The probe mock answers every session with audio before its fault.
    const auto& ttfa = at(summary, {"server", "time_to_first_audio_s"});
    EXPECT_GE(count(ttfa, {"n"}), 2u);
    EXPECT_GT(at(ttfa, {"p50"}).to_number<double>(), 0.0);
    EXPECT_TRUE(at(summary, {"server", "unreachable"}).is_null());
}

// Open loop: the header states the plan (rate, sessions, arrival, seed) and the latency row
// names what it measures from the scheduled start.
TEST(RunE2E, OpenLoopHeaderStatesThePlan) {
    temp_dir out;
    const auto r = run_pacer({"run", "--rate", "50", "--sessions", "3", "--seed", "7", "-d", "1s",
                              "-o", out.path().string()});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    EXPECT_EQ(r.out.rfind("pacer run: open loop, 3 sessions arriving poisson at 50/s (seed 7), 1s "
                          "of silence each, against ",
                          0),
              0u)
        << r.out;
    EXPECT_NE(r.out.find("  latency    scheduled start -> session.updated p50 "), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("session end p50 "), std::string::npos) << r.out;
}

// A run the disk cannot hold (a million sessions x 10 minutes: about 66 TB of traces) is
// refused with one line before anything is created, and the estimate is named.
TEST(RunE2E, RunTheDiskCannotHoldIsRefusedBeforeAnythingIsCreated) {
    temp_dir out;
    const auto dir = out / "run";
    const auto r =
        run_pacer({"run", "-c", "1000000", "-d", "10m", "--timeout", "20m", "-o", dir.string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_EQ(r.out.rfind("pacer: --output " + dir.string() + ": this run writes about ", 0), 0u)
        << r.out;
    EXPECT_NE(r.out.find(" TB (traces at about 110 kB/s a session"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" free"), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_FALSE(fs::exists(out.path()));
}

// The summary records the estimate the run was checked against.
TEST(RunE2E, SummaryRecordsTheDiskEstimate) {
    temp_dir out;
    const auto r = run_pacer({"run", "-c", "2", "-d", "1s", "-o", out.path().string()});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    const auto summary = read_json(out / "summary.json");
    // 2 sessions x 1 s x 125 kB/s of native traces, and 2 x (13 receipts x 150 B + 4 kB).
    EXPECT_EQ(count(summary, {"disk", "estimated_bytes"}), 250'000u + 2u * (13u * 150u + 4096u));
    EXPECT_GT(count(summary, {"disk", "free_bytes"}), 0u);
    EXPECT_NE(r.out.find("(estimated 262.1 kB before the run, "), std::string::npos) << r.out;
}

// Issue 33 item 18: the words of the table and of the refusals. Session counts add up, one is
// singular, a refusal is about what the command does, and the serve docs' distinct-error count
// is the level's own.
TEST(RunE2E, TheTableAndTheRefusalsSayWhatHappenedInTheirOwnWords) {
    temp_dir dir;
    fs::create_directories(dir.path());
    // One session: singular, also in the packets line.
    auto r = run_pacer({"run", "-c", "1", "-d", "1s", "--no-report", "-o", (dir / "one").string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    EXPECT_NE(r.out.find("pacer run: 1 session x 1s of silence against "), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("1 sessions"), std::string::npos) << r.out;
    // Rejected sessions are not counted again as incomplete: complete + rejected + incomplete
    // is the number of sessions.
    {
        mock_process mock({"--max-sessions", "1"}, "native-mock");
        r = run_pacer({"run", "--url", mock.url(), "-c", "3", "-d", "1s", "--stagger-ms", "0",
                       "--no-report", "-o", (dir / "rejected").string()});
    }
    EXPECT_TRUE(server_failed_exit(r.exit_code)) << r.out;
    const auto line_at = r.out.find("  sessions   ");
    ASSERT_NE(line_at, std::string::npos) << r.out;
    unsigned complete = 0, total = 0, rejected = 0, incomplete = 0;
    ASSERT_EQ(std::sscanf(r.out.c_str() + line_at,
                          "  sessions   %u complete of %u (%u rejected, %u incomplete)", &complete,
                          &total, &rejected, &incomplete),
              4)
        << r.out;
    EXPECT_EQ(total, 3u);
    EXPECT_GT(rejected, 0u) << r.out;
    EXPECT_EQ(complete + rejected + incomplete, total) << r.out;
    const auto summary = read_json(dir / "rejected" / "summary.json");
    EXPECT_EQ(count(summary, {"pacing", "sessions", "rejected"}), rejected);
    EXPECT_EQ(count(summary, {"pacing", "sessions", "complete"}), complete);
    // --sessions without --rate: the missing option, not a "got 0" nobody typed.
    r = run_pacer({"run", "--sessions", "5", "-o", (dir / "no-rate").string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("pacer: an open-loop run needs --rate R (arrivals per second)"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("got 0"), std::string::npos) << r.out;
    // A dataset too big for the disk is refused in the dataset's words, not a run's traces.
    if (std::system("command -v espeak-ng >/dev/null 2>&1") == 0) {
        r = run_pacer({"dataset", "synth", "--subsets", "1000", "--per-subset", "1000", "--min-s",
                       "1", "--max-s", "3600", "-o", (dir / "huge").string()});
        EXPECT_EQ(r.exit_code, 2) << r.out;
        EXPECT_NE(r.out.find("16 kHz WAVs of both variants"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("trace"), std::string::npos) << r.out;
    }
    EXPECT_FALSE(fs::exists(dir / "no-rate"));
    EXPECT_FALSE(fs::exists(dir / "huge"));
}

// docs/serving.md: "most frequent error (2 session(s), N distinct)": N is the number of the
// level's distinct errors in its summary.json.
TEST(RunE2E, ServeCountsTheDistinctErrorsOfTheLevel) {
    mock_process mock({"--fault", "disconnect", "--fault-sessions", "0,1"}, "native-mock");
    temp_dir dir;
    const auto r = run_pacer({"serve", "--url", mock.url(), "--concurrencies", "4", "-d", "1s",
                              "--no-report", "-o", dir.path().string()});
    EXPECT_TRUE(server_failed_exit(r.exit_code)) << r.out;
    const auto at_line = r.out.find("most frequent error (2 session(s), ");
    ASSERT_NE(at_line, std::string::npos) << r.out;
    const auto distinct = std::strtoul(
        r.out.c_str() + at_line + std::string("most frequent error (2 session(s), ").size(),
        nullptr, 10);
    const auto level = read_json(dir / "c4" / "summary.json");
    EXPECT_EQ(distinct, at(level, {"errors"}).as_array().size()) << r.out;
}

// Issue 33 item 14: run and serve record the command line in summary.json as http does, with
// header values redacted.
TEST(RunE2E, RunAndServeRecordTheirCommandLineWithoutHeaderValues) {
    temp_dir dir;
    fs::create_directories(dir.path());
    const auto expect_recorded = [](const fs::path& summary_file,
                                    const std::vector<std::string>& args) {
        const auto summary = read_json(summary_file);
        const auto& line = at(summary, {"command_line"}).as_array();
        ASSERT_EQ(line.size(), args.size() + 1) << boost::json::serialize(line);
        EXPECT_EQ(line[0].as_string(), PACER_BINARY);
        for (std::size_t i = 0; i < args.size(); ++i) {
            const std::string want =
                args[i] == "X-Api-Key: sk-e2e-item14" ? "X-Api-Key: <redacted>" : args[i];
            EXPECT_EQ(line[i + 1].as_string(), want) << i;
        }
        EXPECT_EQ(slurp(summary_file).find("sk-e2e-item14"), std::string::npos);
    };
    const std::vector<std::string> run = {"run",
                                          "-c",
                                          "1",
                                          "-d",
                                          "1s",
                                          "--header",
                                          "X-Api-Key: sk-e2e-item14",
                                          "--no-report",
                                          "-o",
                                          (dir / "run").string()};
    auto r = run_pacer(run);
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    expect_recorded(dir / "run" / "summary.json", run);
    const std::vector<std::string> serve = {"serve",
                                            "--concurrencies",
                                            "1",
                                            "--warmup-runs",
                                            "0",
                                            "-d",
                                            "1s",
                                            "--header",
                                            "X-Api-Key: sk-e2e-item14",
                                            "--no-report",
                                            "-o",
                                            (dir / "serve").string()};
    r = run_pacer(serve);
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    expect_recorded(dir / "serve" / "summary.json", serve);
}

} // namespace
} // namespace pacer::test

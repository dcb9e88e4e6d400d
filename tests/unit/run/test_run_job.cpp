// The parts of module `run` that need no server and no binary: what the session runner is given
// for a job, the command line of a worker of `--processes` (what it is told to run, and that a
// header's value never goes on it), the errors summary.json's `server` counts per session, and
// that block built from sessions made up here.

#include <pacer/metrics/pacing.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/runtime/audio_codec.hpp>
#include <pacer/trace/writer.hpp>
#include <pacer/transport/error.hpp>

#include <boost/asio/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace pacer;
using args = std::vector<std::string>;

// The value after `flag` in `a` ("" when the flag is not there, or is last).
std::string after(const args& a, const std::string& flag) {
    const auto it = std::find(a.begin(), a.end(), flag);
    return it == a.end() || it + 1 == a.end() ? std::string() : *(it + 1);
}

bool has(const args& a, const std::string& flag) {
    return std::find(a.begin(), a.end(), flag) != a.end();
}

// A closed batch of 3 sessions of 0.4 s of silence, as the command resolves `pacer run -c 3`.
run::run_job closed_batch() {
    run::run_job j;
    j.sessions = 3;
    j.pcm = std::vector<std::uint8_t>(12800, 0); // 0.4 s of 16 kHz PCM16
    j.timeout = std::chrono::seconds(7);
    j.out = "/results/run-1";
    j.profile = &protocol::default_profile();
    return j;
}

TEST(RunnerOptions, ClosedBatchTakesTheJobsInputTimeoutTracesAndStagger) {
    auto j = closed_batch();
    j.options.threads = 2;
    j.options.trace = "receipts";
    j.options.stagger_ms = 40;
    j.options.stagger_slots = 4;
    j.options.model = "ignored-by-native";
    const auto ro = run::runner_options(j);
    EXPECT_EQ(ro.sessions, 3u);
    EXPECT_EQ(ro.threads, 2u);
    ASSERT_TRUE(ro.pcm);
    EXPECT_EQ(ro.pcm.size(), 12800u);
    EXPECT_TRUE(j.pcm.empty()) << "the input is moved, not copied";
    EXPECT_EQ(ro.timeout, std::chrono::seconds(7));
    EXPECT_EQ(ro.trace_root, "/results/run-1");
    EXPECT_EQ(ro.trace, trace::mode::receipts);
    EXPECT_EQ(ro.profile, &protocol::default_profile());
    EXPECT_EQ(ro.stagger, std::chrono::milliseconds(40));
    EXPECT_EQ(ro.stagger_slots, 4u);
    EXPECT_FALSE(ro.inject_stall);
    EXPECT_FALSE(ro.arrivals) << "a closed batch starts every session at once";
    EXPECT_FALSE(ro.open_loop_start);
    EXPECT_FALSE(ro.realtime);
    EXPECT_FALSE(ro.wire_pcm) << "the native protocol streams pcm as it is";
    EXPECT_EQ(ro.live, nullptr) << "the caller's to set";
}

TEST(RunnerOptions, InjectedStallAndStaggerInMilliseconds) {
    auto j = closed_batch();
    j.options.inject_stall_ms = 250;
    j.options.stagger_ms = 0;
    const auto ro = run::runner_options(j);
    ASSERT_TRUE(ro.inject_stall);
    EXPECT_EQ(*ro.inject_stall, std::chrono::milliseconds(250));
    EXPECT_EQ(ro.stagger, duration::zero());
}

TEST(RunnerOptions, OpenLoopRunsItsArrivalsFromTheSharedStartUnderTheCap) {
    auto j = closed_batch();
    j.open_loop.emplace();
    j.arrivals = {std::chrono::milliseconds(0), std::chrono::milliseconds(100),
                  std::chrono::milliseconds(250)};
    j.options.max_concurrency = 2;
    j.policy = session::cap_policy::drop;
    j.start_monotonic = 1234.5;
    const auto ro = run::runner_options(j);
    ASSERT_TRUE(ro.arrivals);
    EXPECT_EQ(*ro.arrivals, j.arrivals);
    EXPECT_EQ(ro.max_concurrency, 2u);
    EXPECT_EQ(ro.policy, session::cap_policy::drop);
    ASSERT_TRUE(ro.open_loop_start);
    EXPECT_EQ(*ro.open_loop_start, time_point(from_seconds(1234.5)));
}

TEST(RunnerOptions, OpenaiRealtimeResamplesTheInputOnceVllmStreamsItAsItIs) {
    auto j = closed_batch();
    j.realtime = protocol::realtime_protocol::openai;
    j.turns = protocol::realtime_turns::manual;
    j.options.model = "gpt-realtime";
    auto ro = run::runner_options(j);
    EXPECT_EQ(ro.realtime, protocol::realtime_protocol::openai);
    EXPECT_EQ(ro.turns, protocol::realtime_turns::manual);
    EXPECT_EQ(ro.model, "gpt-realtime");
    ASSERT_TRUE(ro.wire_pcm);
    ASSERT_TRUE(ro.wire_pcm.held() && ro.pcm.held());
    EXPECT_EQ(*ro.wire_pcm.held(), runtime::resample_pcm16(*ro.pcm.held(), 16000, 24000));
    EXPECT_NEAR(static_cast<double>(ro.wire_pcm.size()), 12800.0 * 24 / 16, 16)
        << "16 kHz to 24 kHz";

    auto v = closed_batch();
    v.realtime = protocol::realtime_protocol::vllm;
    ro = run::runner_options(v);
    ASSERT_TRUE(ro.wire_pcm);
    EXPECT_EQ(ro.wire_pcm.held(), ro.pcm.held()) << "vllm's wire is the input itself";
}

TEST(RunnerOptions, AWireInputConvertedFromTheFileIsUsedAsItIs) {
    auto j = closed_batch();
    j.realtime = protocol::realtime_protocol::openai;
    j.wire_pcm = std::vector<std::uint8_t>(7, 1);
    const auto ro = run::runner_options(j);
    ASSERT_TRUE(ro.wire_pcm);
    ASSERT_TRUE(ro.wire_pcm.held());
    EXPECT_EQ(*ro.wire_pcm.held(), std::vector<std::uint8_t>(7, 1));
}

TEST(WorkerArgs, ClosedLoopWorkerRunsConcurrencySessionsFromTheSharedStart) {
    run::run_options s; // the defaults of `pacer run`
    s.concurrency = 3;
    s.processes = 2;
    const auto a = run::worker_args(s, "ws://h:1/v1/realtime", "/o/worker-1", 12.5, 1, {},
                                    "/o/worker-1.live.json");
    const args expected{"pacer",
                        "run",
                        "--url",
                        "ws://h:1/v1/realtime",
                        "-c",
                        "3",
                        "--threads",
                        "1",
                        "--stagger-ms",
                        "80",
                        "-o",
                        "/o/worker-1",
                        "--start-at-monotonic",
                        "12.500000000",
                        "--worker-index",
                        "1",
                        "-d",
                        "30s",
                        "--trace",
                        "full",
                        "--stagger-slots",
                        "0",
                        "--no-report",
                        "--progress",
                        "never",
                        "--live-file",
                        "/o/worker-1.live.json",
                        "--profile",
                        "nemotron",
                        "--protocol",
                        "native",
                        "--turns",
                        "server-vad"};
    EXPECT_EQ(a, expected);
}

TEST(WorkerArgs, OpenLoopWorkerRunsItsShardOfTheParentsSchedule) {
    run::run_options s;
    s.processes = 4;
    s.max_concurrency = 8;
    s.cap_policy = "drop";
    s.audio = "speech.wav";
    s.timeout = "5s";
    s.keep_traces = true;
    s.protocol = "vllm-realtime";
    s.model = "m";
    s.inject_stall_ms = 250;
    const auto a = run::worker_args(s, "ws://h:1/v1/realtime", "/o/worker-2", 1.0, 2,
                                    "/o/schedule.json", "/o/worker-2.live.json");
    EXPECT_FALSE(has(a, "-c")) << "the schedule decides the sessions";
    EXPECT_EQ(after(a, "--schedule"), "/o/schedule.json");
    EXPECT_EQ(after(a, "--shard"), "2/4");
    EXPECT_EQ(after(a, "--cap-policy"), "drop");
    EXPECT_EQ(after(a, "--max-concurrency"), "8");
    EXPECT_EQ(after(a, "--audio"), "speech.wav");
    EXPECT_FALSE(has(a, "-d")) << "a file, not silence";
    EXPECT_EQ(after(a, "--timeout"), "5s");
    EXPECT_TRUE(has(a, "--keep-traces"));
    EXPECT_EQ(after(a, "--protocol"), "vllm-realtime");
    EXPECT_EQ(after(a, "--model"), "m");
    EXPECT_EQ(after(a, "--inject-stall-ms"), "250");
    EXPECT_EQ(after(a, "--worker-index"), "2");
}

TEST(WorkerArgs, OptionsLeftAtTheirDefaultsAreNotPassed) {
    run::run_options s;
    const auto a = run::worker_args(s, "ws://h:1/", "/o/w", 0, 0, {}, "/o/w.live.json");
    for (const char* flag :
         {"--timeout", "--model", "--inject-stall-ms", "--keep-traces", "--max-concurrency",
          "--schedule", "--shard", "--ca-file", "--insecure", "--headers-env", "--api-key-env"})
        EXPECT_FALSE(has(a, flag)) << flag;
}

TEST(WorkerArgs, HeaderValuesGoByTheEnvironmentNeverOnTheCommandLine) {
    run::run_options s;
    s.client.ca_file = "ca.pem";
    s.client.insecure = true;
    s.client.api_key_env = "MY_KEY";
    s.client.headers = {"X-Token: secret-value"};
    ::unsetenv("PACER_WORKER_HEADERS");
    const auto a = run::worker_args(s, "wss://h:1/", "/o/w", 0, 0, {}, "/o/w.live.json");
    EXPECT_EQ(after(a, "--ca-file"), "ca.pem");
    EXPECT_TRUE(has(a, "--insecure"));
    EXPECT_EQ(after(a, "--api-key-env"), "MY_KEY");
    EXPECT_EQ(after(a, "--headers-env"), "PACER_WORKER_HEADERS");
    for (const auto& arg : a)
        EXPECT_EQ(arg.find("secret-value"), std::string::npos) << arg;
    const char* env = std::getenv("PACER_WORKER_HEADERS");
    ASSERT_NE(env, nullptr);
    EXPECT_EQ(std::string(env), "X-Token: secret-value");
    ::unsetenv("PACER_WORKER_HEADERS");
}

session::session_result dispatched(std::vector<failure> failures = {}) {
    session::session_result r;
    r.failures = std::move(failures);
    return r;
}

// The text each failure would have in summary.json.
std::vector<std::string> texts(const std::vector<failure>& failures) {
    std::vector<std::string> out;
    for (const auto& f : failures)
        out.push_back(reference_text(f));
    return out;
}

TEST(SessionErrors, EachSessionsErrorsAsTheServerRowCountsThem) {
    std::vector<session::session_result> s(5);
    s[0].complete = true; // nothing to say
    s[1].rejected = true;
    s[2].trace_error = "disk full";
    s[2].failures = {{session::session_errc::timeout, "60"}};
    // s[3]: dispatched, incomplete, and it recorded nothing.
    s[4].dispatched = false; // dropped by the open loop's cap: never ran
    const auto e = run::session_errors(s);
    ASSERT_EQ(e.size(), 5u);
    EXPECT_TRUE(e[0].empty());
    EXPECT_EQ(texts(e[1]),
              (std::vector<std::string>{"admission rejected: HTTP 503, retries exhausted"}));
    EXPECT_EQ(e[1][0].code, session::session_errc::admission_rejected);
    EXPECT_EQ(texts(e[2]),
              (std::vector<std::string>{"Session timeout after 60s", "trace: disk full"}));
    EXPECT_EQ(e[2][1].code, session::session_errc::trace_failed);
    EXPECT_EQ(texts(e[3]),
              (std::vector<std::string>{"incomplete: no drain or no close from the server"}));
    EXPECT_EQ(e[3][0].code, session::session_errc::incomplete);
    EXPECT_TRUE(e[4].empty());
}

TEST(ServerJson, ErrorsByKindAndTheTimeToFirstAudioOfTheFigures) {
    metrics::pacing_figures f;
    f.json["time_to_first_audio_s"] = boost::json::object{{"n", 2}, {"p50", 0.25}};
    std::vector<session::session_result> s(3);
    s[0].admitted = true;
    s[0].failures = {{session::session_errc::timeout, "60"}};
    s[1].admitted = true;
    s[1].failures = {{session::session_errc::timeout_send_pending, "61", {}, 2.0}};
    s[2].rejected = true;
    const auto o = run::server_json(f, s);
    EXPECT_EQ(o.at("time_to_first_audio_s"), f.json.at("time_to_first_audio_s"));
    EXPECT_TRUE(o.at("time_to_first_audio_definition").is_string());
    const auto& kinds = o.at("errors_by_kind").as_array();
    ASSERT_EQ(kinds.size(), 2u);
    EXPECT_EQ(kinds[0].at("kind"), "Timeout");
    EXPECT_EQ(kinds[0].at("sessions"), 2);
    EXPECT_EQ(kinds[1].at("kind"), "admission rejected");
    EXPECT_EQ(kinds[1].at("sessions"), 1);
    EXPECT_TRUE(o.at("unreachable").is_null()) << "sessions reached the server";
}

TEST(ServerJson, UnreachableWhenNoDispatchedSessionConnected) {
    metrics::pacing_figures f;
    f.json["time_to_first_audio_s"] = boost::json::object{{"n", 0}};
    const failure refused{transport::transport_errc::connect_failed, "127.0.0.1:9",
                          boost::asio::error::connection_refused};
    std::vector<session::session_result> s{dispatched({refused}), dispatched({refused}),
                                           dispatched()};
    // A session the cap dropped never tried to connect: it does not stop the verdict.
    s[2].dispatched = false;
    const auto o = run::server_json(f, s);
    ASSERT_TRUE(o.at("unreachable").is_string());
    EXPECT_NE(std::string(o.at("unreachable").as_string()).find("connection refused"),
              std::string::npos)
        << o.at("unreachable");
}

} // namespace

// End to end: `pacer native-mock` and `pacer run --keep-traces` as real processes on loopback,
// then `pacer replay`. Healthy sessions must pass the protocol oracle (docs/protocol.md §4.5) in
// every mode of the mock; a fault hits only the sessions chosen, which fail with the documented
// error line or violation while the others pass. Nothing here asserts a speed.

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <regex>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

struct mock_run {
    temp_dir out;
    run_result run;
    run_result replay;
    value report;
    value mock_stats;

    const boost::json::array& cases() const { return report.at("cases").as_array(); }
    fs::path trace(const value& c) const {
        return fs::path(std::string(c.at("directory").as_string())) / "trace.jsonl";
    }
};

// Starts `pacer native-mock MOCK_FLAGS`, runs `sessions` sessions of `input` silence against
// it, stops the mock (its stats are kept) and replays the run folder.
std::unique_ptr<mock_run> run_and_replay(std::vector<std::string> mock_flags, int sessions,
                                         const std::string& input,
                                         std::vector<std::string> replay_flags = {},
                                         const std::string& timeout = "10s",
                                         const std::vector<std::string>& run_flags = {}) {
    auto r = std::make_unique<mock_run>();
    fs::create_directories(r->out.path());
    const auto stats = r->out / "mock-stats.json";
    mock_flags.insert(mock_flags.end(), {"--stats-output", stats.string()});
    mock_process mock(mock_flags, "native-mock");
    const auto run_dir = r->out / "run";
    std::vector<std::string> run_args{
        "run",       "--url", mock.url(),      "-c", std::to_string(sessions), "-d", input,
        "--timeout", timeout, "--keep-traces", "-o", run_dir.string()};
    run_args.insert(run_args.end(), run_flags.begin(), run_flags.end());
    r->run = run_pacer(run_args);
    EXPECT_EQ(mock.stop(), 0);
    r->mock_stats = read_json(stats);
    replay_flags.insert(replay_flags.begin(), {"replay", run_dir.string()});
    r->replay = run_pacer(replay_flags);
    r->report = read_json(run_dir / "report.json");
    return r;
}

// Every case passes the oracle. The verdict also judges the client's own input timing (an
// append more than 80 ms off its grid fails the case), which a loaded CI host does not always
// keep: a case may fail for that reason alone, and the replay's exit status follows.
void expect_every_case_passes(const mock_run& r) {
    bool all_pass = true;
    for (const auto& c : r.cases()) {
        SCOPED_TRACE(c.at("id").as_string().c_str());
        EXPECT_TRUE(c.at("violations").as_array().empty())
            << boost::json::serialize(c.at("violations"));
        if (c.at("status").as_string() == "pass")
            continue;
        all_pass = false;
        EXPECT_EQ(c.at("status").as_string(), "fail");
        EXPECT_FALSE(c.at("errors").as_array().empty());
        for (const auto& e : c.at("errors").as_array())
            EXPECT_EQ(std::string(e.as_string()).rfind("input pacing deviation ", 0), 0u)
                << boost::json::serialize(c.at("errors"));
    }
    EXPECT_EQ(r.replay.exit_code, all_pass ? 0 : 1) << r.replay.out;
}

// `pacer run` ends 0, or 3 when a loaded host made the client late: either way every session
// completed.
void expect_run_complete(const mock_run& r) {
    EXPECT_TRUE(r.run.exit_code == 0 || r.run.exit_code == 3) << r.run.out;
}

TEST(NativeMockE2E, NemotronSessionsPassTheOracle) {
    // 2 s of input: 25 units of 80 ms, exactly aligned (no tail unit).
    const auto r = run_and_replay({}, 3, "2s");
    expect_run_complete(*r);
    ASSERT_EQ(r->cases().size(), 3u);
    expect_every_case_passes(*r);
    for (const auto& c : r->cases()) {
        const auto& m = c.at("metrics");
        EXPECT_EQ(m.at("input_output_overlap"), true);
        // Output is conserved: 25 units x 1764 samples at 22050 Hz = 2 s.
        EXPECT_DOUBLE_EQ(m.at("output_audio_s").to_number<double>(), 2.0);
        const auto received = types(r->trace(c), "receive");
        EXPECT_EQ(count_of(received, "sglang.unit.done"), 25u);
        EXPECT_EQ(count_of(received, "response.created"), 1u);
        EXPECT_EQ(count_of(received, "response.output_audio.delta"), 26u); // 25 + the flush
        EXPECT_EQ(received.back(), "session.closed");
    }
    EXPECT_EQ(r->mock_stats.at("sessions_completed").to_number<int>(), 3);
    EXPECT_EQ(r->mock_stats.at("units").to_number<int>(), 75);
    EXPECT_EQ(r->mock_stats.at("profile").as_string(), "nemotron-voicechat-pr2188");
    // The run recorded its (default) profile; the replay took it from there.
    EXPECT_EQ(r->report.at("profile").as_string(), "nemotron-voicechat-pr2188");
    EXPECT_EQ(r->report.at("profile_source").as_string(), "recorded");
    for (const auto& l : read_jsonl(r->trace(r->cases()[0])))
        if (at(l, {"event", "type"}).as_string() == "session.update") {
            EXPECT_EQ(boost::json::serialize(at(l, {"event", "session"})),
                      R"({"output_modalities":["audio"]})");
        }
}

TEST(NativeMockE2E, BurstsReleaseUnitsTogetherAndPass) {
    // 1.97 s: 24 whole units and a tail of 50 ms; bursts of 3 leave none held at EOS.
    const auto r = run_and_replay({"--burst-units", "3"}, 3, "1.97s");
    expect_run_complete(*r);
    ASSERT_EQ(r->cases().size(), 3u);
    expect_every_case_passes(*r);
    for (const auto& c : r->cases()) {
        // Between two acceptance receipts, unit.done events come three at a time or not at all.
        std::size_t units = 0, total = 0;
        std::vector<std::size_t> runs;
        for (const auto& t : types(r->trace(c), "receive")) {
            if (t == "sglang.input_audio.accepted" || t == "sglang.input_audio.ended") {
                if (units != 0)
                    runs.push_back(units);
                units = 0;
            } else if (t == "sglang.unit.done") {
                ++units;
                ++total;
            }
        }
        EXPECT_EQ(total, 25u);
        EXPECT_EQ(runs, std::vector<std::size_t>(8, 3)) << c.at("id").as_string();
    }
}

TEST(NativeMockE2E, HeldBurstAndTailLeaveWithTheEndOfInput) {
    // 2.05 s: 25 whole units and a 50 ms tail; bursts of 4 hold one unit at EOS.
    const auto r = run_and_replay({"--burst-units", "4"}, 2, "2.05s");
    expect_run_complete(*r);
    expect_every_case_passes(*r);
    for (const auto& c : r->cases()) {
        const auto received = types(r->trace(c), "receive");
        EXPECT_EQ(count_of(received, "sglang.unit.done"), 26u);
        const auto ended = std::find(received.begin(), received.end(), "sglang.input_audio.ended");
        // The held unit leaves before `ended`; the tail unit after it, before `drained`.
        ASSERT_NE(ended, received.end());
        EXPECT_EQ(*(ended - 1), "sglang.unit.done");
        EXPECT_EQ(std::count(ended, received.end(), "sglang.unit.done"), 1);
    }
}

TEST(NativeMockE2E, MiniCpmRepliesToQuestionsAndPasses) {
    // 3.5 s of 1000 ms units: units 0-2 whole, unit 3 a 500 ms tail. Every second unit ends a
    // question: a reply after unit 1 (mid-stream) and after unit 3 (at the end of input).
    // The run negotiates the profile and records it; the replay, without --profile, judges
    // the sessions as MiniCPM-o.
    const auto r = run_and_replay({"--profile", "minicpmo", "--question-every", "2"}, 2, "3.5s", {},
                                  "10s", {"--profile", "minicpmo"});
    expect_run_complete(*r);
    ASSERT_EQ(r->cases().size(), 2u);
    expect_every_case_passes(*r);
    EXPECT_EQ(r->report.at("profile").as_string(), "minicpmo-native-pr2377");
    EXPECT_EQ(r->report.at("profile_source").as_string(), "recorded");
    for (const auto& c : r->cases()) {
        // The client asked for audio and text, the mock granted both, and named its text
        // events as a session granted text does.
        for (const auto& l : read_jsonl(r->trace(c))) {
            const auto type = at(l, {"event", "type"}).as_string();
            if (type == "session.update") {
                EXPECT_EQ(boost::json::serialize(at(l, {"event", "session"})),
                          R"({"output_modalities":["audio","text"]})");
            }
            if (type == "session.updated") {
                EXPECT_EQ(boost::json::serialize(at(
                              l, {"event", "session", "sglang", "granted", "output_modalities"})),
                          R"(["audio","text"])");
            }
        }
        const auto received = types(r->trace(c), "receive");
        EXPECT_EQ(count_of(received, "response.output_text.delta"), 2u);
        EXPECT_EQ(count_of(received, "response.output_text.done"), 2u);
        EXPECT_EQ(count_of(received, "response.output_audio_transcript.delta"), 0u);
        EXPECT_EQ(count_of(received, "sglang.unit.done"), 4u);
        EXPECT_EQ(count_of(received, "response.created"), 2u);
        EXPECT_EQ(count_of(received, "response.done"), 2u);
        // Two replies of one unit each: 2 x 24000 samples at 24 kHz.
        EXPECT_DOUBLE_EQ(c.at("metrics").at("output_audio_s").to_number<double>(), 2.0);
        // Silent while listening: units 0 and 2 carry no audio, units 1 and 3 speak.
        const auto& units = c.at("units");
        EXPECT_EQ(units.at("success"), true) << units;
        EXPECT_EQ(units.at("completed_units").to_number<int>(), 4) << units;
        EXPECT_EQ(at(units, {"speak_unit_lag_s", "n"}).to_number<int>(), 2) << units;
        EXPECT_EQ(at(units, {"listen_unit_lag_s", "n"}).to_number<int>(), 2) << units;
    }
}

TEST(NativeMockE2E, CapacityModelDelaysOutputAndStillPasses) {
    const auto r =
        run_and_replay({"--unit-latency-ms", "30", "--per-session-cost-ms", "5"}, 3, "1.97s");
    expect_run_complete(*r);
    expect_every_case_passes(*r);
    const auto& lag = r->mock_stats.at("unit_output_lag_s");
    EXPECT_EQ(lag.at("n").to_number<int>(), 3 * 25);
    // A timer never fires early: every unit's output left at least L = 30 ms after its input.
    EXPECT_GE(lag.at("p50").to_number<double>(), 0.030);
    EXPECT_DOUBLE_EQ(r->mock_stats.at("unit_latency_ms").to_number<double>(), 30.0);
}

TEST(NativeMockE2E, RejectedHandshakesAreRetriedAndTheSessionPasses) {
    const auto r = run_and_replay({"--reject-first", "2"}, 1, "1s");
    expect_run_complete(*r);
    expect_every_case_passes(*r);
    EXPECT_EQ(r->cases()[0].at("metrics").at("admission_denials").to_number<int>(), 2);
    EXPECT_EQ(r->mock_stats.at("sessions_rejected").to_number<int>(), 2);
}

TEST(NativeMockE2E, MaxSessionsAdmitsOneAndRejectsTheOther) {
    // The admitted session streams 2 s; the other's four handshakes (0.75 s of backoff) all
    // meet the full server.
    temp_dir out;
    fs::create_directories(out.path());
    const auto stats = out / "mock-stats.json";
    mock_process mock({"--max-sessions", "1", "--stats-output", stats.string()}, "native-mock");
    const auto run_dir = out / "run";
    const auto run = run_pacer({"run", "--url", mock.url(), "-c", "2", "-d", "2s", "--keep-traces",
                                "-o", run_dir.string()});
    EXPECT_PRED1(server_failed_exit, run.exit_code) << run.out; // one session was rejected
    EXPECT_EQ(mock.stop(), 0);
    const auto summary = read_json(run_dir / "summary.json");
    EXPECT_EQ(at(summary, {"pacing", "sessions", "complete"}).to_number<int>(), 1);
    EXPECT_EQ(at(summary, {"pacing", "sessions", "rejected"}).to_number<int>(), 1);
    const auto mock_stats = read_json(stats);
    EXPECT_EQ(at(mock_stats, {"sessions_seen"}).to_number<int>(), 1);
    EXPECT_EQ(at(mock_stats, {"sessions_rejected"}).to_number<int>(), 4);
    int rejected = 0;
    for (const char* id : {"session-000", "session-001"}) {
        std::vector<value> admissions;
        for (auto& l : read_jsonl(run_dir / id / "trace.jsonl"))
            if (at(l, {"direction"}).as_string() == "admission")
                admissions.push_back(at(l, {"event"}));
        if (admissions.empty())
            continue;
        ++rejected;
        ASSERT_EQ(admissions.size(), 4u);
        for (const auto& a : admissions)
            EXPECT_EQ(at(a, {"http_status"}).to_number<int>(), 503);
        EXPECT_TRUE(at(admissions.back(), {"exhausted"}).as_bool());
    }
    EXPECT_EQ(rejected, 1);
}

// ---- fault modes: session 1 (accept order) of three is faulty, the other two stay healthy.

struct fault_case {
    const char* mode;
    const char* timeout;
    // Checks the faulty session's replayed case and trace.
    void (*check)(const value& c, const fs::path& trace);
};

void PrintTo(const fault_case& f, std::ostream* os) {
    *os << f.mode;
}

bool has(const std::vector<std::string>& v, std::string_view s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

void fatal_error_check(const value& c, const fs::path& trace) {
    EXPECT_TRUE(has(strings(c.at("violations")),
                    "server error: code=fixture_failure fatal=True: deliberate peer failure"))
        << c.at("violations");
    EXPECT_TRUE(error_lines(trace).empty());
    // A fatal error: the client never asks to close; the server's session.closed ends it.
    const auto sent = types(trace, "send");
    EXPECT_EQ(count_of(sent, "session.close"), 0u);
    const auto received = types(trace, "receive");
    ASSERT_GE(received.size(), 2u);
    EXPECT_EQ(received[received.size() - 2], "error");
    EXPECT_EQ(received.back(), "session.closed");
}

const fault_case fault_cases[] = {
    {"server_error", "10s", fatal_error_check},
    {"delayed_fatal", "10s", fatal_error_check},
    {"nonfatal_error", "10s",
     [](const value& c, const fs::path& trace) {
         EXPECT_TRUE(has(strings(c.at("violations")),
                         "server error: code=fixture_failure fatal=False: deliberate peer failure"))
             << c.at("violations");
         EXPECT_TRUE(error_lines(trace).empty());
         EXPECT_EQ(count_of(types(trace, "send"), "session.close"), 1u);
         EXPECT_EQ(types(trace, "receive").back(), "session.closed");
     }},
    {"timeout", "3s",
     [](const value&, const fs::path& trace) {
         EXPECT_EQ(error_lines(trace), std::vector<std::string>{"Session timeout after 3.0s"});
     }},
    {"malformed_json", "10s",
     [](const value&, const fs::path& trace) {
         // A failed receive loop is the session's one error: the driver is stopped at once.
         const auto errors = error_lines(trace);
         ASSERT_EQ(errors.size(), 1u);
         EXPECT_EQ(errors[0].rfind("ValueError: malformed server frame ", 0), 0u) << errors[0];
         EXPECT_NE(errors[0].find("{not valid json"), std::string::npos) << errors[0];
         EXPECT_EQ(sends_after_first_error(trace), 0u);
     }},
    {"nonfinite", "10s",
     [](const value&, const fs::path& trace) {
         const auto errors = error_lines(trace);
         ASSERT_EQ(errors.size(), 1u);
         EXPECT_EQ(errors[0].rfind("ValueError: malformed server frame ", 0), 0u) << errors[0];
         EXPECT_NE(errors[0].find("backlog_ms"), std::string::npos) << errors[0];
         EXPECT_EQ(sends_after_first_error(trace), 0u);
     }},
    {"disconnect", "10s",
     [](const value&, const fs::path& trace) {
         // The server's 1011 close is the one error; nothing is sent after it (no further
         // append, no session.close).
         EXPECT_EQ(error_lines(trace),
                   std::vector<std::string>{
                       "ConnectionClosedError: received 1011 (internal error) deliberate "
                       "disconnect; then sent 1011 (internal error) deliberate disconnect"});
         EXPECT_EQ(sends_after_first_error(trace), 0u);
         EXPECT_EQ(count_of(types(trace, "send"), "session.close"), 0u);
     }},
    {"close_without_update", "10s",
     [](const value&, const fs::path& trace) {
         // The receive loop ended normally (session.closed, then the close): the driver, still
         // waiting for session.updated, is reported after its 0.2 s, without a type prefix.
         EXPECT_EQ(error_lines(trace),
                   std::vector<std::string>{"driver stalled after the receive loop"});
         EXPECT_EQ(types(trace, "receive"),
                   (std::vector<std::string>{"session.created", "session.closed"}));
     }},
};

class NativeMockFaultE2E : public ::testing::TestWithParam<fault_case> {};

TEST_P(NativeMockFaultE2E, OnlyTheChosenSessionFails) {
    const auto& f = GetParam();
    const auto r =
        run_and_replay({"--fault", f.mode, "--fault-sessions", "1"}, 3, "1s", {}, f.timeout);
    EXPECT_PRED1(server_failed_exit, r->run.exit_code) << r->run.out;
    EXPECT_EQ(r->replay.exit_code, 1) << r->replay.out;
    EXPECT_EQ(r->mock_stats.at("faults_injected").to_number<int>(), 1);
    ASSERT_EQ(r->cases().size(), 3u);
    // The mock's session 1 carries the fault. The mock numbers sessions as their upgrades
    // complete, which need not be the client's order, so the faulty one is found by what it
    // shows: exactly one session is not healthy. The healthy ones pass the oracle; a loaded
    // host may still make them fail the client's own input timing (an append > 80 ms off its
    // grid), and only that.
    const value* failed = nullptr;
    for (const auto& c : r->cases()) {
        bool healthy = c.at("violations").as_array().empty();
        if (healthy && c.at("status").as_string() != "pass")
            for (const auto& e : c.at("errors").as_array())
                healthy =
                    healthy && std::string(e.as_string()).rfind("input pacing deviation ", 0) == 0;
        if (healthy)
            continue;
        EXPECT_EQ(failed, nullptr) << "a second unhealthy session: " << boost::json::serialize(c);
        failed = &c;
    }
    ASSERT_NE(failed, nullptr);
    EXPECT_EQ(failed->at("status").as_string(), "fail");
    f.check(*failed, r->trace(*failed));
}

INSTANTIATE_TEST_SUITE_P(Modes, NativeMockFaultE2E, ::testing::ValuesIn(fault_cases),
                         [](const auto& info) { return std::string(info.param.mode); });

// Linger: the server keeps the socket open after session.closed. The client stops listening
// after its 0.2 s window and the session still passes (docs/protocol.md §6).
TEST(NativeMockE2E, LingeringServerStillPasses) {
    const auto r = run_and_replay({"--fault", "linger", "--fault-sessions", "0"}, 2, "1s");
    expect_run_complete(*r);
    expect_every_case_passes(*r);
    EXPECT_EQ(r->mock_stats.at("faults_injected").to_number<int>(), 1);
    EXPECT_EQ(r->mock_stats.at("sessions_completed").to_number<int>(), 1);
}

TEST(NativeMockE2E, BadFlagValuesExitTwoWithOneLine) {
    const std::vector<std::vector<std::string>> bad = {
        {"--profile", "bogus"},       {"--profile", "qwen3"},
        {"--fault", "bogus"},         {"--fault-sessions", "1,,2"},
        {"--fault-sessions", "5-2"},  {"--fault-sessions", "x"},
        {"--burst-units", "0"},       {"--question-every", "0"},
        {"--unit-latency-ms", "-1"},  {"--output-sample-rate", "100"},
        {"--no-such-flag", "1"},      {"--playback-commit-policy", "sometimes"},
        {"--reply-delta-ms", "5"},    {"--listen-every", "-1"},
        {"--protocol", "vllm-omnix"},
    };
    for (auto args : bad) {
        const std::string what = args[0] + " " + args[1];
        args.insert(args.begin(), {"native-mock", "--port", "0"});
        const auto r = run_pacer(args);
        EXPECT_EQ(r.exit_code, 2) << what << ": " << r.out;
        EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << what << ": " << r.out;
        EXPECT_EQ(r.out.rfind("pacer: ", 0), 0u) << what << ": " << r.out;
    }
    const auto help = run_pacer({"native-mock", "--help"});
    EXPECT_EQ(help.exit_code, 0);
    for (const char* flag : {"--host",
                             "--port",
                             "--max-sessions",
                             "--reject-first",
                             "--stats-output",
                             "--profile",
                             "--output-sample-rate",
                             "--burst-units",
                             "--question-every",
                             "--unit-latency-ms",
                             "--per-session-cost-ms",
                             "--fault",
                             "--fault-sessions",
                             "--service-ms",
                             "--cold-start-ms",
                             "--cold-start-s",
                             "--threads",
                             "--reply-delta-ms",
                             "--playback-commit-policy",
                             "--require-ref-audio",
                             "--beta-audio-names",
                             "--listen-every",
                             "--model-turns"})
        EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
}

// `GET <target>` on the mock's port (a plain HTTP request, not an upgrade): status and body.
std::pair<int, std::string> http_get(const std::string& ws_url, const std::string& target) {
    namespace asio = boost::asio;
    namespace http = boost::beast::http;
    const auto from = ws_url.rfind(':') + 1;
    const auto port = ws_url.substr(from, ws_url.find('/', from) - from);
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    asio::ip::tcp::resolver resolver(io);
    asio::connect(socket, resolver.resolve("127.0.0.1", port));
    http::request<http::string_body> req{http::verb::get, target, 11};
    req.set(http::field::host, "127.0.0.1");
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    return {static_cast<int>(res.result_int()), res.body()};
}

// The /stats document, after checking that the answer is 200 and that every number in it is
// written in plain decimals (no exponent such as Boost.JSON's `1E0`).
value get_stats(const std::string& ws_url, const std::string& target = "/stats") {
    const auto [status, body] = http_get(ws_url, target);
    EXPECT_EQ(status, 200) << body;
    EXPECT_FALSE(std::regex_search(body, std::regex("[0-9][eE][-+0-9]"))) << body;
    return boost::json::parse(body);
}

double number(const value& doc, std::initializer_list<const char*> path) {
    return at(doc, path).to_number<double>();
}

run_result run_level(const mock_process& mock, const temp_dir& out, int sessions,
                     const std::string& name) {
    return run_pacer({"run", "--url", mock.url(), "-c", std::to_string(sessions), "-d", "1s", "-o",
                      (out / name).string()});
}

// The server's own view: GET /stats answers, ?reset=1 starts a new window, and the cold start
// is paid only when the open sessions reach a new high-water mark: a first level of 2, the same
// level again (no cost), then 3 (a new mark). Asserted on the mock's own counts and on one
// lower bound (a timer never fires early), never on how fast a loaded host ran.
TEST(NativeMockE2E, StatsAnswerResetAndColdStartOnlyOnANewHighWaterMark) {
    temp_dir out;
    fs::create_directories(out.path());
    mock_process mock(
        {"--cold-start-ms", "40", "--cold-start-s", "0.5", "--service-ms", "2", "--threads", "2"},
        "native-mock");
    // Before any session: an empty window with null figures.
    const auto empty = get_stats(mock.url());
    EXPECT_EQ(number(empty, {"sessions_started"}), 0);
    EXPECT_EQ(number(empty, {"units"}), 0);
    EXPECT_EQ(number(empty, {"cold_starts"}), 0);
    for (const char* d : {"unit_latency_s", "queue_wait_s", "batch_size"}) {
        EXPECT_EQ(number(empty, {d, "count"}), 0) << d;
        for (const char* f : {"mean", "p50", "p90", "p95", "p99", "max"})
            EXPECT_TRUE(at(empty, {d, f}).is_null()) << d << " " << f;
    }
    EXPECT_LE(number(empty, {"since_s"}), number(empty, {"now_s"}));
    // Other paths are not served; upgrades to /v1/realtime still are (the runs below).
    EXPECT_EQ(http_get(mock.url(), "/other").first, 400);
    get_stats(mock.url(), "/stats?reset=1");

    // Level 2, first time: the sessions raise the mark (1, then 2): one cold start, and
    // their units pay.
    auto first = run_level(mock, out, 2, "first");
    EXPECT_PRED1(finished, first.exit_code) << first.out;
    const auto w1 = get_stats(mock.url(), "/stats?reset=1");
    ASSERT_EQ(number(w1, {"high_water_sessions"}), 2)
        << "the two sessions of the level did not overlap: " << boost::json::serialize(w1);
    EXPECT_EQ(number(w1, {"sessions_started"}), 2);
    EXPECT_EQ(number(w1, {"cold_starts"}), 1);
    EXPECT_GT(number(w1, {"cold_units"}), 0);
    // 1 s of input: 12 whole units and a tail unit per session, each written once.
    EXPECT_EQ(number(w1, {"units"}), 2 * 13);
    EXPECT_EQ(number(w1, {"unit_latency_s", "count"}), 2 * 13);
    EXPECT_EQ(number(w1, {"queue_wait_s", "count"}), 2 * 13);
    EXPECT_EQ(number(w1, {"batch_size", "count"}), 2 * 13);
    EXPECT_GE(number(w1, {"batch_size", "p50"}), 1);
    // A cold unit leaves 2 ms (the worker) + 40 ms after its input at the earliest.
    EXPECT_GE(number(w1, {"unit_latency_s", "max"}), 0.042);
    EXPECT_GE(number(w1, {"since_s"}), number(empty, {"since_s"}));

    // The reset emptied the window.
    const auto after_reset = get_stats(mock.url());
    EXPECT_EQ(number(after_reset, {"sessions_started"}), 0);
    EXPECT_EQ(number(after_reset, {"units"}), 0);
    EXPECT_EQ(number(after_reset, {"unit_latency_s", "count"}), 0);
    EXPECT_EQ(number(after_reset, {"cold_starts"}), 0);
    EXPECT_GE(number(after_reset, {"since_s"}), number(w1, {"now_s"}));

    // The same level again: no new mark, no unit pays.
    auto again = run_level(mock, out, 2, "again");
    EXPECT_PRED1(finished, again.exit_code) << again.out;
    const auto w2 = get_stats(mock.url(), "/stats?reset=1");
    EXPECT_EQ(number(w2, {"sessions_started"}), 2);
    EXPECT_EQ(number(w2, {"units"}), 2 * 13);
    EXPECT_EQ(number(w2, {"cold_starts"}), 0);
    EXPECT_EQ(number(w2, {"cold_units"}), 0);

    // A higher level: one new mark (3), and its units pay again.
    auto higher = run_level(mock, out, 3, "higher");
    EXPECT_PRED1(finished, higher.exit_code) << higher.out;
    const auto w3 = get_stats(mock.url(), "/stats");
    EXPECT_EQ(number(w3, {"high_water_sessions"}), 3);
    EXPECT_EQ(number(w3, {"cold_starts"}), 1);
    EXPECT_GT(number(w3, {"cold_units"}), 0);
    EXPECT_GE(number(w3, {"unit_latency_s", "max"}), 0.042);

    // Sessions landed on both threads (round robin over 7 sessions).
    const auto& per_thread = at(w3, {"sessions_per_thread"}).as_array();
    ASSERT_EQ(per_thread.size(), 2u);
    for (const auto& n : per_thread)
        EXPECT_GT(n.to_number<int>(), 0) << boost::json::serialize(w3);
    EXPECT_EQ(mock.stop(), 0);
}

// `pacer mock --threads 2`: two sessions, handed to the two threads in turn.
TEST(NativeMockE2E, ProbeMockSpreadsSessionsOverItsThreads) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto stats = out / "mock-stats.json";
    mock_process mock({"--threads", "2", "--stats-output", stats.string()}, "mock");
    const auto run = run_pacer(
        {"run", "--url", mock.url(), "-c", "2", "-d", "1s", "-o", (out / "run").string()});
    EXPECT_PRED1(finished, run.exit_code) << run.out;
    EXPECT_EQ(mock.stop(), 0);
    const auto s = read_json(stats);
    EXPECT_EQ(at(s, {"threads"}).to_number<int>(), 2);
    EXPECT_EQ(boost::json::serialize(at(s, {"sessions_per_thread"})), "[1,1]");
    EXPECT_EQ(at(s, {"sessions_seen"}).to_number<int>(), 2);
    EXPECT_EQ(at(s, {"sessions_completed"}).to_number<int>(), 2);
    // Every append counted once, whichever thread it arrived on: 1 s is 13 appends a session.
    EXPECT_EQ(at(s, {"appends"}).to_number<int>(), 2 * 13);
    EXPECT_EQ(at(s, {"thread_cpu_s_per_thread"}).as_array().size(), 2u);
}

// Without --service-ms and --cold-start-ms the stats still answer: no queue wait, and each
// unit's batch is the job it left in (bursts of 2 here).
TEST(NativeMockE2E, StatsWithoutAWorkerReportJobBatches) {
    temp_dir out;
    fs::create_directories(out.path());
    mock_process mock({"--burst-units", "2"}, "native-mock");
    // 0.96 s: 12 whole units in 6 bursts of 2, no tail.
    const auto run = run_pacer(
        {"run", "--url", mock.url(), "-c", "1", "-d", "0.96s", "-o", (out / "run").string()});
    EXPECT_PRED1(finished, run.exit_code) << run.out;
    const auto w = get_stats(mock.url());
    EXPECT_EQ(number(w, {"units"}), 12);
    EXPECT_EQ(number(w, {"queue_wait_s", "count"}), 12);
    EXPECT_EQ(number(w, {"queue_wait_s", "max"}), 0);
    EXPECT_EQ(number(w, {"batch_size", "p50"}), 2);
    EXPECT_EQ(number(w, {"batch_size", "max"}), 2);
    EXPECT_EQ(number(w, {"backlog_s"}), 0);
    EXPECT_EQ(number(w, {"cold_starts"}), 0);
    EXPECT_EQ(mock.stop(), 0);
}

} // namespace
} // namespace pacer::test

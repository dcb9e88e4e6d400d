// End to end: `pacer llm-mock` and `pacer http` as real processes on loopback. Every fault mode
// of the mock shows up as its error kind in the chosen requests only; nothing crashes, and the
// others complete. Nothing here asserts a speed: a run exits 0 or 3 (the verdict follows
// `schedule_kept`), or 4 / 3 when requests failed.

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <unistd.h>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

struct http_run {
    temp_dir dir;
    run_result run;
    value summary;
    std::vector<value> requests;
    value mock_stats;
};

// Starts `pacer llm-mock MOCK_FLAGS`, runs `pacer http` against it, stops the mock.
std::unique_ptr<http_run> run_http(std::vector<std::string> mock_flags,
                                   std::vector<std::string> http_flags) {
    auto r = std::make_unique<http_run>();
    fs::create_directories(r->dir.path());
    const auto stats = r->dir / "mock-stats.json";
    mock_flags.insert(mock_flags.end(), {"--stats-output", stats.string()});
    mock_process mock(mock_flags, "llm-mock");
    const auto out = r->dir / "run";
    std::vector<std::string> args{"http", "--base-url", mock.http_url(), "--model",
                                  "m",    "-o",         out.string()};
    args.insert(args.end(), http_flags.begin(), http_flags.end());
    r->run = run_pacer(args);
    EXPECT_EQ(mock.stop(), 0);
    r->mock_stats = read_json(stats);
    if (fs::exists(out / "summary.json")) {
        r->summary = read_json(out / "summary.json");
        r->requests = read_jsonl(out / "requests.jsonl");
    }
    return r;
}

std::uint64_t count(const value& v, std::initializer_list<const char*> path) {
    return at(v, path).to_number<std::uint64_t>();
}

// A finished run without failures: 0 when the schedule was kept, 3 when not.
void expect_verdict_matches(const http_run& r) {
    EXPECT_EQ(r.run.exit_code, at(r.summary, {"schedule_kept"}).as_bool() ? 0 : 3) << r.run.out;
}

TEST(HttpE2e, HealthyCompletionsRunRecordsEveryTokenAndTheVllmKeys) {
    auto r = run_http({"--ttft-ms", "2", "--itl-ms", "1"},
                      {"--rate", "100", "--requests", "20", "--output-len", "4", "--goodput",
                       "ttft:60000,e2el:60000"});
    ASSERT_TRUE(finished(r->run.exit_code)) << r->run.out;
    expect_verdict_matches(*r);
    const auto& s = r->summary;
    EXPECT_EQ(count(s, {"completed"}), 20u);
    EXPECT_EQ(count(s, {"failed"}), 0u);
    EXPECT_EQ(count(s, {"total_output_tokens"}), 80u);
    EXPECT_EQ(count(s, {"goodput_requests"}), 20u);
    for (const char* k : {"request_throughput", "output_throughput", "total_token_throughput",
                          "request_goodput", "duration"})
        EXPECT_GT(at(s, {k}).to_number<double>(), 0) << k;
    for (const char* m : {"ttft", "tpot", "itl", "e2el"})
        for (const char* stat : {"mean", "median", "std", "p90", "p95", "p99"}) {
            const std::string key = std::string(stat) + "_" + m + "_ms";
            EXPECT_TRUE(at(s, {key.c_str()}).is_number()) << key;
            EXPECT_TRUE(at(s, {"uncorrected", key.c_str()}).is_number()) << key;
        }
    // Anchored to the schedule: never shorter than the view from dispatch.
    EXPECT_GE(at(s, {"mean_e2el_ms"}).to_number<double>(),
              at(s, {"uncorrected", "mean_e2el_ms"}).to_number<double>());
    EXPECT_EQ(count(s, {"open_loop", "requests", "dispatched"}), 20u);
    EXPECT_EQ(count(s, {"connections", "opened"}) + count(s, {"connections", "reused"}), 20u);
    ASSERT_EQ(r->requests.size(), 20u);
    for (std::size_t i = 0; i < r->requests.size(); ++i) {
        const auto& q = r->requests[i];
        EXPECT_EQ(count(q, {"index"}), i);
        EXPECT_TRUE(at(q, {"error"}).is_null());
        EXPECT_EQ(count(q, {"status"}), 200u);
        EXPECT_EQ(at(q, {"token_times_s"}).as_array().size(), 4u);
        EXPECT_EQ(count(q, {"usage_completion_tokens"}), 4u);
        EXPECT_EQ(count(q, {"usage_prompt_tokens"}), 128u); // the mock counts words too
        EXPECT_LE(at(q, {"scheduled_s"}).to_number<double>(),
                  at(q, {"dispatched_s"}).to_number<double>());
        EXPECT_LE(at(q, {"first_byte_s"}).to_number<double>(),
                  at(q, {"first_token_s"}).to_number<double>());
        EXPECT_LE(at(q, {"first_token_s"}).to_number<double>(),
                  at(q, {"completed_s"}).to_number<double>());
    }
    EXPECT_EQ(count(r->mock_stats, {"completed"}), 20u);
}

TEST(HttpE2e, ChatEndpointWithHeadersAndAnApiKeyThatIsNeverWritten) {
    ::setenv("PACER_E2E_API_KEY", "sk-e2e-secret-4711", 1);
    auto r = run_http({"--ttft-ms", "1", "--itl-ms", "1"},
                      {"--endpoint", "/v1/chat/completions", "--rate", "50", "--requests", "5",
                       "--output-len", "3", "--header", "X-Test: yes", "--api-key-env",
                       "PACER_E2E_API_KEY", "--ignore-eos", "--temperature", "0"});
    ASSERT_TRUE(finished(r->run.exit_code)) << r->run.out;
    EXPECT_EQ(count(r->summary, {"completed"}), 5u);
    EXPECT_EQ(count(r->summary, {"total_output_tokens"}), 15u);
    EXPECT_EQ(count(r->mock_stats, {"with_bearer_token"}), 5u);
    EXPECT_EQ(r->run.out.find("sk-e2e-secret"), std::string::npos);
    for (const auto& e : fs::recursive_directory_iterator(r->dir.path()))
        if (e.is_regular_file()) {
            EXPECT_EQ(slurp(e.path()).find("sk-e2e-secret"), std::string::npos) << e.path();
        }
    const auto dry =
        run_pacer({"http", "--base-url", "http://127.0.0.1:9", "--model", "m", "--rate", "1",
                   "--requests", "1", "--api-key-env", "PACER_E2E_API_KEY", "--dry-run"});
    EXPECT_EQ(dry.exit_code, 0) << dry.out;
    EXPECT_EQ(dry.out.find("sk-e2e-secret"), std::string::npos);
}

struct fault_case {
    const char* fault;
    const char* error;
};

TEST(HttpE2e, EveryFaultModeIsRecordedForTheChosenRequestsOnly) {
    for (const auto& c :
         {fault_case{"server_error", "http_status"}, fault_case{"stall", "timeout"},
          fault_case{"malformed_sse", "malformed_sse"}, fault_case{"disconnect", "disconnect"}}) {
        SCOPED_TRACE(c.fault);
        auto r = run_http(
            {"--ttft-ms", "1", "--itl-ms", "1", "--fault", c.fault, "--fault-requests", "1,3"},
            {"--arrival", "constant", "--rate", "20", "--requests", "6", "--output-len", "4",
             "--timeout", "2s"});
        EXPECT_TRUE(server_failed_exit(r->run.exit_code)) << r->run.out;
        ASSERT_EQ(r->requests.size(), 6u) << r->run.out;
        // The mock numbers requests by arrival at the mock, which the constant 50 ms gaps keep
        // in schedule order unless this host stalls a request by that much: count, then check
        // the kinds.
        EXPECT_EQ(count(r->summary, {"failed"}), 2u);
        EXPECT_EQ(count(r->summary, {"completed"}), 4u);
        EXPECT_EQ(count(r->summary, {"errors", c.error}), 2u);
        std::size_t with_error = 0;
        for (const auto& q : r->requests)
            if (!at(q, {"error"}).is_null()) {
                ++with_error;
                EXPECT_EQ(at(q, {"error"}).as_string(), c.error);
                EXPECT_FALSE(at(q, {"error_message"}).as_string().empty());
            }
        EXPECT_EQ(with_error, 2u);
        EXPECT_EQ(count(r->mock_stats, {"faulted"}), 2u);
    }
}

// Issue 33 item 4: when every request fails nothing was measured: each latency figure is null
// in summary.json and "–" on the terminal (never 0.00), and the errors are printed as `pacer
// run` prints its sessions': by kind with counts, then one message of each kind.
TEST(HttpE2e, EveryRequestFailedLeavesNoLatencyAndPrintsTheErrorsByKind) {
    auto r = run_http({"--ttft-ms", "1", "--itl-ms", "1", "--fault", "server_error"},
                      {"--arrival", "constant", "--rate", "20", "--requests", "3", "--output-len",
                       "2", "--timeout", "5s"});
    EXPECT_TRUE(server_failed_exit(r->run.exit_code)) << r->run.out;
    EXPECT_EQ(count(r->summary, {"failed"}), 3u);
    EXPECT_EQ(count(r->summary, {"completed"}), 0u);
    for (const char* m : {"ttft", "tpot", "itl", "e2el"})
        for (const char* stat : {"mean", "median", "std", "p90", "p95", "p99"}) {
            const std::string key = std::string(stat) + "_" + m + "_ms";
            EXPECT_TRUE(at(r->summary, {key.c_str()}).is_null()) << key;
            EXPECT_TRUE(at(r->summary, {"uncorrected", key.c_str()}).is_null()) << key;
        }
    const auto& out = r->run.out;
    EXPECT_NE(out.find("TTFT ms  mean – std – median – p90 – p95 – p99 –"), std::string::npos)
        << out;
    EXPECT_NE(out.find("errors   by kind: http_status 3 request(s)"), std::string::npos) << out;
    // One example of the kind: the message the requests recorded.
    const std::string message(at(r->requests.at(0), {"error_message"}).as_string());
    ASSERT_FALSE(message.empty());
    EXPECT_NE(out.find("error    http_status (3 request(s)): " + message), std::string::npos)
        << out;
}

TEST(HttpE2e, AdmissionRefusalsAreHttpStatusErrors) {
    // One slot and a 2 s first token: the arrivals 1 ms apart find it taken.
    auto r = run_http({"--ttft-ms", "2000", "--itl-ms", "1", "--max-concurrency", "1"},
                      {"--arrival", "constant", "--rate", "1000", "--requests", "3", "--output-len",
                       "2", "--timeout", "20s"});
    EXPECT_TRUE(server_failed_exit(r->run.exit_code)) << r->run.out;
    const auto rejected = count(r->mock_stats, {"rejected"});
    EXPECT_GE(rejected, 1u);
    EXPECT_EQ(count(r->summary, {"errors", "http_status"}), rejected);
    for (const auto& q : r->requests)
        if (!at(q, {"error"}).is_null()) {
            EXPECT_EQ(count(q, {"status"}), 503u);
        }
}

TEST(HttpE2e, DropPolicySkipsArrivalsThatFindTheCapFull) {
    auto r = run_http({"--ttft-ms", "2000", "--itl-ms", "1"},
                      {"--arrival", "constant", "--rate", "1000", "--requests", "4", "--output-len",
                       "1", "--max-concurrency", "1", "--cap-policy", "drop", "--timeout", "20s"});
    ASSERT_TRUE(finished(r->run.exit_code)) << r->run.out;
    const auto dropped = count(r->summary, {"dropped"});
    EXPECT_GE(dropped, 1u);
    EXPECT_EQ(count(r->summary, {"open_loop", "cap", "dropped"}), dropped);
    EXPECT_TRUE(at(r->summary, {"open_loop", "cap", "binding"}).as_bool());
    std::size_t marked = 0;
    for (const auto& q : r->requests)
        marked += at(q, {"dropped"}).as_bool() ? 1 : 0;
    EXPECT_EQ(marked, dropped);
    EXPECT_EQ(count(r->summary, {"completed"}) + dropped, 4u);
}

TEST(HttpE2e, SigintStopsDispatchWritesTheFilesAndExits130) {
    temp_dir dir;
    fs::create_directories(dir.path());
    mock_process mock({"--ttft-ms", "1", "--itl-ms", "1"}, "llm-mock");
    const auto out = dir / "run";
    child c({PACER_BINARY, "http", "--base-url", mock.http_url(), "--model", "m", "--arrival",
             "constant", "--rate", "10", "--requests", "1000", "--output-len", "1", "-o",
             out.string()});
    ASSERT_TRUE(poll_until([&] { return fs::exists(out); }));
    c.signal(SIGINT);
    const std::string text = c.read_all();
    EXPECT_EQ(c.wait(), 130) << text;
    // Issue 33 item 6: said on the table, as run, serve and record say it.
    EXPECT_NE(text.find("  INTERRUPTED by a signal: the summary covers the arrivals dispatched "
                        "until then\n"),
              std::string::npos)
        << text;
    const auto s = read_json(out / "summary.json");
    EXPECT_TRUE(at(s, {"interrupted"}).as_bool());
    EXPECT_LT(count(s, {"open_loop", "requests", "dispatched"}), 1000u);
    EXPECT_EQ(read_jsonl(out / "requests.jsonl").size(), 1000u);
    EXPECT_EQ(mock.stop(), 0);
}

// --confirm and --verify-repeats shape the capacity search: without --find-capacity each is one
// line and exit 2, before any server is reached or any folder made.
TEST(HttpE2e, ConfirmAndVerifyRepeatsNeedFindCapacity) {
    const auto out = std::filesystem::temp_directory_path() /
                     ("pacer-http-confirm-" + std::to_string(::getpid()));
    for (const char* flag : {"--confirm", "--verify-repeats"}) {
        const auto r =
            run_pacer({"http", "--base-url", "http://127.0.0.1:1", "--model", "m", "--rate", "1",
                       "--duration", "1s", flag, "1", "-o", out.string()});
        EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.out;
        EXPECT_NE(r.out.find("add --find-capacity"), std::string::npos) << r.out;
        EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
        EXPECT_FALSE(std::filesystem::exists(out)) << flag;
    }
}

TEST(HttpE2e, FindCapacityProbesRatesEachInItsOwnFolder) {
    // One slot and a 30 ms first token: a rate far above 30/s gets 503s, so the search stops.
    auto r = run_http({"--ttft-ms", "30", "--itl-ms", "1", "--max-concurrency", "1"},
                      {"--rate", "10", "--duration", "1s", "--output-len", "2", "--goodput",
                       "e2el:5000", "--find-capacity", "--capacity-steps", "1"});
    ASSERT_TRUE(finished(r->run.exit_code)) << r->run.out;
    const auto doc = read_json(r->dir / "run" / "capacity.json");
    const auto& probes = at(doc, {"probes"}).as_array();
    ASSERT_FALSE(probes.empty());
    std::optional<double> best;
    bool any_unkept = false;
    for (const auto& p : probes) {
        const auto folder = r->dir / "run" / std::string(at(p, {"folder"}).as_string());
        const auto s = read_json(folder / "summary.json");
        EXPECT_EQ(at(s, {"schedule_kept"}).as_bool(), at(p, {"schedule_kept"}).as_bool());
        const bool pass = at(p, {"schedule_kept"}).as_bool() &&
                          at(p, {"goodput_fraction"}).to_number<double>() >= 0.95;
        EXPECT_EQ(at(p, {"passed"}).as_bool(), pass);
        any_unkept = any_unkept || !at(p, {"schedule_kept"}).as_bool();
        if (pass)
            best = std::max(best.value_or(0), at(p, {"rate"}).to_number<double>());
    }
    if (best)
        EXPECT_EQ(at(doc, {"capacity_rps"}).to_number<double>(), *best);
    else
        EXPECT_TRUE(at(doc, {"capacity_rps"}).is_null());
    EXPECT_EQ(r->run.exit_code, any_unkept ? 3 : 0);
}

// Issue 33 item 16: every JSON file of an http run, of a capacity search, of the mock's
// statistics and of a `pacer run` writes its numbers as plain decimals (`9.917`, `70.0`), not
// Boost.JSON's `9.917E0` and `7E1`.
TEST(HttpE2e, ResultFilesWritePlainDecimals) {
    auto r = run_http({"--ttft-ms", "2", "--itl-ms", "1"},
                      {"--rate", "10", "--duration", "0.5s", "--output-len", "2", "--goodput",
                       "e2el:5000", "--find-capacity", "--capacity-steps", "1"});
    ASSERT_TRUE(finished(r->run.exit_code)) << r->run.out;
    const auto run_dir = r->dir / "run-ws";
    const auto ws =
        run_pacer({"run", "-c", "1", "-d", "1s", "--no-report", "-o", run_dir.string()});
    ASSERT_TRUE(finished(ws.exit_code)) << ws.out;
    // A JSON number (after `:`, `,` or `[`, not inside a string such as a digest) in exponent
    // form.
    const std::regex exponent_form("[:,\\[]\\s*(-?[0-9]+(\\.[0-9]+)?[eE][-+]?[0-9]+)");
    std::size_t files = 0, doubles = 0;
    for (const auto& e : fs::recursive_directory_iterator(r->dir.path())) {
        const auto ext = e.path().extension();
        if (!e.is_regular_file() || (ext != ".json" && ext != ".jsonl") ||
            e.path().filename() == "trace.jsonl")
            continue;
        ++files;
        const std::string text = slurp(e.path());
        // No exponent below 1e16 (not even Python's 5e-05: json_text writes 0.00005).
        for (auto it = std::sregex_iterator(text.begin(), text.end(), exponent_form);
             it != std::sregex_iterator(); ++it) {
            const std::string number = (*it)[1];
            const double v = std::abs(std::strtod(number.c_str(), nullptr));
            EXPECT_GE(v, 1e16) << e.path() << ": " << number;
        }
        doubles += std::count(text.begin(), text.end(), '.');
    }
    // The capacity document, each probe's summary and requests, the mock's stats, the run's.
    EXPECT_GE(files, 6u);
    EXPECT_GT(doubles, 0u);
    EXPECT_NE(slurp(r->dir / "run" / "capacity.json").find("\"rate\":10.0"), std::string::npos);
}

// Issue 33, open-loop stages in `pacer http` run end to end: the arrivals follow the stages and
// summary.json has one row per stage counting what the stage offered and what completed.
TEST(HttpE2e, StagesGiveOneRowPerStageCountingItsArrivals) {
    auto r =
        run_http({"--ttft-ms", "1", "--itl-ms", "1"},
                 {"--arrival", "constant", "--stages", "1.25s:2/s,1s:2-6/s", "--output-len", "1"});
    ASSERT_TRUE(finished(r->run.exit_code)) << r->run.out;
    expect_verdict_matches(*r);
    EXPECT_EQ(at(r->summary, {"schedule", "stages"}).as_string(), "1s250ms:2/s,1s:2-6/s")
        << "the stages' canonical text";
    EXPECT_TRUE(at(r->summary, {"schedule", "rate"}).is_null());
    // 2/s for 1.25 s places arrivals at 0.5 s and 1 s; the ramp adds 4 more (its mean rate, 4/s,
    // for 1 s) at 1.5 to 2.1 s. No arrival falls on the boundary.
    ASSERT_EQ(r->requests.size(), 6u);
    std::uint64_t first_stage = 0;
    for (const auto& q : r->requests)
        first_stage += at(q, {"scheduled_s"}).to_number<double>() < 1.25;
    EXPECT_EQ(first_stage, 2u);
    const auto& rows = at(r->summary, {"open_loop", "stages"}).as_array();
    ASSERT_EQ(rows.size(), 2u) << boost::json::serialize(r->summary);
    EXPECT_EQ(count(rows[0], {"offered"}), first_stage);
    EXPECT_EQ(count(rows[1], {"offered"}), 6u - first_stage);
    EXPECT_EQ(at(rows[1], {"target_from_per_s"}).to_number<double>(), 2.0);
    EXPECT_EQ(at(rows[1], {"target_to_per_s"}).to_number<double>(), 6.0);
    for (const auto& row : rows) // every request of this healthy mock completes
        EXPECT_EQ(count(row, {"completed"}), count(row, {"offered"})) << row;
}

// Every probe misses the SLO (no request completes within 1 ms), so the search halves the rate
// until --duration holds no arrival: it stops there with no capacity (it used to fail with
// "shard 0/1 gets no arrival").
TEST(HttpE2e, FindCapacityStopsWhenHalvingLeavesNoArrival) {
    auto r = run_http({"--ttft-ms", "30", "--itl-ms", "1"},
                      {"--rate", "4", "--duration", "1s", "--output-len", "2", "--goodput",
                       "e2el:1", "--find-capacity", "--capacity-steps", "1"});
    ASSERT_TRUE(finished(r->run.exit_code)) << r->run.out;
    EXPECT_NE(r->run.out.find("gives no arrival: the search stops here"), std::string::npos)
        << r->run.out;
    const auto doc = read_json(r->dir / "run" / "capacity.json");
    EXPECT_TRUE(at(doc, {"capacity_rps"}).is_null());
    for (const auto& p : at(doc, {"probes"}).as_array())
        EXPECT_FALSE(at(p, {"passed"}).as_bool());
}

TEST(HttpE2e, AShardRunsItsArrivalsOfTheOneSchedule) {
    auto r = run_http({"--ttft-ms", "1", "--itl-ms", "1"},
                      {"--rate", "50", "--requests", "6", "--output-len", "1", "--shard", "1/2"});
    ASSERT_TRUE(finished(r->run.exit_code)) << r->run.out;
    ASSERT_EQ(r->requests.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_EQ(count(r->requests[i], {"index"}), 2 * i + 1);
    EXPECT_EQ(at(r->summary, {"schedule", "shard"}).as_string(), "1/2");
}

TEST(HttpE2e, AnUnreachableServerIsConnectErrorsNotACrash) {
    temp_dir dir;
    const auto out = dir / "run";
    const auto res =
        run_pacer({"http", "--base-url", "http://127.0.0.1:" + closed_port(), "--model", "m",
                   "--rate", "100", "--requests", "3", "-o", out.string()});
    // 4 however late the dispatches were: requests that reached nobody give no client verdict.
    EXPECT_EQ(res.exit_code, 4) << res.out;
    EXPECT_NE(res.out.find("schedule not judged: no request reached the server"), std::string::npos)
        << res.out;
    const auto s = read_json(out / "summary.json");
    EXPECT_EQ(count(s, {"errors", "connect"}), 3u);
}

TEST(HttpE2e, FindCapacityStopsAtAnUnreachableServerWithExitFour) {
    temp_dir dir;
    const auto out = dir / "run";
    const auto res = run_pacer({"http", "--base-url", "http://127.0.0.1:" + closed_port(),
                                "--model", "m", "--rate", "20", "--duration", "1s", "--goodput",
                                "e2el:1000", "--find-capacity", "-o", out.string()});
    EXPECT_EQ(res.exit_code, 4) << res.out;
    EXPECT_NE(res.out.find("no request reached the server: the search stopped (exit 4)"),
              std::string::npos)
        << res.out;
    const auto doc = read_json(out / "capacity.json");
    EXPECT_TRUE(at(doc, {"unreachable"}).as_bool());
    EXPECT_FALSE(at(doc, {"client_limited"}).as_bool());
    EXPECT_TRUE(at(doc, {"capacity_rps"}).is_null());
    ASSERT_EQ(at(doc, {"probes"}).as_array().size(), 1u) << res.out;
    EXPECT_FALSE(at(doc, {"probes"}).as_array()[0].at("passed").as_bool());
}

TEST(HttpE2e, BadInputIsOneLineExitTwoAndNothingWritten) {
    temp_dir dir;
    fs::create_directories(dir.path());
    const auto out = dir / "run";
    ::unsetenv("PACER_E2E_UNSET_KEY");
    const std::vector<std::vector<std::string>> cases = {
        {"--base-url", "ftp://127.0.0.1:8000", "--rate", "1", "--requests", "1"},
        {"--base-url", "http://127.0.0.1:8000", "--rate", "1"},
        {"--base-url", "http://127.0.0.1:8000", "--rate", "1", "--requests", "1", "--endpoint",
         "/v1/embeddings"},
        {"--base-url", "http://127.0.0.1:8000", "--rate", "1", "--requests", "1", "--api-key-env",
         "PACER_E2E_UNSET_KEY"},
        {"--base-url", "http://127.0.0.1:8000", "--rate", "1", "--requests", "1", "--goodput",
         "ttft:fast"},
        {"--base-url", "http://127.0.0.1:8000", "--rate", "1", "--requests", "1", "--header",
         "no colon"},
        {"--base-url", "http://127.0.0.1:8000", "--rate", "1", "--requests", "1", "--prompts",
         (dir / "missing.jsonl").string()},
        {"--base-url", "http://127.0.0.1:8000", "--rate", "1", "--requests", "1",
         "--find-capacity"},
    };
    for (auto args : cases) {
        args.insert(args.begin(), {"http", "--model", "m", "-o", out.string()});
        const auto res = run_pacer(args);
        EXPECT_EQ(res.exit_code, 2) << res.out;
        EXPECT_EQ(res.out.rfind("pacer: ", 0), 0u) << res.out;
        EXPECT_EQ(std::count(res.out.begin(), res.out.end(), '\n'), 1) << res.out;
        EXPECT_FALSE(fs::exists(out));
    }
    const auto ftp = run_pacer({"http", "--model", "m", "--base-url", "ftp://h", "--rate", "1",
                                "--requests", "1", "-o", out.string()});
    EXPECT_NE(ftp.out.find("must start with http:// or https://"), std::string::npos) << ftp.out;
}

TEST(HttpE2e, PromptFileAndDryRun) {
    temp_dir dir;
    fs::create_directories(dir.path());
    const auto prompts = dir / "prompts.jsonl";
    {
        std::ofstream f(prompts);
        f << "{\"prompt\": \"one two three\", \"output_len\": 2}\n{\"prompt\": \"four\"}\n";
    }
    const auto out = dir / "run";
    const auto dry = run_pacer({"http", "--base-url", "http://127.0.0.1:9", "--model", "m",
                                "--rate", "10", "--requests", "4", "--prompts", prompts.string(),
                                "-o", out.string(), "--dry-run"});
    EXPECT_EQ(dry.exit_code, 0) << dry.out;
    EXPECT_NE(dry.out.find("2 lines"), std::string::npos) << dry.out;
    EXPECT_FALSE(fs::exists(out));

    mock_process mock({"--ttft-ms", "1", "--itl-ms", "1"}, "llm-mock");
    const auto res = run_pacer({"http", "--base-url", mock.http_url(), "--model", "m", "--rate",
                                "50", "--requests", "4", "--prompts", prompts.string(),
                                "--output-len", "3", "-o", out.string()});
    EXPECT_TRUE(finished(res.exit_code)) << res.out;
    const auto q = read_jsonl(out / "requests.jsonl");
    ASSERT_EQ(q.size(), 4u);
    EXPECT_EQ(count(q[0], {"input_len"}), 3u);
    EXPECT_EQ(count(q[0], {"output_tokens"}), 2u);
    EXPECT_EQ(count(q[1], {"output_tokens"}), 3u);
    EXPECT_EQ(count(q[2], {"usage_prompt_tokens"}), 3u);
    EXPECT_EQ(mock.stop(), 0);
}

} // namespace
} // namespace pacer::test

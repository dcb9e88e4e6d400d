// End to end over TLS for `pacer http`: `pacer llm-mock --tls-cert/--tls-key` with a throwaway
// self-signed pair made here (OpenSSL's API), `pacer http --base-url https://…` against it:
// verified by --ca-file, unverified with --insecure (said on stderr and in summary.json),
// refused in one line without a trusted CA; the API key reaches the server and appears in no
// file and no printed line. Nothing here asserts a speed: a finished run exits 0 or 3.

#include <gtest/gtest.h>

#include "integration/cli_process.hpp"
#include "integration/process.hpp"
#include "integration/tls_files.hpp"
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

// A folder with cert.pem and key.pem, the llm-mock serving https:// with them, and the folder
// for a run.
struct tls_llm {
    temp_dir dir;
    fs::path cert, key, stats, out;
    std::unique_ptr<mock_process> mock;
    std::string port;

    tls_llm() {
        fs::create_directories(dir.path());
        cert = dir / "cert.pem";
        key = dir / "key.pem";
        stats = dir / "mock-stats.json";
        out = dir / "run";
        make_self_signed(cert, key);
        mock = std::make_unique<mock_process>(
            std::vector<std::string>{"--tls-cert", cert.string(), "--tls-key", key.string(),
                                     "--ttft-ms", "1", "--itl-ms", "1", "--stats-output",
                                     stats.string()},
            "llm-mock");
        const auto ws = mock->url(); // ws://127.0.0.1:PORT/v1/realtime: only the port is ours
        const auto colon = ws.rfind(':');
        port = ws.substr(colon + 1, ws.find('/', colon) - colon - 1);
    }
    std::string url() const { return "https://127.0.0.1:" + port; }
    std::vector<std::string> http(std::vector<std::string> extra) const {
        std::vector<std::string> a{
            "http", url(),          "--model", "m",         "--rate", "50", "--requests",
            "4",    "--output-len", "2",       "--timeout", "20s",    "-o", out.string()};
        a.insert(a.begin() + 1, "--base-url");
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    value stop_and_read_stats() {
        EXPECT_EQ(mock->stop(), 0);
        return read_json(stats);
    }
};

std::uint64_t count(const value& v, std::initializer_list<const char*> path) {
    return at(v, path).to_number<std::uint64_t>();
}

// Every regular file under `dir` whose bytes contain `needle`.
std::vector<std::string> files_containing(const fs::path& dir, const std::string& needle) {
    std::vector<std::string> hits;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && read_whole(e.path()).find(needle) != std::string::npos)
            hits.push_back(e.path().string());
    return hits;
}

TEST(HttpTlsE2E, HttpsWithCaFileCompletesAndTimesTheTlsHandshakeApart) {
    tls_llm t;
    const auto r = run_cli(t.http({"--ca-file", t.cert.string()}));
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto s = read_json(t.out / "summary.json");
    EXPECT_EQ(r.exit_code, at(s, {"schedule_kept"}).as_bool() ? 0 : 3);
    EXPECT_EQ(count(s, {"completed"}), 4u);
    EXPECT_EQ(count(s, {"failed"}), 0u);
    EXPECT_TRUE(at(s, {"tls", "enabled"}).as_bool());
    EXPECT_FALSE(at(s, {"tls", "insecure"}).as_bool());
    EXPECT_EQ(at(s, {"tls", "ca_file"}).as_string(), t.cert.string());
    EXPECT_EQ(at(s, {"config", "base_url"}).as_string(), t.url());
    // Every connection opened did its TLS handshake, timed apart from the TCP connect.
    const auto opened = count(s, {"connections", "opened"});
    EXPECT_GE(opened, 1u);
    EXPECT_EQ(count(s, {"connections", "tls_handshake_s", "n"}), opened);
    EXPECT_EQ(count(s, {"connections", "connect_s", "n"}), opened);
    std::size_t with_handshake = 0;
    for (const auto& q : read_jsonl(t.out / "requests.jsonl"))
        if (!at(q, {"tls_handshake_ms"}).is_null()) {
            ++with_handshake;
            EXPECT_FALSE(at(q, {"connect_ms"}).is_null());
            EXPECT_GE(at(q, {"tls_handshake_ms"}).to_number<double>(), 0.0);
        }
    EXPECT_EQ(with_handshake, opened);
    EXPECT_NE(r.out.find("https://, certificate verified against " + t.cert.string()),
              std::string::npos)
        << r.out;
    const auto stats = t.stop_and_read_stats();
    EXPECT_TRUE(at(stats, {"tls"}).as_bool());
    EXPECT_EQ(count(stats, {"completed"}), 4u);
}

TEST(HttpTlsE2E, WithoutCaFileTheSelfSignedServerIsUnreachableInOneLine) {
    tls_llm t;
    // The system CA store does not know the throwaway certificate.
    const auto r = run_cli(t.http({}));
    EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
    const auto s = read_json(t.out / "summary.json");
    EXPECT_EQ(count(s, {"completed"}), 0u);
    EXPECT_EQ(count(s, {"errors", "connect"}), 4u);
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(lines[0].rfind("pacer: cannot reach " + t.url() + ": TLS handshake with 127.0.0.1:" +
                                 t.port + ": certificate verify failed: self-signed certificate",
                             0),
              0u)
        << lines[0];
    EXPECT_NE(lines[0].find("see --ca-file"), std::string::npos) << lines[0];
    const auto stats = t.stop_and_read_stats();
    EXPECT_EQ(count(stats, {"requests"}), 0u);
    EXPECT_GE(count(stats, {"tls_handshake_failures"}), 1u);
}

TEST(HttpTlsE2E, InsecureConnectsAndIsSaidOnStderrAndInTheSummary) {
    tls_llm t;
    const auto r = run_cli(t.http({"--insecure"}));
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto s = read_json(t.out / "summary.json");
    EXPECT_EQ(count(s, {"completed"}), 4u);
    EXPECT_TRUE(at(s, {"tls", "insecure"}).as_bool());
    EXPECT_TRUE(at(s, {"tls", "ca_file"}).is_null());
    EXPECT_NE(r.err.find("WARNING: --insecure: the server's certificate is NOT verified"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("WARNING, the server's certificate was NOT verified"), std::string::npos)
        << r.out;
    t.stop_and_read_stats();
}

TEST(HttpTlsE2E, TheApiKeyReachesTheServerOverTlsButNoFileNorOutput) {
    tls_llm t;
    const std::string key = "sk-live-http-5e1d9a7c3b";
    cli_options o;
    o.env = {{"PACER_TEST_LLM_KEY", key}};
    const auto r =
        run_cli(t.http({"--ca-file", t.cert.string(), "--api-key-env", "PACER_TEST_LLM_KEY",
                        "--header", "x-tenant: acme-secret-tenant"}),
                o);
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto stats = t.stop_and_read_stats();
    EXPECT_EQ(count(stats, {"with_bearer_token"}), 4u);
    for (const std::string& secret : {key, std::string("acme-secret-tenant")}) {
        EXPECT_EQ(files_containing(t.out, secret), std::vector<std::string>{}) << secret;
        EXPECT_EQ(r.out.find(secret), std::string::npos) << r.out;
        EXPECT_EQ(r.err.find(secret), std::string::npos) << r.err;
    }
    const auto s = read_json(t.out / "summary.json");
    const auto& names = at(s, {"config", "header_names"}).as_array();
    EXPECT_EQ(names.size(), 2u);
}

TEST(HttpTlsE2E, TlsFlagsAreBadInputOutsideHttpsOrTogether) {
    temp_dir dir;
    fs::create_directories(dir.path());
    const auto pem = dir / "ca.pem";
    { std::ofstream(pem) << "not a certificate\n"; }
    const auto out = dir / "run";
    const std::vector<std::string> base{"http",       "--model", "m",  "--rate",    "1",
                                        "--requests", "1",       "-o", out.string()};
    const auto with = [&](std::vector<std::string> extra) {
        auto a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return run_cli(a);
    };
    for (const auto& [extra, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--base-url", "http://127.0.0.1:9", "--insecure"}, "--insecure is for https://"},
             {{"--base-url", "http://127.0.0.1:9", "--ca-file", pem.string()},
              "--ca-file is for https://"},
             {{"--base-url", "https://127.0.0.1:9", "--insecure", "--ca-file", pem.string()},
              "--insecure verifies nothing"},
             {{"--base-url", "https://127.0.0.1:9", "--ca-file", pem.string()},
              "cannot load CA certificates"}}) {
        const auto r = with(extra);
        EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
        ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out));
    }
}

TEST(HttpTlsE2E, LlmMockTakesTheCertificateAndKeyTogether) {
    temp_dir dir;
    fs::create_directories(dir.path());
    make_self_signed(dir / "cert.pem", dir / "key.pem");
    const auto r =
        run_cli({"llm-mock", "--port", "0", "--tls-key", (dir / "key.pem").string(), "--dry-run"});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--tls-cert and --tls-key go together"), std::string::npos) << r.err;
    const auto ok = run_cli({"llm-mock", "--port", "0", "--tls-cert", (dir / "cert.pem").string(),
                             "--tls-key", (dir / "key.pem").string(), "--dry-run"});
    EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
    EXPECT_NE(ok.out.find("https:// (TLS, certificate"), std::string::npos) << ok.out;
}

// The verdict of `pacer http` is `pacer run`'s open-loop rule, stated in the summary.
TEST(HttpVerdictE2E, TheScheduleVerdictIsTheOpenLoopRuleOfPacerRun) {
    temp_dir dir;
    fs::create_directories(dir.path());
    mock_process mock({"--ttft-ms", "1", "--itl-ms", "1"}, "llm-mock");
    const auto ws = mock.url();
    const auto colon = ws.rfind(':');
    const auto port = ws.substr(colon + 1, ws.find('/', colon) - colon - 1);
    const auto out = dir / "run";
    const auto r =
        run_cli({"http", "--base-url", "http://127.0.0.1:" + port, "--model", "m", "--rate", "50",
                 "--requests", "3", "--output-len", "2", "-o", out.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto s = read_json(out / "summary.json");
    EXPECT_EQ(r.exit_code, at(s, {"schedule_kept"}).as_bool() ? 0 : 3);
    EXPECT_DOUBLE_EQ(
        at(s, {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_p99"}).as_double(), 0.005);
    EXPECT_DOUBLE_EQ(
        at(s, {"open_loop", "schedule_kept_thresholds_s", "dispatch_lag_max"}).as_double(), 0.080);
    EXPECT_EQ(mock.stop(), 0);
}

// `--pause-ms P --pause-every-ms E` holds the tokens due in a pause (counted in the stats).
TEST(HttpVerdictE2E, LlmMockPausesHoldTokensDueInAPause) {
    temp_dir dir;
    fs::create_directories(dir.path());
    const auto stats = dir / "mock-stats.json";
    mock_process mock({"--ttft-ms", "1", "--itl-ms", "1", "--pause-ms", "50", "--pause-every-ms",
                       "100", "--stats-output", stats.string()},
                      "llm-mock");
    const auto ws = mock.url();
    const auto colon = ws.rfind(':');
    const auto port = ws.substr(colon + 1, ws.find('/', colon) - colon - 1);
    const auto out = dir / "run";
    // Arrivals every 10 ms for 0.3 s: half of the time is paused, so tokens fall in pauses.
    const auto r = run_cli({"http", "--base-url", "http://127.0.0.1:" + port, "--model", "m",
                            "--arrival", "constant", "--rate", "100", "--requests", "30",
                            "--output-len", "2", "-o", out.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    EXPECT_EQ(mock.stop(), 0);
    const auto st = read_json(stats);
    EXPECT_EQ(count(st, {"completed"}), 30u);
    EXPECT_GT(count(st, {"paused_tokens"}), 0u);
    const auto bad =
        run_cli({"llm-mock", "--pause-ms", "100", "--pause-every-ms", "50", "--dry-run"});
    EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
}

// The descriptors asked for are those of the requests that can be in flight (the arrivals
// within one --timeout), not one per request of the schedule.
TEST(HttpVerdictE2E, DescriptorsAreSizedByTheRequestsInFlightNotTheWholeSchedule) {
    temp_dir dir;
    fs::create_directories(dir.path());
    mock_process mock({"--ttft-ms", "1", "--itl-ms", "1"}, "llm-mock");
    const auto ws = mock.url();
    const auto colon = ws.rfind(':');
    const auto port = ws.substr(colon + 1, ws.find('/', colon) - colon - 1);
    const auto out = dir / "run";
    cli_options o;
    o.nofile = 400; // 600 requests, at most 201 within any 1 s window
    const auto r = run_cli({"http", "--base-url", "http://127.0.0.1:" + port, "--model", "m",
                            "--arrival", "constant", "--rate", "200", "--requests", "600",
                            "--output-len", "1", "--timeout", "1s", "-o", out.string()},
                           o);
    EXPECT_NE(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(fs::exists(out / "summary.json")) << r.err;
    EXPECT_EQ(mock.stop(), 0);
    // Refused before anything is created when even that does not fit.
    o.nofile = 100;
    const auto out2 = dir / "run2";
    const auto low = run_cli({"http", "--base-url", "http://127.0.0.1:" + port, "--model", "m",
                              "--arrival", "constant", "--rate", "200", "--requests", "600",
                              "--timeout", "1s", "-o", out2.string()},
                             o);
    EXPECT_EQ(low.exit_code, 2) << low.out << low.err;
    EXPECT_NE(low.err.find("file descriptors"), std::string::npos) << low.err;
    EXPECT_FALSE(fs::exists(out2));
}

} // namespace
} // namespace pacer::test

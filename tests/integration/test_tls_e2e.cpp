// End to end over TLS: `pacer native-mock --tls-cert/--tls-key` with a throwaway self-signed
// pair made here (OpenSSL's API, so CI needs no `openssl` tool), `pacer run --url wss://…`
// against it: verified by --ca-file, unverified with --insecure, refused without a trusted CA;
// `--header` and `--api-key-env` reach the server while their values appear in no file and in
// no printed line. Nothing here asserts a speed.

#include <gtest/gtest.h>

#include "integration/cli_process.hpp"
#include "integration/process.hpp"
#include "integration/tls_files.hpp"
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

// A folder with cert.pem and key.pem in it.
struct tls_files {
    temp_dir dir;
    fs::path cert, key;
    tls_files() {
        fs::create_directories(dir.path());
        cert = dir / "cert.pem";
        key = dir / "key.pem";
        make_self_signed(cert, key);
    }
};

// `pacer native-mock` serving wss:// with the pair; `stats` receives its stats on stop.
struct tls_mock {
    tls_mock(const tls_files& f, const fs::path& stats)
        : mock({"--tls-cert", f.cert.string(), "--tls-key", f.key.string(), "--stats-output",
                stats.string()},
               "native-mock") {}
    std::string url() const {
        const auto plain = mock.url(); // ws://127.0.0.1:PORT/v1/realtime
        return "wss://" + plain.substr(std::string("ws://").size());
    }
    mock_process mock;
};

cli_options with_env(std::map<std::string, std::string> env) {
    cli_options o;
    o.env = std::move(env);
    return o;
}

// Every regular file under `dir` whose bytes contain `needle`.
std::vector<std::string> files_containing(const fs::path& dir, const std::string& needle) {
    std::vector<std::string> hits;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && read_whole(e.path()).find(needle) != std::string::npos)
            hits.push_back(e.path().string());
    return hits;
}

TEST(TlsE2E, RunOverWssWithCaFileCompletesAndTimesTheTlsHandshakeApart) {
    tls_files f;
    temp_dir out;
    fs::create_directories(out.path());
    const auto stats = out / "mock-stats.json";
    std::optional<tls_mock> m(std::in_place, f, stats);
    const auto run_dir = out / "run";
    const auto r = run_cli({"run", "--url", m->url(), "--ca-file", f.cert.string(), "-c", "2", "-d",
                            "1s", "--timeout", "20s", "-o", run_dir.string()});
    EXPECT_EQ(m->mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto summary = read_json(run_dir / "summary.json");
    EXPECT_EQ(at(summary, {"pacing", "sessions", "complete"}).to_number<int>(), 2);
    const auto& t = at(summary, {"transport"});
    EXPECT_TRUE(at(t, {"tls"}).as_bool());
    EXPECT_FALSE(at(t, {"insecure"}).as_bool());
    EXPECT_EQ(at(t, {"ca_file"}).as_string(), f.cert.string());
    EXPECT_EQ(at(t, {"handshake_s", "connections"}).to_number<int>(), 2);
    for (const char* phase : {"connect", "tls", "upgrade"})
        EXPECT_EQ(at(t, {"handshake_s", phase, "n"}).to_number<int>(), 2) << phase;
    EXPECT_GT(at(t, {"handshake_s", "tls", "max"}).to_number<double>(), 0.0);
    EXPECT_NE(r.out.find("certificate verified against " + f.cert.string()), std::string::npos)
        << r.out;
    const auto mock_stats = read_json(stats);
    EXPECT_TRUE(at(mock_stats, {"tls"}).as_bool());
    EXPECT_EQ(at(mock_stats, {"sessions_completed"}).to_number<int>(), 2);
}

TEST(TlsE2E, InsecureWithoutCaFileConnectsAndSaysSoLoudly) {
    tls_files f;
    temp_dir out;
    fs::create_directories(out.path());
    tls_mock m(f, out / "mock-stats.json");
    const auto run_dir = out / "run";
    const auto r = run_cli({"run", "--url", m.url(), "--insecure", "-c", "1", "-d", "1s",
                            "--timeout", "20s", "-o", run_dir.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto summary = read_json(run_dir / "summary.json");
    EXPECT_EQ(at(summary, {"pacing", "sessions", "complete"}).to_number<int>(), 1);
    EXPECT_TRUE(at(summary, {"transport", "insecure"}).as_bool());
    EXPECT_TRUE(at(summary, {"transport", "ca_file"}).is_null());
    EXPECT_NE(r.out.find("WARNING, the server's certificate was NOT verified"), std::string::npos)
        << r.out;
}

TEST(TlsE2E, AnUntrustedCertificateIsAVerificationErrorNamingTheReason) {
    tls_files f;
    temp_dir out;
    fs::create_directories(out.path());
    tls_mock m(f, out / "mock-stats.json");
    const auto run_dir = out / "run";
    // The system CA store does not know the throwaway certificate.
    const auto r = run_cli({"run", "--url", m.url(), "-c", "1", "-d", "1s", "--timeout", "20s",
                            "-o", run_dir.string()});
    EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
    const auto all = r.out + r.err;
    EXPECT_NE(all.find("certificate verify failed: self-signed certificate"), std::string::npos)
        << all;
}

TEST(TlsE2E, HeadersAndTheApiKeyReachTheServerButTheirValuesNoFileNorOutput) {
    tls_files f;
    temp_dir out;
    fs::create_directories(out.path());
    const auto stats = out / "mock-stats.json";
    const std::string key = "sk-live-7f3a9c1e5b2d8f4a6c0e";
    const std::string tenant = "tenant-value-5e8d1c7b";
    std::optional<tls_mock> m(std::in_place, f, stats);
    const auto run_dir = out / "run";
    const auto r = run_cli({"run", "--url", m->url(), "--ca-file", f.cert.string(), "--header",
                            "X-Tenant: " + tenant, "--api-key-env", "PACER_E2E_API_KEY", "-c", "2",
                            "-d", "1s", "--timeout", "20s", "-o", run_dir.string()},
                           with_env({{"PACER_E2E_API_KEY", key}}));
    EXPECT_EQ(m->mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto names = strings(at(read_json(stats), {"request_header_names"}));
    EXPECT_NE(std::find(names.begin(), names.end(), "x-tenant"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "authorization"), names.end());
    const auto summary = read_json(run_dir / "summary.json");
    EXPECT_EQ(strings(at(summary, {"transport", "headers"})),
              (std::vector<std::string>{"X-Tenant", "Authorization"}));
    ASSERT_TRUE(fs::exists(run_dir / "report.html"));
    for (const auto& secret : {key, tenant}) {
        EXPECT_EQ(files_containing(run_dir, secret), std::vector<std::string>{}) << secret;
        EXPECT_EQ(r.out.find(secret), std::string::npos) << r.out;
        EXPECT_EQ(r.err.find(secret), std::string::npos) << r.err;
    }
}

TEST(TlsE2E, WorkersOfProcessesSendTheSameHeadersAndRecordNoSecret) {
    tls_files f;
    temp_dir out;
    fs::create_directories(out.path());
    const auto stats = out / "mock-stats.json";
    const std::string key = "sk-worker-2b9e4d6f8a1c3e5f";
    const std::string tenant = "tenant-worker-9c2e4a6b";
    std::optional<tls_mock> m(std::in_place, f, stats);
    const auto run_dir = out / "run";
    const auto r =
        run_cli({"run", "--url", m->url(), "--ca-file", f.cert.string(), "--header",
                 "X-Tenant: " + tenant, "--api-key-env", "PACER_E2E_API_KEY", "--processes", "2",
                 "-c", "1", "-d", "1s", "--timeout", "20s", "-o", run_dir.string()},
                with_env({{"PACER_E2E_API_KEY", key}}));
    EXPECT_EQ(m->mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto mock_stats = read_json(stats);
    EXPECT_EQ(at(mock_stats, {"sessions_completed"}).to_number<int>(), 2);
    const auto names = strings(at(mock_stats, {"request_header_names"}));
    EXPECT_NE(std::find(names.begin(), names.end(), "x-tenant"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "authorization"), names.end());
    for (int k = 0; k < 2; ++k) {
        const auto w = read_json(run_dir / ("worker-" + std::to_string(k)) / "summary.json");
        EXPECT_TRUE(at(w, {"transport", "tls"}).as_bool());
        EXPECT_EQ(at(w, {"transport", "handshake_s", "connections"}).to_number<int>(), 1);
    }
    for (const auto& secret : {key, tenant}) {
        EXPECT_EQ(files_containing(run_dir, secret), std::vector<std::string>{}) << secret;
        EXPECT_EQ((r.out + r.err).find(secret), std::string::npos);
    }
}

// `pacer serve` takes the same flags: every level's connections go over TLS with the headers,
// and the sweep's summary records the phases, the header names and never a value.
TEST(TlsE2E, ServeSweepsOverWssWithTheApiKeyAndRecordsNoSecret) {
    tls_files f;
    temp_dir out;
    fs::create_directories(out.path());
    const auto stats = out / "mock-stats.json";
    const std::string key = "sk-serve-4d7a1f9c3b6e";
    std::optional<tls_mock> m(std::in_place, f, stats);
    const auto sweep = out / "sweep";
    const auto r =
        run_cli({"serve", "--url", m->url(), "--ca-file", f.cert.string(), "--api-key-env",
                 "PACER_E2E_API_KEY", "--concurrencies", "1,2", "-d", "1s", "--loop-lag-limit-ms",
                 "1000", "--send-lateness-limit-ms", "1000", "-o", sweep.string()},
                with_env({{"PACER_E2E_API_KEY", key}}));
    EXPECT_EQ(m->mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto summary = read_json(sweep / "summary.json");
    EXPECT_TRUE(at(summary, {"transport", "tls"}).as_bool());
    EXPECT_EQ(strings(at(summary, {"transport", "headers"})),
              std::vector<std::string>{"Authorization"});
    EXPECT_EQ(at(summary, {"transport", "handshake_s", "tls", "n"}).to_number<int>(), 3);
    const auto names = strings(at(read_json(stats), {"request_header_names"}));
    EXPECT_NE(std::find(names.begin(), names.end(), "authorization"), names.end());
    EXPECT_EQ(files_containing(sweep, key), std::vector<std::string>{});
    EXPECT_EQ((r.out + r.err).find(key), std::string::npos);
}

// The open loop (`run --rate`) connects each arrival the same way.
TEST(TlsE2E, OpenLoopArrivalsConnectOverWss) {
    tls_files f;
    temp_dir out;
    fs::create_directories(out.path());
    std::optional<tls_mock> m(std::in_place, f, out / "mock-stats.json");
    const auto run_dir = out / "run";
    const auto r =
        run_cli({"run", "--url", m->url(), "--ca-file", f.cert.string(), "--rate", "20",
                 "--sessions", "3", "-d", "1s", "--timeout", "20s", "-o", run_dir.string()});
    EXPECT_EQ(m->mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto summary = read_json(run_dir / "summary.json");
    EXPECT_EQ(at(summary, {"transport", "handshake_s", "tls", "n"}).to_number<int>(), 3);
    EXPECT_EQ(at(summary, {"pacing", "sessions", "complete"}).to_number<int>(), 3);
}

// A server that drops the TCP connection without TLS's close_notify (the `vanish` fault) ends
// the session as an abrupt close, in the same words as over plain TCP.
TEST(TlsE2E, AServerThatVanishesIsAnAbruptCloseAsOverPlainTcp) {
    tls_files f;
    mock_process mock(
        {"--fault", "vanish", "--tls-cert", f.cert.string(), "--tls-key", f.key.string()});
    temp_dir out;
    const std::string url = "wss://" + mock.url().substr(std::string("ws://").size());
    const auto r =
        run_pacer({"run", "--url", url, "--ca-file", f.cert.string(), "-c", "1", "-d", "2s",
                   "--timeout", "10s", "-o", out.path().string(), "--keep-traces"});
    EXPECT_PRED1(server_failed_exit, r.exit_code) << r.out;
    const auto errors = error_lines(out / "session-000" / "trace.jsonl");
    ASSERT_EQ(errors.size(), 1u) << r.out;
    EXPECT_EQ(errors[0].rfind("ConnectionClosedError: no close frame received or sent (", 0), 0u)
        << errors[0];
    EXPECT_EQ(mock.stop(), 0);
}

TEST(TlsE2E, AMissingOrEmptyApiKeyVariableIsBadInputNamingOnlyTheVariable) {
    temp_dir out;
    for (const bool set_empty : {false, true}) {
        cli_options o;
        if (set_empty)
            o.env["PACER_E2E_NO_KEY"] = "";
        const auto r = run_cli({"run", "--api-key-env", "PACER_E2E_NO_KEY", "-c", "1", "-d", "1s",
                                "-o", (out / "run").string()},
                               o);
        EXPECT_EQ(r.exit_code, 2);
        const auto lines = r.err_lines();
        ASSERT_EQ(lines.size(), 1u) << r.err;
        EXPECT_NE(lines[0].find("pacer: --api-key-env PACER_E2E_NO_KEY"), std::string::npos)
            << lines[0];
        EXPECT_FALSE(fs::exists(out / "run"));
    }
}

TEST(TlsE2E, BadHeadersAreRefusedWithoutShowingTheirValue) {
    temp_dir out;
    for (const std::string h : {"Sec-WebSocket-Key: sneaky-1", "Host: sneaky-2",
                                "No colon sneaky-3", "X-Ok: sneaky-4\r\nX-Injected: 1"}) {
        const auto r =
            run_cli({"run", "--header", h, "-c", "1", "-d", "1s", "-o", (out / "run").string()});
        EXPECT_EQ(r.exit_code, 2) << h;
        EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
        EXPECT_EQ(r.err.find("sneaky"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out / "run"));
    }
}

TEST(TlsE2E, TlsFlagsNeedAWssUrl) {
    temp_dir out;
    const auto r = run_cli({"run", "--url", "ws://127.0.0.1:9/v1/realtime", "--insecure", "-c", "1",
                            "-d", "1s", "-o", (out / "run").string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--insecure is for wss:// URLs"), std::string::npos) << r.err;
}

TEST(TlsE2E, MockSaysWssWhenServingTlsAndRefusesAKeyWithoutItsCertificate) {
    tls_files f;
    const auto plan = run_cli(
        {"native-mock", "--tls-cert", f.cert.string(), "--tls-key", f.key.string(), "--dry-run"});
    EXPECT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_NE(plan.out.find("wss:// (TLS"), std::string::npos) << plan.out;
    const auto lone = run_cli({"mock", "--tls-key", f.key.string(), "--dry-run"});
    EXPECT_EQ(lone.exit_code, 2);
    EXPECT_NE(lone.err.find("--tls-cert and --tls-key go together"), std::string::npos) << lone.err;
    const auto swapped = run_cli(
        {"native-mock", "--tls-cert", f.key.string(), "--tls-key", f.cert.string(), "--dry-run"});
    EXPECT_EQ(swapped.exit_code, 2);
    EXPECT_NE(swapped.err.find("--tls-cert"), std::string::npos) << swapped.err;
    // The listening line names the scheme (scripts take the port after the last ':').
    child c({PACER_BINARY, "mock", "--port", "0", "--tls-cert", f.cert.string(), "--tls-key",
             f.key.string()});
    EXPECT_EQ(c.read_line().rfind("listening on wss://127.0.0.1:", 0), 0u);
    c.signal(SIGINT);
    EXPECT_EQ(c.wait(), 0);
}

} // namespace
} // namespace pacer::test

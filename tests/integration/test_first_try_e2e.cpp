// Issue 39's "also found": what a new user met on a first try, each with the real binary as its
// own process. Bad input is one line on stderr, exit 2, nothing written and (for serve) no header
// printed first: a busy --metrics-listen port in run, serve and http, a scenario naming a
// missing WAV or a mistyped built-in name. A server-metrics URL no one answers is no bad input:
// the run goes on and says why it has no figure. http --help says what http measures.
// No pacing outcome is asserted: a run that finished (exit 0 or 3) is all that is asked.

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include "fakes.hpp"
#include "integration/cli_process.hpp"
#include "integration/process.hpp"
#include <arpa/inet.h>
#include <cstdlib>
#include <fstream>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

// A port someone listens on, for the test's length.
class busy_port {
public:
    busy_port() {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            ::listen(fd_, 1) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            throw std::runtime_error("cannot listen on a loopback port");
        port_ = std::to_string(ntohs(a.sin_port));
    }
    ~busy_port() { ::close(fd_); }
    busy_port(const busy_port&) = delete;
    busy_port& operator=(const busy_port&) = delete;
    const std::string& port() const { return port_; }

private:
    int fd_ = -1;
    std::string port_;
};

// Exit 2, this one stderr line, nothing on stdout (no header), nothing in `cwd`.
void expect_one_line(const cli_result& r, const scratch_dir& cwd, const std::string& line,
                     const std::string& what) {
    EXPECT_EQ(r.exit_code, 2) << what << "\nstdout: " << r.out << "\nstderr: " << r.err;
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << what << ": " << r.err;
    EXPECT_EQ(lines[0], line) << what;
    EXPECT_EQ(r.out, "") << what;
    EXPECT_EQ(cwd.listing(), "") << what;
}

TEST(FirstTryE2E, ABusyMetricsListenPortIsOneLineExitTwoInRunServeAndHttp) {
    const busy_port busy;
    const std::string listen = "127.0.0.1:" + busy.port();
    const std::string line =
        "pacer: --metrics-listen " + listen + ": cannot listen: Address already in use";
    const std::vector<std::vector<std::string>> commands{
        {"run", "-c", "1", "-d", "1s", "-o", "out"},
        {"serve", "-c", "1", "-d", "1s", "-o", "out"},
        {"http", "--base-url", "http://127.0.0.1:9", "--model", "m", "--rate", "1", "--requests",
         "1", "-o", "out"}};
    for (auto args : commands) {
        args.insert(args.end(), {"--metrics-listen", listen});
        scratch_dir cwd;
        expect_one_line(run_cli(args, in_dir(cwd.path())), cwd, line, args[0]);
        // A dry run binds the address as the run does: the same line.
        args.push_back("--dry-run");
        expect_one_line(run_cli(args, in_dir(cwd.path())), cwd, line, args[0] + " --dry-run");
    }
}

// GET /metrics from 127.0.0.1:`port`: the whole answer ("" when nothing answers).
std::string scrape(const std::string& port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<unsigned short>(std::stoi(port)));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return {};
    }
    const std::string req = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    (void)!::write(fd, req.data(), req.size());
    std::string all;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
        all.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return all;
}

// The endpoint answers from before the idle baseline (it came up after it): a run whose
// baseline lasts a minute is scraped with no session started, then killed.
TEST(FirstTryE2E, MetricsListenAnswersDuringTheIdleBaseline) {
    scratch_dir dir;
    const auto script = dir.path() / "nvml-script";
    std::ofstream(script) << "devices 1\npower_mw 0 const 100000\n";
    ::setenv("PACER_FAKE_NVML_SCRIPT", script.c_str(), 1); // the child takes this environment
    child run({PACER_BINARY, "run", "-c", "1", "-d", "1s", "--progress", "never", "--no-report",
               "--gpu-telemetry", "nvml", "--nvml-library", fake_nvml_library().string(),
               "--idle-baseline", "60s", "--metrics-listen", "127.0.0.1:0", "-o",
               (dir.path() / "run").string()});
    ::unsetenv("PACER_FAKE_NVML_SCRIPT");
    std::string port;
    for (std::string line; port.empty() && !(line = run.read_line()).empty();)
        if (line.find("serving the live counters at http://127.0.0.1:") != std::string::npos) {
            const auto colon = line.find(':', line.find("127.0.0.1"));
            port = line.substr(colon + 1, line.find('/', colon) - colon - 1);
        }
    ASSERT_FALSE(port.empty()) << "no --metrics-listen line before the idle baseline";
    const auto answer = scrape(port);
    EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
    EXPECT_NE(answer.find("\npacer_sessions_started_total 0\n"), std::string::npos) << answer;
}

TEST(FirstTryE2E, ServerMetricsNoOneAnswersSayWhyInTheTableAndTheSummary) {
    scratch_dir dir;
    const auto out = dir.path() / "run";
    const auto r = run_cli({"run", "-c", "1", "-d", "1s", "--no-report", "--progress", "never",
                            "--server-metrics", "http://127.0.0.1:1/metrics", "--idle-baseline",
                            "0", "-o", out.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const std::string why =
        "no sample could be read (cannot connect to 127.0.0.1:1: Connection refused)";
    EXPECT_NE(r.out.find("  telemetry  " + why + " (telemetry.jsonl: "), std::string::npos)
        << r.out;
    const auto summary = boost::json::parse(read_whole(out / "summary.json")).as_object();
    const auto& t = summary.at("telemetry").as_object();
    EXPECT_EQ(t.at("error").as_string(), why);
    EXPECT_TRUE(t.at("energy_j").is_null());
    const auto& source = t.at("sources").as_array().at(0).as_object();
    EXPECT_EQ(source.at("failed_reads").to_number<std::uint64_t>(),
              t.at("samples").to_number<std::uint64_t>());
    // The warning is printed once, however many scrapes failed.
    std::size_t warnings = 0;
    for (const auto& l : r.err_lines())
        warnings += l.find("scrape failed") != std::string::npos;
    EXPECT_EQ(warnings, 1u) << r.err;
}

TEST(FirstTryE2E, AScenarioNamingAMissingWavNamesTheFileAndTheTurn) {
    scratch_dir cwd;
    fs::create_directory(cwd.path() / "conv");
    std::ofstream(cwd.path() / "conv" / "talk.json")
        << R"({"turns":[{"audio":"input","pause":"0.5s"},{"audio":"nosuch.wav"}]})";
    std::ofstream(cwd.path() / "conv" / "text.json")
        << R"({"turns":[{"audio":"input","pause":"0.5s"},{"audio":"notes.wav"}]})";
    std::ofstream(cwd.path() / "conv" / "notes.wav") << "not audio at all\n";
    const std::string before = cwd.listing();
    for (const std::string command : {"run", "serve"}) {
        auto r =
            run_cli({command, "-c", "1", "-d", "1s", "--scenario", "conv/talk.json", "-o", "out"},
                    in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 2) << command << r.out << r.err;
        ASSERT_EQ(r.err_lines().size(), 1u) << command << r.err;
        EXPECT_EQ(r.err_lines()[0], "pacer: scenario conv/talk.json: turns[1].audio: "
                                    "conv/nosuch.wav does not exist")
            << command;
        r = run_cli({command, "-c", "1", "-d", "1s", "--scenario", "conv/text.json", "-o", "out"},
                    in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 2) << command << r.out << r.err;
        ASSERT_EQ(r.err_lines().size(), 1u) << command << r.err;
        EXPECT_EQ(r.err_lines()[0].find(
                      "pacer: scenario conv/text.json: turns[1].audio: conv/notes.wav: "),
                  0u)
            << r.err;
        EXPECT_EQ(r.err.find("--audio"), std::string::npos) << r.err;
    }
    EXPECT_EQ(cwd.listing(), before);
}

TEST(FirstTryE2E, AMistypedBuiltInScenarioGetsADidYouMean) {
    for (const std::string command : {"run", "serve"}) {
        scratch_dir cwd;
        const auto r =
            run_cli({command, "-c", "1", "-d", "1s", "--scenario", "multiturn", "-o", "out"},
                    in_dir(cwd.path()));
        expect_one_line(r, cwd,
                        "pacer: --scenario 'multiturn' is neither single, multi-turn, barge-in "
                        "nor a file; did you mean 'multi-turn'?",
                        command);
        // Far from every name: no guess.
        const auto far =
            run_cli({command, "-c", "1", "-d", "1s", "--scenario", "chat", "-o", "out"},
                    in_dir(cwd.path()));
        expect_one_line(far, cwd,
                        "pacer: --scenario 'chat' is neither single, multi-turn, barge-in nor a "
                        "file",
                        command);
    }
}

TEST(FirstTryE2E, HttpHelpSaysWhatHttpMeasuresAndWhatFindCapacityNeeds) {
    const auto http = run_cli({"http", "--help"});
    ASSERT_EQ(http.exit_code, 0) << http.err;
    EXPECT_NE(http.out.find("J per successful request"), std::string::npos) << http.out;
    EXPECT_EQ(http.out.find("session-second"), std::string::npos) << http.out;
    EXPECT_NE(http.out.find("before the requests start"), std::string::npos) << http.out;
    EXPECT_NE(http.out.find("meets --goodput (needed)"), std::string::npos) << http.out;
    const auto run = run_cli({"run", "--help"});
    EXPECT_NE(run.out.find("J per session-second of input"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("--metrics-linger"), std::string::npos) << run.out;
}

} // namespace
} // namespace pacer::test

// The command line as a user meets it: bad numbers, default timeouts, --dry-run, the
// descriptor limit and mistyped subcommands. Every refusal is one line on stderr, exit 2, and
// nothing created.

#include <gtest/gtest.h>

#include "integration/cli_process.hpp"
#include <arpa/inet.h>
#include <fstream>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

// Bad input: exit 2, exactly one stderr line "pacer: ...", and the working folder (where the
// default output folder, or a level folder such as c18446744073709551615, would appear) left
// empty.
void expect_refused(const std::vector<std::string>& args, const std::string& mentions = "") {
    std::string line = "pacer";
    for (const auto& a : args)
        line += " " + a;
    scratch_dir cwd;
    auto with_output = args;
    with_output.insert(with_output.end(), {"-o", "out"});
    const bool takes_o = args.front() == "run" || args.front() == "serve";
    const auto r = run_cli(takes_o ? with_output : args, in_dir(cwd.path()));
    EXPECT_EQ(r.exit_code, 2) << line << "\nstdout: " << r.out << "\nstderr: " << r.err;
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << line << " printed on stderr:\n" << r.err;
    EXPECT_EQ(lines[0].rfind("pacer: ", 0), 0u) << line << ": " << lines[0];
    if (!mentions.empty()) {
        EXPECT_NE(lines[0].find(mentions), std::string::npos) << line << ": " << lines[0];
    }
    EXPECT_EQ(cwd.listing(), "") << line << " created files";
}

TEST(CliNumbers, NegativeWrappedAndAbsurdCountsAreRefusedInOneLine) {
    expect_refused({"run", "-c", "-1"}, "--concurrency");
    expect_refused({"run", "-t", "-2"}, "--threads");
    expect_refused({"run", "-c", "4294967297"}, "--concurrency");
    expect_refused({"run", "-c", "18446744073709551615"}, "--concurrency");
    expect_refused({"run", "-c", "0x10"}, "--concurrency"); // no hex, no octal
    expect_refused({"run", "-t", "5000"}, "--threads");
    expect_refused({"run", "--processes", "-1"}, "--processes");
    expect_refused({"run", "--stagger-ms", "-5"}, "--stagger-ms");
    expect_refused({"run", "--rate", "-1", "--sessions", "5"}, "--rate");
    expect_refused({"run", "--rate", "20", "--sessions", "-5"}, "--sessions");
    expect_refused({"run", "--rate", "20", "--sessions", "5", "--seed", "-1"}, "--seed");
    expect_refused({"serve", "--concurrencies", "0,-1"}, "--concurrencies");
    expect_refused({"serve", "--concurrencies", "1,2000000"}, "--concurrencies");
    expect_refused({"serve", "-c", "-1"}, "--concurrency");
    expect_refused({"serve", "-t", "-2"}, "--threads");
    expect_refused({"serve", "--repeats", "-1"}, "--repeats");
    expect_refused({"mock", "--port", "-1"}, "--port");
    expect_refused({"native-mock", "--port", "0", "--burst-units", "-1"}, "--burst-units");
    expect_refused({"schedule", "--rate", "-1", "--count", "3"}, "--rate");
    expect_refused({"schedule", "--rate", "1", "--count", "3", "--seed", "-1"}, "--seed");
}

TEST(CliTimeout, DefaultIsTheInputPlusSixtySeconds) {
    scratch_dir cwd;
    // The README's headline run: 90 s of input used to be refused by a fixed 90 s timeout.
    auto r = run_cli({"run", "--url", "ws://127.0.0.1:9/v1/realtime", "--concurrency", "1024",
                      "--duration", "90s", "-o", "c1024", "--dry-run"},
                     in_dir(cwd.path()));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("timeout    150.00 s per session (default"), std::string::npos) << r.out;
    r = run_cli({"serve", "-d", "2m30s", "-c", "2", "-o", "sweep", "--dry-run"},
                in_dir(cwd.path()));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("timeout    210.00 s per session (default"), std::string::npos) << r.out;
    EXPECT_EQ(cwd.listing(), "");
}

TEST(CliTimeout, AnExplicitTimeoutNotLongerThanTheInputIsStillRefused) {
    expect_refused({"run", "-d", "90s", "--timeout", "90s"}, "must be longer than the input");
    expect_refused({"serve", "-d", "1m30s", "--timeout", "1m"}, "must be longer than the input");
}

TEST(CliDuration, CompoundFormsReachTheCommands) {
    scratch_dir cwd;
    const auto r = run_cli({"run", "-c", "2", "-d", "2m30s", "--timeout", "1h", "--dry-run"},
                           in_dir(cwd.path()));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("(150.00 s per session)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("timeout    3600.00 s per session\n"), std::string::npos) << r.out;
    expect_refused({"run", "-d", "1s2"}, "--duration");
}

// Issue 33 item 10: generated silence is never held whole, so a 24 h dry run (the longest
// input) plans in a few MB where it used to hold 2.7 GB, and a longer one is bad input.
TEST(CliDuration, TheLongestInputPlansInLittleMemoryAndALongerOneIsRefused) {
    scratch_dir cwd;
    // (Disks the plans fit on: run without traces, 160 MB of receipts; serve 4 h of
    // vllm-realtime, 0.7 GB. Held whole, 4 h of silence alone was 460 MB.)
    const std::vector<std::vector<std::string>> plans = {
        {"run", "-d", "24h", "--protocol", "openai-realtime", "--trace", "none"},
        {"serve", "-d", "4h", "--protocol", "vllm-realtime", "--model", "m"}};
    for (auto args : plans) {
        args.insert(args.end(),
                    {"-c", "1", "--url", "ws://127.0.0.1:9/v1/realtime", "-o", "out", "--dry-run"});
        const auto r = run_cli(args, in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 0) << args.front() << ":\n" << r.out << r.err;
        EXPECT_NE(r.out.find(args[2] == "24h" ? "86400.00 s" : "14400.00 s"), std::string::npos)
            << r.out;
        // 24 h of 16 kHz PCM16 is 2,764,800 kB; the process stays far below a tenth of it.
        EXPECT_LT(r.max_rss_kib, 276480) << args.front();
    }
    EXPECT_EQ(cwd.listing(), "");
    expect_refused({"run", "-d", "1000h", "-c", "1", "--dry-run"},
                   "--duration 1000h is longer than the longest input pacer generates, 24h");
    expect_refused({"serve", "-d", "24h1s", "-c", "1", "--dry-run"}, "24h");
}

// Issue 33 item 13: one grammar. Conflicting options are refused in one line, not one of them
// silently dropped; -o "" is refused, not the default taken; an unknown option gets its
// nearest name; record --timeout takes a duration like every other (bare seconds still work).
TEST(CliGrammar, ConflictsEmptyOutputsAndUnknownOptionsAreOneLineExitTwo) {
    // (CLI11 names the two options in the order it met them.)
    expect_refused({"serve", "--concurrencies", "1,2", "-c", "4", "-d", "1s"},
                   "--concurrencies excludes --concurrency");
    expect_refused({"run", "--audio", "in.wav", "-d", "10s"}, "--duration excludes --audio");
    expect_refused({"serve", "-d", "10s", "--audio", "in.wav"}, "--duration excludes --audio");
    for (const auto* command : {"run", "serve", "http", "record", "merge", "report"}) {
        std::vector<std::string> args{command, "-o", ""};
        if (std::string(command) == "http")
            args.insert(args.end(), {"--base-url", "http://127.0.0.1:9", "--model", "m"});
        if (std::string(command) == "merge" || std::string(command) == "report")
            args.push_back("somewhere");
        scratch_dir cwd;
        const auto r = run_cli(args, in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err;
        ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
        EXPECT_NE(r.err.find("--output"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("is empty"), std::string::npos) << r.err;
        EXPECT_EQ(cwd.listing(), "");
    }
    expect_refused({"run", "--concurency", "4"},
                   "unknown option '--concurency' for 'run'; did you mean '--concurrency'?");
    expect_refused({"serve", "--stager-ms=5"}, "did you mean '--stagger-ms'?");
    expect_refused({"run", "--no-such-thing"}, "unknown option '--no-such-thing' for 'run' "
                                               "(pacer run --help)");
    expect_refused({"record", "--dataset", "d", "--timeout", "90x"},
                   "--timeout '90x' is not a duration");
    expect_refused({"record", "--dataset", "d", "--timeout", "25h"}, "--timeout");
}

TEST(CliGrammar, RecordTimeoutTakesADurationOrBareSeconds) {
    for (const auto* timeout : {"90s", "1m30s", "90"}) {
        scratch_dir cwd;
        // No dataset there: the timeout is read first, so a good one gets as far as --dataset.
        const auto r =
            run_cli({"record", "--dataset", "missing", "--timeout", timeout, "--dry-run"},
                    in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 2) << timeout;
        EXPECT_EQ(r.err.find("--timeout"), std::string::npos) << timeout << ": " << r.err;
        EXPECT_NE(r.err.find("--dataset"), std::string::npos) << timeout << ": " << r.err;
    }
}

TEST(CliGrammar, EveryCommandsHelpGivesItsExitStatusesAndTheStaggerDefaultsSayWhy) {
    for (const auto* command : {"run", "serve", "record", "http", "mock", "native-mock", "llm-mock",
                                "schedule", "replay", "merge", "report"}) {
        const auto r = run_cli({command, "--help"});
        EXPECT_EQ(r.exit_code, 0) << command;
        EXPECT_NE(r.out.find("Exit status: 0 "), std::string::npos) << command;
        EXPECT_NE(r.out.find("2 bad input"), std::string::npos) << command;
    }
    for (const auto* command : {"serve", "record"})
        EXPECT_NE(run_cli({command, "--help"}).out.find("The default is 0, where run's is 80"),
                  std::string::npos)
            << command;
}

// Issue 33 item 13: the number of arrivals is --count in every command that draws a schedule
// (beside run's --sessions and http's --requests).
TEST(CliGrammar, EveryScheduleTakesCountForItsArrivals) {
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"run", "--rate", "2", "--count", "3"}, "open loop  3 arrivals"},
        {{"http", "--base-url", "http://127.0.0.1:9", "--model", "m", "--rate", "2", "--count",
          "3"},
         "schedule   3 arrivals"},
        {{"schedule", "--rate", "2", "--count", "3"}, "arrivals   3"},
    };
    for (const auto& [args, plan] : cases) {
        scratch_dir cwd;
        auto dry = args;
        dry.push_back("--dry-run");
        const auto r = run_cli(dry, in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 0) << args.front() << ":\n" << r.out << r.err;
        EXPECT_NE(r.out.find(plan), std::string::npos) << r.out;
    }
    expect_refused({"run", "--rate", "2", "--count", "3", "--sessions", "4"},
                   "--sessions (also --count) is given more than once: give it once");
    expect_refused({"run", "-c", "3", "-c", "4"}, "--concurrency is given more than once");
}

TEST(CliDryRun, PrintsThePlanAndCreatesNothing) {
    scratch_dir cwd;
    struct expectation {
        std::vector<std::string> args;
        std::string plan_line;
    };
    const std::vector<expectation> cases = {
        {{"run", "-c", "3", "--threads", "2"}, "sessions   3 at once"},
        {{"run", "--rate", "20", "--sessions", "50", "--seed", "7", "--max-concurrency", "8"},
         "open loop  50 arrivals"},
        {{"run", "--processes", "2", "-c", "4"}, "in each of 2 worker processes (8 in all)"},
        {{"run", "--shard", "1/4", "-c", "10"}, "shard      1/4"},
        {{"serve", "--concurrencies", "1,2,4"}, "levels     1, 2, 4"},
        {{"serve", "--find-capacity", "--slo", "ttfa-p95=1.5s"}, "search     capacity"},
        {{"mock", "--port", "0", "--stats-output", "stats.json"}, "stats      stats.json"},
        {{"native-mock", "--port", "0", "--profile", "minicpmo"}, "profile    minicpmo"},
        {{"schedule", "--rate", "10", "--count", "5"}, "arrivals   5"},
    };
    for (const auto& c : cases) {
        auto args = c.args;
        args.push_back("--dry-run");
        const auto r = run_cli(args, in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 0) << c.args.front() << ":\n" << r.out << r.err;
        EXPECT_NE(r.out.find(c.plan_line), std::string::npos) << r.out;
        EXPECT_EQ(r.err, "");
        EXPECT_EQ(cwd.listing(), "") << c.args.front() << " --dry-run created files";
    }
}

// Issue 33 item 12: a port outside 1..65535, an --output under a file and a port already in
// use are each one line in the user's words (no C++ or Boost text), exit 2.
TEST(CliWords, BadPortsOutputsUnderAFileAndBusyPortsAreOneLineExitTwo) {
    expect_refused({"run", "--url", "ws://127.0.0.1:99999/v1/realtime", "-c", "1", "-d", "1s"},
                   "--url has a port that is not 1..65535: 'ws://127.0.0.1:99999/v1/realtime'");
    expect_refused({"serve", "--url", "ws://127.0.0.1:0/v1/realtime", "-d", "1s"},
                   "--url has a port that is not 1..65535");
    expect_refused({"run", "--url", "wss://[::1]:65536/v1/realtime", "-c", "1", "-d", "1s"},
                   "--url has a port that is not 1..65535");

    scratch_dir cwd;
    std::ofstream(cwd.path() / "file") << "not a folder\n";
    for (const std::string command : {"run", "serve"}) {
        const auto r =
            run_cli({command, "-c", "1", "-d", "1s", "-o", "file/sub"}, in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
        const auto lines = r.err_lines();
        ASSERT_EQ(lines.size(), 1u) << r.err;
        EXPECT_EQ(
            lines[0],
            "pacer: --output file/sub: cannot create its parent folder file: Not a directory");
    }
    EXPECT_EQ(cwd.listing(), "file ");

    // A port someone listens on.
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(fd, 1), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
    const std::string port = std::to_string(ntohs(a.sin_port));
    for (const std::string mock : {"mock", "native-mock", "llm-mock"}) {
        const auto r = run_cli({mock, "--port", port}, in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 2) << mock << r.out << r.err;
        const auto lines = r.err_lines();
        ASSERT_EQ(lines.size(), 1u) << mock << r.err;
        EXPECT_EQ(lines[0],
                  "pacer: cannot listen on 127.0.0.1:" + port + ": Address already in use")
            << mock;
    }
    ::close(fd);
}

TEST(CliDryRun, StillRefusesAnExistingOutputAndBadInput) {
    scratch_dir cwd;
    fs::create_directory(cwd.path() / "taken");
    for (const std::string command : {"run", "serve"}) {
        const auto r = run_cli({command, "-o", "taken", "--dry-run"}, in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
        EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
    }
    auto r = run_cli({"run", "--audio", "missing.wav", "--dry-run"}, in_dir(cwd.path()));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    r = run_cli({"replay", "nothing-here", "--dry-run"}, in_dir(cwd.path()));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    r = run_cli({"merge", "nothing-here", "-o", "merged", "--dry-run"}, in_dir(cwd.path()));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    r = run_cli({"native-mock", "--fault", "no-such-fault", "--dry-run"}, in_dir(cwd.path()));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(cwd.listing(), "taken ");
}

TEST(CliDescriptors, TooLowALimitIsExitTwoInEveryCommand) {
    // 40 descriptors, soft and hard: pacer cannot raise it, and every command that needs more
    // refuses alike before it creates anything.
    const std::vector<std::vector<std::string>> commands = {
        {"run", "-c", "100", "-d", "1s", "-o", "out"},
        {"run", "-c", "100", "-d", "1s", "-o", "out", "--dry-run"},
        {"serve", "-c", "100", "-d", "1s", "-o", "out"},
        {"mock", "--port", "0"},
        {"native-mock", "--port", "0"},
    };
    for (const auto& args : commands) {
        scratch_dir cwd;
        auto o = in_dir(cwd.path());
        o.nofile = 40;
        const auto r = run_cli(args, o);
        EXPECT_EQ(r.exit_code, 2) << args.front() << ":\n" << r.out << r.err;
        const auto lines = r.err_lines();
        ASSERT_EQ(lines.size(), 1u) << r.err;
        EXPECT_NE(lines[0].find("file descriptors"), std::string::npos) << lines[0];
        EXPECT_EQ(cwd.listing(), "");
    }
}

// Issue 33 item 11: a dry run checks exactly what the run checks. Under a limit too low for
// the command, the run and its dry run of every command refuse with the same line.
TEST(CliDescriptors, EveryDryRunRefusesATooLowLimitWithTheRunsOwnLine) {
    const std::vector<std::vector<std::string>> commands = {
        {"run", "-c", "100", "-d", "1s", "-o", "out"},
        {"serve", "-c", "100", "-d", "1s", "-o", "out"},
        {"http", "--base-url", "http://127.0.0.1:9", "--model", "m", "--rate", "1000", "--requests",
         "100", "-o", "out"},
        {"mock", "--port", "0"},
        {"native-mock", "--port", "0"},
        {"llm-mock", "--port", "0"},
    };
    for (const auto& args : commands) {
        std::vector<std::string> lines;
        for (const bool dry : {false, true}) {
            auto a = args;
            if (dry)
                a.push_back("--dry-run");
            scratch_dir cwd;
            auto o = in_dir(cwd.path());
            o.nofile = 40;
            const auto r = run_cli(a, o);
            EXPECT_EQ(r.exit_code, 2) << a.front() << (dry ? " --dry-run" : "") << ":\n"
                                      << r.out << r.err;
            const auto err = r.err_lines();
            ASSERT_EQ(err.size(), 1u) << r.err;
            EXPECT_NE(err[0].find("file descriptors"), std::string::npos) << err[0];
            lines.push_back(err[0]);
            EXPECT_EQ(cwd.listing(), "");
        }
        EXPECT_EQ(lines[0], lines[1]) << args.front();
    }
}

TEST(CliDescriptors, AnOpenLoopNeedsDescriptorsForTheSessionsInFlightOnly) {
    // 10,000 arrivals at 50/s under a limit of 1,000 descriptors: at most about 50/s x 3 s
    // (the timeout) are in flight, or --max-concurrency of them, so the plan passes; counting
    // every session of the schedule (3 descriptors each) would refuse it.
    const std::vector<std::string> base = {"run",    "--url", "ws://127.0.0.1:9/v1/realtime",
                                           "--rate", "50",    "--sessions",
                                           "10000",  "-d",    "1s",
                                           "-o",     "out",   "--dry-run"};
    auto with = [&](std::vector<std::string> extra) {
        auto args = base;
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    };
    for (const auto& args : {with({"--timeout", "3s"}), with({"--max-concurrency", "100"})}) {
        scratch_dir cwd;
        auto o = in_dir(cwd.path());
        o.nofile = 1000;
        const auto r = run_cli(args, o);
        EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
        EXPECT_NE(r.out.find("sessions in flight at most"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("for all 10000 sessions"), std::string::npos) << r.out;
        EXPECT_EQ(cwd.listing(), "");
    }
    // The default timeout (the input + 60 s) holds about 3,000 in flight: still too many.
    scratch_dir cwd;
    auto o = in_dir(cwd.path());
    o.nofile = 1000;
    const auto r = run_cli(base, o);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("file descriptors"), std::string::npos) << r.err;
}

TEST(CliTypo, AMistypedCommandNamesTheNearestOne) {
    auto r = run_cli({"rnu", "-c", "2"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "pacer: unknown command 'rnu'; did you mean 'run'?\n");
    r = run_cli({"serv"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "pacer: unknown command 'serv'; did you mean 'serve'?\n");
    r = run_cli({"native-mok", "--port", "0"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "pacer: unknown command 'native-mok'; did you mean 'native-mock'?\n");
    r = run_cli({"xyzzy"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_NE(r.err.find("unknown command 'xyzzy'; the commands are"), std::string::npos) << r.err;
}

} // namespace
} // namespace pacer::test

namespace pacer::test {
namespace {

// Issue 33, open-loop stages: `--stages` in run, http and schedule; with --rate (or http's and
// schedule's --duration, or --find-capacity) one line, exit 2; the dry runs show the stages.
TEST(CliStages, ConflictsAreOneLineExitTwoAndDryRunsShowTheStages) {
    const std::vector<std::string> http = {"http", "--base-url", "http://127.0.0.1:9", "--model",
                                           "m"};
    const auto with = [](std::vector<std::string> a, std::initializer_list<std::string> more) {
        a.insert(a.end(), more);
        return a;
    };
    expect_refused({"run", "--stages", "2s:2/s", "--rate", "2"}, "--stages sets the rate");
    expect_refused({"run", "--stages", "2s:2/s,1s:x/s"}, "--stages: stage 2 \"1s:x/s\"");
    expect_refused({"run", "--stages", "2s:0/s"}, "every stage has rate 0");
    expect_refused({"run", "--stages", "2s:2/s", "--schedule", "s.json"}, "--schedule replays");
    expect_refused(with(http, {"--stages", "2s:2/s", "--rate", "2"}), "--stages sets the rate");
    expect_refused(with(http, {"--stages", "2s:2/s", "-d", "2s"}), "--stages sets the rate");
    expect_refused(with(http, {"--stages", "2s:2/s", "--find-capacity"}), "--find-capacity");
    expect_refused({"schedule", "--stages", "2s:2/s", "--duration", "1s"},
                   "--stages sets the rate");

    scratch_dir cwd;
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"run", "--arrival", "constant", "--stages", "1s:2/s,1s:2-6/s", "-d", "1s"},
         "open loop  6 arrivals from 0.500 s to 2.000 s (constant at 1s:2/s,1s:2-6/s"},
        {with(http, {"--arrival", "constant", "--stages", "1s:2/s,1s:2-6/s"}),
         "schedule   6 arrivals (constant at 1s:2/s,1s:2-6/s"},
        {{"schedule", "--arrival", "constant", "--stages", "1s:2/s,1s:2-6/s"},
         "arrivals   6 (constant at 1s:2/s,1s:2-6/s"},
    };
    for (const auto& [args, plan] : cases) {
        const auto r = run_cli(with(args, {"--dry-run"}), in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 0) << args.front() << ":\n" << r.out << r.err;
        EXPECT_NE(r.out.find(plan), std::string::npos) << r.out;
        EXPECT_EQ(cwd.listing(), "") << args.front() << " --dry-run created files";
    }
}

// Issue 41: the arrival options are declared and checked once (schedule::spec_from) for run,
// http and schedule, so each is refused alike: --burstiness without gamma (run took it
// silently) and a stage rate without its /s (issue 39: `10s:5` was taken as 5/s).
TEST(CliArrivals, RunHttpAndScheduleRefuseTheSameMistakesInTheSameWords) {
    const std::vector<std::string> http = {
        "http", "--base-url", "http://127.0.0.1:9", "--model", "m", "-o", "out"};
    const auto with = [](std::vector<std::string> a, std::initializer_list<std::string> more) {
        a.insert(a.end(), more);
        return a;
    };
    const std::vector<std::string> commands[] = {
        {"run", "--sessions", "3"}, with(http, {"--requests", "3"}), {"schedule", "--count", "3"}};
    for (const auto& command : commands) {
        expect_refused(with(command, {"--rate", "5", "--arrival", "poisson", "--burstiness", "2"}),
                       "--burstiness applies only to --arrival gamma (got --arrival poisson)");
        expect_refused(with(command, {"--rate", "5", "--burstiness", "2"}),
                       "--burstiness applies only to --arrival gamma (got --arrival poisson)");
        expect_refused(with(command, {"--stages", "10s:5"}),
                       "--stages: stage 1 \"10s:5\" needs its rate per second");
        expect_refused(with(command, {"--rate", "0"}), "--rate must be a finite number > 0");
        expect_refused(with(command, {"--arrival", "weibull", "--rate", "5"}), "--arrival");
    }
    // The same options that are accepted: gamma with its burstiness, a stage with its /s.
    scratch_dir cwd;
    for (const auto& command : commands) {
        for (const auto& more :
             {std::vector<std::string>{"--rate", "5", "--arrival", "gamma", "--burstiness", "2"},
              std::vector<std::string>{"--stages", "10s:5/s"}}) {
            auto args = command;
            args.insert(args.end(), more.begin(), more.end());
            args.push_back("--dry-run");
            const auto r = run_cli(args, in_dir(cwd.path()));
            EXPECT_EQ(r.exit_code, 0) << args.front() << ":\n" << r.out << r.err;
        }
    }
    EXPECT_EQ(cwd.listing(), "");
}

} // namespace
} // namespace pacer::test

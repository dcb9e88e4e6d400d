#pragma once
// Real processes for end-to-end tests: `pacer mock` and `pacer run` are started as a user
// would start them. Waits are bounded by a generous liveness guard (a hung child fails the
// test instead of hanging CI); nothing here asserts a speed.

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "integration/cli_process.hpp"
#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

extern char** environ;

namespace pacer::test {

/// A child process with its stdout and stderr on one pipe.
class child {
public:
    explicit child(std::vector<std::string> args) {
        int out[2];
        if (::pipe2(out, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_adddup2(&fa, out[1], 2); // stderr too: what the user sees
        std::vector<char*> argv;
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        ::close(out[1]);
        out_ = out[0];
        if (rc != 0)
            throw std::runtime_error("posix_spawn failed: " + args[0]);
    }
    ~child() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::close(out_);
    }
    child(const child&) = delete;
    child& operator=(const child&) = delete;

    /// The next line of stdout, or "" at EOF or after `guard` without output.
    std::string read_line(std::chrono::seconds guard = std::chrono::seconds(60)) {
        std::string line;
        for (;;) {
            if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
                line = buffer_.substr(0, nl);
                buffer_.erase(0, nl + 1);
                return line;
            }
            pollfd p{out_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(guard.count() * 1000)) <= 0)
                return "";
            char chunk[4096];
            const ssize_t n = ::read(out_, chunk, sizeof chunk);
            if (n <= 0)
                return "";
            buffer_.append(chunk, static_cast<std::size_t>(n));
        }
    }

    /// Everything left on stdout until EOF (or `guard` without output).
    std::string read_all(std::chrono::seconds guard = std::chrono::seconds(240)) {
        for (;;) {
            pollfd p{out_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(guard.count() * 1000)) <= 0)
                break;
            char chunk[4096];
            const ssize_t n = ::read(out_, chunk, sizeof chunk);
            if (n <= 0)
                break;
            buffer_.append(chunk, static_cast<std::size_t>(n));
        }
        return std::exchange(buffer_, {});
    }

    void signal(int sig) {
        if (pid_ > 0)
            ::kill(pid_, sig);
    }

    /// Waits for the exit up to `bound`: the exit status (or 128+signal), or nullopt if the
    /// child still runs then (the destructor kills it). The bound only guards against a hang.
    std::optional<int> wait_for(std::chrono::seconds bound) {
        const auto give_up = std::chrono::steady_clock::now() + bound;
        while (pid_ > 0) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            if (std::chrono::steady_clock::now() > give_up)
                return std::nullopt;
            ::usleep(10'000); // polling the child's exit, not a synchronisation by sleep
        }
        return std::nullopt;
    }

    /// Waits for the exit; returns the exit status, or 128+signal.
    int wait() {
        if (pid_ <= 0)
            return -1;
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    std::string buffer_;
};

/// `pacer mock` (or another mock subcommand, e.g. `native-mock`) on a free loopback port,
/// stopped with SIGINT at the end of the scope.
class mock_process {
public:
    explicit mock_process(std::vector<std::string> extra = {}, std::string command = "mock")
        : proc_(args(std::move(extra), command)) {
        const std::string line = proc_.read_line();
        const auto colon = line.rfind(':');
        if (line.rfind("listening on ", 0) != 0 || colon == std::string::npos)
            throw std::runtime_error("pacer " + command + " did not start: '" + line + "'");
        port_ = line.substr(colon + 1);
    }
    std::string url() const { return "ws://127.0.0.1:" + port_ + "/v1/realtime"; }
    /// The HTTP base of the same port (llm-mock's `--base-url`).
    std::string http_url() const { return "http://127.0.0.1:" + port_; }
    /// native-mock's own view (`GET /stats`).
    std::string stats_url() const { return "http://127.0.0.1:" + port_ + "/stats"; }
    /// SIGKILL: the server vanishes without a word.
    void kill() {
        proc_.signal(SIGKILL);
        proc_.wait();
    }
    /// SIGINT, then the exit status.
    int stop() {
        proc_.signal(SIGINT);
        return proc_.wait();
    }

private:
    static std::vector<std::string> args(std::vector<std::string> extra,
                                         const std::string& command) {
        std::vector<std::string> a{PACER_BINARY, command, "--port", "0"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    child proc_;
    std::string port_;
};

struct run_result {
    int exit_code;
    std::string out;
};

/// A run that ended without a failure: 0 when the client kept its 80 ms schedule, 3 when it
/// fell behind. A loaded CI host can stall a process for 80 ms at any time, so end-to-end tests
/// never assert the pacing verdict from real timing: they accept both, and check with
/// `exit_matches_pacing` that the status agrees with the summary's `pacing_qualified`.
inline bool finished(int exit_code) {
    return exit_code == 0 || exit_code == 3;
}

/// Runs `pacer <args>` to completion.
inline run_result run_pacer(std::vector<std::string> args) {
    args.insert(args.begin(), PACER_BINARY);
    child c(std::move(args));
    std::string out = c.read_all();
    return {c.wait(), std::move(out)};
}

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// The value at a path of object keys, e.g. at(summary, {"pacing", "packets", "late"}).
inline const boost::json::value& at(const boost::json::value& v,
                                    std::initializer_list<const char*> path) {
    const boost::json::value* cur = &v;
    for (const char* k : path)
        cur = &cur->as_object().at(k);
    return *cur;
}

inline boost::json::value read_json(const std::filesystem::path& p) {
    return boost::json::parse(slurp(p));
}

/// Every line of a JSONL file, parsed.
inline std::vector<boost::json::value> read_jsonl(const std::filesystem::path& p) {
    std::vector<boost::json::value> lines;
    std::istringstream in(slurp(p));
    for (std::string line; std::getline(in, line);)
        lines.push_back(boost::json::parse(line));
    return lines;
}

/// The messages of a trace's `error` lines, in file order.
inline std::vector<std::string> error_lines(const std::filesystem::path& trace) {
    std::vector<std::string> out;
    for (const auto& l : read_jsonl(trace))
        if (at(l, {"direction"}).as_string() == "error")
            out.emplace_back(at(l, {"event", "message"}).as_string());
    return out;
}

/// The strings of a JSON array, in order.
inline std::vector<std::string> strings(const boost::json::value& v) {
    std::vector<std::string> out;
    for (const auto& s : v.as_array())
        out.emplace_back(s.as_string());
    return out;
}

/// The `type`s of a trace's lines of one direction, in file order.
inline std::vector<std::string> types(const std::filesystem::path& trace,
                                      std::string_view direction) {
    std::vector<std::string> out;
    for (const auto& l : read_jsonl(trace))
        if (at(l, {"direction"}).as_string() == direction)
            out.emplace_back(at(l, {"event", "type"}).as_string());
    return out;
}

/// How many of `v` are `what`.
inline std::size_t count_of(const std::vector<std::string>& v, std::string_view what) {
    return static_cast<std::size_t>(std::count(v.begin(), v.end(), what));
}

/// The exit status a finished run must have given its summary: 0 when `pacing_qualified`, else 3.
inline int exit_for_pacing(const boost::json::value& summary) {
    return at(summary, {"pacing_qualified"}).as_bool() ? 0 : 3;
}

/// How many `send` lines a trace holds after its first `error` line (0 without one).
inline std::size_t sends_after_first_error(const std::filesystem::path& trace) {
    std::size_t sends = 0;
    bool failed = false;
    for (const auto& l : read_jsonl(trace)) {
        const auto& direction = at(l, {"direction"}).as_string();
        failed = failed || direction == "error";
        sends += failed && direction == "send";
    }
    return sends;
}

/// The `event_id`s of a trace's `send` lines, in file order.
inline std::vector<std::string> sent_event_ids(const std::filesystem::path& trace) {
    std::vector<std::string> out;
    for (const auto& l : read_jsonl(trace))
        if (at(l, {"direction"}).as_string() == "send")
            out.emplace_back(at(l, {"event", "event_id"}).as_string());
    return out;
}

/// The exit status of a run whose server failed or rejected sessions: 4, or 3 when this
/// (possibly loaded) host also made the client fall behind, which takes precedence.
inline bool server_failed_exit(int code) {
    return code == 4 || code == 3;
}

/// A loopback port nothing listens on: bound to get a free one, then closed.
inline std::string closed_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        throw std::runtime_error("cannot bind a loopback socket");
    ::close(fd);
    return std::to_string(ntohs(a.sin_port));
}

/// Polls a predicate (a file appearing, a size growing) until it holds; the 60 s bound only guards
/// against a hang.
template <class Pred>
bool poll_until(Pred pred) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > give_up)
            return false;
        ::usleep(10'000); // polling interval of a condition, not a synchronisation by sleep
    }
    return true;
}

} // namespace pacer::test

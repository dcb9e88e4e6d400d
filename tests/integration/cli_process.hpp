#pragma once
// `pacer` as a user types it, for the command-line tests: its stdout and stderr apart, in a
// working directory of the test's choosing, with extra environment variables and, optionally,
// a lower RLIMIT_NOFILE (soft and hard) set between fork and exec. A liveness guard kills a
// child that hangs; nothing here asserts a speed.

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace pacer::test {

struct cli_result {
    int exit_code = -1; ///< exit status, or 128 + signal
    std::string out;
    std::string err;
    long max_rss_kib = 0; ///< the child's peak resident memory (getrusage's ru_maxrss)
    /// The lines of stderr (without their '\n').
    std::vector<std::string> err_lines() const {
        std::vector<std::string> lines;
        std::istringstream in(err);
        for (std::string l; std::getline(in, l);)
            lines.push_back(l);
        return lines;
    }
};

struct cli_options {
    std::filesystem::path cwd;              ///< empty: the test's own
    std::map<std::string, std::string> env; ///< added to (or replacing) the environment
    std::optional<rlim_t> nofile;           ///< RLIMIT_NOFILE, soft and hard
    std::chrono::seconds guard{120};        ///< killed after this (a hang fails the test)
};

/// Options that only set the working folder.
inline cli_options in_dir(const std::filesystem::path& cwd) {
    cli_options o;
    o.cwd = cwd;
    return o;
}

inline std::string read_whole(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Runs `PACER_BINARY args...` to completion.
inline cli_result run_cli(const std::vector<std::string>& args, const cli_options& o = {}) {
    static int counter = 0;
    const auto base = std::filesystem::temp_directory_path() /
                      ("pacer-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    const auto out_path = base.string() + ".out", err_path = base.string() + ".err";
    std::vector<std::string> argv_s{PACER_BINARY};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) {
        const std::string kv = *e;
        if (!o.env.count(kv.substr(0, kv.find('='))))
            env_s.push_back(kv);
    }
    for (const auto& [k, v] : o.env)
        env_s.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : env_s)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    const pid_t pid = ::fork();
    if (pid == 0) {
        // Only async-signal-safe calls from here to exec.
        const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0)
            ::_exit(125);
        if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0)
            ::_exit(125);
        if (o.nofile) {
            const rlimit rl{*o.nofile, *o.nofile};
            if (::setrlimit(RLIMIT_NOFILE, &rl) != 0)
                ::_exit(125);
        }
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(126);
    }
    cli_result r;
    if (pid < 0)
        return r;
    const auto deadline = std::chrono::steady_clock::now() + o.guard;
    int status = 0;
    rusage usage{};
    for (;;) {
        const pid_t w = ::wait4(pid, &status, WNOHANG, &usage);
        if (w == pid)
            break;
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::wait4(pid, &status, 0, &usage);
            break;
        }
        // Polling the child's exit (not a synchronisation of the test's own logic).
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.max_rss_kib = usage.ru_maxrss;
    r.out = read_whole(out_path);
    r.err = read_whole(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    return r;
}

/// A fresh folder path under the system temp dir (not created: a command may be asked to
/// create it), removed with everything in it by the destructor. The one temporary-folder
/// fixture of the e2e tests; scratch_dir is the same, created.
class temp_dir {
public:
    temp_dir() {
        static int counter = 0;
        path_ = std::filesystem::temp_directory_path() /
                ("pacer-e2e-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(path_);
    }
    ~temp_dir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& s) const { return path_ / s; }

private:
    std::filesystem::path path_;
};

/// A fresh empty folder (created), removed with everything in it by the destructor.
class scratch_dir : public temp_dir {
public:
    scratch_dir() { std::filesystem::create_directories(path()); }
    /// What the folder holds, one name per entry (a command that must create nothing leaves "").
    std::string listing() const {
        std::string names;
        for (const auto& e : std::filesystem::recursive_directory_iterator(path()))
            names += std::filesystem::relative(e.path(), path()).string() + " ";
        return names;
    }
};

} // namespace pacer::test

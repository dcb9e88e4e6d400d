#include <pacer/runtime/worker_pool.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace pacer::runtime {

namespace {

// The signal handler reads only these: a fixed table of pids, filled before the count that
// publishes them, and never reallocated (a handler may run between any two instructions).
constexpr std::size_t max_forwarded = 4096;
std::atomic<pid_t> g_pids[max_forwarded];
std::atomic<std::size_t> g_count{0};
std::atomic<bool> g_pool_alive{false};
struct sigaction g_old_int {};
struct sigaction g_old_term {};

void forward_signal(int sig) {
    const std::size_t n = g_count.load(std::memory_order_acquire);
    for (std::size_t k = 0; k < n; ++k)
        if (const pid_t pid = g_pids[k].load(std::memory_order_relaxed); pid > 0)
            ::kill(pid, sig);
}

} // namespace

worker_pool::worker_pool(std::string program) : program_(std::move(program)) {
    if (g_pool_alive.exchange(true))
        throw std::logic_error("worker_pool: another pool is alive");
    g_count.store(0, std::memory_order_release);
}

worker_pool::~worker_pool() {
    for (std::size_t k = 0; k < pids_.size(); ++k)
        if (!reaped_[k]) {
            ::kill(pids_[k], SIGKILL);
            while (::waitpid(pids_[k], nullptr, 0) < 0 && errno == EINTR) {
            }
        }
    restore_signals();
    g_pool_alive.store(false);
}

pid_t worker_pool::spawn(const std::vector<std::string>& args, const std::filesystem::path& log) {
    if (pids_.size() >= max_forwarded)
        throw std::runtime_error(fmt::format("at most {} worker processes", max_forwarded));
    if (!forwarding_) {
        struct sigaction forward {};
        forward.sa_handler = forward_signal;
        ::sigemptyset(&forward.sa_mask);
        ::sigaction(SIGINT, &forward, &g_old_int);
        ::sigaction(SIGTERM, &forward, &g_old_term);
        forwarding_ = true;
    }
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log_path = log.string();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, program_.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) // glibc reports a log that cannot be created, or a failed exec, here
        throw std::runtime_error(
            fmt::format("cannot start worker {}: {}", pids_.size(), std::strerror(rc)));
    const std::size_t k = pids_.size();
    g_pids[k].store(pid, std::memory_order_relaxed);
    g_count.store(k + 1, std::memory_order_release);
    pids_.push_back(pid);
    reaped_.push_back(false);
    return pid;
}

std::vector<int> worker_pool::wait_all() {
    std::vector<int> statuses(pids_.size(), 0);
    for (std::size_t k = 0; k < pids_.size(); ++k) {
        if (reaped_[k])
            continue;
        while (::waitpid(pids_[k], &statuses[k], 0) < 0 && errno == EINTR) {
        }
        reaped_[k] = true;
        g_pids[k].store(0, std::memory_order_relaxed); // never signal a pid that may be reused
    }
    restore_signals();
    return statuses;
}

void worker_pool::restore_signals() {
    g_count.store(0, std::memory_order_release);
    if (!forwarding_)
        return;
    ::sigaction(SIGINT, &g_old_int, nullptr);
    ::sigaction(SIGTERM, &g_old_term, nullptr);
    forwarding_ = false;
}

std::string describe_status(int status) {
    if (WIFEXITED(status))
        return fmt::format("exit {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return fmt::format("killed by signal {} ({})", WTERMSIG(status),
                           ::strsignal(WTERMSIG(status)));
    return "unknown";
}

bool exited_with(int status, int code) {
    return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

} // namespace pacer::runtime

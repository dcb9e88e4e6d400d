#pragma once
// Worker processes: children started with posix_spawn, each with its stdout and stderr in a log
// file of its own, reaped by the pool. While a pool has children, SIGINT and SIGTERM sent to this
// process are forwarded to every one of them (a Ctrl-C stops the workers as it would one run);
// the previous handlers come back when the pool is reaped or destroyed. One pool at a time.

#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace pacer::runtime {

class worker_pool {
public:
    /// `program`: the executable every worker runs (an absolute path; "/proc/self/exe" is this
    /// program). Throws std::logic_error when another pool is alive.
    explicit worker_pool(std::string program);
    /// Kills (SIGKILL) and reaps the children not reaped yet; restores the signal handlers.
    ~worker_pool();
    worker_pool(const worker_pool&) = delete;
    worker_pool& operator=(const worker_pool&) = delete;

    /// Starts one worker with `args` (argv, argv[0] included), its stdout and stderr into `log`
    /// (created; an existing file is an error). Returns its pid; throws std::runtime_error when
    /// it cannot start. The first spawn installs the signal forwarder.
    pid_t spawn(const std::vector<std::string>& args, const std::filesystem::path& log);

    /// The workers' pids, in spawn order.
    const std::vector<pid_t>& pids() const { return pids_; }

    /// Waits until every worker has ended; their wait statuses (as waitpid gives them) in spawn
    /// order. Restores the signal handlers. Call once.
    std::vector<int> wait_all();

private:
    void restore_signals();

    std::string program_;
    std::vector<pid_t> pids_;
    std::vector<bool> reaped_;
    bool forwarding_ = false;
};

/// A wait status in words: "exit 3", "killed by signal 6 (Aborted)".
std::string describe_status(int status);

/// Whether the status is a normal exit with `code`.
bool exited_with(int status, int code);

} // namespace pacer::runtime

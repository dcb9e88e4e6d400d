#pragma once
// This test process's own threads as /proc/self/task shows them: found by name (the runner
// names its threads: pacer-writer, pacer-signals, pacer-ctx-N), and their blocked signals.

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <sys/types.h>

namespace pacer::testing {

/// The id of this process's thread named `name`, if there is one.
inline std::optional<pid_t> thread_named(const std::string& name) {
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream comm(task.path() / "comm");
        std::string line;
        if (std::getline(comm, line) && line == name)
            return static_cast<pid_t>(std::stol(task.path().filename().string()));
    }
    return std::nullopt;
}

/// Whether thread `tid` of this process blocks `signal` (its SigBlk mask).
inline bool blocks_signal(pid_t tid, int signal) {
    std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("SigBlk:", 0) == 0)
            return (std::stoull(line.substr(7), nullptr, 16) >> (signal - 1)) & 1;
    return false;
}

} // namespace pacer::testing

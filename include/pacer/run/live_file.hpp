#pragma once
// The live totals of a worker of `pacer run --processes`, for its parent's progress line. The
// worker's exporter thread (never a session context) rewrites one small JSON file 4 times a
// second from the relaxed atomic totals its sessions bump, and a last time when the run ends;
// each rewrite goes to a temporary file renamed over the old one, so a reader sees one whole
// version or the other. The parent reads every worker's file once a progress line and pools
// them: counts add up, the loop lag is the largest of them.

#include <pacer/console/progress.hpp>
#include <pacer/session/live_counters.hpp>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <sys/types.h>
#include <thread>

namespace pacer::run {

/// What one file says: the writer's pid and its totals.
struct live_file {
    pid_t pid = 0;
    console::progress_snapshot totals;
};

/// The file's one line (JSON, newline-terminated).
std::string live_file_text(const live_file& f);
/// Parses it; nullopt for anything else (a file not written yet, or not this format).
std::optional<live_file> parse_live_file(std::string_view text);

/// Writes `f` to `path` (via `path`.tmp, renamed). False when it cannot be written.
bool write_live_file(const std::filesystem::path& path, const live_file& f);
/// Reads `path`; nullopt when missing or unreadable.
std::optional<live_file> read_live_file(const std::filesystem::path& path);

/// The totals of several workers as one: counts summed, loop lag max the largest.
console::progress_snapshot pool_snapshots(std::span<const console::progress_snapshot> parts);

/// The worker side: a thread that writes `counters` (with this process's pid) to `path` at once,
/// then every 0.25 s, and a last time at `stop` (or destruction).
class live_file_writer {
public:
    live_file_writer(std::filesystem::path path, const session::live_counters& counters);
    ~live_file_writer();
    live_file_writer(const live_file_writer&) = delete;
    live_file_writer& operator=(const live_file_writer&) = delete;

    /// Writes the final totals and ends the thread; idempotent.
    void stop();

private:
    void write_now();

    std::filesystem::path path_;
    const session::live_counters& counters_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

} // namespace pacer::run

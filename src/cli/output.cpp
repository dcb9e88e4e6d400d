#include <pacer/cli/commands.hpp>
#include <pacer/cli/output.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace pacer::cli {

namespace fs = std::filesystem;

void create_output_dir(const fs::path& dir) {
    if (dir.has_parent_path())
        fs::create_directories(dir.parent_path());
    if (::mkdir(dir.c_str(), 0755) != 0) {
        if (errno == EEXIST)
            throw usage_error(fmt::format(
                "--output {} already exists; pacer never overwrites results: choose a new folder",
                dir.string()));
        throw usage_error(fmt::format("--output {}: {}", dir.string(), std::strerror(errno)));
    }
}

fs::path default_output_dir(std::string_view command) {
    const std::time_t now = std::time(nullptr);
    return fs::path("pacer-results") /
           fmt::format("{}-{:%Y%m%dT%H%M%SZ}", command, fmt::gmtime(now));
}

std::uint64_t trace_bytes_estimate(std::size_t sessions, double input_duration_s) {
    return static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(sessions) * std::max(input_duration_s, 0.0) *
                  trace_bytes_per_session_second));
}

std::uint64_t receipt_bytes_estimate(std::size_t sessions, double input_duration_s) {
    // One receipt an 80 ms packet (about 150 bytes of JSON), and a few kB of per-session files.
    const double appends = std::ceil(std::max(input_duration_s, 0.0) / 0.080);
    return static_cast<std::uint64_t>(static_cast<double>(sessions) * (appends * 150.0 + 4096.0));
}

std::string format_bytes(std::uint64_t bytes) {
    const auto b = static_cast<double>(bytes);
    if (b >= 1e12)
        return fmt::format("{:.1f} TB", b / 1e12);
    if (b >= 1e9)
        return fmt::format("{:.1f} GB", b / 1e9);
    if (b >= 1e6)
        return fmt::format("{:.1f} MB", b / 1e6);
    return fmt::format("{:.1f} kB", b / 1e3);
}

std::uint64_t ensure_free_space(const fs::path& path, std::uint64_t bytes) {
    // The nearest existing parent holds the folder once it is created.
    fs::path existing = fs::absolute(path);
    std::error_code ec;
    while (!fs::exists(existing, ec) && existing.has_parent_path() &&
           existing.parent_path() != existing)
        existing = existing.parent_path();
    struct statvfs st {};
    if (::statvfs(existing.c_str(), &st) != 0)
        throw usage_error(fmt::format("--output {}: cannot tell the free space of {}: {}",
                                      path.string(), existing.string(), std::strerror(errno)));
    const std::uint64_t free_bytes =
        static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize);
    if (free_bytes < bytes)
        throw usage_error(fmt::format(
            "--output {}: this run writes about {} (traces at about 110 kB/s a session, and "
            "receipts) but {} has {} free: run fewer or shorter sessions, or choose another "
            "disk",
            path.string(), format_bytes(bytes), existing.string(), format_bytes(free_bytes)));
    return free_bytes;
}

} // namespace pacer::cli

#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/output_dir.hpp>

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

namespace pacer::runtime {

namespace fs = std::filesystem;

void create_output_dir(const fs::path& dir) {
    if (dir.has_parent_path()) {
        // One line in the user's words, not the library's (a parent that is a file, no right).
        std::error_code ec;
        fs::create_directories(dir.parent_path(), ec);
        if (ec)
            throw bad_input(fmt::format("--output {}: cannot create its parent folder {}: {}",
                                        dir.string(), dir.parent_path().string(), ec.message()));
    }
    if (::mkdir(dir.c_str(), 0755) != 0) {
        if (errno == EEXIST)
            throw bad_input(fmt::format(
                "--output {} already exists; pacer never overwrites results: choose a new folder",
                dir.string()));
        throw bad_input(fmt::format("--output {}: {}", dir.string(), std::strerror(errno)));
    }
}

fs::path default_output_dir(std::string_view command) {
    const std::time_t now = std::time(nullptr);
    return fs::path("pacer-results") /
           fmt::format("{}-{:%Y%m%dT%H%M%SZ}", command, fmt::gmtime(now));
}

std::uint64_t ensure_free_space(const fs::path& path, std::uint64_t bytes, std::string_view what,
                                std::string_view advice) {
    // The nearest existing parent holds the folder once it is created.
    fs::path existing = fs::absolute(path);
    std::error_code ec;
    while (!fs::exists(existing, ec) && existing.has_parent_path() &&
           existing.parent_path() != existing)
        existing = existing.parent_path();
    struct statvfs st {};
    if (::statvfs(existing.c_str(), &st) != 0)
        throw bad_input(fmt::format("--output {}: cannot tell the free space of {}: {}",
                                    path.string(), existing.string(), std::strerror(errno)));
    const std::uint64_t free_bytes =
        static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize);
    if (free_bytes < bytes)
        throw bad_input(fmt::format("--output {}: this run writes about {} ({}) but {} has {} "
                                    "free: {}",
                                    path.string(), format_bytes(bytes), what, existing.string(),
                                    format_bytes(free_bytes), advice));
    return free_bytes;
}

} // namespace pacer::runtime

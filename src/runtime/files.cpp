#include <pacer/runtime/files.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <unistd.h>

namespace pacer::runtime {

namespace fs = std::filesystem;

std::optional<std::string> read_file_if_exists(const fs::path& path) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        return std::nullopt;
    if (!fs::is_regular_file(path, ec))
        throw std::runtime_error(fmt::format("cannot read {}: not a file", path.string()));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(
            fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad())
        throw std::runtime_error(fmt::format("cannot read {}: read error", path.string()));
    return std::move(ss).str();
}

void write_new_file(const fs::path& path, std::string_view content) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error(
            fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
    std::string_view rest = content;
    while (!rest.empty()) {
        const ssize_t n = ::write(fd, rest.data(), rest.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            throw std::runtime_error(
                fmt::format("cannot write {}: {}", path.string(), std::strerror(err)));
        }
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
    if (::close(fd) != 0)
        throw std::runtime_error(
            fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
}

} // namespace pacer::runtime

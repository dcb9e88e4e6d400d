#include <pacer/core/bad_input.hpp>
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
#include <utility>

namespace pacer::runtime {

namespace fs = std::filesystem;

namespace {

// What cannot be read is an `Error`: pacer's own failure (std::runtime_error) or bad input.
template <class Error>
std::optional<std::string> read_whole_file(const fs::path& path) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        return std::nullopt;
    if (!fs::is_regular_file(path, ec))
        throw Error(fmt::format("cannot read {}: not a file", path.string()));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad())
        throw Error(fmt::format("cannot read {}: read error", path.string()));
    return std::move(ss).str();
}

} // namespace

std::optional<std::string> read_file_if_exists(const fs::path& path) {
    return read_whole_file<std::runtime_error>(path);
}

std::optional<std::string> read_input_file_if_exists(const fs::path& path) {
    return read_whole_file<bad_input>(path);
}

std::optional<std::string> read_file_if_readable(const fs::path& path) {
    try {
        return read_file_if_exists(path);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

void write_new_file(const fs::path& path, std::string_view content) {
    new_file f(path);
    f.write(content);
    f.close();
}

new_file::new_file(fs::path path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0)
        throw std::runtime_error(
            fmt::format("cannot create {}: {}", path_.string(), std::strerror(errno)));
}

new_file::~new_file() {
    if (fd_ >= 0)
        ::close(fd_);
}

void new_file::write(std::string_view rest) {
    while (!rest.empty()) {
        const ssize_t n = ::write(fd_, rest.data(), rest.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw std::runtime_error(
                fmt::format("cannot write {}: {}", path_.string(), std::strerror(errno)));
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
}

void new_file::close() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0)
        throw std::runtime_error(
            fmt::format("cannot write {}: {}", path_.string(), std::strerror(errno)));
}

} // namespace pacer::runtime

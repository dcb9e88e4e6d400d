#include <pacer/runtime/files.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

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

} // namespace pacer::runtime

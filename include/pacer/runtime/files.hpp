#pragma once
// Reading a whole file, once for every module (result folders, receipts, schedules, parts).

#include <filesystem>
#include <optional>
#include <string>

namespace pacer::runtime {

/// The bytes of `path`; nullopt when nothing is there. Throws std::runtime_error ("cannot read
/// PATH: REASON") when something is there but cannot be read (not a file, no permission, a
/// read error).
std::optional<std::string> read_file_if_exists(const std::filesystem::path& path);

} // namespace pacer::runtime

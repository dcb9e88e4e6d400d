#pragma once
// Reading a whole file and writing a new one, once for every module (result folders, receipts,
// schedules, parts, summaries).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pacer::runtime {

/// The bytes of `path`; nullopt when nothing is there. Throws std::runtime_error ("cannot read
/// PATH: REASON") when something is there but cannot be read (not a file, no permission, a
/// read error).
std::optional<std::string> read_file_if_exists(const std::filesystem::path& path);

/// Writes `content` to a new file (never an existing one); throws std::runtime_error naming the
/// file on failure.
void write_new_file(const std::filesystem::path& path, std::string_view content);

} // namespace pacer::runtime

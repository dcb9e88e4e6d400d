#pragma once
// Output folders and files of the subcommands: nothing existing is ever overwritten.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pacer::cli {

/// Creates `dir` (and missing parents). Throws usage_error when `dir` already exists: a
/// finished run is never overwritten.
void create_output_dir(const std::filesystem::path& dir);

/// `pacer-results/<command>-<UTC %Y%m%dT%H%M%SZ>`.
std::filesystem::path default_output_dir(std::string_view command);

/// The whole file, or nullopt when it does not exist; throws std::runtime_error naming the
/// file when it exists but cannot be read.
std::optional<std::string> read_file_if_exists(const std::filesystem::path& path);

/// Writes `content` to a new file; throws std::runtime_error naming the file on failure.
void write_new_file(const std::filesystem::path& path, std::string_view content);

} // namespace pacer::cli

#pragma once
// Output folders and files of the subcommands: nothing existing is ever overwritten.

#include <pacer/core/units.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/trace/disk_estimate.hpp>

#include <cstdint>
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

/// The whole file, or nullopt when it does not exist (runtime/files.hpp).
using runtime::read_file_if_exists;

/// Writes `content` to a new file; throws std::runtime_error naming the file on failure
/// (runtime/files.hpp).
using runtime::write_new_file;

/// The disk a run's traces and receipts take (trace/disk_estimate.hpp) and sizes as the
/// tables print them (core/units.hpp).
using pacer::format_bytes;
using trace::receipt_bytes_estimate;
using trace::trace_bytes_estimate;
using trace::trace_bytes_per_session_second;

/// The bytes an unprivileged user may still write on the filesystem that will hold `path`
/// (statvfs of its nearest existing parent, so `path` need not exist yet). Throws usage_error,
/// one line, when that is less than `bytes`; returns it otherwise.
std::uint64_t ensure_free_space(const std::filesystem::path& path, std::uint64_t bytes);

} // namespace pacer::cli

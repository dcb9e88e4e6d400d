#pragma once
// Output folders and files of the subcommands: nothing existing is ever overwritten.

#include <pacer/runtime/files.hpp>

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

/// A full trace costs about this many bytes per second of input and session (mostly base64
/// audio, both ways), whether or not it is kept at the end: it is written while streaming.
inline constexpr double trace_bytes_per_session_second = 110e3;

/// What `sessions` sessions of `input_duration_s` seconds of input each write: their traces,
/// and their receipts and other small files (about 150 bytes an append, 4 kB a session).
std::uint64_t trace_bytes_estimate(std::size_t sessions, double input_duration_s);
std::uint64_t receipt_bytes_estimate(std::size_t sessions, double input_duration_s);

/// "1.2 GB", "640.0 kB": decimal units, as the tables print sizes.
std::string format_bytes(std::uint64_t bytes);

/// The bytes an unprivileged user may still write on the filesystem that will hold `path`
/// (statvfs of its nearest existing parent, so `path` need not exist yet). Throws usage_error,
/// one line, when that is less than `bytes`; returns it otherwise.
std::uint64_t ensure_free_space(const std::filesystem::path& path, std::uint64_t bytes);

} // namespace pacer::cli

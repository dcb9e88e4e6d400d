#pragma once
// Output folders of the subcommands and jobs: nothing existing is ever overwritten.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pacer::runtime {

/// Creates `dir` (and missing parents). Throws bad_input (core/bad_input.hpp) when `dir` already
/// exists: a finished run is never overwritten.
void create_output_dir(const std::filesystem::path& dir);

/// `pacer-results/<command>-<UTC %Y%m%dT%H%M%SZ>`.
std::filesystem::path default_output_dir(std::string_view command);

/// The bytes an unprivileged user may still write on the filesystem that will hold `path`
/// (statvfs of its nearest existing parent, so `path` need not exist yet). Throws bad_input,
/// one line, when that is less than `bytes`; returns it otherwise. The line says what the
/// bytes are (`what`) and what to do (`advice`): by default a run's traces and receipts.
std::uint64_t ensure_free_space(
    const std::filesystem::path& path, std::uint64_t bytes,
    std::string_view what = "traces at about 110 kB/s a session, and receipts",
    std::string_view advice = "run fewer or shorter sessions, or choose another disk");

} // namespace pacer::runtime

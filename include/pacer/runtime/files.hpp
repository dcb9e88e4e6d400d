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

/// `read_file_if_exists` for a file the user named (`--prompts`, a session folder's files):
/// what cannot be read is bad input, so it throws pacer::bad_input with the same line.
std::optional<std::string> read_input_file_if_exists(const std::filesystem::path& path);

/// The bytes of `path`; nullopt when it is missing or cannot be read (for readers that note
/// what they could not read and go on).
std::optional<std::string> read_file_if_readable(const std::filesystem::path& path);

/// Writes `content` to a new file (never an existing one); throws std::runtime_error naming the
/// file on failure.
void write_new_file(const std::filesystem::path& path, std::string_view content);

/// A new file (never an existing one) written in pieces, for files too large to build in
/// memory first (samples.json). Each call throws std::runtime_error naming the file on failure;
/// a file not closed is left as written so far.
class new_file {
public:
    explicit new_file(std::filesystem::path path);
    ~new_file();
    new_file(const new_file&) = delete;
    new_file& operator=(const new_file&) = delete;
    void write(std::string_view piece);
    void close();

private:
    std::filesystem::path path_;
    int fd_ = -1;
};

} // namespace pacer::runtime

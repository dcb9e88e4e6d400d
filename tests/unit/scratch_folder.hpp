#pragma once
// A fresh folder under the system's temporary directory for one test, removed with everything
// in it at the end: `scratch_folder dir("pacer-spool"); dir.path / "file"`; and the text of a
// file the test wrote or read back (`read_text`). The one scratch-folder fixture of every test.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <unistd.h>

namespace pacer::test {

struct scratch_folder {
    scratch_folder() : scratch_folder("pacer-test") {}
    explicit scratch_folder(const std::string& prefix) {
        std::random_device rd;
        path = std::filesystem::temp_directory_path() /
               (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
        std::filesystem::create_directories(path);
    }
    ~scratch_folder() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    scratch_folder(const scratch_folder&) = delete;
    scratch_folder& operator=(const scratch_folder&) = delete;
    std::filesystem::path path;
};

/// The bytes of `path` ("" when it cannot be read: the test's comparison then fails).
inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace pacer::test

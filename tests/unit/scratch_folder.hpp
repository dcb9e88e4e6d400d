#pragma once
// A fresh folder under the system's temporary directory for one test, removed with everything
// in it at the end: `scratch_folder dir("pacer-spool"); dir.path / "file"`.

#include <filesystem>
#include <random>
#include <string>
#include <unistd.h>

namespace pacer::test {

struct scratch_folder {
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

} // namespace pacer::test

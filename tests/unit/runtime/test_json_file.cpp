// Whole files read once for every module (runtime/files.hpp, runtime/json_file.hpp): the
// lenient reader gives nothing for what it cannot read; the JSON reader says why.

#include <pacer/runtime/files.hpp>
#include <pacer/runtime/json_file.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace pacer::runtime {
namespace {

namespace fs = std::filesystem;

struct scratch {
    fs::path dir = fs::temp_directory_path() /
                   ("pacer-json-file-" + std::to_string(::getpid()) + "-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    scratch() {
        fs::remove_all(dir);
        fs::create_directories(dir / "a-folder");
    }
    ~scratch() { fs::remove_all(dir); }
};

TEST(ReadFileIfReadable, GivesNothingForWhatCannotBeRead) {
    const scratch s;
    std::ofstream(s.dir / "text", std::ios::binary) << "bytes\n";
    EXPECT_EQ(read_file_if_readable(s.dir / "text"), std::optional<std::string>("bytes\n"));
    EXPECT_FALSE(read_file_if_readable(s.dir / "missing"));
    EXPECT_FALSE(read_file_if_readable(s.dir / "a-folder")); // read_file_if_exists throws
    EXPECT_THROW(read_file_if_exists(s.dir / "a-folder"), std::runtime_error);
}

TEST(ReadJsonFile, SaysWhyAFileIsNotRead) {
    const scratch s;
    const auto missing = read_json_file(s.dir / "missing.json");
    EXPECT_EQ(missing.path, s.dir / "missing.json");
    EXPECT_TRUE(missing.missing);
    EXPECT_FALSE(missing.json);
    EXPECT_EQ(missing.why, "cannot be read");
    const auto folder = read_json_file(s.dir / "a-folder");
    EXPECT_FALSE(folder.missing);
    EXPECT_EQ(folder.why, "cannot be read");
    std::ofstream(s.dir / "bad.json") << "{";
    const auto bad = read_json_file(s.dir / "bad.json");
    EXPECT_FALSE(bad.json);
    EXPECT_EQ(bad.why.rfind("is not valid JSON: ", 0), 0u);
    std::ofstream(s.dir / "list.json") << "[1]";
    const auto list = read_json_file(s.dir / "list.json");
    ASSERT_TRUE(list.json);
    EXPECT_FALSE(list.object());
    EXPECT_TRUE(list.why.empty());
    std::ofstream(s.dir / "object.json") << R"({"k":1})";
    const auto object = read_json_file(s.dir / "object.json");
    ASSERT_TRUE(object.object());
    EXPECT_TRUE(object.object()->contains("k"));
}

} // namespace
} // namespace pacer::runtime

// summary.json has one reader (metrics/summary_file): merge, replay and the reports read a
// folder's summary and what it records through it.

#include <pacer/metrics/summary_file.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace pacer::metrics {
namespace {

namespace fs = std::filesystem;

struct folder {
    fs::path dir;
    folder() {
        dir = fs::temp_directory_path() /
              ("pacer-summary-file-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~folder() { fs::remove_all(dir); }
    void write(const std::string& text) const {
        std::ofstream(dir / "summary.json", std::ios::binary) << text;
    }
};

TEST(ReadSummary, SaysWhyAFileIsNotRead) {
    const folder f;
    const auto missing = read_summary(f.dir);
    EXPECT_EQ(missing.path, f.dir / "summary.json");
    EXPECT_TRUE(missing.missing);
    EXPECT_FALSE(missing.json);
    EXPECT_EQ(missing.why, "cannot be read");
    EXPECT_EQ(missing.object(), nullptr);

    f.write("{");
    const auto broken = read_summary(f.dir);
    EXPECT_FALSE(broken.missing);
    EXPECT_FALSE(broken.json);
    EXPECT_EQ(broken.why.rfind("is not valid JSON: ", 0), 0u) << broken.why;

    fs::remove(f.dir / "summary.json");
    fs::create_directory(f.dir / "summary.json"); // there, but not a file
    const auto folder_named_so = read_summary(f.dir);
    EXPECT_FALSE(folder_named_so.missing);
    EXPECT_EQ(folder_named_so.why, "cannot be read");
}

TEST(ReadSummary, ReadsAnyJsonAndItsObject) {
    const folder f;
    f.write("[1]");
    const auto array = read_summary(f.dir);
    ASSERT_TRUE(array.json);
    EXPECT_TRUE(array.json->is_array());
    EXPECT_EQ(array.object(), nullptr);

    f.write(R"({"command":"run","config":{"input_duration_s":2.5,"profile":"nemotron"}})");
    const auto run = read_summary(f.dir);
    ASSERT_NE(run.object(), nullptr);
    EXPECT_TRUE(run.why.empty());
    EXPECT_EQ(run.object()->at("command"), "run");
}

TEST(RecordedInSummary, InputDurationProfileAndProtocol) {
    const auto run =
        boost::json::parse(R"({"config":{"input_duration_s":2,"profile":"nemotron"}})").as_object();
    EXPECT_EQ(recorded_input_duration(run), 2.0);
    ASSERT_NE(recorded_profile_name(run), nullptr);
    EXPECT_EQ(*recorded_profile_name(run), "nemotron");
    EXPECT_FALSE(recorded_protocol(run));

    // A serving level: `profile` at the top wins over config's.
    const auto level =
        boost::json::parse(R"({"protocol":"openai-realtime","profile":"minicpmo",)"
                           R"("config":{"input_duration_s":"x","profile":"nemotron"}})")
            .as_object();
    EXPECT_FALSE(recorded_input_duration(level)); // not a number
    EXPECT_EQ(*recorded_profile_name(level), "minicpmo");
    EXPECT_EQ(recorded_protocol(level), "openai-realtime");

    const auto bare = boost::json::parse(R"({"protocol":7,"config":[]})").as_object();
    EXPECT_FALSE(recorded_input_duration(bare));
    EXPECT_EQ(recorded_profile_name(bare), nullptr);
    EXPECT_FALSE(recorded_protocol(bare));
}

} // namespace
} // namespace pacer::metrics

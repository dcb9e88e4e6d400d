// The report written at the end of `pacer run` and `pacer serve`: a report that cannot be made
// costs one warning line and leaves the run's files as they were (no half-written page); so do
// the tables of --export.

#include <pacer/report/end_report.hpp>

#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

TEST(auto_report, a_folder_it_cannot_read_gets_no_page_and_keeps_its_files) {
    pacer::test::scratch_folder dir("pacer-auto-report");
    // A summary that is not JSON (a run cut short while writing it, say).
    std::ofstream(dir.path / "summary.json") << "{\"schema_version\": 1, \"pac";
    const auto written = pacer::report::write_end_report(dir.path);
    EXPECT_FALSE(written.has_value());
    EXPECT_FALSE(fs::exists(dir.path / "report.html"));
    EXPECT_TRUE(fs::exists(dir.path / "summary.json"));
}

TEST(auto_report, an_existing_page_is_never_overwritten_nor_removed) {
    pacer::test::scratch_folder dir("pacer-auto-report");
    std::ofstream(dir.path / "summary.json") << "not json";
    std::ofstream(dir.path / "report.html") << "<p>kept</p>";
    EXPECT_FALSE(pacer::report::write_end_report(dir.path).has_value());
    std::ifstream in(dir.path / "report.html");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "<p>kept</p>");
}

TEST(auto_report, end_tables_are_those_of_pacer_export) {
    pacer::test::scratch_folder dir("pacer-auto-report");
    std::ofstream(dir.path / "summary.json")
        << R"({"command":"run","pacing":{"packets":{"sent":0,"late":0}},"pacing_qualified":true})";
    const auto written = pacer::report::write_end_tables(dir.path, "jsonl");
    ASSERT_TRUE(written.has_value());
    EXPECT_EQ(*written, dir.path / "tables-jsonl");
    EXPECT_TRUE(fs::exists(dir.path / "tables-jsonl" / "packets.jsonl"));
    EXPECT_TRUE(fs::exists(dir.path / "tables-jsonl" / "sessions.jsonl"));
}

TEST(auto_report, end_tables_that_cannot_be_made_leave_no_folder) {
    pacer::test::scratch_folder dir("pacer-auto-report");
    std::ofstream(dir.path / "summary.json") << "{\"schema_version\": 1, \"pac";
    EXPECT_FALSE(pacer::report::write_end_tables(dir.path, "csv").has_value());
    EXPECT_FALSE(fs::exists(dir.path / "tables-csv"));
    EXPECT_TRUE(fs::exists(dir.path / "summary.json"));
}

TEST(auto_report, an_existing_tables_folder_is_never_overwritten_nor_removed) {
    pacer::test::scratch_folder dir("pacer-auto-report");
    std::ofstream(dir.path / "summary.json")
        << R"({"command":"run","pacing":{"packets":{"sent":0,"late":0}},"pacing_qualified":true})";
    fs::create_directories(dir.path / "tables-csv");
    std::ofstream(dir.path / "tables-csv" / "packets.csv") << "kept";
    EXPECT_FALSE(pacer::report::write_end_tables(dir.path, "csv").has_value());
    EXPECT_EQ(pacer::test::read_text(dir.path / "tables-csv" / "packets.csv"), "kept");
}

} // namespace

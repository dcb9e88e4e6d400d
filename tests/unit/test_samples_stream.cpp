// samples.json streamed one session at a time (metrics::for_each_samples_session, what
// `pacer report` reads) gives what the whole-file lenient reader gives, and refuses what it
// refuses before handing over any session.

#include <pacer/metrics/samples_file.hpp>
#include <pacer/metrics/samples_stream.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace pacer::metrics {
namespace {

namespace fs = std::filesystem;

fs::path write_temp(const std::string& text) {
    static int counter = 0;
    const auto p = fs::temp_directory_path() /
                   fmt::format("pacer-samples-stream-{}-{}", ::getpid(), counter++);
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

std::vector<samples_session> streamed(const fs::path& p) {
    std::vector<samples_session> out;
    for_each_samples_session(p, [&](samples_session& s) { out.push_back(std::move(s)); });
    return out;
}

void expect_same(const std::string& text) {
    const auto p = write_temp(text);
    const auto whole = parse_samples(text, samples_rules::lenient).sessions;
    const auto got = streamed(p);
    fs::remove(p);
    ASSERT_EQ(got.size(), whole.size()) << text;
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].index, whole[i].index) << text;
        EXPECT_EQ(got[i].samples.session_start_s, whole[i].samples.session_start_s) << text;
        EXPECT_EQ(got[i].samples.deviation_s, whole[i].samples.deviation_s) << text;
    }
}

TEST(SamplesStream, GivesWhatTheLenientReaderGives) {
    expect_same(R"({"schema_version":1,"sessions":[{"index":4,"session_start_s":12.5,)"
                R"("deviation_s":[0.000001,-0.25,3,18446744073709551615]},)"
                R"({"deviation_s":[]},{"index":9,"session_start_s":null,"deviation_s":[1e-3]}]})");
    // Lenient rules: a session that is not an object is skipped, a deviation that is not a
    // number is 0 (a nested container too), deviation_s that is not an array is empty, an
    // index that does not fit is the previous + 1, the last duplicate key wins.
    expect_same(R"({"sessions":[7,"x",{"index":-1,"deviation_s":[true,null,"a",[1,2],{"b":1},2]},)"
                R"({"deviation_s":{"a":[1]}},{"index":"3","deviation_s":"no"},)"
                R"({"index":2,"index":5,"deviation_s":[1],"deviation_s":[2,3],)"
                R"("other":{"deviation_s":[9],"index":99}}],"open_loop":{"sessions":[{}]}})");
    // Not an object, or no sessions array: no sessions.
    expect_same(R"([{"sessions":[{"index":1}]}])");
    expect_same(R"({"sessions":{"index":1}})");
    expect_same(R"({"nested":{"sessions":[{"index":1}]}})");
    expect_same(" {\"sessions\" : [ { \"index\" : 1 , \"deviation_s\" : [ 1 , 2 ] } ] } \n");
}

TEST(SamplesStream, LargeFilesCrossChunkBoundaries) {
    std::string text = R"({"sessions":[)";
    for (int s = 0; s < 40; ++s) {
        text += fmt::format(R"({}{{"index":{},"session_start_s":{}.123456789,"deviation_s":[)",
                            s ? "," : "", s, 1000 + s);
        for (int k = 0; k < 1000; ++k)
            text += fmt::format("{}{}", k ? "," : "", (k * 37 % 1001) * 1e-6 - 0.0003);
        text += "]}";
    }
    text += "]}";
    ASSERT_GT(text.size(), 4u * 64 * 1024); // several of the reader's 64 kB chunks
    expect_same(text);
}

TEST(SamplesStream, RefusesWhatIsNotJsonBeforeAnySession) {
    for (const std::string& bad : std::vector<std::string>{
             R"({"sessions":[{"index":1,"deviation_s":[1]},{"index":2,"deviation_s":[1,)",
             R"({"sessions":[{"index":1}]} trailing)", std::string("")}) {
        const auto p = write_temp(bad);
        std::size_t visited = 0;
        try {
            for_each_samples_session(p, [&](samples_session&) { ++visited; });
            ADD_FAILURE() << "accepted: " << bad;
        } catch (const std::runtime_error& e) {
            EXPECT_EQ(std::string(e.what()).rfind(p.string() + " is not valid JSON: ", 0), 0u)
                << e.what();
        }
        EXPECT_EQ(visited, 0u) << bad;
        fs::remove(p);
    }
    const auto missing = fs::temp_directory_path() / "pacer-samples-stream-none/samples.json";
    try {
        for_each_samples_session(missing, [](samples_session&) {});
        ADD_FAILURE();
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), missing.string() + " cannot be read");
    }
}

} // namespace
} // namespace pacer::metrics

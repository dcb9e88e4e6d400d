// samples.json has one writer (metrics::write_samples) and one reader (metrics/samples_file):
// strict for pooling parts, lenient for drawing a report.

#include <pacer/metrics/pacing.hpp>
#include <pacer/metrics/samples_file.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace pacer::metrics {
namespace {

namespace fs = std::filesystem;

// The message parse_samples throws for `text`, or "" when it returns.
std::string refusal(const std::string& text, samples_rules rules) {
    try {
        parse_samples(text, rules);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return {};
}

TEST(ReadSamples, ReadsWhatTheWriterWrote) {
    std::vector<trace::session_result> sessions(2);
    sessions[0].index = 4;
    sessions[0].session_start_s = 12.5;
    sessions[0].handshake = trace::handshake_times{0.001, 0.002, 0.003};
    sessions[0].update_sent_s = 20.0;
    sessions[0].updated_s = 20.25;
    sessions[1].index = 5; // never admitted: no start, no handshake
    schedule::open_loop_result r;
    r.start = time_point(std::chrono::seconds(500));
    r.records.resize(1);
    r.records[0].scheduled = r.start + std::chrono::nanoseconds(123'456'789);
    r.records[0].failed = true;
    std::string text;
    write_samples([&](std::string_view piece) { text += piece; }, sessions,
                  [](const trace::session_result& s, std::vector<double>& out) {
                      if (s.index == 4)
                          out = {0.000125, -0.5};
                      return std::string();
                  },
                  {&r, 2, 3});
    for (const auto rules : {samples_rules::strict, samples_rules::lenient}) {
        const auto got = parse_samples(text, rules);
        ASSERT_EQ(got.sessions.size(), 2u);
        const auto& a = got.sessions[0];
        EXPECT_EQ(a.index, 4u);
        ASSERT_TRUE(a.samples.session_start_s);
        EXPECT_DOUBLE_EQ(*a.samples.session_start_s, 12.5);
        EXPECT_EQ(a.samples.deviation_s, (std::vector<double>{0.000125, -0.5}));
        ASSERT_TRUE(a.handshake);
        EXPECT_DOUBLE_EQ(a.handshake->connect_s, 0.001);
        EXPECT_DOUBLE_EQ(a.handshake->tls_s, 0.002);
        EXPECT_DOUBLE_EQ(a.handshake->upgrade_s, 0.003);
        ASSERT_TRUE(a.handshake->update_ack_s);
        EXPECT_DOUBLE_EQ(*a.handshake->update_ack_s, 0.25);
        const auto& b = got.sessions[1];
        EXPECT_EQ(b.index, 5u);
        EXPECT_FALSE(b.samples.session_start_s);
        EXPECT_TRUE(b.samples.deviation_s.empty());
        EXPECT_FALSE(b.handshake);
        ASSERT_TRUE(got.arrivals);
        ASSERT_EQ(got.arrivals->size(), 1u);
        EXPECT_EQ((*got.arrivals)[0].index, 2u);
        EXPECT_EQ((*got.arrivals)[0].offset_ns, 123'456'789);
        EXPECT_TRUE((*got.arrivals)[0].failed);
        EXPECT_FALSE((*got.arrivals)[0].dispatched_s);
    }
    // A closed-loop file has no arrivals.
    EXPECT_FALSE(parse_samples(samples_json({}), samples_rules::strict).arrivals);
}

TEST(ReadSamples, StrictRulesRefuseTheWholeFileForOneFlaw) {
    const auto strict = samples_rules::strict;
    EXPECT_EQ(refusal("{", strict).rfind("is not valid JSON: ", 0), 0u);
    EXPECT_EQ(refusal("[]", strict), "has no sessions array");
    EXPECT_EQ(refusal(R"({"sessions":{}})", strict), "has no sessions array");
    const char* flawed[] = {
        R"({"sessions":[1]})",                         // a session not an object
        R"({"sessions":[{"index":0}]})",               // no deviation_s
        R"({"sessions":[{"deviation_s":[0.1,"x"]}]})", // a deviation not a number
        R"({"sessions":[{"deviation_s":[],"handshake_s":{"connect":0.1}}]})", // phases missing
        R"({"sessions":[],"open_loop":null})",                       // open_loop not an object
        R"({"sessions":[],"open_loop":{"arrivals":[{"index":0}]}})", // an arrival incomplete
    };
    for (const char* text : flawed) {
        EXPECT_EQ(refusal(text, strict).rfind("is malformed: ", 0), 0u) << text;
        EXPECT_EQ(refusal(text, samples_rules::lenient), "") << text;
    }
}

TEST(ReadSamples, LenientRulesKeepWhatCanBeRead) {
    const auto lenient = samples_rules::lenient;
    EXPECT_EQ(refusal("{", lenient).rfind("is not valid JSON: ", 0), 0u);
    EXPECT_TRUE(parse_samples("[]", lenient).sessions.empty());
    EXPECT_TRUE(parse_samples(R"({"unit":"seconds"})", lenient).sessions.empty());
    const auto got = parse_samples(
        R"({"sessions":[7,{"deviation_s":[0.5,"x",null]},{"index":9,"deviation_s":"x",)"
        R"("handshake_s":{"connect":0.1}},{"session_start_s":"soon"}],)"
        R"("open_loop":{"arrivals":[{"index":0}]}})",
        lenient);
    ASSERT_EQ(got.sessions.size(), 3u); // the one that is not an object is skipped
    EXPECT_EQ(got.sessions[0].index, 0u);
    EXPECT_EQ(got.sessions[0].samples.deviation_s, (std::vector<double>{0.5, 0.0, 0.0}));
    EXPECT_EQ(got.sessions[1].index, 9u);
    EXPECT_TRUE(got.sessions[1].samples.deviation_s.empty());
    EXPECT_FALSE(got.sessions[1].handshake);
    EXPECT_EQ(got.sessions[2].index, 10u); // none recorded: the previous + 1
    EXPECT_FALSE(got.sessions[2].samples.session_start_s);
    EXPECT_FALSE(got.arrivals);
}

TEST(ReadSamples, NamesTheFileItCannotRead) {
    const auto dir =
        fs::temp_directory_path() / ("pacer-samples-file-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const auto file = dir / "samples.json";
    auto message = [&](samples_rules rules) {
        try {
            read_samples(file, rules);
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_EQ(message(samples_rules::strict), "cannot read " + file.string());
    EXPECT_EQ(message(samples_rules::lenient), file.string() + " cannot be read");
    std::ofstream(file) << "not json";
    EXPECT_EQ(message(samples_rules::strict).rfind(file.string() + " is not valid JSON: ", 0), 0u);
    EXPECT_EQ(message(samples_rules::lenient).rfind(file.string() + " is not valid JSON: ", 0), 0u);
    fs::remove(file);
    fs::create_directories(file); // something there that is not a file
    EXPECT_EQ(message(samples_rules::strict), "cannot read " + file.string() + ": not a file");
    EXPECT_EQ(message(samples_rules::lenient), file.string() + " cannot be read");
    fs::remove_all(dir);
}

} // namespace
} // namespace pacer::metrics

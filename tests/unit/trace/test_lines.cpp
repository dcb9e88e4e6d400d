// trace.jsonl has one parser (trace/lines), read by replay, serving levels, pacer record and
// the fuzzers.

#include <pacer/trace/lines.hpp>
#include <pacer/trace/record.hpp>

#include <gtest/gtest.h>

#include <string>

namespace pacer::trace {
namespace {

// Moved from metrics with its assertions.
TEST(ParseTrace, ReadsLinesAndReportsUnreadableOnes) {
    const auto p =
        parse_trace("{\"direction\":\"send\",\"time_s\":1.5,\"event\":{\"type\":\"x\"}}\n"
                    "not json\n"
                    "{\"direction\":\"send\",\"time_s\":\"1\",\"event\":{}}\n"
                    "{\"direction\":\"receive\",\"time_s\":2,\"event\":{\"type\":\"y\"}}\n");
    ASSERT_EQ(p.lines.size(), 2u);
    EXPECT_EQ(p.lines[0].direction, "send");
    EXPECT_DOUBLE_EQ(p.lines[0].time_s, 1.5);
    EXPECT_EQ(p.lines[1].line, 4u);
    ASSERT_EQ(p.errors.size(), 2u);
    EXPECT_EQ(p.errors[0].rfind("trace line 2:", 0), 0u);
    EXPECT_EQ(p.errors[1].rfind("trace line 3:", 0), 0u);
}

// What the writer formats (append_line) is what the parser reads.
TEST(ParseTrace, ReadsWhatTheWriterFormats) {
    std::string text;
    append_line(text, direction::receive, 12.5, R"({"type":"session.created","event_id":"x"})");
    append_line(text, direction::error, 13.0, R"({"message":"boom"})");
    const auto p = parse_trace(text);
    ASSERT_TRUE(p.errors.empty());
    ASSERT_EQ(p.lines.size(), 2u);
    EXPECT_EQ(p.lines[0].direction, "receive");
    EXPECT_DOUBLE_EQ(p.lines[0].time_s, 12.5);
    EXPECT_EQ(p.lines[0].event.at("type"), "session.created");
    EXPECT_EQ(p.lines[0].line, 1u);
    EXPECT_EQ(p.lines[1].direction, "error");
    EXPECT_EQ(p.lines[1].event.at("message"), "boom");
}

} // namespace
} // namespace pacer::trace

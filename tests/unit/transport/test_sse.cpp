// The SSE parser (transport/sse.hpp) and the reading of OpenAI-compatible stream chunks
// (transport/openai_stream.hpp), sans-io: every split of the bytes gives the same events.

#include <pacer/transport/openai_stream.hpp>
#include <pacer/transport/sse.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pacer::transport {
namespace {

std::vector<sse_event> parse_whole(std::string_view bytes, sse_parser& p) {
    std::vector<sse_event> out;
    p.feed(bytes, out);
    return out;
}

std::vector<sse_event> parse_bytewise(std::string_view bytes) {
    sse_parser p;
    std::vector<sse_event> out;
    for (char c : bytes)
        p.feed(std::string_view(&c, 1), out);
    return out;
}

std::vector<std::string> datas(const std::vector<sse_event>& events) {
    std::vector<std::string> out;
    for (const auto& e : events)
        out.push_back(e.data);
    return out;
}

TEST(Sse, DataLinesEndEventsAtBlankLines) {
    sse_parser p;
    const auto ev = parse_whole("data: one\n\ndata: two\n\n", p);
    EXPECT_EQ(datas(ev), (std::vector<std::string>{"one", "two"}));
    EXPECT_FALSE(p.pending());
}

TEST(Sse, EveryLineEndingAndEverySplitGiveTheSameEvents) {
    const std::string lf = "data: a\ndata: b\n\nevent: x\ndata:c\n\n";
    for (const std::string& text :
         {lf, std::string("data: a\r\ndata: b\r\n\r\nevent: x\r\ndata:c\r\n\r\n"),
          std::string("data: a\rdata: b\r\revent: x\rdata:c\r\r")}) {
        for (std::size_t cut = 0; cut <= text.size(); ++cut) {
            sse_parser p;
            std::vector<sse_event> out;
            p.feed(std::string_view(text).substr(0, cut), out);
            p.feed(std::string_view(text).substr(cut), out);
            ASSERT_EQ(datas(out), (std::vector<std::string>{"a\nb", "c"})) << "cut " << cut;
            EXPECT_EQ(out[1].event, "x");
        }
        EXPECT_EQ(datas(parse_bytewise(text)), (std::vector<std::string>{"a\nb", "c"}));
    }
}

TEST(Sse, CommentsUnknownFieldsAndEmptyEventsAreSkipped) {
    sse_parser p;
    const auto ev = parse_whole(": keep-alive\n\nretry: 10\nfoo: bar\n\nid: 7\ndata\n\n", p);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].data, ""); // a bare `data` field is an empty data line
    EXPECT_EQ(ev[0].id, "7");
}

TEST(Sse, OnlyOneSpaceAfterTheColonIsDropped) {
    sse_parser p;
    EXPECT_EQ(parse_whole("data:  two spaces\n\n", p).at(0).data, " two spaces");
}

TEST(Sse, ALeadingByteOrderMarkIsSkippedEvenWhenSplit) {
    const std::string text = "\xEF\xBB\xBF"
                             "data: x\n\n";
    EXPECT_EQ(datas(parse_bytewise(text)), (std::vector<std::string>{"x"}));
    sse_parser p;
    EXPECT_EQ(datas(parse_whole(text, p)), (std::vector<std::string>{"x"}));
}

TEST(Sse, AnEventCutOffByTheEndIsPendingNotDispatched) {
    sse_parser p;
    EXPECT_TRUE(parse_whole("data: half", p).empty());
    EXPECT_TRUE(p.pending());
    sse_parser q;
    EXPECT_TRUE(parse_whole("data: whole line\n", q).empty());
    EXPECT_TRUE(q.pending());
}

TEST(Sse, AnOverlongEventFailsAndStopsTheParser) {
    sse_parser p(16);
    std::vector<sse_event> out;
    EXPECT_FALSE(p.feed("data: 0123456789abcdefghij", out));
    EXPECT_TRUE(p.failed());
    EXPECT_NE(p.error().find("16 bytes"), std::string::npos);
    EXPECT_FALSE(p.feed("\n\ndata: x\n\n", out));
    EXPECT_TRUE(out.empty());
    // Across many short data lines too.
    sse_parser q(16);
    EXPECT_FALSE(q.feed("data: 12345\ndata: 12345\ndata: 12345\n", out));
    EXPECT_TRUE(out.empty());
}

TEST(OpenAiStream, ReadsCompletionAndChatChunksDoneAndUsage) {
    EXPECT_TRUE(read_openai_chunk("[DONE]").done);
    const auto text = read_openai_chunk(R"({"choices":[{"index":0,"text":" hi"}]})");
    EXPECT_TRUE(text.has_text);
    EXPECT_TRUE(text.malformed.empty());
    EXPECT_TRUE(read_openai_chunk(R"({"choices":[{"delta":{"content":"x"}}]})").has_text);
    EXPECT_TRUE(read_openai_chunk(R"({"choices":[{"delta":{"reasoning_content":"x"}}]})").has_text);
    const auto role =
        read_openai_chunk(R"({"choices":[{"delta":{"role":"assistant","content":""}}]})");
    EXPECT_FALSE(role.has_text);
    EXPECT_TRUE(role.malformed.empty());
    const auto usage = read_openai_chunk(
        R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}})");
    ASSERT_TRUE(usage.usage);
    EXPECT_EQ(usage.usage->prompt_tokens, 5u);
    EXPECT_EQ(usage.usage->completion_tokens, 9u);
    EXPECT_FALSE(usage.has_text);
}

TEST(OpenAiStream, MalformedDataAndStreamedErrorsAreTold) {
    EXPECT_FALSE(read_openai_chunk("{not valid json").malformed.empty());
    EXPECT_FALSE(read_openai_chunk("[1,2]").malformed.empty());
    EXPECT_FALSE(read_openai_chunk(R"({"choices":5})").malformed.empty());
    EXPECT_FALSE(read_openai_chunk("").malformed.empty());
    EXPECT_EQ(read_openai_chunk(R"({"error":{"message":"overloaded"}})").server_error,
              "overloaded");
}

} // namespace
} // namespace pacer::transport

// `--model` in the URL for openai-realtime (src/run/client_settings.cpp, docs/protocols.md).

#include <pacer/core/bad_input.hpp>
#include <pacer/run/client_settings.hpp>
#include <pacer/runtime/exit_status.hpp>

#include <gtest/gtest.h>

#include <string>

namespace pacer::run {
namespace {

using protocol::realtime_protocol;

std::string target_with(const std::string& url, std::optional<realtime_protocol> p,
                        const std::string& model) {
    auto ep = url_option(url);
    model_in_url(ep, p, model);
    return ep.target;
}

TEST(ModelInUrl, OpenAiRealtimeGetsTheModelInTheQuery) {
    EXPECT_EQ(
        target_with("wss://api.example.com/v1/realtime", realtime_protocol::openai, "gpt-realtime"),
        "/v1/realtime?model=gpt-realtime");
    EXPECT_EQ(
        target_with("ws://127.0.0.1:9000/v1/realtime", realtime_protocol::openai, "org/model v2"),
        "/v1/realtime?model=org%2Fmodel%20v2");
}

TEST(ModelInUrl, TheQueryOfTheUrlIsKept) {
    EXPECT_EQ(target_with("ws://h:1/v1/realtime?tenant=a%20b&x=1", realtime_protocol::openai, "m"),
              "/v1/realtime?tenant=a%20b&x=1&model=m");
}

TEST(ModelInUrl, TheSameModelAlreadyInTheUrlIsNotAddedTwice) {
    EXPECT_EQ(
        target_with("ws://h:1/v1/realtime?model=org%2Fm&x=1", realtime_protocol::openai, "org/m"),
        "/v1/realtime?model=org%2Fm&x=1");
}

TEST(ModelInUrl, AnotherModelInTheUrlIsBadInput) {
    auto ep = url_option("ws://h:1/v1/realtime?model=a");
    try {
        model_in_url(ep, realtime_protocol::openai, "b");
        ADD_FAILURE() << "no bad_input";
    } catch (const bad_input& e) {
        EXPECT_EQ(std::string(e.what()), "--model b and the model=a in --url differ: give one");
    }
}

TEST(ModelInUrl, OtherProtocolsAndNoModelLeaveTheUrlAlone) {
    // vllm-realtime names its model in session.update; native has none.
    EXPECT_EQ(target_with("ws://h:1/v1/realtime", realtime_protocol::vllm, "m"), "/v1/realtime");
    EXPECT_EQ(target_with("ws://h:1/v1/realtime", std::nullopt, "m"), "/v1/realtime");
    EXPECT_EQ(target_with("ws://h:1/v1/realtime?a=1", realtime_protocol::openai, ""),
              "/v1/realtime?a=1");
}

} // namespace
} // namespace pacer::run

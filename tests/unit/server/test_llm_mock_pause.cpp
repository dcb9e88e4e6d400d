// `pacer llm-mock --pause-ms P --pause-every-ms E`: when a token due inside a periodic pause
// leaves, computed with constructed times.

#include <pacer/server/llm_mock.hpp>

#include <gtest/gtest.h>

#include <chrono>

namespace {

using namespace std::chrono_literals;
using pacer::server::after_pause;

const pacer::time_point origin = pacer::time_point{} + 1h;

TEST(LlmMockPause, ATokenDueInAPauseLeavesWhenItEnds) {
    // 30 ms out of every 100 ms, from the origin.
    EXPECT_EQ(after_pause(origin, origin, 100ms, 30ms), origin + 30ms);
    EXPECT_EQ(after_pause(origin + 10ms, origin, 100ms, 30ms), origin + 30ms);
    EXPECT_EQ(after_pause(origin + 229ms, origin, 100ms, 30ms), origin + 230ms);
}

TEST(LlmMockPause, ATokenDueOutsideAPauseLeavesOnTime) {
    EXPECT_EQ(after_pause(origin + 30ms, origin, 100ms, 30ms), origin + 30ms);
    EXPECT_EQ(after_pause(origin + 99ms, origin, 100ms, 30ms), origin + 99ms);
    EXPECT_EQ(after_pause(origin - 5ms, origin, 100ms, 30ms), origin - 5ms); // before the start
}

TEST(LlmMockPause, NoPauseWhenEitherIsZero) {
    EXPECT_EQ(after_pause(origin + 10ms, origin, 0ms, 30ms), origin + 10ms);
    EXPECT_EQ(after_pause(origin + 10ms, origin, 100ms, 0ms), origin + 10ms);
}

} // namespace

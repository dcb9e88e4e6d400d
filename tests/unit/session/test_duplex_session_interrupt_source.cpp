// Unit tests of `session::interrupt_source`: sessions subscribe while they run and leave when
// they end, so a finished session leaves nothing behind in its context's source.

#include <pacer/session/duplex_session.hpp>

#include <gtest/gtest.h>

#include <utility>

namespace {

using pacer::session::interrupt_source;

TEST(interrupt_source, request_stops_every_subscribed_session_once) {
    interrupt_source source;
    int a = 0, b = 0;
    auto sa = source.subscribe([&] { ++a; });
    auto sb = source.subscribe([&] { ++b; });
    EXPECT_EQ(source.subscribers(), 2u);
    EXPECT_FALSE(source.requested);
    source.request();
    EXPECT_TRUE(source.requested);
    EXPECT_EQ(a, 1);
    EXPECT_EQ(b, 1);
}

TEST(interrupt_source, an_ended_subscription_is_gone_and_not_called) {
    interrupt_source source;
    int a = 0, b = 0;
    auto sa = source.subscribe([&] { ++a; });
    {
        auto sb = source.subscribe([&] { ++b; });
        EXPECT_EQ(source.subscribers(), 2u);
    } // the session ended
    EXPECT_EQ(source.subscribers(), 1u);
    sa.reset();
    sa.reset(); // twice is harmless
    EXPECT_EQ(source.subscribers(), 0u);
    source.request();
    EXPECT_EQ(a, 0);
    EXPECT_EQ(b, 0);
}

TEST(interrupt_source, a_moved_subscription_is_ended_once_by_its_new_owner) {
    interrupt_source source;
    int calls = 0;
    interrupt_source::subscription outer;
    {
        auto inner = source.subscribe([&] { ++calls; });
        outer = std::move(inner);
    } // the moved-from one owns nothing
    EXPECT_EQ(source.subscribers(), 1u);
    source.request();
    EXPECT_EQ(calls, 1);
    outer = {};
    EXPECT_EQ(source.subscribers(), 0u);
}

} // namespace

// `pacer run --stagger-slots K`: the stagger's offsets rounded down to K slots, so that the
// sessions of a slot share their phase (and their timer wake-ups).

#include <pacer/session/runner.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <set>

namespace {

using namespace std::chrono_literals;
using pacer::duration;
using pacer::session::stagger_offset;

TEST(StaggerSlots, WithoutSlotsEverySessionHasItsOwnPhase) {
    std::set<duration> phases;
    for (std::size_t i = 0; i < 8; ++i)
        phases.insert(stagger_offset(i, 8, 80ms, 0));
    EXPECT_EQ(phases.size(), 8u);
    EXPECT_EQ(stagger_offset(1, 8, 80ms, 0), duration(10ms));
    EXPECT_EQ(stagger_offset(7, 8, 80ms, 0), duration(70ms));
}

TEST(StaggerSlots, SlotsShareTheirPhase) {
    // 8 sessions in 4 slots of 20 ms: two per slot, at 0, 20, 40 and 60 ms.
    const duration expected[] = {0ms, 0ms, 20ms, 20ms, 40ms, 40ms, 60ms, 60ms};
    for (std::size_t i = 0; i < 8; ++i)
        EXPECT_EQ(stagger_offset(i, 8, 80ms, 4), expected[i]) << i;
}

TEST(StaggerSlots, MoreSlotsThanSessionsIsTheUnslottedSpread) {
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_EQ(stagger_offset(i, 3, 90ms, 3), stagger_offset(i, 3, 90ms, 0)) << i;
    EXPECT_EQ(stagger_offset(5, 1024, 80ms, 1), duration::zero()) << "one slot: aligned";
}

} // namespace

// The native mock's compute model used from many threads at once, as the mock's session threads
// use it: the shared worker's queue (`service_queue`) and the cold start (`cold_start`). The
// times are a manual clock; the asserts are on what the threads' calls added up to, so under TSan
// (CI) this is also the check that the model's state is safely shared.

#include <pacer/server/detail/compute_model.hpp>

#include <gtest/gtest.h>

#include "compute_model_clock.hpp"
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace pacer::server::detail {
namespace {

using namespace std::chrono_literals;
using test_clock::at;
using test_clock::ms;

TEST(ServiceQueueThreads, UnitsFromManyThreadsShareOneQueueWithoutOverlap) {
    // Sessions on 4 threads complete 500 units each at the same instant: the worker serves
    // all 2,000 back to back, each in its own 1 ms slot, whatever order the threads ran in.
    constexpr int threads = 4, per_thread = 500;
    service_queue q(1ms);
    std::vector<std::vector<time_point>> starts(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int u = 0; u < per_thread; ++u)
                starts[t].push_back(q.admit(at(0ms)).start);
        });
    for (auto& th : pool)
        th.join();
    std::vector<time_point> all;
    for (const auto& s : starts)
        all.insert(all.end(), s.begin(), s.end());
    std::sort(all.begin(), all.end());
    for (std::size_t i = 0; i < all.size(); ++i)
        ASSERT_EQ(all[i], at(ms(i))) << i;
    EXPECT_EQ(q.backlog(at(0ms)), ms(threads * per_thread));
}

TEST(ColdStartThreads, SessionsOpeningOnManyThreadsRaiseTheMarkOnce) {
    // Eight sessions open at once on four threads, each seeing some count of open sessions:
    // the mark ends at the highest count seen, and it is one cold start.
    cold_start c(30ms, 2s);
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < 4; ++t)
        pool.emplace_back([&, t] {
            c.opened(t + 1, at(0ms));
            c.opened(t + 5, at(0ms));
        });
    for (auto& th : pool)
        th.join();
    EXPECT_EQ(c.high_water(), 8u);
    EXPECT_EQ(c.count(), 1u);
    EXPECT_EQ(c.extra(at(1ms)), 30ms);
}

} // namespace
} // namespace pacer::server::detail

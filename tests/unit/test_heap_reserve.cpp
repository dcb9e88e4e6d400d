// runtime/heap_reserve: a thread that reserved its heap allocates (and touches) memory up to the
// reserve with no new page of its own: counted as the thread's minor page faults
// (RUSAGE_THREAD), not timed. The same work without the reserve faults on every new page.
#include <pacer/runtime/heap_reserve.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <vector>

namespace {

long thread_minor_faults() {
    rusage u{};
    ::getrusage(RUSAGE_THREAD, &u);
    return u.ru_minflt;
}

// On a fresh thread (its own arena): reserves `reserve` bytes, then holds 16 MB of 3.5 kB
// strings (a session's trace line is about that size), writing every byte. Returns the minor
// page faults of that allocation phase only.
long faults_of_burst(std::size_t reserve) {
    long faults = -1;
    std::thread t([&] {
        pacer::runtime::reserve_thread_heap(reserve);
        std::vector<std::string> lines;
        lines.reserve(5000);
        const long before = thread_minor_faults();
        for (std::size_t held = 0; held < (std::size_t{16} << 20); held += 3500)
            lines.emplace_back(3500, 'x');
        faults = thread_minor_faults() - before;
    });
    t.join();
    return faults;
}

} // namespace

TEST(HeapReserve, AllocationsWithinTheReserveTakeNoPageFault) {
    // 16 MB is 4,096 pages: without a reserve each one faults at its first touch.
    EXPECT_GT(faults_of_burst(0), 2000);
    EXPECT_LT(faults_of_burst(std::size_t{32} << 20), 64);
}

TEST(HeapReserve, SessionReserveIs64kBASessionUpTo64MB) {
    EXPECT_EQ(pacer::runtime::session_heap_reserve(1), std::size_t{64} << 10);
    EXPECT_EQ(pacer::runtime::session_heap_reserve(512), std::size_t{32} << 20);
    EXPECT_EQ(pacer::runtime::session_heap_reserve(4096), std::size_t{64} << 20);
    EXPECT_EQ(pacer::runtime::reserve_thread_heap(0), 0u);
}

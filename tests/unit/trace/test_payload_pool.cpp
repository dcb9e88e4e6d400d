// Unit tests of the trace payload pool (trace/payload_pool.hpp): strings the writer gives back
// are the ones the sessions take next, emptied; the pool keeps neither tiny nor huge strings
// and stays within its byte bound. The pool is process-wide, so each test compares sizes
// before and after or empties it first, and takes in a fresh thread, whose cache starts empty
// (and is freed when the thread ends).

#include <pacer/trace/payload_pool.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace pool = pacer::trace::payload_pool;

std::string filled(std::size_t bytes) {
    return std::string(bytes, 'x');
}

// Takes `n` strings in a new thread (an empty cache: they come from the shared pool).
std::vector<std::string> take_in_new_thread(std::size_t n) {
    std::vector<std::string> got;
    std::thread([&] {
        for (std::size_t i = 0; i < n; ++i)
            got.push_back(pool::take());
    }).join();
    return got;
}

TEST(trace_payload_pool, given_strings_come_back_empty_with_their_capacity) {
    take_in_new_thread(pool::size().strings); // start empty: a refill takes a whole batch
    const auto before = pool::size();
    std::vector<std::string> spent{filled(5'000), filled(3'500), filled(200)};
    std::vector<std::size_t> capacities;
    std::size_t bytes = 0;
    for (const auto& s : spent) {
        capacities.push_back(s.capacity());
        bytes += s.capacity();
    }
    pool::give(spent);
    EXPECT_TRUE(spent.empty());
    EXPECT_EQ(pool::size().strings, before.strings + 3);
    EXPECT_EQ(pool::size().bytes, before.bytes + bytes);

    const auto got = take_in_new_thread(3);
    std::vector<std::size_t> got_capacities;
    for (const auto& s : got) {
        EXPECT_TRUE(s.empty());
        got_capacities.push_back(s.capacity());
    }
    std::sort(capacities.begin(), capacities.end());
    std::sort(got_capacities.begin(), got_capacities.end());
    EXPECT_EQ(got_capacities, capacities);
    EXPECT_EQ(pool::size().strings, before.strings);
    EXPECT_EQ(pool::size().bytes, before.bytes);
}

TEST(trace_payload_pool, an_empty_pool_gives_new_strings) {
    const auto before = pool::size();
    const auto got = take_in_new_thread(before.strings + 2); // more than it holds
    EXPECT_EQ(pool::size().strings, 0u);
    EXPECT_EQ(pool::size().bytes, 0u);
    for (const auto& s : got)
        EXPECT_TRUE(s.empty());
}

TEST(trace_payload_pool, keeps_neither_small_nor_huge_strings) {
    const auto before = pool::size();
    std::vector<std::string> spent{std::string("short"), filled(pool::max_string_bytes + 1),
                                   std::string()};
    pool::give(spent);
    EXPECT_TRUE(spent.empty());
    EXPECT_EQ(pool::size().strings, before.strings);
    EXPECT_EQ(pool::size().bytes, before.bytes);
}

// A batch is kept whole or freed whole (the lock is held for O(1)).
TEST(trace_payload_pool, stays_within_its_byte_bound) {
    take_in_new_thread(pool::size().strings); // start empty
    std::vector<std::string> spent;
    for (std::size_t given = 0; given < pool::max_pooled_bytes + pool::max_string_bytes;
         given += 60'000)
        spent.push_back(filled(60'000));
    const auto n = spent.size();
    pool::give(spent);
    EXPECT_EQ(pool::size().strings, 0u); // a batch past the bound is freed whole
    EXPECT_TRUE(spent.empty());
    std::vector<std::string> half(n / 2, filled(60'000));
    pool::give(half);
    EXPECT_EQ(pool::size().strings, n / 2); // one within it is kept
    EXPECT_LE(pool::size().bytes, pool::max_pooled_bytes);
    std::vector<std::string> again(n / 2 + 1, filled(60'000));
    pool::give(again);
    EXPECT_EQ(pool::size().strings, n / 2);   // and the next that would pass it is not
    take_in_new_thread(pool::size().strings); // leave it empty, the memory freed
    EXPECT_EQ(pool::size().strings, 0u);
}

} // namespace

#include <pacer/runtime/heap_reserve.hpp>

#include <algorithm>
#include <cstdlib>
#include <malloc.h>
#include <vector>

namespace pacer::runtime {

namespace {

constexpr std::size_t max_reserve = std::size_t{64} << 20;
// glibc's largest mmap threshold on 64-bit (half its 64 MB per-thread heap).
constexpr std::size_t mmap_threshold = std::size_t{32} << 20;
// Below the mmap threshold: the blocks come from the thread's arena, not from their own mappings.
constexpr std::size_t block = std::size_t{64} << 10;

} // namespace

std::size_t session_heap_reserve(std::size_t sessions) {
    return std::min(max_reserve, sessions * (std::size_t{64} << 10));
}

std::size_t reserve_thread_heap(std::size_t bytes) {
    bytes = std::min(bytes, max_reserve);
    if (bytes == 0)
        return 0;
    // Keep free memory at an arena's top up to the reserve (and a margin) instead of trimming it.
    // Setting it fixes the mmap threshold too (glibc stops raising it as large blocks are freed):
    // fixed at glibc's largest, blocks up to 32 MB still come from the arenas instead of an
    // mmap/munmap pair each (which would take the memory-map lock for writing every time).
    (void)::mallopt(M_TRIM_THRESHOLD, static_cast<int>(max_reserve + (std::size_t{4} << 20)));
    (void)::mallopt(M_MMAP_THRESHOLD, static_cast<int>(mmap_threshold));
    std::vector<void*> blocks;
    blocks.reserve(bytes / block + 1);
    for (std::size_t got = 0; got < bytes; got += block) {
        void* p = std::malloc(block);
        if (!p)
            break;
        // Touch every page (volatile: a store into memory freed unread is otherwise dropped).
        auto* bytes_of = static_cast<volatile unsigned char*>(p);
        for (std::size_t at = 0; at < block; at += 4096)
            bytes_of[at] = 0;
        blocks.push_back(p);
    }
    // Freed from the top down, they merge back into the arena's top chunk, which stays.
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
        std::free(*it);
    return blocks.size() * block;
}

} // namespace pacer::runtime

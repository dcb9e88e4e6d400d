#pragma once
// The strings that carry trace lines and receipts from the sessions to the writer thread,
// recycled. Each line
// used to be a new string on the session thread, freed by the writer: with glibc's allocator
// every such free takes the lock of the session thread's malloc arena, which the session thread
// holds for its own allocations, and at 1,024 sessions three quarters of the client's futex calls
// were those two threads waiting for each other on it (docs/changelog.md, payload_pool).
// Now the writer gives the strings back once written, a batch at a time, and the sessions build
// their next lines in them: a line's bytes are still copied, but nothing is allocated or freed
// per line, and the threads share one lock taken once per batch.
//
// Process-wide, like an allocator: any string is as good as any other, so two runs, or two
// channels, in one process may share it.

#include <cstddef>
#include <string>
#include <vector>

namespace pacer::trace::payload_pool {

/// Session side: an empty string to build a payload in, with the capacity of one the writer gave
/// back when there is one, otherwise a new one. Takes from this thread's cache, which refills
/// from the shared pool a batch at a time.
std::string take();

/// Writer side: gives back the payloads of records it is done with (`spent` is left empty).
/// The pool keeps at most `max_pooled_bytes` of capacity: a batch that would pass it is freed
/// whole, as is any string larger than `max_string_bytes` or with no room of its own.
void give(std::vector<std::string>& spent);

/// Bounds of the shared pool (the thread caches hold at most `refill_count` strings each).
inline constexpr std::size_t max_pooled_bytes = 32 * 1024 * 1024;
inline constexpr std::size_t max_string_bytes = 64 * 1024;
inline constexpr std::size_t refill_count = 64;

/// Strings and bytes of capacity in the shared pool now (for tests).
struct pool_size {
    std::size_t strings = 0;
    std::size_t bytes = 0;
};
pool_size size();

} // namespace pacer::trace::payload_pool

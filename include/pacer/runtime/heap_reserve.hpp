#pragma once
// Module `runtime`: the calling thread's malloc heap, grown and touched once before it has
// deadlines to keep.
//
// glibc gives each thread its own arena and grows it only when a request does not fit: by the
// pages missing (an mprotect(2) of the new pages under the arena's lock, which also takes the
// process's memory-map lock for writing), then a page fault at the first touch of each new page.
// A session context grows its arena while its sessions start streaming and the trace backlog is
// largest: tens of thousands of mprotect calls and page faults on the session thread within the
// first seconds of a 1,024-session run, each one holding the arena lock that the trace writer
// also needs (it frees the sessions' trace lines). Reserving the arena up front moves that work
// before the first deadline, and keeping it (the trim threshold) stops glibc handing it back.

#include <cstddef>

namespace pacer::runtime {

/// Grows the calling thread's malloc arena by at least `bytes` (touching every page, so they are
/// resident) and returns them to the arena as free memory, which glibc then keeps: the trim
/// threshold is raised so that free memory at the arena's top up to `bytes` (at most 64 MB) is not
/// given back to the system. Allocations of the
/// thread up to that size then need no system call and no page fault. Process-wide effect: the
/// trim threshold, and a fixed mmap threshold of 32 MB (blocks below it come from the arenas).
/// Returns the bytes reserved.
std::size_t reserve_thread_heap(std::size_t bytes);

/// What `pacer run` reserves for a session context of `sessions` sessions: 64 kB a session
/// (about 0.6 s of one session's full trace; 256 sessions grew their arena by about 20 MB in
/// 10 s), at most 64 MB.
std::size_t session_heap_reserve(std::size_t sessions);

} // namespace pacer::runtime

#pragma once
// Running totals of a run for its live progress line: relaxed atomics the sessions and the loop
// monitors bump as they go (no lock, never a wait on the send path), read by the progress
// thread. Order between them does not matter: each figure is a count or a maximum on its own.

#include <atomic>
#include <cstdint>

namespace pacer::session {

struct live_counters {
    std::atomic<std::uint64_t> started{0};        ///< sessions that began (admission on)
    std::atomic<std::uint64_t> done{0};           ///< sessions that ended complete
    std::atomic<std::uint64_t> failed{0};         ///< sessions that ended otherwise
    std::atomic<std::uint64_t> packets_sent{0};   ///< appends handed to the socket
    std::atomic<std::uint64_t> late_packets{0};   ///< appends started > 80 ms off their deadline
    std::atomic<std::uint64_t> errors{0};         ///< error lines recorded by the sessions
    std::atomic<std::int64_t> loop_lag_max_ns{0}; ///< the loop monitors' largest lag

    /// Adds one to `field` (any thread).
    void bump(std::atomic<std::uint64_t> live_counters::*field) {
        (this->*field).fetch_add(1, std::memory_order_relaxed);
    }

    /// Back to zero between serve levels (no session is running then).
    void reset() {
        for (auto* c : {&started, &done, &failed, &packets_sent, &late_packets, &errors})
            c->store(0, std::memory_order_relaxed);
        loop_lag_max_ns.store(0, std::memory_order_relaxed);
    }
};

} // namespace pacer::session

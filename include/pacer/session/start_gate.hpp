#pragma once
// The common start of a serving level (docs/protocol.md §2.2): every session negotiates first, then
// they all stream from one instant. Each session reports once, ready (`session.updated`
// received) or not (it failed or ended first); when the last one has reported, the common
// start is fixed `lead` after that moment and every ready session is resumed with it.
//
// Thread safety: sessions may run on several single-threaded contexts; `arrive` may be called
// from any of them, and each resume runs on the executor its session gave.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>

#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

namespace pacer::session {

class start_gate {
public:
    using resume_handler = std::function<void(time_point common_start)>;

    start_gate(std::size_t sessions, duration lead) : expected_(sessions), lead_(lead) {}

    /// Reports one session. A ready session passes `resume`, which is posted to `ex` with the
    /// common start once every session has reported; a session that is not ready passes an
    /// empty handler. Each session reports exactly once.
    void arrive(pacer::executor ex, resume_handler resume);

    /// The common start, once fixed.
    std::optional<time_point> common_start() const;
    /// Sessions that reported ready.
    std::size_t ready() const;

private:
    struct waiter {
        pacer::executor ex;
        resume_handler resume;
    };
    mutable std::mutex mutex_;
    std::size_t expected_;
    duration lead_;
    std::size_t arrived_ = 0;
    std::size_t ready_ = 0;
    std::vector<waiter> waiters_;
    std::optional<time_point> start_;
};

} // namespace pacer::session

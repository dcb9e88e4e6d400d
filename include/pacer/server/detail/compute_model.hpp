#pragma once
// The native mock's model of a GPU server's compute, as pure arithmetic on times (no timers, no
// I/O), so that unit tests can drive it with a manual clock: one compute worker shared by every
// session (`service_queue`), and the cost of a batch size the server has not seen before
// (`cold_start`), and the slowness a server keeps after an overload (`overload_penalty`).
// docs/native-mock.md describes them.

#include <pacer/core/clock.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace pacer::server::detail {

/// One compute worker, first in first out across every session of a mock (and every thread):
/// each unit needs `service` of it. A unit that joins at `ready` starts at
/// max(ready, worker free) and is done `service` later; the worker's queue is a single time,
/// when it will be free, so work queued for a session that has left is still done and keeps
/// delaying the units that join after it.
///
/// @par Thread safety
/// Every member may be called from any thread (the state is one atomic, updated by
/// compare-and-swap): units of sessions on different threads join one queue, in the order
/// their `admit` calls take effect.
class service_queue {
public:
    /// What one unit met at the worker.
    struct admission {
        time_point start; ///< the worker took it
        time_point done;  ///< the worker finished it: start + service
        duration wait;    ///< start - ready
        /// Units at the worker when it joined, itself included: 1 when the worker was idle.
        std::uint64_t queued;
    };

    /// `service` of zero: no worker (every unit is done when it is ready, alone).
    explicit service_queue(duration service) : service_(service) {}

    /// A unit ready at `ready` joins the queue.
    admission admit(time_point ready);
    /// The queued work at `now`: how long until the worker is free (zero when idle).
    duration backlog(time_point now) const;
    duration service() const { return service_; }

private:
    const duration service_;
    std::atomic<duration::rep> free_at_{time_point::min().time_since_epoch().count()};
};

/// The first batch of a new size: when the number of open sessions first reaches a value higher
/// than any seen before (a new high-water mark), every unit ready in the next `window` costs
/// `extra` more. A level of C sessions run right after the start, or after any lower level,
/// pays it; the same level run again does not; a level below the mark never does.
///
/// @par Thread safety
/// Every member may be called from any thread (atomics).
class cold_start {
public:
    /// `extra` of zero turns the model off (the mark is still kept, no cold start is counted).
    cold_start(duration extra, duration window) : extra_(extra), window_(window) {}

    /// A session opened at `now`, with `open` sessions open (itself included). Returns whether
    /// it raised the high-water mark and so started (or prolonged) a cold window.
    bool opened(std::size_t open, time_point now);
    /// The extra latency of a unit ready at `ready`: `extra` inside a cold window, else zero.
    duration extra(time_point ready) const;
    /// Cold starts so far: raises of the mark (with the model on) that began a cold window,
    /// not those inside one, so that a level whose sessions raise the mark one by one (1, 2,
    /// ... C) is one cold start.
    std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }
    /// The most sessions ever open at once.
    std::size_t high_water() const { return high_water_.load(std::memory_order_relaxed); }
    duration extra() const { return extra_; }
    duration window() const { return window_; }

private:
    const duration extra_, window_;
    std::atomic<std::size_t> high_water_{0};
    std::atomic<std::uint64_t> count_{0};
    std::atomic<duration::rep> cold_until_{time_point::min().time_since_epoch().count()};
};

/// A server that stays degraded after an overload (its queue, caches and allocator take time to
/// recover): once a unit's modelled lag without this penalty (its wait at the shared worker,
/// its service and the capacity model's latency) exceeds `limit` (one unit: the server no longer
/// keeps up in real time), every unit ready within `recovery` of the last such unit costs
/// `extra` more. The penalty is never part of the lag it judges, so a degraded server that is
/// not overloaded again recovers `recovery` after its last overloaded unit.
///
/// @par Thread safety
/// Every member may be called from any thread (atomics).
class overload_penalty {
public:
    /// `extra` of zero turns the model off (nothing is counted).
    overload_penalty(duration extra, duration recovery, duration limit)
        : extra_(extra), recovery_(recovery), limit_(limit) {}

    /// A unit ready at `ready` whose lag without the penalty is `lag`: returns what it costs
    /// more (`extra` while the server is degraded, this unit's overload included, else zero).
    duration unit(time_point ready, duration lag);
    /// How long the server stays degraded after `now` (zero: recovered).
    duration degraded(time_point now) const;
    /// Overloads so far: overloaded units that found the server recovered (an overload period
    /// of many units is one).
    std::uint64_t overloads() const { return count_.load(std::memory_order_relaxed); }
    duration extra() const { return extra_; }
    duration recovery() const { return recovery_; }

private:
    const duration extra_, recovery_, limit_;
    std::atomic<std::uint64_t> count_{0};
    std::atomic<duration::rep> degraded_until_{time_point::min().time_since_epoch().count()};
};

} // namespace pacer::server::detail

#include <pacer/server/detail/compute_model.hpp>

#include <algorithm>

namespace pacer::server::detail {

namespace {

time_point instant_of(duration::rep ticks) {
    return time_point(duration(ticks));
}

duration::rep tick_count(time_point t) {
    return t.time_since_epoch().count();
}

} // namespace

service_queue::admission service_queue::admit(time_point ready) {
    if (service_ <= duration::zero())
        return {ready, ready, duration::zero(), 1};
    auto free = free_at_.load(std::memory_order_relaxed);
    time_point start;
    do {
        start = std::max(ready, instant_of(free));
    } while (!free_at_.compare_exchange_weak(free, tick_count(start + service_),
                                             std::memory_order_relaxed));
    // Every unit takes `service` exactly, so the work ahead of this one (free - ready) is
    // ceil((free - ready) / service) units, the one in service included.
    const duration ahead = instant_of(free) > ready ? instant_of(free) - ready : duration::zero();
    const auto units_ahead =
        static_cast<std::uint64_t>((ahead + service_ - duration(1)) / service_);
    return {start, start + service_, start - ready, units_ahead + 1};
}

duration service_queue::backlog(time_point now) const {
    const time_point free = instant_of(free_at_.load(std::memory_order_relaxed));
    return free > now ? free - now : duration::zero();
}

bool cold_start::opened(std::size_t open, time_point now) {
    auto mark = high_water_.load(std::memory_order_relaxed);
    do {
        if (open <= mark)
            return false;
    } while (!high_water_.compare_exchange_weak(mark, open, std::memory_order_relaxed));
    if (extra_ <= duration::zero())
        return false;
    // A raise inside a cold window prolongs it; only the one whose update ends a window that
    // had already closed counts (decided by the compare-and-swap, so two threads raising the
    // mark at once count one cold start, not two).
    const auto until = tick_count(now + window_);
    auto current = cold_until_.load(std::memory_order_relaxed);
    while (current < until) {
        if (cold_until_.compare_exchange_weak(current, until, std::memory_order_relaxed)) {
            if (tick_count(now) >= current)
                count_.fetch_add(1, std::memory_order_relaxed);
            break;
        }
    }
    return true;
}

duration cold_start::extra(time_point ready) const {
    if (extra_ <= duration::zero())
        return duration::zero();
    return tick_count(ready) < cold_until_.load(std::memory_order_relaxed) ? extra_
                                                                           : duration::zero();
}

duration overload_penalty::unit(time_point ready, duration lag) {
    if (extra_ <= duration::zero())
        return duration::zero();
    if (lag > limit_) {
        // As the cold start's window: the latest end wins, and the compare-and-swap that ends a
        // recovered state counts one overload.
        const auto until = tick_count(ready + recovery_);
        auto current = degraded_until_.load(std::memory_order_relaxed);
        while (current < until) {
            if (degraded_until_.compare_exchange_weak(current, until, std::memory_order_relaxed)) {
                if (tick_count(ready) >= current)
                    count_.fetch_add(1, std::memory_order_relaxed);
                break;
            }
        }
    }
    return tick_count(ready) < degraded_until_.load(std::memory_order_relaxed) ? extra_
                                                                               : duration::zero();
}

duration overload_penalty::degraded(time_point now) const {
    const auto until = instant_of(degraded_until_.load(std::memory_order_relaxed));
    return extra_ > duration::zero() && until > now ? until - now : duration::zero();
}

} // namespace pacer::server::detail

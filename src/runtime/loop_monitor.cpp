#include <pacer/core/awaitable.hpp>
#include <pacer/runtime/loop_monitor.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>

namespace pacer::runtime {

namespace asio = boost::asio;

awaitable<void> loop_monitor::run() {
    steady_timer timer(co_await asio::this_coro::executor);
    lags_s_.reserve(16384);
    started_ = clock::now();
    auto deadline = started_ + period_;
    while (!stopping_.load(std::memory_order_relaxed)) {
        timer.expires_at(deadline);
        co_await timer.async_wait(use_tuple);
        const auto woke = clock::now();
        lags_s_.push_back(woke > deadline ? to_seconds(woke - deadline) : 0.0);
        if (max_sink_ && woke > deadline) {
            const std::int64_t lag =
                std::chrono::duration_cast<std::chrono::nanoseconds>(woke - deadline).count();
            auto seen = max_sink_->load(std::memory_order_relaxed);
            while (lag > seen &&
                   !max_sink_->compare_exchange_weak(seen, lag, std::memory_order_relaxed)) {
            }
        }
        deadline = woke + period_;
    }
}

} // namespace pacer::runtime

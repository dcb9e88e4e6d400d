#include <pacer/core/awaitable.hpp>
#include <pacer/session/start_gate.hpp>

#include <boost/asio/post.hpp>

#include <stdexcept>

namespace pacer::session {

void start_gate::arrive(pacer::executor ex, resume_handler resume) {
    std::vector<waiter> release;
    time_point start;
    {
        std::lock_guard lock(mutex_);
        if (arrived_ == expected_)
            throw std::logic_error("start_gate: more sessions arrived than expected");
        ++arrived_;
        if (resume) {
            ++ready_;
            waiters_.push_back({std::move(ex), std::move(resume)});
        }
        if (arrived_ < expected_)
            return;
        start_ = clock::now() + lead_;
        start = *start_;
        release.swap(waiters_);
    }
    for (auto& w : release)
        boost::asio::post(w.ex, [resume = std::move(w.resume), start] { resume(start); });
}

std::optional<time_point> start_gate::common_start() const {
    std::lock_guard lock(mutex_);
    return start_;
}

std::size_t start_gate::ready() const {
    std::lock_guard lock(mutex_);
    return ready_;
}

} // namespace pacer::session

#include <pacer/trace/payload_pool.hpp>

#include <mutex>

namespace pacer::trace::payload_pool {

namespace {

// The strings given back, as the batches they came in: a give moves one vector in, so the
// writer holds the lock for O(1), never for a loop over thousands of strings (it runs at nice
// 10; preempted while holding the lock, it would hold up a session thread waiting to take).
struct shared_pool {
    std::mutex mutex;
    std::vector<std::vector<std::string>> batches;
    std::size_t strings = 0;
    std::size_t bytes = 0; // capacity of every string in `batches`
};

shared_pool& pool() {
    static shared_pool p;
    return p;
}

thread_local std::vector<std::string> cache; // this thread's spare strings

bool worth_keeping(const std::string& s) {
    // An empty string's own room (the small-string buffer) is not worth a place, and one
    // huge line would hold its memory for the rest of the run.
    return s.capacity() > std::string().capacity() && s.capacity() <= max_string_bytes;
}

} // namespace

std::string take() {
    if (cache.empty()) {
        auto& p = pool();
        std::lock_guard lock(p.mutex);
        while (cache.size() < refill_count && !p.batches.empty()) {
            auto& batch = p.batches.back();
            while (cache.size() < refill_count && !batch.empty()) {
                p.bytes -= batch.back().capacity();
                --p.strings;
                cache.push_back(std::move(batch.back()));
                batch.pop_back();
            }
            if (batch.empty())
                p.batches.pop_back();
        }
    }
    if (cache.empty())
        return {};
    std::string s = std::move(cache.back());
    cache.pop_back();
    s.clear();
    return s;
}

void give(std::vector<std::string>& spent) {
    // Everything but the O(1) hand-over happens outside the lock: choosing what to keep, and
    // freeing the rest.
    std::erase_if(spent, [](const std::string& s) { return !worth_keeping(s); });
    std::size_t bytes = 0;
    for (const auto& s : spent)
        bytes += s.capacity();
    auto& p = pool();
    std::vector<std::string> batch;
    {
        std::lock_guard lock(p.mutex);
        if (!spent.empty() && p.bytes + bytes <= max_pooled_bytes) {
            p.bytes += bytes;
            p.strings += spent.size();
            p.batches.push_back(std::move(spent));
        } else {
            batch = std::move(spent); // over the bound: freed below, outside the lock
        }
    }
    spent = std::vector<std::string>();
}

pool_size size() {
    auto& p = pool();
    std::lock_guard lock(p.mutex);
    return {p.strings, p.bytes};
}

} // namespace pacer::trace::payload_pool

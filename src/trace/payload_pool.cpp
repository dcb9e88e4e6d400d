#include <pacer/trace/payload_pool.hpp>

#include <algorithm>
#include <iterator>
#include <mutex>

namespace pacer::trace::payload_pool {

namespace {

struct shared_pool {
    std::mutex mutex;
    std::vector<std::string> strings;
    std::size_t bytes = 0; // capacity of `strings`
};

shared_pool& pool() {
    static shared_pool p;
    return p;
}

thread_local std::vector<std::string> cache; // this thread's spare strings

} // namespace

std::string take() {
    if (cache.empty()) {
        auto& p = pool();
        std::lock_guard lock(p.mutex);
        const auto n = std::min(refill_count, p.strings.size());
        for (auto it = p.strings.end() - static_cast<std::ptrdiff_t>(n); it != p.strings.end();
             ++it) {
            p.bytes -= it->capacity();
            cache.push_back(std::move(*it));
        }
        p.strings.resize(p.strings.size() - n);
    }
    if (cache.empty())
        return {};
    std::string s = std::move(cache.back());
    cache.pop_back();
    s.clear();
    return s;
}

void give(std::vector<std::string>& spent) {
    {
        auto& p = pool();
        std::lock_guard lock(p.mutex);
        for (auto& s : spent) {
            const auto c = s.capacity();
            // (An empty string's own room, the small-string buffer, is not worth a place.)
            if (c <= std::string().capacity() || c > max_string_bytes ||
                p.bytes + c > max_pooled_bytes)
                continue;
            p.bytes += c;
            p.strings.push_back(std::move(s));
        }
    }
    spent.clear(); // frees what the pool did not keep, outside its lock
}

pool_size size() {
    auto& p = pool();
    std::lock_guard lock(p.mutex);
    return {p.strings.size(), p.bytes};
}

} // namespace pacer::trace::payload_pool

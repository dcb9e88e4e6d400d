#include <pacer/core/clock.hpp>
#include <pacer/telemetry/sampler.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>

namespace pacer::telemetry {

namespace {

double thread_cpu_now() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

} // namespace

sampler::sampler(std::vector<std::unique_ptr<sample_source>> sources,
                 std::chrono::nanoseconds interval, const std::filesystem::path& jsonl)
    : sources_(std::move(sources)), interval_(interval), jsonl_path_(jsonl),
      source_mutexes_(sources_.size()), requested_(sources_.size()), kept_(sources_.size()) {
    if (interval_.count() <= 0)
        throw std::invalid_argument("sampler: the interval must be positive");
    if (!jsonl.empty()) {
        // A new file, never an existing one (as every result file).
        const int fd = ::open(jsonl.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 || !(jsonl_ = ::fdopen(fd, "w"))) {
            const int err = errno;
            if (fd >= 0)
                ::close(fd);
            throw std::runtime_error(
                fmt::format("cannot create {}: {}", jsonl.string(), std::strerror(err)));
        }
    }
}

sampler::~sampler() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_)
        if (t.joinable())
            t.join();
    if (jsonl_)
        std::fclose(jsonl_);
}

void sampler::start() {
    std::lock_guard lock(mutex_);
    if (started_)
        return;
    started_ = true;
    for (std::size_t i = 0; i < sources_.size(); ++i)
        threads_.emplace_back([this, i] { run(i); });
}

void sampler::stop() {
    {
        std::lock_guard lock(mutex_);
        if (stopping_)
            return;
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_)
        if (t.joinable())
            t.join();
    read_now();
    std::lock_guard lock(mutex_);
    if (jsonl_) {
        const bool failed = std::fflush(jsonl_) != 0 || std::ferror(jsonl_);
        std::fclose(jsonl_);
        jsonl_ = nullptr;
        if (failed)
            throw std::runtime_error(fmt::format("cannot write {}", jsonl_path_.string()));
    }
}

void sampler::read_now() {
    {
        std::unique_lock lock(mutex_);
        if (started_ && !stopping_) {
            // The threads are running: each source's own thread takes this reading (at once)
            // and keeps it before any later one, so the lines of a source in telemetry.jsonl
            // are in the order of their stamps. Reading it here instead, on the caller's thread,
            // raced the thread's tick: the two readings could be appended in the opposite
            // order of their stamps (issue 31's microsecond discrepancy).
            std::vector<std::uint64_t> wanted(sources_.size());
            for (std::size_t i = 0; i < sources_.size(); ++i)
                wanted[i] = ++requested_[i];
            wake_.notify_all();
            // Stopping instead: `stop` reads every source once more after the threads end.
            wake_.wait(lock, [&] {
                if (stopping_)
                    return true;
                for (std::size_t i = 0; i < sources_.size(); ++i)
                    if (kept_[i] < wanted[i])
                        return false;
                return true;
            });
            return;
        }
    }
    for (std::size_t i = 0; i < sources_.size(); ++i)
        read_and_keep(i);
}

void sampler::read_and_keep(std::size_t source) {
    // Read and kept under the source's lock: no other reading of it is taken in between, so a
    // reading stamped later is never appended before one stamped earlier.
    std::lock_guard source_lock(source_mutexes_[source]);
    std::vector<sample> taken;
    sources_[source]->read(taken);
    keep(taken);
}

void sampler::keep(std::vector<sample>& taken) {
    std::string lines;
    for (const auto& s : taken)
        lines += to_jsonl(s);
    std::lock_guard lock(mutex_);
    if (jsonl_ && !lines.empty()) {
        std::fwrite(lines.data(), 1, lines.size(), jsonl_);
        std::fflush(jsonl_); // a live reader (or a crash) sees every sample taken so far
    }
    for (auto& s : taken)
        samples_.push_back(std::move(s));
}

void sampler::run(std::size_t source) {
    // Absolute deadlines: tick k is at start + k × interval whatever a read took; the first at
    // once. A reading asked for by `read_now` is taken at once too, between the ticks.
    const auto start = clock::now();
    std::uint64_t tick = 0;
    auto next = start;
    for (;;) {
        std::uint64_t asked = 0;
        {
            std::unique_lock lock(mutex_);
            wake_.wait_until(lock, next,
                             [&] { return stopping_ || requested_[source] > kept_[source]; });
            if (stopping_)
                break;
            asked = requested_[source];
        }
        read_and_keep(source);
        {
            std::lock_guard lock(mutex_);
            kept_[source] = asked;
        }
        wake_.notify_all();
        const auto now = clock::now();
        if (now < next)
            continue; // an asked-for reading before the tick: the tick is still due
        next = start + (tick + 1) * interval_;
        std::uint64_t skipped = 0;
        if (next <= now) { // the read overran: skip to the next tick still ahead
            skipped = static_cast<std::uint64_t>((now - next) / interval_) + 1;
            next += skipped * interval_;
        }
        tick += 1 + skipped;
        std::lock_guard lock(mutex_);
        missed_ += skipped;
    }
    const double cpu = thread_cpu_now();
    std::lock_guard lock(mutex_);
    thread_cpu_s_ += cpu;
}

bool sampler::running() const {
    std::lock_guard lock(mutex_);
    return started_ && !stopping_;
}

std::vector<sample> sampler::samples() const {
    std::lock_guard lock(mutex_);
    return samples_;
}

std::size_t sampler::missed_ticks() const {
    std::lock_guard lock(mutex_);
    return missed_;
}

double sampler::thread_cpu_s() const {
    std::lock_guard lock(mutex_);
    return thread_cpu_s_;
}

} // namespace pacer::telemetry

#pragma once
// The sampling threads: each source is read on a std::thread of its own (never a session
// context), on absolute deadlines `start + k × interval` (a read that overruns skips the ticks
// it missed, counted), and every sample is kept in memory and appended to `telemetry.jsonl`.

#include <pacer/telemetry/sample.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace pacer::telemetry {

/// The default `--telemetry-interval`.
inline constexpr std::chrono::milliseconds default_interval{100};

/// @par Thread safety
/// `samples()`, `missed_ticks()` and `read_now()` may be called from any thread while the
/// threads run; `start` and `stop` from the owner's thread.
class sampler {
public:
    /// `jsonl`: the file each sample is appended to, created new (never an existing one;
    /// throws std::runtime_error naming it); empty: none.
    sampler(std::vector<std::unique_ptr<sample_source>> sources, std::chrono::nanoseconds interval,
            const std::filesystem::path& jsonl);
    ~sampler();
    sampler(const sampler&) = delete;
    sampler& operator=(const sampler&) = delete;

    /// Starts one thread per source; the first read is at once.
    void start();
    /// Stops and joins the threads, then reads every source once more, so that a window that
    /// ends now has a sample after its end. Idempotent.
    void stop();
    /// Reads every source once and returns when the readings are kept. While the threads run,
    /// each source's own thread takes the reading (at once, between its ticks): a source is
    /// read by one thread at a time and its samples are kept, and written, in the order of
    /// their stamps. Before `start` and from `stop`, the caller's thread reads.
    void read_now();

    /// Whether the threads run (started, not stopped).
    bool running() const;
    /// Every sample so far, in the order taken.
    std::vector<sample> samples() const;
    std::size_t missed_ticks() const;
    /// CPU time the sampling threads used (CLOCK_THREAD_CPUTIME_ID), once they have stopped.
    double thread_cpu_s() const;
    std::chrono::nanoseconds interval() const noexcept { return interval_; }
    const std::vector<std::unique_ptr<sample_source>>& sources() const noexcept { return sources_; }

private:
    void run(std::size_t source);
    void read_and_keep(std::size_t source);
    void keep(std::vector<sample>& taken);

    std::vector<std::unique_ptr<sample_source>> sources_;
    std::chrono::nanoseconds interval_;
    std::FILE* jsonl_ = nullptr;
    std::filesystem::path jsonl_path_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    bool started_ = false;
    std::vector<sample> samples_;
    std::vector<std::mutex> source_mutexes_; // one reader per source at a time
    // read_now's requests to each source's thread, and how many of them it has kept.
    std::vector<std::uint64_t> requested_;
    std::vector<std::uint64_t> kept_;
    std::size_t missed_ = 0;
    double thread_cpu_s_ = 0;
    std::vector<std::thread> threads_;
};

} // namespace pacer::telemetry

#pragma once
// `--server-metrics URL`: the server's Prometheus endpoint, scraped over HTTP at the sampling
// interval. DCGM exporter's `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` (mJ) and
// `DCGM_FI_DEV_POWER_USAGE` (W), summed over its GPUs, become the sample's energy and power
// (`DCGM_FI_DEV_GPU_UTIL`, `DCGM_FI_DEV_FB_USED` its utilisation and memory); every other
// gauge (vLLM's and SGLang's queue, running and KV-cache gauges) is recorded as it is.

#include <pacer/telemetry/exposition.hpp>
#include <pacer/telemetry/sample.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>

namespace pacer::telemetry {

/// What one scrape gives: the sample (source `server`) from a parsed exposition, read at
/// `monotonic_s`/`realtime_s`. Pure: the scraper calls it on each body.
sample server_sample(const exposition& e, double monotonic_s, double realtime_s);

class server_metrics_source : public sample_source {
public:
    /// `url` is http://HOST[:PORT]/PATH (https:// too). Each scrape must end within `timeout`.
    /// Each distinct warning (a malformed line, a failed scrape) goes once to `warn`. Throws
    /// telemetry_error (one line) for a URL that is not one.
    server_metrics_source(const std::string& url, std::chrono::nanoseconds timeout,
                          std::function<void(const std::string&)> warn);
    ~server_metrics_source() override;
    void read(std::vector<sample>& out) override;
    std::string describe() const override;

    /// Counts so far (any thread): scrapes, failed scrapes, distinct warnings.
    std::size_t scrapes() const noexcept { return scrapes_.load(std::memory_order_relaxed); }
    std::size_t failed() const noexcept { return failed_.load(std::memory_order_relaxed); }
    std::size_t warnings() const noexcept { return warnings_.load(std::memory_order_relaxed); }

private:
    struct client;
    std::string url_;
    std::chrono::nanoseconds timeout_;
    std::function<void(const std::string&)> warn_;
    std::unique_ptr<client> client_;
    std::set<std::string> warned_; // the reading thread's
    std::atomic<std::size_t> scrapes_{0}, failed_{0}, warnings_{0};
};

} // namespace pacer::telemetry

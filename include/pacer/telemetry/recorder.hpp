#pragma once
// Telemetry for one command, as `pacer run` uses it and `pacer serve` can per level: the
// options checked and opened up front (a missing library is a usage error before anything is
// written), the sampling started into a result folder, an idle baseline, then the figures of
// any window [t0, t1] on pacer's clock.
//
//     auto rec = telemetry::recorder::open(options, warn);   // nullptr: no telemetry asked
//     rec->start(out / "telemetry.jsonl");
//     rec->measure_idle_baseline();                           // blocks --idle-baseline
//     ... level from t0 to t1 ...
//     summary["telemetry"] = rec->window(t0, t1, {input_s, output_s, requests});
//     rec->stop();

#include <pacer/telemetry/energy.hpp>
#include <pacer/telemetry/sampler.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace pacer::telemetry {

/// The options as given (`--gpu-telemetry`, `--nvml-library`, `--server-metrics`,
/// `--telemetry-interval`, `--idle-baseline`).
struct options {
    std::string gpu;            ///< "" or nvml[:INDEXES]
    std::string nvml_library;   ///< "" : libnvidia-ml.so.1
    std::string server_metrics; ///< "" or an http:// URL
    std::chrono::nanoseconds interval = default_interval;
    /// How long to sample before the load; nullopt: the default (5 s when telemetry is on).
    std::optional<std::chrono::nanoseconds> idle_baseline;

    bool on() const noexcept { return !gpu.empty() || !server_metrics.empty(); }
};

/// The default `--idle-baseline` when telemetry is on.
inline constexpr std::chrono::seconds default_idle_baseline{5};

class recorder {
public:
    /// Checks `o` and opens its sources (NVML loaded and its GPUs checked, the URL parsed).
    /// nullptr when `o` asks for no telemetry. Throws telemetry_error (one line) otherwise.
    /// `warn` receives each distinct warning of a scrape (a malformed line, a failed scrape).
    static std::unique_ptr<recorder> open(const options& o,
                                          std::function<void(const std::string&)> warn);
    /// Checks `o` as `open` does (a dry run: NVML is loaded and its GPUs checked, then let go;
    /// the server's URL is parsed, not scraped, as a dry run connects to no server) and says
    /// what a run would read, a line each. Throws telemetry_error (one line).
    static std::vector<std::string> plan(const options& o);
    ~recorder();

    /// Starts the sampling threads, appending to `jsonl` (a new file).
    void start(const std::filesystem::path& jsonl);
    /// Samples for the idle baseline's duration (blocking the caller; nothing else runs) and
    /// keeps each source's mean power over it. No-op for a zero duration.
    void measure_idle_baseline();
    /// summary.json's `telemetry` for [t0, t1] (pacer's clock, seconds): `window_json` plus
    /// the sampling's settings and counts. Callable while sampling (a level) or after `stop`.
    /// While sampling, a source with no sample at or after t1 yet is read first (a serve
    /// level's window ends between two ticks): the window's end is then interpolated between
    /// two samples of telemetry.jsonl, as a reader of the file does, not held at the last one.
    boost::json::object window(double t0, double t1, const window_denominators& d);
    /// Stops the threads (a last read of every source first). Idempotent.
    void stop();

    /// The sources and settings in words, for --dry-run.
    std::vector<std::string> describe() const;
    const sampler* sampling() const noexcept { return sampler_.get(); }

private:
    recorder() = default;
    options options_;
    std::chrono::nanoseconds idle_{};
    std::vector<std::unique_ptr<sample_source>> pending_; // until start()
    std::unique_ptr<sampler> sampler_;
    std::optional<idle_baseline> idle_baseline_;
    std::function<void(const std::string&)> warn_;
    std::vector<std::string> description_;
    std::size_t gpus_ = 0;
    bool scraping_ = false;
};

} // namespace pacer::telemetry

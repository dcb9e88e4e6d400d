#include <pacer/core/clock.hpp>
#include <pacer/telemetry/nvml.hpp>
#include <pacer/telemetry/recorder.hpp>
#include <pacer/telemetry/server_metrics.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <thread>

namespace pacer::telemetry {

std::unique_ptr<recorder> recorder::open(const options& o,
                                         std::function<void(const std::string&)> warn) {
    if (!o.on())
        return nullptr;
    if (o.interval.count() <= 0)
        throw telemetry_error("--telemetry-interval must be a positive duration such as 100ms");
    std::unique_ptr<recorder> r(new recorder());
    r->options_ = o;
    r->warn_ = std::move(warn);
    r->idle_ = o.idle_baseline.value_or(
        std::chrono::duration_cast<std::chrono::nanoseconds>(default_idle_baseline));
    if (!o.gpu.empty()) {
        const auto gpus = parse_gpu_telemetry(o.gpu);
        auto lib = std::make_shared<const nvml_library>(o.nvml_library);
        auto source = std::make_unique<nvml_source>(std::move(lib), gpus);
        r->gpus_ = source->indexes().size();
        r->description_.push_back(source->describe());
        r->pending_.push_back(std::move(source));
    }
    if (!o.server_metrics.empty()) {
        // A scrape may take a second even when the interval is shorter (an exporter reading
        // many GPUs): the sampler then skips the ticks it missed.
        const auto timeout =
            std::max<std::chrono::nanoseconds>(o.interval, std::chrono::seconds(1));
        auto source = std::make_unique<server_metrics_source>(o.server_metrics, timeout, r->warn_);
        r->description_.push_back(source->describe());
        r->pending_.push_back(std::move(source));
        r->scraping_ = true;
    }
    return r;
}

std::vector<std::string> recorder::plan(const options& o) {
    std::vector<std::string> lines;
    if (!o.on())
        return lines;
    if (o.interval.count() <= 0)
        throw telemetry_error("--telemetry-interval must be a positive duration such as 100ms");
    if (!o.gpu.empty()) {
        // Loaded and checked as a run loads it (a missing library or GPU is the run's error),
        // then let go: a dry run reads no sample.
        const auto gpus = parse_gpu_telemetry(o.gpu);
        const nvml_source check(std::make_shared<const nvml_library>(o.nvml_library), gpus);
        lines.push_back(check.describe());
    }
    if (!o.server_metrics.empty()) {
        const server_metrics_source check(o.server_metrics, std::chrono::seconds(1), {});
        lines.push_back(check.describe());
    }
    const auto idle = o.idle_baseline.value_or(
        std::chrono::duration_cast<std::chrono::nanoseconds>(default_idle_baseline));
    lines.push_back(fmt::format(
        "every {:g} ms on a thread of its own, into telemetry.jsonl; idle baseline {:g} s before "
        "the sessions",
        std::chrono::duration<double, std::milli>(o.interval).count(),
        std::chrono::duration<double>(idle).count()));
    return lines;
}

recorder::~recorder() {
    try {
        stop();
    } catch (...) {
        // stop() reports a failed write of telemetry.jsonl; a destructor cannot.
    }
}

void recorder::start(const std::filesystem::path& jsonl) {
    if (sampler_)
        return;
    sampler_ = std::make_unique<sampler>(std::move(pending_), options_.interval, jsonl);
    // A first reading on this thread: any window that starts after `start` returns has a
    // sample before it (with `stop`'s last reading, one after it too).
    sampler_->read_now();
    sampler_->start();
}

void recorder::measure_idle_baseline() {
    if (!sampler_ || idle_.count() <= 0)
        return;
    // `start` read every source before this: the baseline's start has a sample before it.
    const double t0 = to_seconds(clock::now());
    // Nothing else is running: this thread has nothing to do but wait for the samples.
    std::this_thread::sleep_until(clock::now() + idle_);
    const double t1 = to_seconds(clock::now());
    sampler_->read_now(); // a sample after the baseline's end, whatever the interval's phase
    idle_baseline_ = measure_idle(sampler_->samples(), t0, t1);
}

namespace {

// Whether every source of `samples` has one at or after t1.
bool has_sample_after(const std::vector<sample>& samples, double t1) {
    std::map<std::string, double> last;
    for (const auto& s : samples) {
        auto [it, added] = last.emplace(s.source, s.monotonic_s);
        if (!added)
            it->second = std::max(it->second, s.monotonic_s);
    }
    return std::all_of(last.begin(), last.end(), [&](const auto& l) { return l.second >= t1; });
}

} // namespace

boost::json::object recorder::window(double t0, double t1, const window_denominators& d) {
    auto samples = sampler_ ? sampler_->samples() : std::vector<sample>{};
    if (sampler_ && sampler_->running() && !has_sample_after(samples, t1)) {
        sampler_->read_now();
        samples = sampler_->samples();
    }
    auto o = window_json(samples, t0, t1, d, idle_baseline_ ? &*idle_baseline_ : nullptr);
    o["interval_s"] = to_seconds(std::chrono::duration_cast<duration>(options_.interval));
    o["samples"] = samples.size();
    o["missed_ticks"] = sampler_ ? sampler_->missed_ticks() : 0;
    // The sampling threads' own CPU time (known once they have stopped; 0 before).
    o["sampler_cpu_s"] = sampler_ ? sampler_->thread_cpu_s() : 0.0;
    o["samples_file"] = "telemetry.jsonl";
    boost::json::array described;
    for (const auto& line : description_)
        described.push_back(boost::json::string(line));
    o["read_from"] = std::move(described);
    if (scraping_ && sampler_) {
        for (const auto& s : sampler_->sources())
            if (const auto* m = dynamic_cast<const server_metrics_source*>(s.get()))
                o["server_metrics"] = {{"url", options_.server_metrics},
                                       {"scrapes", m->scrapes()},
                                       {"failed", m->failed()},
                                       {"distinct_warnings", m->warnings()}};
    }
    if (!idle_baseline_ && idle_.count() > 0)
        o["idle_baseline_note"] = "not measured";
    return o;
}

void recorder::stop() {
    if (sampler_)
        sampler_->stop();
}

std::vector<std::string> recorder::describe() const {
    auto out = description_;
    out.push_back(fmt::format(
        "every {:g} ms on a thread of its own, into telemetry.jsonl; idle baseline {:g} s before "
        "the sessions",
        std::chrono::duration<double, std::milli>(options_.interval).count(),
        std::chrono::duration<double>(idle_).count()));
    return out;
}

} // namespace pacer::telemetry

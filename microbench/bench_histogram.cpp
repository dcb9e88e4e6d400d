// The hot path a run adds per append: folding its deviation and send time into the session
// context's log-linear histograms (core/histogram.hpp), and what the end of a run then costs:
// the quantiles of a histogram instead of a sort of every pooled value.

#include <pacer/core/histogram.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

// Deviations of a few ms either way: the values a run records.
std::vector<double> deviations(std::size_t n) {
    std::vector<double> v(n);
    std::mt19937_64 rng(2026);
    std::normal_distribution<double> d(0.0005, 0.003);
    for (auto& x : v)
        x = d(rng);
    return v;
}

void BM_HistogramRecord(benchmark::State& state) {
    const auto values = deviations(1 << 16);
    pacer::log_histogram h;
    std::size_t i = 0;
    for (auto _ : state) {
        h.record(values[i++ & (values.size() - 1)]);
        benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(h.count());
    state.SetItemsProcessed(state.iterations());
}

void BM_HistogramQuantiles(benchmark::State& state) {
    pacer::log_histogram h;
    for (double x : deviations(static_cast<std::size_t>(state.range(0))))
        h.record(x);
    for (auto _ : state) {
        auto d = h.absolute().summarize(pacer::pacing_fractions);
        benchmark::DoNotOptimize(d.max);
    }
}

} // namespace

BENCHMARK(BM_HistogramRecord);
BENCHMARK(BM_HistogramQuantiles)->Arg(1'000'000);

// `pacer::summarize` over a pooled sample of packet deviations: 1 M and 10 M values (a run of
// 1024 sessions x 90 s has 1.15 M appends; pooling several runs reaches 10 M). The sample is
// restored from an unsorted copy outside the timed region, since `summarize` sorts in place.

#include <pacer/core/stats.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

void BM_Summarize(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    // Deviations in seconds: mostly sub-millisecond wake-up lateness with a long right tail.
    std::vector<double> source(n);
    std::mt19937_64 rng(2024);
    std::exponential_distribution<double> tail(5000.0);
    for (auto& x : source)
        x = tail(rng);
    std::vector<double> values;
    for (auto _ : state) {
        state.PauseTiming();
        values = source;
        state.ResumeTiming();
        auto d = pacer::summarize(values, pacer::pacing_fractions);
        benchmark::DoNotOptimize(d.max);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

} // namespace

BENCHMARK(BM_Summarize)
    ->Arg(1'000'000)
    ->Arg(10'000'000)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

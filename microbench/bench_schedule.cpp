// Schedule generation speed: arrivals per second (items_per_second) for each process.
// Pure CPU work, no I/O; the schedule is consumed with DoNotOptimize.

#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>

namespace {

using pacer::schedule::arrival_process;

void run(benchmark::State& state, arrival_process process, double burstiness) {
    pacer::schedule::schedule_spec spec;
    spec.process = process;
    spec.rate = 100;
    spec.burstiness = burstiness;
    spec.count = static_cast<std::uint64_t>(state.range(0));
    for (auto _ : state) {
        ++spec.seed; // a fresh stream each time, as a sweep over seeds would
        auto offsets = pacer::schedule::make_schedule(spec);
        benchmark::DoNotOptimize(offsets.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_SchedulePoisson(benchmark::State& state) {
    run(state, arrival_process::poisson, 1);
}
void BM_ScheduleGammaB0_5(benchmark::State& state) {
    run(state, arrival_process::gamma, 0.5);
}
void BM_ScheduleGammaB2(benchmark::State& state) {
    run(state, arrival_process::gamma, 2);
}
void BM_ScheduleConstant(benchmark::State& state) {
    run(state, arrival_process::constant, 1);
}

// The fingerprint: canonical text plus SHA-256, per arrival.
void BM_ScheduleSha256(benchmark::State& state) {
    pacer::schedule::schedule_spec spec;
    spec.rate = 100;
    spec.count = static_cast<std::uint64_t>(state.range(0));
    const auto offsets = pacer::schedule::make_schedule(spec);
    for (auto _ : state)
        benchmark::DoNotOptimize(pacer::schedule::schedule_sha256(offsets));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

} // namespace

BENCHMARK(BM_SchedulePoisson)->Arg(100'000);
BENCHMARK(BM_ScheduleGammaB0_5)->Arg(100'000);
BENCHMARK(BM_ScheduleGammaB2)->Arg(100'000);
BENCHMARK(BM_ScheduleConstant)->Arg(100'000);
BENCHMARK(BM_ScheduleSha256)->Arg(100'000);

// The open-loop dispatcher's own cost.
//
// - BM_OpenLoopDispatchLag: `run_open_loop` on a real io_context (one thread) with no-op
//   requests, a seeded Poisson schedule of 5,000 arrivals/s for 2 s. Reports the dispatch lag
//   (dispatched - scheduled) p50/p99/max in microseconds: the timer wake-up plus the loop and
//   co_spawn overhead, i.e. how precisely the client keeps an open-loop schedule.
// - BM_DispatcherSansIo*: the sans-io core alone, next() + dispatched() (+ completed()) per
//   arrival, in ns (items_per_second, and `s_per_arrival` printed with an SI prefix: 20n = 20 ns).

#include <pacer/core/stats.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/session/open_loop.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <exception>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace session = pacer::session;
using namespace std::chrono_literals;

void BM_OpenLoopDispatchLag(benchmark::State& state) {
    pacer::schedule::schedule_spec spec;
    spec.rate = static_cast<double>(state.range(0));
    spec.seed = 1;
    spec.duration = std::chrono::seconds(state.range(1));
    const auto offsets = pacer::schedule::make_schedule(spec);

    std::vector<double> lag_us;
    std::size_t completed = 0;
    for (auto _ : state) {
        asio::io_context ctx{1};
        session::open_loop_options o;
        o.start = pacer::clock::now() + 20ms; // every arrival in the future
        session::open_loop_result result;
        std::exception_ptr error;
        asio::co_spawn(
            ctx,
            session::run_open_loop(
                offsets, o,
                [](std::size_t, pacer::time_point) -> pacer::awaitable<void> { co_return; }),
            [&](std::exception_ptr e, session::open_loop_result r) {
                error = e;
                result = std::move(r);
            });
        ctx.run();
        if (error)
            std::rethrow_exception(error);
        for (const auto& r : result.records) {
            lag_us.push_back(std::chrono::duration<double, std::micro>(*r.dispatch_lag()).count());
            completed += r.completed ? 1 : 0;
        }
    }
    const auto d = pacer::summarize(lag_us, pacer::pacing_fractions);
    state.counters["arrivals"] = static_cast<double>(offsets.size());
    state.counters["completed"] = static_cast<double>(completed);
    state.counters["lag_p50_us"] = d.at(0.50).value_or(-1);
    state.counters["lag_p99_us"] = d.at(0.99).value_or(-1);
    state.counters["lag_p99.9_us"] = d.at(0.999).value_or(-1);
    state.counters["lag_max_us"] = d.max.value_or(-1);
}

std::vector<std::chrono::nanoseconds> constant_offsets(std::size_t n) {
    std::vector<std::chrono::nanoseconds> out(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = std::chrono::nanoseconds(static_cast<std::int64_t>(i) * 200'000);
    return out;
}

// Unlimited cap: next() + dispatched() per arrival, each arrival asked at its own deadline.
void BM_DispatcherSansIo(benchmark::State& state) {
    const auto offsets = constant_offsets(static_cast<std::size_t>(state.range(0)));
    const pacer::time_point t0{};
    for (auto _ : state) {
        state.PauseTiming();
        session::dispatcher d(offsets, t0, 0, session::cap_policy::queue);
        state.ResumeTiming();
        auto a = d.next(t0);
        while (a.what != session::dispatch_action::kind::drain) {
            if (a.what == session::dispatch_action::kind::dispatch)
                d.dispatched(a.index, a.scheduled);
            a = d.next(a.scheduled);
        }
        benchmark::DoNotOptimize(d.records().data());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
    state.counters["s_per_arrival"] =
        benchmark::Counter(static_cast<double>(state.iterations() * state.range(0)),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Cap 1, queue: next() + dispatched() + completed() per arrival (the slot bookkeeping).
void BM_DispatcherSansIoCapped(benchmark::State& state) {
    const auto offsets = constant_offsets(static_cast<std::size_t>(state.range(0)));
    const pacer::time_point t0{};
    for (auto _ : state) {
        state.PauseTiming();
        session::dispatcher d(offsets, t0, 1, session::cap_policy::queue);
        state.ResumeTiming();
        auto a = d.next(t0);
        while (a.what != session::dispatch_action::kind::done) {
            if (a.what == session::dispatch_action::kind::dispatch) {
                d.dispatched(a.index, a.scheduled);
                d.completed(a.index, a.scheduled + 1us);
            }
            a = d.next(a.scheduled);
        }
        benchmark::DoNotOptimize(d.records().data());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
    state.counters["s_per_arrival"] =
        benchmark::Counter(static_cast<double>(state.iterations() * state.range(0)),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

} // namespace

// 5,000 arrivals/s for 2 s, once: a real-time measurement, not a throughput loop.
BENCHMARK(BM_OpenLoopDispatchLag)
    ->Args({5000, 2})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DispatcherSansIo)->Arg(100'000);
BENCHMARK(BM_DispatcherSansIoCapped)->Arg(100'000);

// Timer wake-up accuracy: K coroutines on one io_context, each waiting on absolute
// steady_timer deadlines every 80 ms, as the session driver does. One run is 25 periods (2 s),
// so every case runs once (Iterations(1)); the figures are the wake-up lateness
// (`clock::now()` after the wake minus the deadline) over all K x 25 wakes.
//
// Modes: `staggered` spreads the K phases uniformly over the period (`pacer run --stagger-ms
// 80`); `aligned` gives every coroutine the same deadlines, so the k-th of a batch waits for
// the k-1 before it. The `spin` variants arm the timer 1 ms early and busy-wait the rest, to
// see what a final spin buys against what it costs the other coroutines of the context.
// `slots8` rounds the staggered phases down to 8 slots (`pacer run --stagger-slots 8`).
// `slots8_delay` and `slots8_phase` add what a run has and the others leave out: the sessions
// negotiate at different instants (spread over 40 ms here). `slots8_delay` starts each one its
// slot's offset after its own negotiation (the rule before the stagger had one origin), so a
// slot's deadlines scatter; `slots8_phase` starts each on the first instant of its slot's phase
// not before its negotiation (`pacer run` now, schedule/stagger.hpp), so they coincide again.
// thread_wakeups_per_s_per_timer: the thread's voluntary context switches (each a sleep and
// a wake-up) per second and per coroutine.

#include <pacer/core/clock.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/schedule/stagger.hpp>
#include <pacer/session/runner.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <exception>
#include <sys/resource.h>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr auto period = 80ms;
constexpr int periods = 25;
constexpr auto spin_margin = 1ms;

// slots8: the phases rounded down to 8 slots (`pacer run --stagger-slots 8`), so a slot's
// coroutines share their deadlines and one thread wake-up serves them.
enum mode : int {
    staggered = 0,
    aligned = 1,
    staggered_spin = 2,
    aligned_spin = 3,
    slots8 = 4,
    slots8_delay = 5,
    slots8_phase = 6,
};

// When coroutine i "negotiated": spread over 40 ms in a fixed scrambled order.
pacer::duration negotiated_after(int i) {
    return std::chrono::microseconds((static_cast<long>(i) * 7919) % 40'000);
}

long voluntary_switches() {
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

double thread_cpu_s() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

pacer::awaitable<void> pace(pacer::time_point first_deadline, bool spin,
                            std::vector<double>& lateness_us) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (int n = 0; n < periods; ++n) {
        const auto deadline = first_deadline + n * period; // absolute: a late wake never drifts
        timer.expires_at(spin ? deadline - spin_margin : deadline);
        co_await timer.async_wait(pacer::use_tuple);
        if (spin)
            while (pacer::clock::now() < deadline) {
            }
        const auto late = pacer::clock::now() - deadline;
        lateness_us.push_back(std::chrono::duration<double, std::micro>(late).count());
    }
}

void BM_TimerWakeup(benchmark::State& state) {
    const auto k = static_cast<int>(state.range(0));
    const auto m = static_cast<mode>(state.range(1));
    const bool stagger = m == staggered || m == staggered_spin;
    const bool spin = m == staggered_spin || m == aligned_spin;
    std::vector<double> lateness_us;
    double cpu_s = 0;
    double wall_s = 0;
    long sleeps = 0; // the thread's voluntary context switches: each is one sleep and wake-up
    for (auto _ : state) {
        lateness_us.clear();
        lateness_us.reserve(static_cast<std::size_t>(k) * periods);
        asio::io_context io(1);
        // Start 20 ms ahead so spawning K coroutines is not counted as lateness.
        const auto origin = pacer::clock::now() + 20ms;
        for (int i = 0; i < k; ++i) {
            const bool slots = m == slots8 || m == slots8_delay || m == slots8_phase;
            const pacer::duration phase =
                slots     ? pacer::session::stagger_offset(static_cast<std::size_t>(i),
                                                           static_cast<std::size_t>(k), period, 8)
                : stagger ? pacer::duration(period) * i / k
                          : pacer::duration::zero();
            const auto ready = origin + negotiated_after(i);
            const auto first = m == slots8_delay ? ready + phase
                               : m == slots8_phase
                                   ? pacer::schedule::first_on_phase(ready, origin + phase, period)
                                   : origin + phase;
            asio::co_spawn(io, pace(first, spin, lateness_us), [](std::exception_ptr e) {
                if (e)
                    std::rethrow_exception(e);
            });
        }
        const double cpu0 = thread_cpu_s();
        const long sleeps0 = voluntary_switches();
        const auto wall0 = pacer::clock::now();
        io.run();
        cpu_s += thread_cpu_s() - cpu0;
        sleeps += voluntary_switches() - sleeps0;
        wall_s += pacer::to_seconds(pacer::clock::now() - wall0);
    }
    std::sort(lateness_us.begin(), lateness_us.end());
    state.counters["late_p50_us"] = pacer::percentile_sorted(lateness_us, 0.50).value_or(-1);
    state.counters["late_p99_us"] = pacer::percentile_sorted(lateness_us, 0.99).value_or(-1);
    state.counters["late_max_us"] = lateness_us.empty() ? -1 : lateness_us.back();
    state.counters["over_80ms"] = static_cast<double>(
        lateness_us.end() - std::upper_bound(lateness_us.begin(), lateness_us.end(), 80'000.0));
    state.counters["wakes"] = static_cast<double>(lateness_us.size());
    // CPU of the context thread over the run's wall time: the cores this timer load costs.
    state.counters["cores"] = wall_s > 0 ? cpu_s / wall_s : 0;
    state.counters["thread_wakeups_per_s_per_timer"] =
        wall_s > 0 ? static_cast<double>(sleeps) / wall_s / k : 0;
    state.counters["cpu_us_per_wake"] =
        lateness_us.empty() ? 0 : cpu_s * 1e6 / static_cast<double>(lateness_us.size());
    state.SetLabel(m == staggered        ? "staggered"
                   : m == aligned        ? "aligned"
                   : m == staggered_spin ? "staggered+spin1ms"
                   : m == aligned_spin   ? "aligned+spin1ms"
                   : m == slots8         ? "slots8"
                   : m == slots8_delay   ? "slots8,ready-spread,delay"
                                         : "slots8,ready-spread,phase");
}

void timer_args(benchmark::internal::Benchmark* b) {
    for (int m :
         {staggered, aligned, staggered_spin, aligned_spin, slots8, slots8_delay, slots8_phase})
        for (int k : {1, 256, 1024, 4096})
            b->Args({k, m});
}

} // namespace

BENCHMARK(BM_TimerWakeup)
    ->Apply(timer_args)
    ->ArgNames({"k", "mode"})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

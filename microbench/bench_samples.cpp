// The end of a run: samples.json, one session at a time.
//
// BM_SamplesReadBack: what `pacer run` does per session after its pacing for samples.json
// (`metrics::write_samples` through `metrics::run_receipts`): read the session's receipts text
// back (`trace::parse_receipts`, pacer's rules) and write every packet's deviation with six
// decimals. `appends` is the session's length in packets (375: 30 s of 80 ms packets; 7,500: the
// 10-minute soak). Reported per append. Until 2026-12-02 the receipts were read into Boost.JSON's
// DOM and the deviations formatted by fmt's `{:.6f}`; docs/performance.md has both figures.

#include <pacer/metrics/pacing.hpp>
#include <pacer/trace/receipts.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace pacer;

// A session's receipts file as the writer leaves it, `n` appends on the 80 ms grid.
std::string receipts_text(std::int64_t n) {
    trace::session_result r;
    r.session_start_s = 5000.125;
    r.admitted = true;
    std::string text = trace::receipts_head(r);
    for (std::int64_t i = 0; i < n; ++i) {
        trace::append_receipt a;
        a.set_id("0123456789abcdef0123456789abcdef");
        a.seq = static_cast<std::uint64_t>(i);
        a.scheduled_s = 5000.125 + 0.08 * static_cast<double>(i);
        a.start_s = a.scheduled_s + 1e-6 * static_cast<double>((i * 7919) % 4000);
        a.completed_s = a.start_s + 4.2e-5;
        if (i > 0)
            text += ',';
        trace::append_receipt_json(text, a);
    }
    r.appends_sent = static_cast<std::size_t>(n);
    return text + trace::receipts_tail(r);
}

void BM_SamplesReadBack(benchmark::State& state) {
    const std::string text = receipts_text(state.range(0));
    std::vector<trace::session_result> sessions(1);
    sessions[0].appends_sent = static_cast<std::size_t>(state.range(0));
    std::map<std::uint32_t, std::string> kept;
    const auto source = metrics::run_receipts("unused", &kept);
    std::size_t bytes = 0;
    for (auto _ : state) {
        kept[0] = text; // the source takes it (as the spool's text is taken once)
        bytes = 0;
        const auto errors = metrics::write_samples(
            [&](std::string_view piece) { bytes += piece.size(); }, sessions, source);
        if (!errors.empty())
            state.SkipWithError(errors.front().c_str());
        benchmark::DoNotOptimize(bytes);
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
    state.counters["samples_bytes"] = static_cast<double>(bytes);
}

} // namespace

BENCHMARK(BM_SamplesReadBack)->ArgName("appends")->Arg(375)->Arg(7500);

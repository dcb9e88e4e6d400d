// The per-event receive path: validate a server frame, extract its `type` and classify it,
// for the three events the probe mock sends in turn (the same text as `pacer mock` writes):
// an audio delta carrying 80 ms of 22.05 kHz PCM16 (4704 base64 characters), a transcript
// delta, and `sglang.unit.done`. `event_scanner` is the session's hot path (no DOM);
// `frame_parser` builds a Boost.JSON DOM and is measured for comparison. Allocations per
// event come from the counting operator new of bench_send_path.cpp.

#include <pacer/core/base64.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/events.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>

// Defined in bench_send_path.cpp (the one replacement of operator new in this program).
std::uint64_t pacer_microbench_allocations();

namespace {

using pacer::protocol::server_event;

enum kind : int { audio_delta = 0, transcript_delta = 1, unit_done = 2 };

constexpr std::string_view event_id = "5f0c3e2a9b7d41c68e1f0a2b3c4d5e6f";

std::string make_frame(kind k) {
    switch (k) {
    case audio_delta: {
        std::string pcm(22050 * 80 / 1000 * 2, '\0');
        for (std::size_t i = 0; i < pcm.size(); ++i)
            pcm[i] = static_cast<char>(i * 7); // the mock's pattern
        return fmt::format(
            R"({{"type":"response.output_audio.delta","event_id":"{}","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"{}"}})",
            event_id, pacer::base64_encode(pcm));
    }
    case transcript_delta:
        return fmt::format(
            R"({{"type":"response.output_audio_transcript.delta","event_id":"{}","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"a"}})",
            event_id);
    case unit_done:
        return fmt::format(R"({{"type":"sglang.unit.done","event_id":"{}","unit_id":"unit_42"}})",
                           event_id);
    }
    return {};
}

const char* kind_name(kind k) {
    return k == audio_delta        ? "audio_delta"
           : k == transcript_delta ? "transcript_delta"
                                   : "unit_done";
}

template <class Parse>
void run_receive(benchmark::State& state, Parse parse) {
    const auto k = static_cast<kind>(state.range(0));
    const std::string frame = make_frame(k);
    // One warm-up parse: parser buffers reach their steady size before counting.
    if (parse(frame) == server_event::unknown)
        throw std::logic_error("frame not recognised");
    const std::uint64_t before = pacer_microbench_allocations();
    for (auto _ : state)
        benchmark::DoNotOptimize(parse(frame));
    const std::uint64_t allocs = pacer_microbench_allocations() - before;
    state.counters["allocs_per_event"] =
        static_cast<double>(allocs) / static_cast<double>(state.iterations());
    state.counters["frame_bytes"] = static_cast<double>(frame.size());
    state.SetItemsProcessed(state.iterations());
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(frame.size()));
    state.SetLabel(kind_name(k));
}

void BM_ReceiveScanner(benchmark::State& state) {
    pacer::protocol::event_scanner scanner;
    run_receive(state, [&](std::string_view frame) {
        if (scanner.scan(frame) != nullptr)
            return server_event::unknown;
        return pacer::protocol::classify_server_event(scanner.type());
    });
}

void BM_ReceiveDom(benchmark::State& state) {
    pacer::protocol::frame_parser parser;
    run_receive(state, [&](std::string_view frame) {
        if (parser.parse(frame) != nullptr)
            return server_event::unknown;
        return pacer::protocol::classify_server_event(parser.type());
    });
}

} // namespace

BENCHMARK(BM_ReceiveScanner)
    ->ArgName("kind")
    ->Arg(audio_delta)
    ->Arg(transcript_delta)
    ->Arg(unit_done);
BENCHMARK(BM_ReceiveDom)->ArgName("kind")->Arg(audio_delta)->Arg(transcript_delta)->Arg(unit_done);

// The probe mock's per-append work, without a socket: read the client's
// `input_audio_buffer.append` (1280 samples of PCM16 at 16 kHz, as the client sends it: 3.5 kB
// of JSON) for its type, event_id, `sglang.seq` and audio size, then build the three replies
// (audio delta with 80 ms of 22.05 kHz audio, transcript delta, `sglang.unit.done`) as server
// frames in one batch. This is what `pacer mock` does per append besides Beast's read and the
// socket write.
//
//   BM_MockAppendDom      the mock before issue 14: a Boost.JSON DOM of every append
//                         (frame_parser) and the replies formatted with fmt per append, each
//                         into its own string, then copied into the batch (reproduced here)
//   BM_MockAppendScanner  the mock now: event_scanner (no DOM) and probe_replies (the replies
//                         built once, copied into the batch around their numbers)
//
// Allocations per append come from the counting operator new of bench_send_path.cpp.

#include <pacer/core/base64.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/server/detail/mock_host.hpp>
#include <pacer/server/detail/probe_replies.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

// Defined in bench_send_path.cpp (the one replacement of operator new in this program).
std::uint64_t pacer_microbench_allocations();

namespace {

constexpr std::uint64_t seq = 1234;

// The client's append, as protocol::append_event writes it.
std::string client_append() {
    std::vector<std::uint8_t> pcm(16000 * 80 / 1000 * 2);
    for (std::size_t i = 0; i < pcm.size(); ++i)
        pcm[i] = static_cast<std::uint8_t>(i * 13);
    std::string out;
    pacer::protocol::append_event(out, "5f0c3e2a9b7d41c68e1f0a2b3c4d5e6f", pcm, seq);
    return out;
}

// The mock's output audio: 80 ms at 22.05 kHz, its pattern.
std::string mock_audio_b64() {
    std::string pcm(22050 * 80 / 1000 * 2, '\0');
    for (std::size_t i = 0; i < pcm.size(); ++i)
        pcm[i] = static_cast<char>(i * 7);
    return pacer::base64_encode(pcm);
}

// What the mock keeps of an append.
struct append_fields {
    std::int64_t seq = 0;
    std::size_t audio_bytes = 0;
    std::size_t client_id_size = 0;
};

template <class Handle>
void run_append(benchmark::State& state, Handle handle) {
    const std::string frame = client_append();
    std::string batch;
    std::uint64_t event = 0;
    // One warm-up append: buffers reach their steady size before counting.
    if (handle(frame, batch, event).seq != static_cast<std::int64_t>(seq))
        throw std::logic_error("append not read");
    const std::uint64_t before = pacer_microbench_allocations();
    for (auto _ : state) {
        batch.clear();
        benchmark::DoNotOptimize(handle(frame, batch, event));
        benchmark::DoNotOptimize(batch.data());
    }
    const std::uint64_t allocs = pacer_microbench_allocations() - before;
    state.counters["allocs_per_append"] =
        static_cast<double>(allocs) / static_cast<double>(state.iterations());
    state.counters["append_bytes"] = static_cast<double>(frame.size());
    state.counters["reply_bytes"] = static_cast<double>(batch.size());
    state.SetItemsProcessed(state.iterations());
}

void BM_MockAppendDom(benchmark::State& state) {
    pacer::protocol::frame_parser parser;
    const std::string audio_b64 = mock_audio_b64();
    run_append(state, [&](std::string_view frame, std::string& batch, std::uint64_t& event) {
        append_fields f;
        if (parser.parse(frame) != nullptr || parser.type() != "input_audio_buffer.append")
            return f;
        const auto& e = parser.object();
        const auto* id = e.if_contains("event_id");
        const std::string client_id = id && id->is_string() ? std::string(id->get_string()) : "";
        f.client_id_size = client_id.size();
        if (const auto* sg = e.if_contains("sglang"); sg && sg->is_object())
            if (const auto* s = sg->get_object().if_contains("seq"); s && s->is_int64())
                f.seq = s->get_int64();
        if (const auto* a = e.if_contains("audio"); a && a->is_string())
            f.audio_bytes = pacer::base64_decoded_size(a->get_string());
        for (std::uint64_t reply = 0; reply < 3; ++reply) {
            std::string out;
            const std::string event_id = fmt::format("server_{}", event++);
            switch (reply) {
            case 0:
                out = fmt::format(
                    R"({{"type":"response.output_audio.delta","event_id":"{}","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"{}"}})",
                    event_id, audio_b64);
                break;
            case 1:
                out = fmt::format(
                    R"({{"type":"response.output_audio_transcript.delta","event_id":"{}","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"a"}})",
                    event_id);
                break;
            default:
                out = fmt::format(
                    R"({{"type":"sglang.unit.done","event_id":"{}","unit_id":"unit_{}"}})",
                    event_id, f.seq);
                break;
            }
            pacer::server::detail::append_frame(batch, out);
        }
        return f;
    });
}

void BM_MockAppendScanner(benchmark::State& state) {
    pacer::protocol::event_scanner scanner;
    const pacer::server::detail::probe_replies replies(mock_audio_b64());
    run_append(state, [&](std::string_view frame, std::string& batch, std::uint64_t& event) {
        append_fields f;
        if (scanner.scan(frame) != nullptr || scanner.type() != "input_audio_buffer.append")
            return f;
        f.client_id_size = scanner.event_id().size();
        f.seq = scanner.seq().value_or(0);
        f.audio_bytes = scanner.audio_decoded_size();
        for (std::uint64_t reply = 0; reply < 3; ++reply)
            replies.append(batch, reply, event++, f.seq);
        return f;
    });
}

} // namespace

BENCHMARK(BM_MockAppendDom);
BENCHMARK(BM_MockAppendScanner);

// The per-packet send path without a socket: an 80 ms PCM16 slice -> base64 -> the
// `input_audio_buffer.append` JSON -> a masked WebSocket client frame (header, 4-byte key,
// payload copied and masked with Beast's own `mask_inplace`, as Beast's client write does
// into its write buffer). Reported as time per packet plus heap allocations per packet.
//
// Allocations are counted by replacing the global operator new/delete below. The
// replacement is program-wide (one per program), so every benchmark in pacer_microbench
// allocates through it; it adds one thread-local increment per allocation and nothing else.
// `pacer_microbench_allocations()` lets other benchmark files read the same counter.
//
// Variants (the label says which):
//   encoded      what duplex_session does: base64_append into a reused buffer, then
//                append_event_encoded into a reused frame (the goal: 0 allocations)
//   append_event the convenience builder append_event (encodes into a temporary string)
//   as_session   `encoded` plus the other per-packet work of the session driver that allocates:
//                a fresh event id (`event_id_source::next`) and the frame copy handed to the
//                trace (`sink::emit` takes its std::string by value)

#include <pacer/core/base64.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/schedule/packet_grid.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/beast/websocket/detail/mask.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <vector>

namespace {
thread_local std::uint64_t allocations = 0;
} // namespace

/// Heap allocations made so far by the calling thread (counted by the operator new below).
std::uint64_t pacer_microbench_allocations() {
    return allocations;
}

void* operator new(std::size_t size) {
    ++allocations;
    if (void* p = std::malloc(size == 0 ? 1 : size))
        return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
    return ::operator new(size);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}

namespace {

namespace ws_detail = boost::beast::websocket::detail;
using pacer::schedule::packet_bytes;

// 10 s of 16 kHz PCM16 noise: every packet differs, so every packet is encoded.
std::vector<std::uint8_t> make_pcm() {
    std::vector<std::uint8_t> pcm(125 * packet_bytes);
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (auto& b : pcm) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b = static_cast<std::uint8_t>(x);
    }
    return pcm;
}

// A client text frame (RFC 6455 5.2): FIN + opcode 1, the mask bit, the length, the key,
// then the masked payload. `out` is cleared and reused.
void write_client_frame(std::string& out, std::string_view payload, std::uint32_t key) {
    out.clear();
    out.push_back(static_cast<char>(0x81));
    const std::size_t n = payload.size();
    if (n < 126) {
        out.push_back(static_cast<char>(0x80 | n));
    } else if (n <= 0xffff) {
        out.push_back(static_cast<char>(0x80 | 126));
        out.push_back(static_cast<char>(n >> 8));
        out.push_back(static_cast<char>(n & 0xff));
    } else {
        out.push_back(static_cast<char>(0x80 | 127));
        for (int shift = 56; shift >= 0; shift -= 8)
            out.push_back(static_cast<char>((static_cast<std::uint64_t>(n) >> shift) & 0xff));
    }
    ws_detail::prepared_key prepared;
    ws_detail::prepare_key(prepared, key);
    out.append(reinterpret_cast<const char*>(prepared.data()), prepared.size());
    const std::size_t body = out.size();
    out.append(payload);
    ws_detail::mask_inplace(boost::asio::mutable_buffer(out.data() + body, n), prepared);
}

// as_session_untraced: the session's path under `pacer run --trace receipts|none`, where no
// trace line is built, so the frame is not copied.
enum variant : int { encoded = 0, append_event = 1, as_session = 2, as_session_untraced = 3 };

void BM_SendPath(benchmark::State& state) {
    const auto v = static_cast<variant>(state.range(0));
    const auto pcm = make_pcm();
    const std::size_t packets = pcm.size() / packet_bytes;
    pacer::protocol::event_id_source ids(42);
    const std::string fixed_id(ids.next().view());
    std::string audio_b64;
    std::string frame;
    std::string wire;
    std::uint32_t key = 0x2545f491;
    std::uint64_t seq = 0;
    std::size_t wire_bytes = 0;
    // Warm-up: one packet sizes every reused buffer, so the loop measures the steady state.
    auto one_packet = [&] {
        const std::span<const std::uint8_t> packet(pcm.data() + (seq % packets) * packet_bytes,
                                                   packet_bytes);
        pacer::protocol::event_id id_storage;
        std::string_view id = fixed_id;
        if (v == as_session || v == as_session_untraced) {
            id_storage = ids.next();
            id = id_storage.view();
        }
        if (v == append_event) {
            pacer::protocol::append_event(frame, id, packet, seq);
        } else {
            audio_b64.clear();
            pacer::base64_append(audio_b64, packet.data(), packet.size());
            pacer::protocol::append_event_encoded(frame, id, audio_b64, seq);
        }
        if (v == as_session) {
            std::string trace_copy = frame; // what the trace record owns
            benchmark::DoNotOptimize(trace_copy.data());
        }
        key = key * 1664525u + 1013904223u; // a fresh mask key per frame, as Beast draws one
        write_client_frame(wire, frame, key);
        wire_bytes = wire.size();
        benchmark::DoNotOptimize(wire.data());
        ++seq;
    };
    one_packet();
    const std::uint64_t before = pacer_microbench_allocations();
    for (auto _ : state)
        one_packet();
    const std::uint64_t allocs = pacer_microbench_allocations() - before;
    state.counters["allocs_per_packet"] =
        static_cast<double>(allocs) / static_cast<double>(state.iterations());
    state.counters["wire_bytes"] = static_cast<double>(wire_bytes);
    state.SetItemsProcessed(state.iterations());
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(wire_bytes));
    state.SetLabel(v == encoded        ? "encoded"
                   : v == append_event ? "append_event"
                   : v == as_session   ? "as_session"
                                       : "as_session_untraced");
}

// The stages alone, to see where the time goes.
void BM_SendStageBase64(benchmark::State& state) {
    const auto pcm = make_pcm();
    std::string out;
    std::size_t i = 0;
    for (auto _ : state) {
        out.clear();
        pacer::base64_append(out, pcm.data() + (i++ % 125) * packet_bytes, packet_bytes);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(packet_bytes));
}

void BM_SendStageJson(benchmark::State& state) {
    const auto pcm = make_pcm();
    std::string audio_b64;
    pacer::base64_append(audio_b64, pcm.data(), packet_bytes);
    const std::string id(pacer::protocol::event_id_source(7).next().view());
    std::string frame;
    std::uint64_t seq = 0;
    for (auto _ : state) {
        pacer::protocol::append_event_encoded(frame, id, audio_b64, seq++);
        benchmark::DoNotOptimize(frame.data());
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(frame.size()));
}

void BM_SendStageFrameMask(benchmark::State& state) {
    const std::string payload(3500, 'A');
    std::string wire;
    std::uint32_t key = 1;
    for (auto _ : state) {
        key = key * 1664525u + 1013904223u;
        write_client_frame(wire, payload, key);
        benchmark::DoNotOptimize(wire.data());
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(payload.size()));
}

} // namespace

BENCHMARK(BM_SendPath)
    ->ArgName("variant")
    ->Arg(encoded)
    ->Arg(append_event)
    ->Arg(as_session)
    ->Arg(as_session_untraced);
BENCHMARK(BM_SendStageBase64);
BENCHMARK(BM_SendStageJson);
BENCHMARK(BM_SendStageFrameMask);

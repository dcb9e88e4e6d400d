// The trace path, session side to disk.
//
// BM_TraceChannel: records per second through `pacer::trace::channel` (the strand-free
// concurrent_channel) from 1, 2 or 4 producer threads to one consumer, with `try_send` and
// `try_receive` as `trace::sink` and `run_writer` use them. The payload is either empty (the
// channel alone) or a 3.5 kB append frame copied per record, as `sink::emit` takes its copy.
// Producers retry a full channel after a yield (a session would `async_send`); such retries
// are counted. The consumer spins instead of polling every 10 ms, so this is the channel's
// ceiling, not the writer's pace.
//
// BM_TraceWriter: bytes per second that `writer_core` formats and writes to files in a temp
// folder (the page cache: nothing is fsynced), per packet one append line (3.5 kB), one audio
// delta (4.7 kB of base64), one transcript delta and one `sglang.unit.done`, as the probe mock
// answers. Each iteration is a fresh writer: 4 sessions of 250 packets, then `flush_all`
// (trace tails and receipts), so folder creation and open/close are included.
//
// BM_TraceTime: one time of a trace line or receipt (CLOCK_MONOTONIC seconds, nine decimals),
// `method` 0 through `append_fixed9` (exact integer arithmetic), 1 through `std::to_chars`
// with fixed precision 9 (what `append_fixed9` did until 2026-12-02); the text is the same.

#include <pacer/core/base64.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/core/float_repr.hpp>
#include <pacer/trace/record.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pacer::trace::direction;
using pacer::trace::record;

// A realistic append frame: 80 ms of 16 kHz PCM16 (2560 bytes) as base64, 3.5 kB in all.
std::string make_append_frame() {
    std::string pcm(2560, '\0');
    for (std::size_t i = 0; i < pcm.size(); ++i)
        pcm[i] = static_cast<char>(i * 131 + 7);
    return fmt::format(
        R"({{"type":"input_audio_buffer.append","event_id":"0123456789abcdef0123456789abcdef","audio":"{}","sglang":{{"seq":42,"t_start_ms":3360.0}}}})",
        pacer::base64_encode(pcm));
}

// The probe mock's audio delta: 80 ms of 22.05 kHz PCM16 (3528 bytes) = 4704 base64 characters.
std::string make_audio_delta() {
    std::string pcm(3528, '\0');
    for (std::size_t i = 0; i < pcm.size(); ++i)
        pcm[i] = static_cast<char>(i * 7);
    return fmt::format(
        R"({{"type":"response.output_audio.delta","event_id":"0123456789abcdef0123456789abcdef","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"{}"}})",
        pacer::base64_encode(pcm));
}

void BM_TraceChannel(benchmark::State& state) {
    const auto producers = static_cast<int>(state.range(0));
    const bool with_payload = state.range(1) != 0;
    constexpr std::int64_t per_producer = 50'000;
    const std::string frame = with_payload ? make_append_frame() : std::string();
    boost::asio::io_context io; // the channel's executor; never run (try_* complete inline)
    std::uint64_t full_retries = 0;
    for (auto _ : state) {
        pacer::trace::channel ch(io.get_executor(), 1 << 16); // the runner's default capacity
        std::atomic<std::uint64_t> retries{0};
        std::vector<std::thread> threads;
        for (int p = 0; p < producers; ++p)
            threads.emplace_back([&, p] {
                std::uint64_t local_retries = 0;
                for (std::int64_t i = 0; i < per_producer; ++i) {
                    record r;
                    r.dir = direction::send;
                    r.session = static_cast<std::uint32_t>(p);
                    r.time_s = static_cast<double>(i);
                    r.payload = frame; // the copy `sink::emit` receives
                    // try_send leaves `r` intact when the channel is full.
                    while (!ch.try_send(boost::system::error_code{}, std::move(r))) {
                        ++local_retries;
                        std::this_thread::yield();
                    }
                }
                retries += local_retries;
            });
        std::int64_t received = 0;
        std::size_t bytes = 0;
        auto handle = [&](boost::system::error_code, record r) {
            ++received;
            bytes += r.payload.size();
        };
        const std::int64_t total = per_producer * producers;
        while (received < total)
            if (!ch.try_receive(handle))
                std::this_thread::yield();
        for (auto& t : threads)
            t.join();
        benchmark::DoNotOptimize(bytes);
        full_retries += retries.load();
    }
    state.SetItemsProcessed(state.iterations() * per_producer * producers);
    state.counters["full_retries"] = static_cast<double>(full_retries);
    state.SetLabel(with_payload ? "3.5kB payload copied" : "empty payload");
}

// A fresh folder under the system temp directory, removed on destruction.
struct temp_dir {
    fs::path path;
    temp_dir() {
        std::string tmpl = (fs::temp_directory_path() / "pacer-mb-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr)
            throw std::runtime_error("mkdtemp failed");
        path = tmpl;
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

void BM_TraceWriter(benchmark::State& state) {
    constexpr std::uint32_t sessions = 4;
    constexpr int packets = 250;
    const std::string append = make_append_frame();
    const std::string audio = make_audio_delta();
    const std::string transcript =
        R"({"type":"response.output_audio_transcript.delta","event_id":"0123456789abcdef0123456789abcdef","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"a"})";
    const std::string unit_done =
        R"({"type":"sglang.unit.done","event_id":"0123456789abcdef0123456789abcdef","unit_id":"unit_42"})";
    const std::string receipts(20'000, ' ');
    temp_dir tmp;
    std::uint64_t bytes = 0;
    std::uint64_t lines = 0;
    std::uint64_t writes = 0;
    int round = 0;
    for (auto _ : state) {
        state.PauseTiming();
        const fs::path root = tmp.path / std::to_string(round++);
        fs::create_directory(root);
        // Records are built outside the timed region: the sessions pay for them, not the writer.
        std::vector<record> records;
        records.reserve(sessions * packets * 4 + sessions);
        for (int n = 0; n < packets; ++n)
            for (std::uint32_t s = 0; s < sessions; ++s)
                for (const std::string* p : {&append, &audio, &transcript, &unit_done}) {
                    record r;
                    r.dir = p == &append ? direction::send : direction::receive;
                    r.session = s;
                    r.time_s = 1234.5 + n * 0.08;
                    r.payload = *p;
                    records.push_back(std::move(r));
                }
        for (std::uint32_t s = 0; s < sessions; ++s) {
            record r;
            r.what = record::kind::end;
            r.session = s;
            r.payload = receipts;
            records.push_back(std::move(r));
        }
        state.ResumeTiming();

        pacer::trace::writer_options options;
        options.root = root;
        pacer::trace::writer_core core(std::move(options));
        auto now = pacer::clock::now();
        std::size_t i = 0;
        for (auto& r : records) {
            core.on_record(now, std::move(r));
            // Every 64 records time moves on by 0.5 s, so batches are written as in a run.
            if (++i % 64 == 0) {
                now += std::chrono::milliseconds(500);
                core.flush_due(now);
            }
        }
        core.flush_all();
        bytes += core.stats().bytes;
        lines += core.stats().lines;
        writes += core.stats().writes;

        state.PauseTiming();
        fs::remove_all(root); // keep the page cache footprint bounded
        state.ResumeTiming();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
    state.counters["lines_per_s"] =
        benchmark::Counter(static_cast<double>(lines), benchmark::Counter::kIsRate);
    state.counters["bytes_per_write"] = writes ? static_cast<double>(bytes) / writes : 0;
}

void BM_TraceTime(benchmark::State& state) {
    // A second of clock readings 80 ms / 1,024 apart, from an uptime of a day.
    std::vector<double> times;
    for (int i = 0; i < 4096; ++i)
        times.push_back(86400.0 + i * 0.080 / 1024 + i * 1.3e-9);
    std::string out;
    std::size_t i = 0;
    for (auto _ : state) {
        out.clear();
        const double t = times[i++ % times.size()];
        if (state.range(0) == 0) {
            pacer::append_fixed9(out, t);
        } else {
            char buf[48];
            const auto r = std::to_chars(buf, buf + sizeof buf, t, std::chars_format::fixed, 9);
            out.append(buf, r.ptr);
        }
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations());
}

} // namespace

BENCHMARK(BM_TraceTime)->ArgName("method")->Arg(0)->Arg(1);
BENCHMARK(BM_TraceChannel)
    ->ArgNames({"producers", "payload"})
    ->ArgsProduct({{1, 2, 4}, {0, 1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceWriter)->UseRealTime()->Unit(benchmark::kMillisecond);

// End-to-end test of the trace path on real io_contexts (one executor per session, lossless tracing
// off the hot path): sessions on two producer threads emit lines through `trace::sink` into a small
// strand-free channel, and `run_writer` drains it on its own thread into the session folders.
//
// Nothing here sleeps or asserts on timing. Backpressure is made certain, not likely: the
// producers run first, on this thread, until the channel is full and every session is blocked
// in `async_send`; only then does the writer start. Every wait is bounded by a generous
// watchdog so that a bug fails the test instead of hanging it (a liveness guard, not a timing
// assertion).

#include <pacer/trace/payload_pool.hpp>
#include <pacer/trace/sink.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <chrono>
#include <csignal>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace json = boost::json;
namespace trace = pacer::trace;

// The liveness guard: far beyond anything this test needs (well under a second normally).
constexpr auto watchdog = 60s;

std::string event_json(std::uint32_t session, int i) {
    return R"({"type":"input_audio_buffer.append","event_id":"s)" + std::to_string(session) + "-" +
           std::to_string(i) + R"(","sglang":{"seq":)" + std::to_string(i) + "}}";
}

double time_of(std::uint32_t session, int i) {
    return 10.0 * session + i * 0.5;
}

std::string receipts_json(std::uint32_t session) {
    return "{\n  \"session_start_s\": " + std::to_string(10 * session) +
           ".0,\n  \"admitted\": true,\n  \"appends\": []\n}\n";
}

fs::path folder_of(const fs::path& root, std::uint32_t session) {
    return root / trace::session_folder_name(session);
}

// What one session saw, returned to the test thread (no ASSERT inside coroutines).
struct session_outcome {
    std::string finish_error = "<finish never returned>";
    std::uint64_t waits = 0;
    double wait_s = 0;
    bool receipts_on_disk = false; // when finish() returned
    std::size_t trace_bytes_on_disk = 0;
};

// One session: `n` lines through a sink, then finish() with its receipts.
pacer::awaitable<session_outcome> produce(trace::channel& ch, fs::path root, std::uint32_t session,
                                          int n) {
    trace::sink sink(ch, session);
    std::size_t expected_bytes = 0;
    for (int i = 0; i < n; ++i) {
        std::string event = event_json(session, i);
        expected_bytes += event.size();
        co_await sink.emit(trace::direction::send, time_of(session, i), std::move(event));
    }
    session_outcome out;
    out.finish_error = co_await sink.finish(receipts_json(session));
    out.waits = sink.waits();
    out.wait_s = sink.wait_s();
    // finish() promises that the files are on disk when it returns: look right now.
    const fs::path dir = folder_of(root, session);
    out.receipts_on_disk = fs::exists(dir / "input-send-receipts.json");
    std::error_code ec;
    out.trace_bytes_on_disk = static_cast<std::size_t>(fs::file_size(dir / "trace.jsonl", ec));
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_GT(out.trace_bytes_on_disk, expected_bytes);
    co_return out;
}

// Stops every context and joins every thread on scope exit, so that a failed wait ends the
// test instead of leaving threads behind.
struct thread_guard {
    std::vector<std::function<void()>> stops;
    std::vector<std::thread> threads;
    ~thread_guard() { join(); }
    void join() {
        for (auto& t : threads)
            if (t.joinable())
                t.join();
    }
    void stop_all() {
        for (auto& stop : stops)
            stop();
    }
};

TEST(trace_channel, sessions_on_two_threads_through_a_small_channel) {
    constexpr int lines_per_session = 1000;
    constexpr std::size_t capacity = 4;
    // Producer thread A runs sessions 1 and 2, producer thread B runs sessions 3 and 4.
    const std::vector<std::vector<std::uint32_t>> sessions_of = {{1, 2}, {3, 4}};

    pacer::test::scratch_folder dir("pacer-trace-channel");
    std::promise<std::exception_ptr> writer_done;
    auto writer_finished = writer_done.get_future();
    std::map<std::uint32_t, std::promise<session_outcome>> promises;
    std::map<std::uint32_t, std::future<session_outcome>> futures;
    for (const auto& group : sessions_of)
        for (auto s : group)
            futures[s] = promises[s].get_future();

    // Declared before the channel: the contexts outlive any operation pending in it.
    asio::io_context writer_ctx{1};
    std::vector<std::unique_ptr<asio::io_context>> producer_ctx;
    for (std::size_t t = 0; t < sessions_of.size(); ++t)
        producer_ctx.push_back(std::make_unique<asio::io_context>(1));
    trace::channel ch(writer_ctx.get_executor(), capacity);
    trace::writer_options options;
    options.root = dir.path;
    trace::writer_core core(options);
    thread_guard guard;
    guard.stops.push_back([&] { writer_ctx.stop(); });
    for (auto& ctx : producer_ctx)
        guard.stops.push_back([&ctx] { ctx->stop(); });

    asio::co_spawn(writer_ctx, trace::run_writer(ch, core),
                   [&](std::exception_ptr e) { writer_done.set_value(e); });
    for (std::size_t t = 0; t < sessions_of.size(); ++t)
        for (auto s : sessions_of[t]) {
            // Each completion touches only its own promise (never the map) from its thread.
            std::promise<session_outcome>* promise = &promises[s];
            asio::co_spawn(*producer_ctx[t], produce(ch, dir.path, s, lines_per_session),
                           [promise](std::exception_ptr e, session_outcome out) {
                               if (e)
                                   promise->set_exception(e);
                               else
                                   promise->set_value(std::move(out));
                           });
        }

    // Step 1: with no writer running yet, let the producers run on this thread until they can
    // make no progress: the channel holds `capacity` records and every session is suspended in
    // async_send. This makes backpressure (waits() > 0) certain for every session.
    for (auto& ctx : producer_ctx)
        ctx->poll();
    for (auto& [s, f] : futures)
        ASSERT_NE(f.wait_for(0s), std::future_status::ready) << "session " << s << " finished";

    // Step 2: the writer on its own thread, each producer context on its own thread.
    guard.threads.emplace_back([&] { writer_ctx.run(); });
    for (auto& ctx : producer_ctx)
        guard.threads.emplace_back([&ctx] { ctx->run(); });

    // Step 3: every session's finish() returns once its files are on disk.
    const auto deadline = std::chrono::steady_clock::now() + watchdog;
    std::map<std::uint32_t, session_outcome> outcomes;
    for (auto& [s, f] : futures) {
        if (f.wait_until(deadline) != std::future_status::ready) {
            guard.stop_all();
            FAIL() << "session " << s << " did not finish within the watchdog";
        }
        outcomes[s] = f.get();
    }
    for (const auto& [s, out] : outcomes) {
        SCOPED_TRACE("session " + std::to_string(s));
        EXPECT_EQ(out.finish_error, "");
        EXPECT_GT(out.waits, 0u) << "the channel never filled up";
        EXPECT_GE(out.wait_s, 0.0);
        EXPECT_TRUE(out.receipts_on_disk) << "finish() returned before the receipts were written";
    }

    // Step 4: stop the writer with a shutdown record (never by closing the channel), and join.
    trace::record stop;
    stop.what = trace::record::kind::shutdown;
    auto sent = ch.async_send(boost::system::error_code{}, std::move(stop), asio::use_future);
    if (sent.wait_until(deadline) != std::future_status::ready) {
        guard.stop_all();
        FAIL() << "the shutdown record could not be sent within the watchdog";
    }
    EXPECT_NO_THROW(sent.get());
    if (writer_finished.wait_until(deadline) != std::future_status::ready) {
        guard.stop_all();
        FAIL() << "run_writer did not return after shutdown within the watchdog";
    }
    const std::exception_ptr writer_error = writer_finished.get();
    guard.join();
    if (writer_error) {
        try {
            std::rethrow_exception(writer_error);
        } catch (const std::exception& e) {
            FAIL() << "run_writer threw: " << e.what();
        }
    }

    // Step 5: every line is present exactly once, in per-session order; receipts are verbatim.
    for (const auto& group : sessions_of) {
        for (auto s : group) {
            SCOPED_TRACE("session " + std::to_string(s));
            const fs::path folder = folder_of(dir.path, s);
            EXPECT_EQ(pacer::test::read_text(folder / "input-send-receipts.json"),
                      receipts_json(s));
            const std::string text = pacer::test::read_text(folder / "trace.jsonl");
            ASSERT_FALSE(text.empty());
            EXPECT_EQ(text.back(), '\n');
            std::istringstream in(text);
            std::string line;
            int next = 0;
            while (std::getline(in, line)) {
                boost::system::error_code ec;
                const json::value v = json::parse(line, ec);
                ASSERT_FALSE(ec) << "line " << next + 1 << ": " << line;
                const auto& o = v.as_object();
                EXPECT_EQ(o.at("direction").as_string(), "send");
                const std::string tail = "\"event\":" + event_json(s, next) + "}";
                ASSERT_GE(line.size(), tail.size());
                ASSERT_EQ(line.substr(line.size() - tail.size()), tail)
                    << "line " << next + 1 << " is out of order, missing or duplicated";
                EXPECT_NEAR(o.at("time_s").to_number<double>(), time_of(s, next), 1e-9);
                ++next;
            }
            EXPECT_EQ(next, lines_per_session);
            EXPECT_EQ(pacer::test::read_text(folder / "trace.jsonl").size(),
                      outcomes[s].trace_bytes_on_disk)
                << "the trace grew after finish() returned";
        }
    }

    const auto& stats = core.stats();
    EXPECT_EQ(stats.lines, 4u * lines_per_session);
    EXPECT_EQ(stats.sessions_closed, 4u);
    EXPECT_EQ(stats.write_errors, 0u);
}

// The drain budget (the writer's livelock, found by the 1,024-session soak): sessions that refill
// the channel as fast as it is drained must not keep the writer from writing. A waiting sender
// refills the channel the moment try_receive makes room, so here 8 buffered records and 8 blocked
// senders are 16 records one unbounded drain would take; with a budget of 10 the drain stops at
// 10 and the writer can write before it takes the rest.
TEST(trace_channel, a_drain_stops_at_its_budget_while_senders_keep_refilling) {
    constexpr std::size_t capacity = 8;
    constexpr std::uint32_t sessions = 16;
    pacer::test::scratch_folder dir("pacer-trace-channel");
    asio::io_context ctx{1};
    trace::channel ch(ctx.get_executor(), capacity);
    trace::writer_options options;
    options.root = dir.path;
    options.flush_interval = std::chrono::milliseconds(0); // everything taken is due at once
    trace::writer_core core(options);
    int sent = 0;
    for (std::uint32_t s = 0; s < sessions; ++s)
        asio::co_spawn(
            ctx,
            [&, s]() -> pacer::awaitable<void> {
                trace::sink sink(ch, s);
                co_await sink.emit(trace::direction::send, time_of(s, 0), event_json(s, 0));
                ++sent;
            },
            asio::detached);
    ctx.poll(); // 8 records buffered, 8 sessions suspended in async_send
    ASSERT_EQ(sent, static_cast<int>(capacity));

    const auto first = trace::drain(ch, core, 10);
    EXPECT_EQ(first.taken, 10u);
    EXPECT_FALSE(first.stopping);
    EXPECT_EQ(core.stats().lines, 10u);
    EXPECT_EQ(core.flush_due(pacer::clock::now()), 10u); // the writer gets to write
    EXPECT_EQ(core.stats().writes, 10u);

    const auto rest = trace::drain(ch, core, 100);
    EXPECT_EQ(rest.taken, 6u); // then the channel is empty
    EXPECT_FALSE(rest.stopping);
    ctx.poll();
    EXPECT_EQ(sent, static_cast<int>(sessions));

    trace::record stop;
    stop.what = trace::record::kind::shutdown;
    ASSERT_TRUE(ch.try_send(boost::system::error_code{}, std::move(stop)));
    const auto last = trace::drain(ch, core, 100);
    EXPECT_EQ(last.taken, 0u);
    EXPECT_TRUE(last.stopping);
    core.flush_all();
    EXPECT_EQ(core.stats().lines, sessions);
    EXPECT_EQ(core.stats().sessions_closed, sessions);
}

// The strings a session queues, lines and receipts, go back to the payload pool once the
// writer has taken them, so the sessions' next ones reuse them (none is freed by the writer);
// and what a session queues is written as it was, whatever string it travelled in.
TEST(trace_channel, payloads_go_back_to_the_pool_once_taken) {
    pacer::test::scratch_folder dir("pacer-trace-channel");
    asio::io_context ctx{1};
    trace::channel ch(ctx.get_executor(), 64);
    trace::writer_options options;
    options.root = dir.path;
    trace::writer_core core(options);
    // An empty pool to start with (a new thread's cache starts empty; what it takes is freed).
    std::thread([] {
        while (trace::payload_pool::size().strings > 0)
            (void)trace::payload_pool::take();
    }).join();
    const std::string receipt_piece(200, ' '); // longer than the small-string buffer
    asio::co_spawn(
        ctx,
        [&]() -> pacer::awaitable<void> {
            trace::sink sink(ch, 7);
            for (int i = 0; i < 3; ++i) {
                co_await sink.emit(trace::direction::send, time_of(7, i), event_json(7, i));
                co_await sink.receipt(receipt_piece);
            }
        },
        asio::detached);
    ctx.poll();
    EXPECT_EQ(trace::payload_pool::size().strings, 0u);
    const auto d = trace::drain(ch, core, 100);
    EXPECT_EQ(d.taken, 6u);
    EXPECT_EQ(trace::payload_pool::size().strings, 6u); // all six back, none freed
    core.flush_all();
    std::istringstream lines(pacer::test::read_text(folder_of(dir.path, 7) / "trace.jsonl"));
    std::string line;
    int i = 0;
    for (; std::getline(lines, line); ++i)
        EXPECT_NE(line.find(event_json(7, i)), std::string::npos) << line;
    EXPECT_EQ(i, 3);
    EXPECT_EQ(pacer::test::read_text(folder_of(dir.path, 7) / "input-send-receipts.json"),
              receipt_piece + receipt_piece + receipt_piece);
}

// The run's SIGINT/SIGTERM handler lives on the writer's context (session/runner.cpp): a writer
// that is behind (every pass hits its budget) must still let it run, or a signal waits until the
// writer has caught up, which on a starved host is the whole run. The signal is pending before
// the writer starts and the channel holds 100 budgets of records: the handler must run while
// most of them are still in the channel, not after the writer has taken them all.
TEST(trace_channel, a_writer_behind_still_lets_a_signal_handler_on_its_context_run) {
    constexpr std::size_t budget = 8;
    constexpr std::size_t records = 100 * budget;
    pacer::test::scratch_folder dir("pacer-trace-channel");
    asio::io_context ctx{1};
    trace::channel ch(ctx.get_executor(), records + 1);
    trace::writer_options options;
    options.root = dir.path;
    trace::writer_core core(options);
    for (std::size_t i = 0; i < records; ++i) {
        trace::record r;
        r.time_s = time_of(0, static_cast<int>(i));
        r.payload = event_json(0, static_cast<int>(i));
        ASSERT_TRUE(ch.try_send(boost::system::error_code{}, std::move(r)));
    }
    trace::record stop;
    stop.what = trace::record::kind::shutdown;
    ASSERT_TRUE(ch.try_send(boost::system::error_code{}, std::move(stop)));

    asio::signal_set signals(ctx, SIGUSR2);
    std::optional<std::uint64_t> taken_at_signal;
    signals.async_wait([&](boost::system::error_code ec, int) {
        if (!ec)
            taken_at_signal = core.stats().lines;
    });
    ASSERT_EQ(::raise(SIGUSR2), 0); // pending in the context before the writer's first pass
    bool writer_done = false;
    asio::co_spawn(ctx, trace::run_writer(ch, core, budget), [&](std::exception_ptr e) {
        writer_done = true;
        if (e)
            std::rethrow_exception(e);
    });
    ctx.run_for(watchdog);
    ASSERT_TRUE(writer_done);
    ASSERT_TRUE(taken_at_signal.has_value());
    EXPECT_LT(*taken_at_signal, records / 2); // handled while the writer was still behind
    EXPECT_EQ(core.stats().lines, records);   // and the writer then wrote everything
    EXPECT_EQ(core.stats().sessions_closed, 1u);
}

} // namespace

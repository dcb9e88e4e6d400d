#include <pacer/core/awaitable.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/runtime/loop_monitor.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/session/runner.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <pthread.h>
#include <sched.h>
#include <stdexcept>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace pacer::session {

namespace asio = boost::asio;

std::string_view conversation_plan::name() const {
    return scenario ? std::string_view(scenario->name) : std::string_view("single");
}

duration conversation_plan::length(std::size_t input_bytes) const {
    if (!scenario)
        return schedule::input_duration(input_bytes);
    duration d{};
    for (std::size_t j = 0; j < turns.size() && j < scenario->turns.size(); ++j) {
        const std::size_t bytes = turns[j].pcm ? turns[j].pcm.size() : input_bytes;
        d += schedule::packet_period * static_cast<std::int64_t>(schedule::packet_count(bytes)) +
             scenario->turns[j].pause.max;
    }
    return d;
}

std::size_t conversation_plan::streamed_bytes(std::size_t input_bytes, std::size_t appends) const {
    if (!scenario || turns.empty() || appends == 0)
        return input_bytes;
    const std::size_t last = turns.back().pcm ? turns.back().pcm.size() : input_bytes;
    return (appends - 1) * schedule::packet_bytes +
           schedule::packet_size(last, schedule::packet_count(last) - 1);
}

namespace {

// One session context: its io_context, its loop monitor, and how many of its sessions are
// still running or not yet streaming. Touched only from its own thread once started.
struct session_context {
    asio::io_context io{1};
    interrupt_source interrupt;
    runtime::loop_monitor monitor;
    std::size_t running = 0;
    std::size_t not_streaming = 0;
    std::optional<duration> stall;
    std::size_t stalls = 0;
    duration input_length{};
    double cpu_s = 0;
    trace::receipt_statistics receipts; ///< every receipt of its sessions, folded as sent

    void on_streaming() {
        if (--not_streaming != 0 || !stall)
            return;
        // Every session of this context is streaming: block the context half-way through,
        // starting 10 ms before a deadline of the last session to start. Every grid has a
        // deadline in any 80 ms, so a stall of S ms delays a packet of every streaming session
        // by more than S - 80 ms, whatever the grids' phases (a 250 ms stall: late, > 80 ms),
        // and no packet by more than S (a 60 ms stall alone makes none late). The 10 ms lead
        // makes aligned grids (--stagger-ms 0) late by S - 10 ms.
        const auto half = static_cast<std::int64_t>(input_length / schedule::packet_period / 2);
        asio::co_spawn(io,
                       block_once(clock::now() + schedule::packet_period * half -
                                  std::chrono::milliseconds(10)),
                       [](std::exception_ptr) {});
    }

    awaitable<void> block_once(time_point at) {
        steady_timer t(io);
        t.expires_at(at);
        co_await t.async_wait(use_tuple);
        if (running == 0)
            co_return;
        std::this_thread::sleep_for(*stall); // the injected fault: the whole context stalls
        ++stalls;
    }
};

} // namespace

duration stagger_offset(std::size_t i, std::size_t sessions, duration stagger, std::size_t slots) {
    const auto n = static_cast<std::int64_t>(sessions);
    const auto k = static_cast<std::int64_t>(i);
    if (slots == 0 || sessions == 0)
        return sessions == 0 ? duration{} : stagger * k / n;
    const auto s = static_cast<std::int64_t>(slots);
    return stagger * (k * s / n) / s; // slot floor(i K / N) of K
}

run_outcome run_duplex(const run_options& options) {
    if (options.sessions == 0 || options.threads == 0)
        throw std::invalid_argument("sessions and threads must be at least 1");
    if (!options.pcm && options.inputs.empty())
        throw std::invalid_argument("a run needs an input");
    if (options.start_gate_lead && options.arrivals)
        throw std::invalid_argument("a start gate and open-loop arrivals do not mix");
    auto input_of = [&](std::size_t i) {
        return options.inputs.empty() ? options.pcm : options.inputs[i % options.inputs.size()];
    };
    run_outcome out;
    out.sessions.resize(options.sessions);
    std::optional<start_gate> gate;
    if (options.start_gate_lead)
        gate.emplace(options.sessions, *options.start_gate_lead);

    // The writer: its own context and thread, fed by the strand-free channel.
    asio::io_context writer_io{1};
    trace::channel channel(writer_io.get_executor(), options.channel_capacity);
    trace::writer_options wo;
    wo.root = options.trace_root;
    wo.what = options.trace;
    trace::writer_core core(std::move(wo));
    // A closed batch: every session's folder and files exist before the writer thread starts
    // (no file creation while the sessions stream). Open-loop arrivals open theirs as they come:
    // their descriptors are budgeted for the sessions in flight only.
    if (!options.arrivals)
        for (std::size_t i = 0; i < options.sessions; ++i)
            core.prepare(static_cast<std::uint32_t>(i), clock::now());
    std::exception_ptr writer_error;
    asio::co_spawn(writer_io, trace::run_writer(channel, core),
                   [&](std::exception_ptr e) { writer_error = e; });
    double writer_cpu_s = 0;
    std::thread writer_thread([&] {
        ::pthread_setname_np(::pthread_self(), "pacer-writer");
        // The writer has slack (it batches 0.5 s of lines) and the session contexts have none:
        // the scheduler must let them in at once. At nice 10 a session thread woken for its
        // deadline could still wait for the writer's slice to end (1-4 ms tails of the pacing
        // deviation); under SCHED_IDLE any waking normal thread preempts it, and it runs on the
        // CPU time nothing else wants (docs/architecture.md, "Traces"). Lowering one's own
        // priority needs no privilege; nice 10 stays if the policy cannot be set.
        ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
        const sched_param no_priority{};
        ::pthread_setschedparam(::pthread_self(), SCHED_IDLE, &no_priority);
        writer_io.run();
        writer_cpu_s = runtime::thread_cpu_seconds();
    });

    const std::size_t threads = std::min(options.threads, options.sessions);
    std::vector<std::unique_ptr<session_context>> contexts;
    for (std::size_t t = 0; t < threads; ++t) {
        auto c = std::make_unique<session_context>();
        c->stall = options.inject_stall;
        c->input_length = schedule::input_duration(input_of(0).size());
        if (options.live)
            c->monitor.report_max_to(&options.live->loop_lag_max_ns);
        contexts.push_back(std::move(c));
    }
    if (options.arrivals && options.arrivals->size() != options.sessions)
        throw std::invalid_argument("open loop: one arrival per session");
    std::vector<std::exception_ptr> failures(options.sessions);
    // One origin for every session's stagger phase: sessions of one offset share their instants.
    const time_point stagger_origin = options.stagger_origin.value_or(clock::now());
    auto make_options = [&](std::size_t i) {
        auto& c = *contexts[i % threads];
        session_options so;
        so.index = static_cast<std::uint32_t>(i);
        so.endpoint = options.endpoint;
        so.pcm = input_of(i);
        so.timeout = options.timeout;
        // Event ids unique across sessions, runs and processes (not reproducible by design).
        so.seed = protocol::unique_id_seed(options.seed);
        const auto offset =
            stagger_offset(i, options.sessions, options.stagger, options.stagger_slots);
        if (gate) {
            so.gate = &*gate;
            so.start_offset = offset;
        } else if (!options.arrivals) { // open-loop arrivals are spread by their schedule
            so.stagger_origin = stagger_origin;
            so.start_delay = offset;
        }
        so.lockstep_unit_bytes = options.lockstep_unit_bytes;
        so.profile = options.profile;
        so.realtime = options.realtime;
        so.turns = options.turns;
        so.model = options.model;
        so.wire_pcm = options.wire_inputs.empty()
                          ? options.wire_pcm
                          : options.wire_inputs[i % options.wire_inputs.size()];
        if (const auto& plan = options.conversation) {
            const auto pauses = schedule::draw_pauses(*plan.scenario, i);
            so.conversation = plan.turns; // a turn without audio streams so.pcm
            for (std::size_t j = 0; j < so.conversation.size(); ++j)
                so.conversation[j].pause = pauses[j];
            so.pause_packets = plan.scenario->pause_packets;
        }
        so.on_streaming = [&c] { c.on_streaming(); };
        so.interrupt = &c.interrupt;
        so.live = options.live;
        so.trace_lines = options.trace == trace::mode::full;
        so.receipt_stats = &c.receipts;
        return so;
    };
    asio::cancellation_signal stop_dispatch; // used on context 0 only
    auto stop_contexts = [&] {
        for (auto& c : contexts)
            asio::post(c->io, [&c = *c] { c.monitor.stop(); });
    };
    if (options.arrivals) {
        // Open loop: the dispatcher lives on context 0; each session runs on its own context
        // and reports back there, so the concurrency cap is one counter on one thread.
        for (std::size_t i = 0; i < options.sessions; ++i) {
            ++contexts[i % threads]->not_streaming;
            out.sessions[i].index = static_cast<std::uint32_t>(i);
            out.sessions[i].dispatched = false;
        }
        auto request = [&](std::size_t i, time_point scheduled) -> awaitable<void> {
            auto& c = *contexts[i % threads];
            auto r = co_await asio::co_spawn(c.io, run_duplex_session(make_options(i), channel),
                                             use_awaitable);
            r.scheduled_s = to_seconds(scheduled);
            out.sessions[i] = std::move(r);
        };
        open_loop_options olo;
        olo.max_concurrency = options.max_concurrency;
        olo.policy = options.policy;
        olo.start = options.open_loop_start;
        asio::co_spawn(contexts[0]->io, run_open_loop(*options.arrivals, olo, request),
                       asio::bind_cancellation_slot(stop_dispatch.slot(),
                                                    [&](std::exception_ptr e, open_loop_result r) {
                                                        if (e)
                                                            failures[0] = e;
                                                        else
                                                            out.open_loop = std::move(r);
                                                        stop_contexts();
                                                    }));
    }
    for (std::size_t i = 0; i < options.sessions && !options.arrivals; ++i) {
        auto& c = *contexts[i % threads];
        ++c.running;
        ++c.not_streaming;
        asio::co_spawn(c.io, run_duplex_session(make_options(i), channel),
                       [&c, &out, &failures, &options, i](std::exception_ptr e, session_result r) {
                           if (e)
                               failures[i] = e;
                           else
                               out.sessions[i] = std::move(r);
                           if (!e && options.on_session_end)
                               options.on_session_end(i, out.sessions[i]);
                           if (--c.running == 0)
                               c.monitor.stop();
                       });
    }
    for (auto& c : contexts)
        asio::co_spawn(c->io, c->monitor.run(), [](std::exception_ptr) {});

    // Signals are taken on the writer's context and forwarded to every session context.
    std::atomic<bool> interrupted{false};
    asio::signal_set signals(writer_io);
    if (options.handle_signals) {
        signals.add(SIGINT);
        signals.add(SIGTERM);
        signals.async_wait([&](boost::system::error_code ec, int) {
            if (ec)
                return;
            interrupted = true;
            if (options.arrivals) // no new arrivals; sessions in flight are interrupted below
                asio::post(contexts[0]->io,
                           [&] { stop_dispatch.emit(asio::cancellation_type::terminal); });
            for (auto& c : contexts)
                asio::post(c->io, [&c = *c] { c.interrupt.request(); });
        });
    }

    const auto started = clock::now();
    out.started_s = to_seconds(started);
    std::vector<std::thread> workers;
    for (std::size_t t = 0; t < contexts.size(); ++t)
        workers.emplace_back([&c = *contexts[t], t] {
            ::pthread_setname_np(::pthread_self(), ("pacer-ctx-" + std::to_string(t)).c_str());
            c.io.run();
            c.cpu_s = runtime::thread_cpu_seconds();
        });
    for (auto& w : workers)
        w.join();
    out.wall_s = to_seconds(clock::now() - started);

    out.interrupted = interrupted;
    if (gate) {
        if (const auto start = gate->common_start())
            out.common_start_s = to_seconds(*start);
        out.ready_sessions = gate->ready();
    }
    asio::post(writer_io, [&] { signals.cancel(); });
    // Every session has its files on disk (each awaited its writer receipt): stop the writer.
    trace::record stop;
    stop.what = trace::record::kind::shutdown;
    // async_send, not try_send: a full channel must delay the shutdown, never drop it.
    channel.async_send(boost::system::error_code{}, std::move(stop), asio::use_future).get();
    writer_thread.join();
    out.writer = core.stats();
    // The sessions folded their receipts as they sent them (session_result's counters, the
    // contexts' histograms): nothing is read back, so the end of a run needs no more memory
    // than its steady state. --trace none: the writer's spool goes to samples.json, which takes
    // one session's receipts from it at a time.
    out.kept_receipts = core.kept_receipts();
    out.writer_cpu_s = writer_cpu_s;
    for (auto& c : contexts) {
        out.loop_lag_s.push_back(c->monitor.lags_s());
        out.loop_lag_started_s.push_back(to_seconds(c->monitor.started()));
        out.loop_lag_period_s = to_seconds(c->monitor.period());
        out.context_cpu_s.push_back(c->cpu_s);
        out.stalls_injected += c->stalls;
        out.receipts.merge(c->receipts);
    }
    for (auto& f : failures)
        if (f)
            std::rethrow_exception(f);
    if (options.arrivals) // sessions the cap dropped never ran: they are in the open-loop records
        std::erase_if(out.sessions, [](const session_result& r) { return !r.dispatched; });
    if (writer_error)
        std::rethrow_exception(writer_error);
    return out;
}

} // namespace pacer::session

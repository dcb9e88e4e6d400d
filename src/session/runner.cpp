#include <pacer/core/awaitable.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/runtime/loop_monitor.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/session/rethrow_all.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/session/voice_end.hpp>

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
    /// What its own coroutines (the loop monitor, the injected stall) threw: never dropped.
    std::vector<std::exception_ptr> errors;

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
                       [this](std::exception_ptr e) {
                           if (e)
                               errors.push_back(e);
                       });
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

void rethrow_all(const std::vector<std::exception_ptr>& thrown) {
    if (thrown.empty())
        return;
    if (thrown.size() == 1)
        std::rethrow_exception(thrown.front());
    std::string text = fmt::format("{} failures:", thrown.size());
    for (const auto& e : thrown) {
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            text += fmt::format(" [{}]", x.what());
        } catch (...) {
            text += " [an exception of unknown type]";
        }
    }
    throw std::runtime_error(text);
}

duration stagger_offset(std::size_t i, std::size_t sessions, duration stagger, std::size_t slots) {
    const auto n = static_cast<std::int64_t>(sessions);
    const auto k = static_cast<std::int64_t>(i);
    if (slots == 0 || sessions == 0)
        return sessions == 0 ? duration{} : stagger * k / n;
    const auto s = static_cast<std::int64_t>(slots);
    return stagger * (k * s / n) / s; // slot floor(i K / N) of K
}

namespace {

void check_options(const run_options& options) {
    if (options.sessions == 0 || options.threads == 0)
        throw std::invalid_argument("sessions and threads must be at least 1");
    if (!options.pcm && options.inputs.empty())
        throw std::invalid_argument("a run needs an input");
    if (options.start_gate_lead && options.arrivals)
        throw std::invalid_argument("a start gate and open-loop arrivals do not mix");
    if (options.arrivals && options.arrivals->size() != options.sessions)
        throw std::invalid_argument("open loop: one arrival per session");
}

// The trace writer: its own context and thread, fed by the strand-free channel. Nothing else
// runs on that thread (the run's signals have their own, see signal_thread): it runs at
// SCHED_IDLE, on the CPU time nothing else wants.
class writer_thread {
public:
    explicit writer_thread(const run_options& options)
        : channel_(io_.get_executor(), options.channel_capacity), core_(writer_options(options)) {
        // A closed batch: every session's folder and files exist before the writer thread
        // starts (no file creation while the sessions stream). Open-loop arrivals open theirs
        // as they come: their descriptors are budgeted for the sessions in flight only.
        if (!options.arrivals)
            for (std::size_t i = 0; i < options.sessions; ++i)
                core_.prepare(static_cast<std::uint32_t>(i), clock::now());
        asio::co_spawn(io_, trace::run_writer(channel_, core_),
                       [this](std::exception_ptr e) { error_ = e; });
        thread_ = std::thread([this] { run(); });
    }
    writer_thread(const writer_thread&) = delete;
    writer_thread& operator=(const writer_thread&) = delete;
    ~writer_thread() {
        if (thread_.joinable()) // a run that failed before its sessions ran
            stop();
    }

    trace::channel& channel() { return channel_; }
    const trace::writer_core& core() const { return core_; }
    double cpu_s() const { return cpu_s_; }

    // Every session has its files on disk (each awaited its writer receipt): stop the writer,
    // once it has written every line before the shutdown, and join its thread.
    void stop() {
        trace::record shutdown;
        shutdown.what = trace::record::kind::shutdown;
        // async_send, not try_send: a full channel must delay the shutdown, never drop it.
        channel_.async_send(boost::system::error_code{}, std::move(shutdown), asio::use_future)
            .get();
        thread_.join();
    }
    void rethrow() const {
        if (error_)
            std::rethrow_exception(error_);
    }

private:
    static trace::writer_options writer_options(const run_options& options) {
        trace::writer_options wo;
        wo.root = options.trace_root;
        wo.what = options.trace;
        return wo;
    }

    void run() {
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
        // Nor does the kernel pick this thread to run a signal's handler: on a loaded host it
        // could wait here for the CPU as long as the writer does.
        sigset_t run_signals;
        sigemptyset(&run_signals);
        sigaddset(&run_signals, SIGINT);
        sigaddset(&run_signals, SIGTERM);
        ::pthread_sigmask(SIG_BLOCK, &run_signals, nullptr);
        io_.run();
        cpu_s_ = runtime::thread_cpu_seconds();
    }

    asio::io_context io_{1};
    trace::channel channel_;
    trace::writer_core core_;
    std::exception_ptr error_;
    double cpu_s_ = 0;
    std::thread thread_;
};

// SIGINT and SIGTERM, taken on a thread of their own at the process's normal priority: under
// full CPU load a signal must not wait for the SCHED_IDLE writer to be given the CPU (it was
// taken there once). `on_signal` runs on this thread, once, at the first signal. Until the
// object is destroyed the signals stay caught (a second one is swallowed, never fatal).
class signal_thread {
public:
    explicit signal_thread(std::function<void()> on_signal) : signals_(io_, SIGINT, SIGTERM) {
        signals_.async_wait(
            [this, on_signal = std::move(on_signal)](boost::system::error_code ec, int) {
                if (ec)
                    return;
                interrupted_ = true;
                on_signal();
            });
        thread_ = std::thread([this] {
            ::pthread_setname_np(::pthread_self(), "pacer-signals");
            io_.run();
        });
    }
    signal_thread(const signal_thread&) = delete;
    signal_thread& operator=(const signal_thread&) = delete;
    ~signal_thread() { stop(); }

    bool interrupted() const { return interrupted_; }
    // Stops waiting (a signal from now on is caught and dropped) and joins the thread.
    void stop() {
        if (!thread_.joinable())
            return;
        asio::post(io_, [this] { signals_.cancel(); });
        thread_.join();
    }

private:
    asio::io_context io_{1};
    asio::signal_set signals_;
    std::atomic<bool> interrupted_{false};
    std::thread thread_;
};

// The sessions' side of a run: the session contexts (one thread each), the options each
// session is given, and what the sessions return into `out`.
class session_runner {
public:
    session_runner(const run_options& options, trace::channel& channel, run_outcome& out)
        : options_(options), channel_(channel), out_(out), failures_(options.sessions) {
        if (options.start_gate_lead)
            gate_.emplace(options.sessions, *options.start_gate_lead);
        const std::size_t threads = std::min(options.threads, options.sessions);
        for (std::size_t t = 0; t < threads; ++t) {
            auto c = std::make_unique<session_context>();
            c->stall = options.inject_stall;
            c->input_length = schedule::input_duration(input_of(0).size());
            if (options.live)
                c->monitor.report_max_to(&options.live->loop_lag_max_ns);
            contexts_.push_back(std::move(c));
        }
        find_voice_ends();
        // One origin for every session's stagger phase: sessions of one offset share their
        // instants.
        stagger_origin_ = options.stagger_origin.value_or(clock::now());
        out_.sessions.resize(options.sessions);
    }

    // Spawns every session (or the open-loop dispatcher) and the loop monitors; nothing runs
    // before `run`.
    void spawn() {
        if (options_.arrivals)
            spawn_open_loop();
        else
            spawn_closed_loop();
        for (auto& c : contexts_)
            asio::co_spawn(c->io, c->monitor.run(), [&c = *c](std::exception_ptr e) {
                if (e)
                    c.errors.push_back(e);
            });
    }

    // Runs every context on its own thread until all its sessions have ended.
    void run() {
        const auto started = clock::now();
        out_.started_s = to_seconds(started);
        std::vector<std::thread> workers;
        for (std::size_t t = 0; t < contexts_.size(); ++t)
            workers.emplace_back([&c = *contexts_[t], t] {
                ::pthread_setname_np(::pthread_self(), ("pacer-ctx-" + std::to_string(t)).c_str());
                c.io.run();
                c.cpu_s = runtime::thread_cpu_seconds();
            });
        for (auto& w : workers)
            w.join();
        out_.wall_s = to_seconds(clock::now() - started);
        if (gate_) {
            if (const auto start = gate_->common_start())
                out_.common_start_s = to_seconds(*start);
            out_.ready_sessions = gate_->ready();
        }
    }

    // From any thread (the signal's): no new arrivals, and every session still running ends
    // early, on its own context (close handshake, its lines on disk).
    void interrupt() {
        if (options_.arrivals) // no new arrivals; sessions in flight are interrupted below
            asio::post(contexts_[0]->io,
                       [this] { stop_dispatch_.emit(asio::cancellation_type::terminal); });
        for (auto& c : contexts_)
            asio::post(c->io, [&c = *c] { c.interrupt.request(); });
    }

    // Once the contexts' threads have ended: their figures, then every exception a session or
    // a context's own coroutine threw (rethrow_all).
    void collect() {
        for (auto& c : contexts_) {
            out_.loop_lag_s.push_back(c->monitor.lags_s());
            out_.loop_lag_started_s.push_back(to_seconds(c->monitor.started()));
            out_.loop_lag_period_s = to_seconds(c->monitor.period());
            out_.context_cpu_s.push_back(c->cpu_s);
            out_.stalls_injected += c->stalls;
            out_.receipts.merge(c->receipts);
        }
        std::vector<std::exception_ptr> thrown;
        for (auto& f : failures_)
            if (f)
                thrown.push_back(f);
        for (auto& c : contexts_)
            thrown.insert(thrown.end(), c->errors.begin(), c->errors.end());
        rethrow_all(thrown);
        if (options_.arrivals) // sessions the cap dropped never ran: in the open-loop records
            std::erase_if(out_.sessions, [](const session_result& r) { return !r.dispatched; });
    }

private:
    // A conversation's voice ends, before any session starts: each turn's own audio once, and
    // each input once for the turns that stream the session's input.
    void find_voice_ends() {
        if (!options_.conversation)
            return;
        turns_ = options_.conversation.turns;
        for (auto& t : turns_)
            if (t.pcm)
                t.voice_end = find_voice_end(t.pcm, options_.conversation.voice);
        const std::size_t inputs = std::max<std::size_t>(1, options_.inputs.size());
        for (std::size_t i = 0; i < inputs; ++i)
            input_voice_ends_.push_back(find_voice_end(input_of(i), options_.conversation.voice));
    }
    protocol::pcm_input input_of(std::size_t i) const {
        return options_.inputs.empty() ? options_.pcm : options_.inputs[i % options_.inputs.size()];
    }
    session_context& context_of(std::size_t i) { return *contexts_[i % contexts_.size()]; }

    session_options session_options_for(std::size_t i);
    void spawn_closed_loop();
    void spawn_open_loop();

    const run_options& options_;
    trace::channel& channel_;
    run_outcome& out_;
    std::optional<start_gate> gate_;
    std::vector<std::unique_ptr<session_context>> contexts_;
    std::vector<std::exception_ptr> failures_;
    time_point stagger_origin_;
    asio::cancellation_signal stop_dispatch_; // used on context 0 only
    std::vector<session_turn> turns_;         // the conversation's turns, voice ends found
    std::vector<std::optional<duration>> input_voice_ends_; // per input
};

session_options session_runner::session_options_for(std::size_t i) {
    auto& c = context_of(i);
    session_options so;
    so.index = static_cast<std::uint32_t>(i);
    so.endpoint = options_.endpoint;
    so.pcm = input_of(i);
    so.timeout = options_.timeout;
    // Event ids unique across sessions, runs and processes (not reproducible by design).
    so.seed = protocol::unique_id_seed(options_.seed);
    const auto offset =
        stagger_offset(i, options_.sessions, options_.stagger, options_.stagger_slots);
    if (gate_) {
        so.gate = &*gate_;
        so.start_offset = offset;
    } else if (!options_.arrivals) { // open-loop arrivals are spread by their schedule
        so.stagger_origin = stagger_origin_;
        so.start_delay = offset;
    }
    so.lockstep_unit_bytes = options_.lockstep_unit_bytes;
    so.profile = options_.profile;
    so.realtime = options_.realtime;
    so.turns = options_.turns;
    so.model = options_.model;
    so.chunk = options_.chunk;
    so.omni = options_.omni;
    so.wire_pcm = options_.wire_inputs.empty()
                      ? options_.wire_pcm
                      : options_.wire_inputs[i % options_.wire_inputs.size()];
    if (const auto& plan = options_.conversation) {
        const auto pauses = schedule::draw_pauses(*plan.scenario, i);
        so.conversation = turns_; // a turn without audio streams so.pcm
        for (std::size_t j = 0; j < so.conversation.size(); ++j) {
            so.conversation[j].pause = pauses[j];
            if (!so.conversation[j].pcm)
                so.conversation[j].voice_end = input_voice_ends_[i % input_voice_ends_.size()];
        }
        so.pause_packets = plan.scenario->pause_packets;
    }
    so.on_streaming = [&c] { c.on_streaming(); };
    so.interrupt = &c.interrupt;
    so.live = options_.live;
    so.trace_lines = options_.trace == trace::mode::full;
    so.receipt_stats = &c.receipts;
    return so;
}

// A closed batch: every session starts at once (each on its stagger), on context i mod T.
void session_runner::spawn_closed_loop() {
    for (std::size_t i = 0; i < options_.sessions; ++i) {
        auto& c = context_of(i);
        ++c.running;
        ++c.not_streaming;
        asio::co_spawn(c.io, run_duplex_session(session_options_for(i), channel_),
                       [this, &c, i](std::exception_ptr e, session_result r) {
                           if (e)
                               failures_[i] = e;
                           else
                               out_.sessions[i] = std::move(r);
                           if (!e && options_.on_session_end)
                               options_.on_session_end(i, out_.sessions[i]);
                           if (--c.running == 0)
                               c.monitor.stop();
                       });
    }
}

// Open loop: the dispatcher lives on context 0; each session runs on its own context and
// reports back there, so the concurrency cap is one counter on one thread.
void session_runner::spawn_open_loop() {
    for (std::size_t i = 0; i < options_.sessions; ++i) {
        ++context_of(i).not_streaming;
        out_.sessions[i].index = static_cast<std::uint32_t>(i);
        out_.sessions[i].dispatched = false;
    }
    auto request = [this](std::size_t i, time_point scheduled) -> awaitable<void> {
        auto r = co_await asio::co_spawn(
            context_of(i).io, run_duplex_session(session_options_for(i), channel_), use_awaitable);
        r.scheduled_s = to_seconds(scheduled);
        out_.sessions[i] = std::move(r);
    };
    open_loop_options olo;
    olo.max_concurrency = options_.max_concurrency;
    olo.policy = options_.policy;
    olo.start = options_.open_loop_start;
    asio::co_spawn(contexts_[0]->io, run_open_loop(*options_.arrivals, olo, request),
                   asio::bind_cancellation_slot(
                       stop_dispatch_.slot(), [this](std::exception_ptr e, open_loop_result r) {
                           if (e)
                               failures_[0] = e;
                           else
                               out_.open_loop = std::move(r);
                           for (auto& c : contexts_)
                               asio::post(c->io, [&c = *c] { c.monitor.stop(); });
                       }));
}

} // namespace

run_outcome run_duplex(const run_options& options) {
    check_options(options);
    run_outcome out;
    writer_thread writer(options);
    session_runner sessions(options, writer.channel(), out);
    sessions.spawn();
    // Caught from here on: a signal interrupts the sessions on their own contexts.
    std::optional<signal_thread> signals;
    if (options.handle_signals)
        signals.emplace([&sessions] { sessions.interrupt(); });
    sessions.run();
    out.interrupted = signals && signals->interrupted();
    if (signals)
        signals->stop();
    writer.stop();
    out.writer = writer.core().stats();
    // The sessions folded their receipts as they sent them (session_result's counters, the
    // contexts' histograms): nothing is read back, so the end of a run needs no more memory
    // than its steady state. --trace none: the writer's spool goes to samples.json, which takes
    // one session's receipts from it at a time.
    out.kept_receipts = writer.core().kept_receipts();
    out.writer_cpu_s = writer.cpu_s();
    sessions.collect();
    writer.rethrow();
    return out;
}

} // namespace pacer::session

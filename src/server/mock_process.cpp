// A mock as its own process (mock_process.hpp): each mock subcommand's values checked and run
// (or its `--dry-run` plan), the threads, signals, start line and stats file, and the built-in
// mock on a thread of the client's process.

#include <pacer/core/bad_input.hpp>
#include <pacer/core/json_text.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/server/mock_process.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/system/system_error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

namespace pacer::server {

namespace asio = boost::asio;

namespace {

void check_stats_output(const std::string& stats_output) {
    if (!stats_output.empty() && std::filesystem::exists(stats_output))
        throw bad_input(
            fmt::format("--stats-output {} already exists; choose a new file", stats_output));
}

// Calls `listen`; an address that cannot be used is one bad_input line.
template <class Listen>
void listen_on(const std::string& host, std::uint16_t port, Listen&& listen) {
    try {
        listen();
    } catch (const boost::system::system_error& e) {
        // The reason alone ("Address already in use"), not Boost's "bind: ... [system:98 at
        // /usr/include/boost/...]".
        throw bad_input(fmt::format("cannot listen on {}:{}: {}", host, port, e.code().message()));
    } catch (const std::exception& e) {
        throw bad_input(fmt::format("cannot listen on {}:{}: {}", host, port, e.what()));
    }
}

} // namespace

void check_mock_process(const host_options& host, const std::string& stats_output,
                        const threaded_mock_factory& make) {
    (void)host;
    check_stats_output(stats_output);
    runtime::ensure_descriptors(64);
    asio::io_context io{1};
    asio::io_context* const contexts[] = {&io};
    (void)make(contexts); // builds it (checking the options), never listens
}

void print_mock_process_plan(std::string_view command, const host_options& host,
                             const std::string& stats_output) {
    fmt::print("pacer {} --dry-run: checked; nothing started, nothing written\n", command);
    fmt::print("  listen     {} (not bound by a dry run)\n",
               host.port == 0 ? host.host + ", any free port"
                              : fmt::format("{}:{}", host.host, host.port));
    fmt::print("  admission  {}; {} first handshake(s) answered HTTP 503\n",
               host.max_sessions == 0 ? std::string("no session limit")
                                      : fmt::format("at most {} open sessions", host.max_sessions),
               host.reject_first);
    fmt::print("  transport  {}\n",
               host.tls_cert.empty() ? std::string("ws:// (plain TCP)")
                                     : fmt::format("wss:// (TLS, certificate {})", host.tls_cert));
    fmt::print("  stats      {}\n", stats_output.empty()
                                        ? std::string("not written (no --stats-output)")
                                        : stats_output + " on SIGINT/SIGTERM");
}

int run_mock_process(const host_options& host, const std::string& stats_output, std::size_t threads,
                     const threaded_mock_factory& make) {
    check_stats_output(stats_output);
    runtime::ensure_descriptors(64);
    // One io_context per thread; the main thread runs the first (the acceptor and the signals).
    std::vector<std::unique_ptr<asio::io_context>> owned;
    std::vector<asio::io_context*> contexts;
    for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) {
        owned.push_back(std::make_unique<asio::io_context>(1));
        contexts.push_back(owned.back().get());
    }
    auto& io = *contexts.front();
    std::unique_ptr<mock_server> mock;
    mock = make(contexts);
    listen_on(host.host, host.port, [&] { mock->listen(); });
    // The other threads' contexts stay up while idle until the mock stops; then they end
    // once their sessions, closed by stop(), have ended.
    using guard = asio::executor_work_guard<asio::io_context::executor_type>;
    std::vector<guard> idle_guards;
    for (std::size_t i = 1; i < contexts.size(); ++i)
        idle_guards.push_back(asio::make_work_guard(*contexts[i]));
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
        if (ec)
            return;
        mock->stop();
        for (auto& g : idle_guards)
            g.reset();
    });
    asio::co_spawn(io, mock->serve(), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    // Scripts and tests take the port after the last ':'; the scheme says whether it is TLS.
    if (host.tls_cert.empty())
        fmt::print("listening on {}:{}\n", host.host, mock->port());
    else
        fmt::print("listening on wss://{}:{}\n", host.host, mock->port());
    std::fflush(stdout);
    std::vector<std::thread> runners;
    for (std::size_t i = 1; i < contexts.size(); ++i)
        runners.emplace_back([ctx = contexts[i]] { ctx->run(); });
    io.run();
    for (auto& t : runners)
        t.join();
    auto stats = mock->stats();
    const auto usage = runtime::read_process_usage();
    stats["process_cpu_s"] = usage.cpu_s;
    stats["peak_rss_bytes"] = usage.peak_rss_bytes;
    if (!stats_output.empty())
        runtime::write_new_file(stats_output, json_text(stats) + "\n");
    return runtime::exit_ok;
}

std::unique_ptr<llm_mock> check_llm_mock_process(asio::io_context& io,
                                                 const llm_mock_options& options,
                                                 const std::string& stats_output) {
    check_stats_output(stats_output);
    std::unique_ptr<llm_mock> mock;
    mock = std::make_unique<llm_mock>(io, options); // loads the certificate, binds nothing
    runtime::ensure_descriptors(64);                // what the real run checks, the dry run checks
    return mock;
}

int run_llm_mock_process(asio::io_context& io, llm_mock& mock, const llm_mock_options& options,
                         const std::string& stats_output) {
    listen_on(options.host, options.port, [&] { mock.listen(); });
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
        if (ec)
            return;
        mock.stop();
        io.stop(); // open connections end with the process
    });
    asio::co_spawn(io, mock.serve(), asio::detached);
    // Scripts and tests take the port after the last ':'; the scheme says whether it is TLS.
    if (mock.tls())
        fmt::print("listening on https://{}:{}\n", options.host, mock.port());
    else
        fmt::print("listening on {}:{}\n", options.host, mock.port());
    std::fflush(stdout);
    io.run();
    if (!stats_output.empty())
        runtime::write_new_file(stats_output, json_text(mock.stats()) + "\n");
    return runtime::exit_ok;
}

namespace {

// What `pacer mock` would serve, as checked: `--dry-run` prints it instead of serving.
void print_probe_mock_plan(const probe_mock_process_options& s) {
    print_mock_process_plan("mock", s.options, s.stats_output);
    fmt::print("  threads    {}\n", s.threads);
    fmt::print("  replies    {} event(s) per append\n", s.options.replies_per_append);
    fmt::print("  fault      {}\n", s.fault == "none"
                                        ? std::string("none")
                                        : fmt::format("{} in every {}-th session (accept order)",
                                                      s.fault, s.options.fault_every));
}

// `--dry-run`: what a start checks, then the plan `print_plan` prints; else the mock process
// until SIGINT/SIGTERM.
int plan_or_serve(const host_options& host, const std::string& stats_output, std::size_t threads,
                  bool dry_run, const threaded_mock_factory& make,
                  const std::function<void()>& print_plan) {
    if (!dry_run)
        return run_mock_process(host, stats_output, threads, make);
    check_mock_process(host, stats_output, make);
    print_plan();
    return runtime::exit_ok;
}

duration from_ms(double ms) {
    return std::chrono::duration_cast<duration>(std::chrono::duration<double, std::milli>(ms));
}

} // namespace

int run_probe_mock(const probe_mock_process_options& s) {
    auto o = s.options;
    o.inject = parse_fault(s.fault);
    const threaded_mock_factory make = [&](std::span<asio::io_context* const> contexts) {
        return std::make_unique<probe_mock>(contexts, o);
    };
    return plan_or_serve(o, s.stats_output, s.threads, s.dry_run, make,
                         [&] { print_probe_mock_plan(s); });
}

int run_native_mock(const native_mock_process_options& s) {
    auto o = s.options;
    o.profile = protocol::find_profile(s.profile);
    if (o.profile == nullptr)
        throw bad_input(
            fmt::format("--profile must be nemotron or minicpmo (got '{}')", s.profile));
    if (s.protocol != "native") {
        protocol::realtime_protocol p{};
        if (!protocol::parse_realtime_protocol(s.protocol, p))
            throw bad_input(fmt::format("--protocol '{}' is not known: use native, "
                                        "openai-realtime, vllm-realtime or vllm-omni",
                                        s.protocol));
        if (s.fault != "none")
            throw bad_input("--fault needs --protocol native (the fault modes are native's)");
        o.realtime = p;
    }
    o.unit_latency = std::chrono::duration<double, std::milli>(s.unit_latency_ms);
    o.per_session_cost = std::chrono::duration<double, std::milli>(s.per_session_cost_ms);
    o.service_time = std::chrono::duration<double, std::milli>(s.service_ms);
    o.cold_start_extra = std::chrono::duration<double, std::milli>(s.cold_start_ms);
    o.cold_start_window = std::chrono::duration<double>(s.cold_start_s);
    o.overload_penalty = std::chrono::duration<double, std::milli>(s.overload_penalty_ms);
    o.recovery = std::chrono::duration<double>(s.recovery_s);
    o.vad_threshold_dbfs = s.vad_threshold_dbfs;
    o.vad_silence = std::chrono::duration<double, std::milli>(s.vad_silence_ms);
    o.reply = std::chrono::duration<double, std::milli>(s.reply_ms);
    o.cancel_reaction = std::chrono::duration<double, std::milli>(s.cancel_reaction_ms);
    o.reply_delta = std::chrono::duration<double, std::milli>(s.reply_delta_ms);
    if (s.playback_commit_policy != "ack_only" && s.playback_commit_policy != "commit_all_on_done")
        throw bad_input(fmt::format(
            "--playback-commit-policy must be ack_only or commit_all_on_done (got '{}')",
            s.playback_commit_policy));
    o.ack_only = s.playback_commit_policy == "ack_only";
    o.fault = parse_peer_fault(s.fault);
    if (!s.fault_sessions.empty())
        o.fault_sessions = session_set::parse(s.fault_sessions);
    const threaded_mock_factory make = [&](std::span<asio::io_context* const> contexts) {
        return std::make_unique<native_mock>(contexts, o);
    };
    return plan_or_serve(o, s.stats_output, s.threads, s.dry_run, make, [&] {
        print_native_mock_plan(o, s.threads, s.stats_output, s.fault_sessions);
    });
}

int run_llm_mock(const llm_mock_process_options& s) {
    auto o = s.options;
    o.ttft = from_ms(s.ttft_ms);
    o.itl = from_ms(s.itl_ms);
    o.batch_cost = from_ms(s.batch_cost_ms);
    if ((s.pause_every_ms > 0) != (s.pause_ms > 0) ||
        (s.pause_ms > 0 && s.pause_ms >= s.pause_every_ms))
        throw bad_input("--pause-ms and --pause-every-ms go together, the pause shorter than "
                        "its period");
    o.pause_every = from_ms(s.pause_every_ms);
    o.pause = from_ms(s.pause_ms);
    o.fault = parse_llm_fault(s.fault);
    if (!s.fault_requests.empty()) {
        try {
            o.fault_requests = session_set::parse(s.fault_requests);
        } catch (const std::invalid_argument&) {
            throw bad_input(
                fmt::format("--fault-requests must list request indices like 0,2,5-7 (got '{}')",
                            s.fault_requests));
        }
    }
    asio::io_context io{1};
    const auto mock = check_llm_mock_process(io, o, s.stats_output);
    if (s.dry_run) {
        fmt::print("pacer llm-mock --dry-run: checked; nothing started, nothing written\n");
        fmt::print("  listen     {} (not bound by a dry run)\n",
                   o.port == 0 ? o.host + ", any free port" : fmt::format("{}:{}", o.host, o.port));
        fmt::print("  scheme     {}\n",
                   o.tls_cert.empty() ? std::string("http:// (plain TCP)")
                                      : fmt::format("https:// (TLS, certificate {})", o.tls_cert));
        fmt::print("  timing     first token {:g} ms, then one every {:g} ms, each + {:g} ms per "
                   "other request in flight\n",
                   s.ttft_ms, s.itl_ms, s.batch_cost_ms);
        if (s.pause_ms > 0)
            fmt::print("  pauses     {:g} ms out of every {:g} ms, no token leaves\n", s.pause_ms,
                       s.pause_every_ms);
        fmt::print("  admission  {}\n",
                   o.max_concurrency == 0
                       ? std::string("no limit")
                       : fmt::format("HTTP 503 over {} requests in flight", o.max_concurrency));
        fmt::print("  fault      {}{}\n", s.fault,
                   s.fault == "none"
                       ? std::string()
                       : " in requests " +
                             (s.fault_requests.empty() ? std::string("all") : s.fault_requests));
        fmt::print("  stats      {}\n", s.stats_output.empty()
                                            ? std::string("not written (no --stats-output)")
                                            : s.stats_output + " on SIGINT/SIGTERM");
        return runtime::exit_ok;
    }
    return run_llm_mock_process(io, *mock, o, s.stats_output);
}

background_mock::background_mock(const mock_factory& make) : mock_(make(io_)) {
    mock_->listen();
    asio::co_spawn(io_, mock_->serve(), [](std::exception_ptr) {});
    thread_ = std::thread([this] { io_.run(); });
}

background_mock::~background_mock() {
    stop();
}

std::uint16_t background_mock::port() const {
    return mock_->port();
}

std::string background_mock::url() const {
    return fmt::format("ws://127.0.0.1:{}/v1/realtime", port());
}

boost::json::object background_mock::stop() {
    if (thread_.joinable()) {
        asio::post(io_, [this] { mock_->stop(); });
        thread_.join();
    }
    return mock_->stats();
}

} // namespace pacer::server

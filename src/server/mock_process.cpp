#include <pacer/core/json_text.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/server/mock_process.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
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
using runtime::usage_error;

namespace {

void check_stats_output(const std::string& stats_output) {
    if (!stats_output.empty() && std::filesystem::exists(stats_output))
        throw usage_error(
            fmt::format("--stats-output {} already exists; choose a new file", stats_output));
}

// Calls `listen`; an address that cannot be used is one usage_error line.
template <class Listen>
void listen_on(const std::string& host, std::uint16_t port, Listen&& listen) {
    try {
        listen();
    } catch (const boost::system::system_error& e) {
        // The reason alone ("Address already in use"), not Boost's "bind: ... [system:98 at
        // /usr/include/boost/...]".
        throw usage_error(
            fmt::format("cannot listen on {}:{}: {}", host, port, e.code().message()));
    } catch (const std::exception& e) {
        throw usage_error(fmt::format("cannot listen on {}:{}: {}", host, port, e.what()));
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
    try {
        (void)make(contexts); // builds it (checking the options), never listens
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
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
    try {
        mock = make(contexts);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
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
    try {
        mock = std::make_unique<llm_mock>(io, options); // loads the certificate, binds nothing
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    runtime::ensure_descriptors(64); // what the real run checks, the dry run checks
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

} // namespace pacer::server

#pragma once
// A mock server as its own process, shared by `pacer mock` and `pacer native-mock`: the common
// flags, the start line, the signals and the stats file.

#include <pacer/run/local_server.hpp>
#include <pacer/server/mock_server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>

namespace CLI {
class App;
}

namespace pacer::cli {

/// Adds `--host`, `--port` (default 8097; 0: any free port), `--max-sessions`, `--reject-first`
/// and `--stats-output` to a mock subcommand.
void add_mock_process_options(CLI::App& sub, server::host_options& host, std::string& stats_output);

/// Builds the mock of a process on the given context; may throw std::invalid_argument for a bad
/// option value.
using mock_factory = std::function<std::unique_ptr<server::mock_server>(boost::asio::io_context&)>;
/// The same with its sessions spread over the given contexts (the first accepts).
using threaded_mock_factory =
    std::function<std::unique_ptr<server::mock_server>(std::span<boost::asio::io_context* const>)>;

/// Adds `--threads N` (default 1): the threads a mock process spreads its sessions over.
void add_mock_threads_option(CLI::App& sub, std::size_t& threads);

/// Runs a mock until SIGINT/SIGTERM on `threads` threads (each its own io_context; the main
/// thread runs the first, which accepts): refuses an existing `stats_output`, builds the mock,
/// listens, prints `listening on HOST:PORT` (flushed: scripts and tests wait for it), serves,
/// then, every thread joined, writes the stats plus `process_cpu_s` and `peak_rss_bytes` to
/// `stats_output` when given. A bad option value or an address that cannot be used is a
/// usage_error.
int run_mock_process(const server::host_options& host, const std::string& stats_output,
                     std::size_t threads, const threaded_mock_factory& make);

/// What run_mock_process checks before it listens (the stats file, the descriptors, the options
/// by building the mock), without listening: `--dry-run` of the mock subcommands.
void check_mock_process(const server::host_options& host, const std::string& stats_output,
                        const threaded_mock_factory& make);

/// The lines of a mock's plan that every mock shares (address, admission limits, stats file).
void print_mock_process_plan(std::string_view command, const server::host_options& host,
                             const std::string& stats_output);

/// A mock inside the client's process, on a thread of its own: what `pacer run` and
/// `pacer serve` talk to when no `--url` is given. It listens on 127.0.0.1 (any free port) as
/// soon as it is built.
///
/// @par Thread safety
/// Build, `port()` and `stop()` from one thread; the mock itself runs on its own.
class local_mock final : public run::local_server {
public:
    /// Throws what `make` or `listen` throws.
    explicit local_mock(const mock_factory& make);
    ~local_mock() override;
    local_mock(const local_mock&) = delete;
    local_mock& operator=(const local_mock&) = delete;

    std::uint16_t port() const;
    /// `ws://127.0.0.1:<port>/v1/realtime`: where sessions reach it.
    std::string url() const override;
    /// Stops the mock (once) and joins its thread; returns its stats.
    boost::json::object stop() override;

private:
    boost::asio::io_context io_{1};
    std::unique_ptr<server::mock_server> mock_;
    std::thread thread_;
};

} // namespace pacer::cli

#pragma once
// The flags of a mock server as its own process, shared by `pacer mock` and `pacer native-mock`
// (running it is server/mock_process.hpp's), and the built-in mock of `run`, `serve` and
// `record` in the client's own process.

#include <pacer/run/local_server.hpp>
#include <pacer/server/mock_process.hpp>
#include <pacer/server/mock_server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace CLI {
class App;
}

namespace pacer::cli {

/// Adds `--host`, `--port` (default 8097; 0: any free port), `--max-sessions`, `--reject-first`
/// and `--stats-output` to a mock subcommand.
void add_mock_process_options(CLI::App& sub, server::host_options& host, std::string& stats_output);

/// Adds `--threads N` (default 1): the threads a mock process spreads its sessions over.
void add_mock_threads_option(CLI::App& sub, std::size_t& threads);

/// A mock inside the client's process, on a thread of its own: what `pacer run` and
/// `pacer serve` talk to when no `--url` is given. It listens on 127.0.0.1 (any free port) as
/// soon as it is built.
///
/// @par Thread safety
/// Build, `port()` and `stop()` from one thread; the mock itself runs on its own.
class local_mock final : public run::local_server {
public:
    /// Throws what `make` or `listen` throws.
    explicit local_mock(const server::mock_factory& make);
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

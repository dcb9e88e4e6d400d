#pragma once
// A mock server as its own process, shared by `pacer mock` and `pacer native-mock`: the common
// flags, the start line, the signals and the stats file.

#include <pacer/server/mock_server.hpp>

#include <boost/asio/io_context.hpp>

#include <functional>
#include <memory>
#include <string>

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

/// Runs a mock until SIGINT/SIGTERM on one thread: refuses an existing `stats_output`, builds
/// the mock, listens, prints `listening on HOST:PORT` (flushed: scripts and tests wait for it),
/// serves, then writes the stats plus `process_cpu_s` and `peak_rss_bytes` to `stats_output`
/// when given. A bad option value or an address that cannot be used is a usage_error.
int run_mock_process(const server::host_options& host, const std::string& stats_output,
                     const mock_factory& make);

} // namespace pacer::cli

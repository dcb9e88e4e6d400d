#pragma once
// A mock server as its own process (`pacer mock`, `pacer native-mock`, `pacer llm-mock`): the
// start line, the threads, the signals and the stats file (the subcommands' flags are module
// cli's).

#include <pacer/server/llm_mock.hpp>
#include <pacer/server/mock_server.hpp>

#include <boost/asio/io_context.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace pacer::server {

/// Builds the mock of a process on the given context; may throw std::invalid_argument for a bad
/// option value.
using mock_factory = std::function<std::unique_ptr<mock_server>(boost::asio::io_context&)>;
/// The same with its sessions spread over the given contexts (the first accepts).
using threaded_mock_factory =
    std::function<std::unique_ptr<mock_server>(std::span<boost::asio::io_context* const>)>;

/// Runs a mock until SIGINT/SIGTERM on `threads` threads (each its own io_context; the main
/// thread runs the first, which accepts): refuses an existing `stats_output`, builds the mock,
/// listens, prints `listening on HOST:PORT` (flushed: scripts and tests wait for it), serves,
/// then, every thread joined, writes the stats plus `process_cpu_s` and `peak_rss_bytes` to
/// `stats_output` when given. A bad option value or an address that cannot be used is a
/// runtime::usage_error.
int run_mock_process(const host_options& host, const std::string& stats_output, std::size_t threads,
                     const threaded_mock_factory& make);

/// What run_mock_process checks before it listens (the stats file, the descriptors, the options
/// by building the mock), without listening: `--dry-run` of the mock subcommands.
void check_mock_process(const host_options& host, const std::string& stats_output,
                        const threaded_mock_factory& make);

/// Prints the lines of a mock's plan that every mock shares (address, admission limits, stats
/// file).
void print_mock_process_plan(std::string_view command, const host_options& host,
                             const std::string& stats_output);

/// `pacer llm-mock`'s checks before it listens: refuses an existing `stats_output`, builds the
/// mock on `io` (loading its certificate; a bad option value is a runtime::usage_error) and
/// checks the descriptors. Returns the mock, bound to nothing.
std::unique_ptr<llm_mock> check_llm_mock_process(boost::asio::io_context& io,
                                                 const llm_mock_options& options,
                                                 const std::string& stats_output);

/// Runs `mock` (from check_llm_mock_process, on `io`) until SIGINT/SIGTERM: listens, prints
/// `listening on [https://]HOST:PORT` (flushed), serves, then writes its stats to
/// `stats_output` when given. An address that cannot be used is a runtime::usage_error.
int run_llm_mock_process(boost::asio::io_context& io, llm_mock& mock,
                         const llm_mock_options& options, const std::string& stats_output);

} // namespace pacer::server

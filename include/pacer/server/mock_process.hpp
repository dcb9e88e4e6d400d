#pragma once
// A mock server as its own process (`pacer mock`, `pacer native-mock`, `pacer llm-mock`): the
// start line, the threads, the signals and the stats file; each subcommand's values as typed
// (`*_process_options`), checked into the mock's options and run, or printed by `--dry-run`
// (`run_probe_mock`, `run_native_mock`, `run_llm_mock`; the flags themselves are module cli's).
// Also the built-in mock of `pacer run`, `serve` and `record` inside the client's process, on a
// thread of its own (`background_mock`).

#include <pacer/server/llm_mock.hpp>
#include <pacer/server/mock_server.hpp>
#include <pacer/server/native_mock.hpp>
#include <pacer/server/probe_mock.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>

namespace pacer::server {

/// `pacer mock`'s values as typed.
struct probe_mock_process_options {
    mock_options options;
    std::string fault = "none"; ///< parsed into `options.inject`
    std::string stats_output;
    std::size_t threads = 1;
    bool dry_run = false;
};

/// `pacer native-mock`'s values as typed (times in the units of their flags).
struct native_mock_process_options {
    native_mock_options options;
    std::string profile = "nemotron";
    std::string protocol = "native";
    double unit_latency_ms = 0;
    double per_session_cost_ms = 0;
    double service_ms = 0;
    double cold_start_ms = 0;
    double cold_start_s = 2;
    double overload_penalty_ms = 0;
    double recovery_s = 30;
    double vad_threshold_dbfs = -40;
    double vad_silence_ms = 500;
    double reply_ms = 800;
    double cancel_reaction_ms = 20;
    double reply_delta_ms = 1000;
    std::string playback_commit_policy = "ack_only";
    std::size_t threads = 1;
    std::string fault = "none";
    std::string fault_sessions;
    std::string stats_output;
    bool dry_run = false;
};

/// `pacer llm-mock`'s values as typed (times in ms).
struct llm_mock_process_options {
    llm_mock_options options;
    double ttft_ms = 20, itl_ms = 5, batch_cost_ms = 0;
    double pause_every_ms = 0, pause_ms = 0;
    std::string fault = "none";
    std::string fault_requests;
    std::string stats_output;
    bool dry_run = false;
};

/// `pacer mock`, `pacer native-mock` and `pacer llm-mock`: check the values into the mock's
/// options (a bad one is a bad_input naming its flag), then print the `--dry-run`
/// plan, or serve until SIGINT/SIGTERM as run_mock_process (run_llm_mock_process for the LLM
/// mock) does. Return the exit status.
int run_probe_mock(const probe_mock_process_options& s);
int run_native_mock(const native_mock_process_options& s);
int run_llm_mock(const llm_mock_process_options& s);

/// Builds the mock of a process on the given context; may throw bad_input for a bad
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
/// bad_input.
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
/// mock on `io` (loading its certificate; a bad option value is a bad_input) and
/// checks the descriptors. Returns the mock, bound to nothing.
std::unique_ptr<llm_mock> check_llm_mock_process(boost::asio::io_context& io,
                                                 const llm_mock_options& options,
                                                 const std::string& stats_output);

/// Runs `mock` (from check_llm_mock_process, on `io`) until SIGINT/SIGTERM: listens, prints
/// `listening on [https://]HOST:PORT` (flushed), serves, then writes its stats to
/// `stats_output` when given. An address that cannot be used is a bad_input.
int run_llm_mock_process(boost::asio::io_context& io, llm_mock& mock,
                         const llm_mock_options& options, const std::string& stats_output);

/// A mock inside the calling process, on a thread of its own: the built-in mock of `pacer run`,
/// `pacer serve` and `pacer record` when no `--url` is given (module cli hands it to them as a
/// `run::local_server`). It listens on 127.0.0.1 (any free port) as soon as it is built.
///
/// @par Thread safety
/// Build, `port()` and `stop()` from one thread; the mock itself runs on its own.
class background_mock {
public:
    /// Throws what `make` or `listen` throws.
    explicit background_mock(const mock_factory& make);
    ~background_mock();
    background_mock(const background_mock&) = delete;
    background_mock& operator=(const background_mock&) = delete;

    std::uint16_t port() const;
    /// `ws://127.0.0.1:<port>/v1/realtime`: where sessions reach it.
    std::string url() const;
    /// Stops the mock (once) and joins its thread; returns its stats.
    boost::json::object stop();

private:
    boost::asio::io_context io_{1};
    std::unique_ptr<mock_server> mock_;
    std::thread thread_;
};

} // namespace pacer::server

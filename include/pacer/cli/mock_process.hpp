#pragma once
// The flags of a mock server as its own process, shared by `pacer mock` and `pacer native-mock`
// (running it is server/mock_process.hpp's), and the built-in mock of `run`, `serve` and
// `record` handed to them as a `run::local_server` (the mock and its thread are
// server::background_mock's).

#include <pacer/run/local_server.hpp>
#include <pacer/server/mock_process.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace pacer::cli {

/// Adds `--host`, `--port` (default 8097; 0: any free port), `--max-sessions`, `--reject-first`
/// and `--stats-output` to a mock subcommand.
void add_mock_process_options(CLI::App& sub, server::host_options& host, std::string& stats_output);

/// Adds `--threads N` (default 1): the threads a mock process spreads its sessions over.
void add_mock_threads_option(CLI::App& sub, std::size_t& threads);

/// The built-in mock of `pacer run`, `serve` and `record` (server::background_mock: on a thread
/// of its own in the client's process, listening on 127.0.0.1, any free port) as the
/// `run::local_server` those jobs take.
class local_mock final : public run::local_server {
public:
    /// Throws what `make` or the mock's `listen` throws.
    explicit local_mock(const server::mock_factory& make) : mock_(make) {}

    std::uint16_t port() const { return mock_.port(); }
    std::string url() const override { return mock_.url(); }
    boost::json::object stop() override { return mock_.stop(); }

private:
    server::background_mock mock_;
};

/// The built-in native mock of `profile` (speaking `realtime` when given, else the native
/// protocol): what `serve` and `record` start without `--url`.
std::unique_ptr<local_mock>
built_in_native_mock(const protocol::profile* profile,
                     std::optional<protocol::realtime_protocol> realtime = std::nullopt);

} // namespace pacer::cli

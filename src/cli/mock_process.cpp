// The flags of a mock process (mock_process.hpp).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/mock_process.hpp>

#include <CLI/CLI.hpp>

namespace pacer::cli {

void add_mock_process_options(CLI::App& sub, server::host_options& host,
                              std::string& stats_output) {
    host.port = 8097;
    sub.add_option("--host", host.host, "Address to listen on")->capture_default_str();
    sub.add_option("--port", host.port, "Port to listen on (0: any free port)")
        ->check(whole_number(0, 65535))
        ->capture_default_str();
    sub.add_option("--max-sessions", host.max_sessions,
                   "Open sessions before handshakes get HTTP 503 \"connection capacity "
                   "exhausted\" (0: no limit)")
        ->check(whole_number(0, session::max_sessions))
        ->capture_default_str();
    sub.add_option("--reject-first", host.reject_first,
                   "Answer the first N handshakes with HTTP 503")
        ->check(whole_number(0, 1'000'000'000))
        ->capture_default_str();
    sub.add_option("--stats-output", stats_output,
                   "Where to write the stats JSON on exit (new file)");
    sub.add_option("--tls-cert", host.tls_cert,
                   "PEM certificate (chain): serve wss:// (TLS) with it; needs --tls-key "
                   "(docs/tls.md)")
        ->check(CLI::ExistingFile);
    sub.add_option("--tls-key", host.tls_key, "PEM private key of --tls-cert")
        ->check(CLI::ExistingFile);
}

void add_mock_threads_option(CLI::App& sub, std::size_t& threads) {
    sub.add_option("--threads", threads,
                   "Threads to spread sessions over (each its own event loop; the first "
                   "accepts and hands each connection to the next thread in turn; a session "
                   "stays on one thread)")
        ->check(whole_number(1, 256))
        ->capture_default_str();
}

std::unique_ptr<local_mock>
built_in_native_mock(const protocol::profile* profile,
                     std::optional<protocol::realtime_protocol> realtime) {
    return std::make_unique<local_mock>([profile, realtime](boost::asio::io_context& io) {
        server::native_mock_options o;
        o.profile = profile;
        o.realtime = realtime;
        return std::make_unique<server::native_mock>(io, o);
    });
}

} // namespace pacer::cli

// `pacer mock`: the probe mock server as its own process.

#include <pacer/cli/commands.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/server/probe_mock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

namespace pacer::cli {

namespace asio = boost::asio;

namespace {

struct mock_settings {
    server::mock_options options;
    std::string fault = "none";
    std::string stats_output;
};

int run_mock(mock_settings& s) {
    try {
        s.options.inject = server::parse_fault(s.fault);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    if (!s.stats_output.empty() && std::filesystem::exists(s.stats_output))
        throw usage_error(
            fmt::format("--stats-output {} already exists; choose a new file", s.stats_output));
    runtime::ensure_descriptors(64);
    asio::io_context io{1};
    server::probe_mock mock(io, s.options);
    try {
        mock.listen();
    } catch (const std::exception& e) {
        throw usage_error(
            fmt::format("cannot listen on {}:{}: {}", s.options.host, s.options.port, e.what()));
    }
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
        if (!ec)
            mock.stop();
    });
    asio::co_spawn(io, mock.serve(), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    fmt::print("listening on {}:{}\n", s.options.host, mock.port());
    std::fflush(stdout);
    io.run();
    auto stats = mock.stats();
    const auto usage = runtime::read_process_usage();
    stats["process_cpu_s"] = usage.cpu_s;
    stats["peak_rss_bytes"] = usage.peak_rss_bytes;
    if (!s.stats_output.empty())
        write_new_file(s.stats_output, boost::json::serialize(stats) + "\n");
    return exit_ok;
}

} // namespace

command add_mock_command(CLI::App& app) {
    auto s = std::make_shared<mock_settings>();
    auto* sub = app.add_subcommand(
        "mock", "Probe mock of the native realtime protocol on ws://HOST:PORT/v1/realtime. "
                "Answers each append with --replies-per-append events and records how far each "
                "append arrived from its session's 80 ms grid. Prints 'listening on HOST:PORT' "
                "when ready; on SIGINT/SIGTERM writes --stats-output and exits 0.");
    auto& o = s->options;
    o.port = 8097;
    sub->add_option("--host", o.host, "Address to listen on")->capture_default_str();
    sub->add_option("--port", o.port, "Port to listen on (0: any free port)")
        ->capture_default_str();
    sub->add_option("--replies-per-append", o.replies_per_append,
                    "Events per append: audio delta (80 ms at 22.05 kHz), transcript delta, "
                    "sglang.unit.done, in turn")
        ->capture_default_str();
    sub->add_option("--max-sessions", o.max_sessions,
                    "Concurrent sessions before handshakes get HTTP 503 (0: no limit)")
        ->capture_default_str();
    sub->add_option("--reject-first", o.reject_first, "Answer the first N handshakes with HTTP 503")
        ->capture_default_str();
    sub->add_option("--fault", s->fault,
                    "Inject a fault: after the 5th append server_error (nonfatal error event), "
                    "fatal_error, malformed (a non-JSON frame), nonfinite (NaN in a frame), "
                    "binary (a binary frame), huge_frame (9 MiB, over the 8 MiB limit), vanish "
                    "(drop the connection), stall (stop answering), stop_reading (stop reading the "
                    "socket: the TCP window fills and the client's sends block; this fault gives "
                    "every socket a 4 KiB receive buffer and a 1460-byte MSS); or no_created "
                    "(never send session.created); none")
        ->capture_default_str();
    sub->add_option("--fault-every", o.fault_every,
                    "The fault hits every K-th session in accept order (1: all)")
        ->capture_default_str();
    sub->add_option("--stats-output", s->stats_output,
                    "Where to write the stats JSON on exit (new file)");
    return {sub, [s] { return run_mock(*s); }};
}

} // namespace pacer::cli

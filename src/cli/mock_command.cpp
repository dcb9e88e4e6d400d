// `pacer mock`: the probe mock server as its own process.

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/server/mock_process.hpp>
#include <pacer/server/probe_mock.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace pacer::cli {

namespace {

struct mock_settings {
    server::mock_options options;
    std::string fault = "none";
    std::string stats_output;
    std::size_t threads = 1;
    bool dry_run = false;
};

// What `mock` would serve, as checked: `--dry-run` prints it instead of serving.
void print_mock_plan(const mock_settings& s) {
    server::print_mock_process_plan("mock", s.options, s.stats_output);
    fmt::print("  threads    {}\n", s.threads);
    fmt::print("  replies    {} event(s) per append\n", s.options.replies_per_append);
    fmt::print("  fault      {}\n", s.fault == "none"
                                        ? std::string("none")
                                        : fmt::format("{} in every {}-th session (accept order)",
                                                      s.fault, s.options.fault_every));
}

int run_mock(mock_settings& s) {
    try {
        s.options.inject = server::parse_fault(s.fault);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    const server::threaded_mock_factory make =
        [&](std::span<boost::asio::io_context* const> contexts) {
            return std::make_unique<server::probe_mock>(contexts, s.options);
        };
    if (s.dry_run) {
        server::check_mock_process(s.options, s.stats_output, make);
        print_mock_plan(s);
        return runtime::exit_ok;
    }
    return server::run_mock_process(s.options, s.stats_output, s.threads, make);
}

} // namespace

command add_mock_command(CLI::App& app) {
    auto s = std::make_shared<mock_settings>();
    auto* sub = app.add_subcommand(
        "mock", "Probe mock of the native realtime protocol on ws://HOST:PORT/v1/realtime (wss:// "
                "with --tls-cert and --tls-key). "
                "Answers each append with --replies-per-append events and records how far each "
                "append arrived from its session's 80 ms grid. Prints 'listening on HOST:PORT' "
                "when ready; on SIGINT/SIGTERM writes --stats-output and exits 0.");
    sub->footer(server_exit_statuses);
    auto& o = s->options;
    add_mock_process_options(*sub, o, s->stats_output);
    add_mock_threads_option(*sub, s->threads);
    sub->add_option("--replies-per-append", o.replies_per_append,
                    "Events per append: audio delta (80 ms at 22.05 kHz), transcript delta, "
                    "sglang.unit.done, in turn")
        ->check(whole_number(0, 1000))
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
        ->check(whole_number(1, 1'000'000'000))
        ->capture_default_str();
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return run_mock(*s); }};
}

} // namespace pacer::cli

// `pacer mock`: the probe mock server as its own process. Its flags; checking and running them
// is server::run_probe_mock's (server/mock_process.hpp).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/server/mock_process.hpp>

#include <CLI/CLI.hpp>

namespace pacer::cli {

command add_mock_command(CLI::App& app) {
    auto s = std::make_shared<server::probe_mock_process_options>();
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
    return {sub, [s] { return server::run_probe_mock(*s); }};
}

} // namespace pacer::cli

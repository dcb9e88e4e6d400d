// `pacer llm-mock`: the OpenAI-compatible streaming LLM mock as its own process (docs/http.md).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/server/llm_mock.hpp>
#include <pacer/server/mock_process.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace pacer::cli {

namespace {

struct llm_mock_settings {
    server::llm_mock_options options;
    double ttft_ms = 20, itl_ms = 5, batch_cost_ms = 0;
    double pause_every_ms = 0, pause_ms = 0;
    std::string fault = "none";
    std::string fault_requests;
    std::string stats_output;
    bool dry_run = false;
};

duration from_ms(double ms) {
    return std::chrono::duration_cast<duration>(std::chrono::duration<double, std::milli>(ms));
}

int run_llm_mock(llm_mock_settings& s) {
    auto& o = s.options;
    o.ttft = from_ms(s.ttft_ms);
    o.itl = from_ms(s.itl_ms);
    o.batch_cost = from_ms(s.batch_cost_ms);
    if ((s.pause_every_ms > 0) != (s.pause_ms > 0) ||
        (s.pause_ms > 0 && s.pause_ms >= s.pause_every_ms))
        throw usage_error("--pause-ms and --pause-every-ms go together, the pause shorter than "
                          "its period");
    o.pause_every = from_ms(s.pause_every_ms);
    o.pause = from_ms(s.pause_ms);
    try {
        o.fault = server::parse_llm_fault(s.fault);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    if (!s.fault_requests.empty()) {
        try {
            o.fault_requests = server::session_set::parse(s.fault_requests);
        } catch (const std::invalid_argument&) {
            throw usage_error(
                fmt::format("--fault-requests must list request indices like 0,2,5-7 (got '{}')",
                            s.fault_requests));
        }
    }
    boost::asio::io_context io{1};
    const auto mock = server::check_llm_mock_process(io, o, s.stats_output);
    if (s.dry_run) {
        fmt::print("pacer llm-mock --dry-run: checked; nothing started, nothing written\n");
        fmt::print("  listen     {} (not bound by a dry run)\n",
                   o.port == 0 ? o.host + ", any free port" : fmt::format("{}:{}", o.host, o.port));
        fmt::print("  scheme     {}\n",
                   o.tls_cert.empty() ? std::string("http:// (plain TCP)")
                                      : fmt::format("https:// (TLS, certificate {})", o.tls_cert));
        fmt::print("  timing     first token {:g} ms, then one every {:g} ms, each + {:g} ms per "
                   "other request in flight\n",
                   s.ttft_ms, s.itl_ms, s.batch_cost_ms);
        if (s.pause_ms > 0)
            fmt::print("  pauses     {:g} ms out of every {:g} ms, no token leaves\n", s.pause_ms,
                       s.pause_every_ms);
        fmt::print("  admission  {}\n",
                   o.max_concurrency == 0
                       ? std::string("no limit")
                       : fmt::format("HTTP 503 over {} requests in flight", o.max_concurrency));
        fmt::print("  fault      {}{}\n", s.fault,
                   s.fault == "none"
                       ? std::string()
                       : " in requests " +
                             (s.fault_requests.empty() ? std::string("all") : s.fault_requests));
        fmt::print("  stats      {}\n", s.stats_output.empty()
                                            ? std::string("not written (no --stats-output)")
                                            : s.stats_output + " on SIGINT/SIGTERM");
        return runtime::exit_ok;
    }
    return server::run_llm_mock_process(io, *mock, o, s.stats_output);
}

} // namespace

command add_llm_mock_command(CLI::App& app) {
    auto s = std::make_shared<llm_mock_settings>();
    auto* sub = app.add_subcommand(
        "llm-mock",
        "OpenAI-compatible streaming LLM mock on http://HOST:PORT (https:// with --tls-cert and "
        "--tls-key; POST /v1/completions and "
        "/v1/chat/completions, SSE chunks, data: [DONE], usage with "
        "stream_options.include_usage): a time to first token and a per-token delay that grow "
        "with the requests in flight, HTTP 503 admission and fault modes, for pacer http. "
        "Prints 'listening on HOST:PORT' when ready; on SIGINT/SIGTERM writes --stats-output "
        "and exits 0. See docs/http.md.");
    sub->footer(server_exit_statuses);
    auto& o = s->options;
    o.port = 8000;
    sub->add_option("--host", o.host, "Address to listen on")->capture_default_str();
    sub->add_option("--port", o.port, "Port to listen on (0: any free port)")
        ->check(whole_number(0, 65535))
        ->capture_default_str();
    sub->add_option("--ttft-ms", s->ttft_ms,
                    "Time to first token: the first token leaves this long after the request")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--itl-ms", s->itl_ms, "Delay between consecutive tokens")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--batch-cost-ms", s->batch_cost_ms,
                    "Batch-capacity model: every token's delay (the first included) grows by "
                    "this per other request in flight when it is due")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--pause-ms", s->pause_ms,
                    "Periodic stall: for this long out of every --pause-every-ms (from the "
                    "start) no token leaves; a token due in a pause leaves when it ends")
        ->check(number_in(0, max_ms));
    sub->add_option("--pause-every-ms", s->pause_every_ms, "The period of --pause-ms")
        ->check(number_in(0, max_ms));
    sub->add_option("--max-concurrency", o.max_concurrency,
                    "Requests in flight before new ones get HTTP 503 (0: no limit)")
        ->check(whole_number(0, max_sessions))
        ->capture_default_str();
    sub->add_option("--max-tokens-default", o.default_max_tokens,
                    "Tokens generated when a request gives no max_tokens")
        ->check(whole_number(1, 1'000'000))
        ->capture_default_str();
    sub->add_option("--fault", s->fault,
                    "Fault of the chosen requests: server_error (HTTP 500), stall (the first "
                    "token, then nothing), malformed_sse (a data line that is not JSON after "
                    "the first token), disconnect (the connection closed half-way through the "
                    "tokens); none")
        ->capture_default_str();
    sub->add_option("--fault-requests", s->fault_requests,
                    "Generation requests the fault hits, by arrival order from 0, e.g. 0,2,5-7 "
                    "(default: all)");
    sub->add_option("--tls-cert", o.tls_cert,
                    "PEM certificate (chain): serve https:// (TLS) with it; needs --tls-key "
                    "(docs/http.md)")
        ->check(CLI::ExistingFile);
    sub->add_option("--tls-key", o.tls_key, "PEM private key of --tls-cert")
        ->check(CLI::ExistingFile);
    sub->add_option("--stats-output", s->stats_output,
                    "Where to write the stats JSON on exit (new file)");
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return run_llm_mock(*s); }};
}

} // namespace pacer::cli

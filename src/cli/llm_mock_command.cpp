// `pacer llm-mock`: the OpenAI-compatible streaming LLM mock as its own process (docs/http.md).
// Its flags; checking and running them is server::run_llm_mock's (server/mock_process.hpp).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/server/mock_process.hpp>

#include <CLI/CLI.hpp>

namespace pacer::cli {

command add_llm_mock_command(CLI::App& app) {
    auto s = std::make_shared<server::llm_mock_process_options>();
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
        ->check(whole_number(0, session::max_sessions))
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
    return {sub, [s] { return server::run_llm_mock(*s); }};
}

} // namespace pacer::cli

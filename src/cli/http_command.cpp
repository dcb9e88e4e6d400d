// `pacer http`: the options and which of them go together; the http module reads their values
// into an http::http_plan and prints the `--dry-run` plan (src/http/plan.cpp), and the open-loop
// streaming requests themselves are http::execute (src/http/http_job.cpp, docs/http.md).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/telemetry_options.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/http/http_job.hpp>
#include <pacer/http/plan.hpp>
#include <pacer/report/end_report.hpp>
#include <pacer/runtime/command_line.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/output_dir.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/telemetry/recorder.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pacer::cli {

namespace {

using http::http_plan;

struct http_settings : http::http_options {
    telemetry_settings telemetry; ///< --gpu-telemetry & co. (docs/telemetry.md)
    bool dry_run = false;
};

// The schedule's options that http adds to schedule::open_loop_of's rules.
void check_schedule_options(const http_settings& s) {
    if (s.find_capacity && s.arrivals.stages)
        throw bad_input("--find-capacity searches for one --rate: not with --stages");
}

// The server, the schedule, the prompts and the headers: the values read and checked by the
// http module (one line each when bad).
void resolve(const http_settings& s, http_plan& p) {
    http::resolve_server(s, p);
    check_schedule_options(s);
    http::resolve_schedule(s, p);
    p.synthetic = {s.input_len, s.output_len, s.range_ratio, s.arrivals.seed};
    if (!s.prompts_file.empty())
        p.prompt_file = http::read_prompts(s.prompts_file);
    http::add_headers(s.headers, s.api_key_env, p);
}

http_plan check(const http_settings& s) {
    http_plan p;
    resolve(s, p);
    const auto timeout = parse_duration(s.timeout);
    if (!timeout || timeout->count() <= 0)
        throw bad_input(
            fmt::format("--timeout '{}' is not a positive duration such as 60s", s.timeout));
    p.timeout = *timeout;
    if (!s.goodput.empty())
        p.slo = metrics::parse_goodput(s.goodput);
    if (s.find_capacity && p.slo.empty())
        throw bad_input("--find-capacity searches for the highest rate meeting --goodput: give "
                        "--goodput ttft:...,tpot:...,e2el:...");
    if (!s.find_capacity && (s.confirm > 0 || s.verify_repeats > 0))
        throw bad_input("--confirm and --verify-repeats shape the capacity search: add "
                        "--find-capacity");
    if (s.find_capacity && !s.schedule_file.empty())
        throw bad_input("--find-capacity varies the rate: it takes --rate and --requests or "
                        "--duration, not --schedule");
    p.output =
        s.output.empty() ? runtime::default_output_dir("http") : std::filesystem::path(s.output);
    if (std::filesystem::exists(p.output))
        throw bad_input(
            fmt::format("--output {} already exists; choose a new folder", p.output.string()));
    return p;
}

int run_http(const http_settings& s) {
    http::http_job job;
    job.plan = check(s);
    auto opened = telemetry::open_telemetry(s.telemetry, s.metrics_listen, s.dry_run);
    if (s.dry_run) {
        // The descriptors as the run checks them.
        http::print_dry_run(s, job.plan, opened.plan, http::check_descriptors(s, job.plan));
        return runtime::exit_ok;
    }
    job.options = s;
    job.telemetry = std::move(opened.recorder);
    job.listener = std::move(opened.listener);
    job.command_line = runtime::recorded_command_line({"-H", "--header"});
    job.end.report = [](const std::filesystem::path& dir) { return report::write_end_report(dir); };
    job.end.tables = [](const std::filesystem::path& dir, std::string_view format) {
        return report::write_end_tables(dir, format);
    };
    job.create_folder = [](const std::filesystem::path& dir) { runtime::create_output_dir(dir); };
    return runtime::exit_status(http::execute(job)); // bad_input: a probe's rate gives no schedule
}

// The options of group "Schedule": the arrivals, the shard and the cap.
void add_schedule_options(CLI::App& sub, http_settings& s) {
    const std::string group = sub.option_defaults()->get_group();
    sub.option_defaults()->group("Schedule");
    add_arrival_options(sub, s.arrivals);
    sub.add_option("-n,--requests,--count", s.arrivals.count,
                   "How many requests arrive (--count is the same, as in run and schedule)")
        ->check(whole_number(1, schedule::max_arrivals));
    sub.add_option("-d,--duration", s.arrivals.duration,
                   "Keep the arrivals within this time, e.g. 60s (with --requests: whichever "
                   "ends first)");
    sub.add_option("--schedule", s.schedule_file,
                   "Replay a saved schedule.json (as written next to every run)");
    sub.add_option("--shard", s.shard, "Run arrivals I, I+N, ... of the schedule (I/N)");
    sub.add_option("--max-concurrency", s.max_concurrency,
                   "Requests in flight at most; gates dispatch, never moves the schedule "
                   "(0: no cap)")
        ->check(whole_number(0, session::max_sessions))
        ->capture_default_str();
    sub.add_option("--cap-policy", s.cap_policy,
                   "When the cap binds: queue (wait; counted in latency) or drop")
        ->capture_default_str();
    sub.option_defaults()->group(group);
}

} // namespace

command add_http_command(CLI::App& app) {
    auto s = std::make_shared<http_settings>();
    auto* sub = app.add_subcommand(
        "http",
        "Open-loop streaming requests to an OpenAI-compatible LLM server (vLLM, SGLang, TGI, "
        "llama.cpp): a seeded arrival schedule that never moves, SSE over HTTP/1.1 keep-alive, "
        "TTFT/ITL/TPOT/E2E latency anchored to the schedule with the uncorrected view beside "
        "them, goodput, and the dispatch-lag verdict (exit 3 when the schedule was not kept). "
        "Writes requests.jsonl, summary.json, schedule.json and report.html (--no-report: "
        "none). See docs/http.md.");
    sub->footer("Exit status: 0 every request succeeded and the schedule was kept; 1 pacer "
                "itself failed (a file could not be written); 2 bad input (nothing written); 3 "
                "the client fell behind its schedule (the run measured the client); 4 requests "
                "failed or the server could not be reached; 130 interrupted by SIGINT/SIGTERM "
                "(the summary covers what ran until then).");
    sub->add_option("--base-url", s->base_url,
                    "Server, e.g. http://127.0.0.1:8000 or https://HOST (TLS: the system CA "
                    "store, or --ca-file)")
        ->required();
    sub->add_option("--endpoint", s->endpoint, "/v1/completions or /v1/chat/completions")
        ->capture_default_str();
    sub->add_option("--model", s->model, "Model name sent in every request")->required();
    add_schedule_options(*sub, *s);
    sub->add_option("--input-len", s->input_len, "Synthetic prompts: input tokens (words)")
        ->check(whole_number(1, 1'000'000))
        ->capture_default_str()
        ->group("Prompts");
    sub->add_option("--output-len", s->output_len, "max_tokens of each request")
        ->check(whole_number(1, 1'000'000))
        ->capture_default_str()
        ->group("Prompts");
    sub->add_option("--range-ratio", s->range_ratio,
                    "Synthetic prompts: lengths drawn uniformly within +/- this fraction")
        ->check(number_in(0, 0.999))
        ->capture_default_str()
        ->group("Prompts");
    sub->add_option("--prompts", s->prompts_file,
                    "JSONL prompt file, one {\"prompt\": \"...\", \"output_len\": N} per line, "
                    "used round-robin by arrival index")
        ->group("Prompts");
    sub->add_flag("--ignore-eos", s->ignore_eos, "Send ignore_eos: true (vLLM, SGLang)")
        ->group("Prompts");
    sub->add_option("--temperature", s->temperature, "Send this temperature")
        ->check(number_in(0, 100))
        ->group("Prompts");
    sub->add_option("-H,--header", s->headers, "Extra request header 'Name: value' (repeatable)");
    sub->add_option("--api-key-env", s->api_key_env,
                    "Send Authorization: Bearer with the key read from this environment "
                    "variable (never printed nor written)");
    sub->add_option("--ca-file", s->ca_file,
                    "https://: trust the CA certificates of this PEM file instead of the "
                    "system's CA store (docs/http.md)")
        ->check(CLI::ExistingFile);
    sub->add_flag("--insecure", s->insecure,
                  "https:// without verifying the server's certificate or name (said loudly "
                  "on stderr and in the summary; for test servers only)");
    sub->add_option("--timeout", s->timeout,
                    "Per-request deadline from dispatch, connect included, e.g. 60s")
        ->capture_default_str();
    sub->add_option("--goodput", s->goodput,
                    "SLOs in ms for request_goodput, e.g. ttft:500,tpot:50,e2el:2000 (TTFT and "
                    "E2EL from the schedule)");
    sub->add_option("-o,--output", s->output,
                    "Result folder; must not exist. Default: pacer-results/http-<UTC time>")
        ->check(non_empty_path());
    sub->add_flag("--find-capacity", s->find_capacity,
                  "Search the highest rate that keeps its schedule and meets --goodput (needed) "
                  "for --goodput-fraction of its requests: from --rate, double (or halve), then "
                  "bisect (the capacity search of pacer serve, over rates); one result folder "
                  "per probe and capacity.json")
        ->group("Capacity");
    sub->add_option("--goodput-fraction", s->goodput_fraction,
                    "--find-capacity: the share of requests that must meet --goodput")
        ->check(number_in(0, 1, true))
        ->capture_default_str()
        ->group("Capacity");
    sub->add_option("--capacity-steps", s->capacity_steps,
                    "--find-capacity: bisection steps after the bracket is found")
        ->check(whole_number(0, 20))
        ->capture_default_str()
        ->group("Capacity");
    sub->add_option("--confirm", s->confirm,
                    "--find-capacity: extra tries of a probe that fails; its rate fails only if "
                    "every try fails (as pacer serve's --confirm; 0: none)")
        ->check(whole_number(0, 100))
        ->capture_default_str()
        ->group("Capacity");
    sub->add_option("--verify-repeats", s->verify_repeats,
                    "--find-capacity: at the end, run the capacity and the first failing rate "
                    "this many times each; a capacity that fails one counts as failing (and the "
                    "other way round), and capacity.json says whether the boundary held (0: none)")
        ->check(whole_number(0, 100))
        ->capture_default_str()
        ->group("Capacity");
    add_progress_option(*sub, s->progress,
                        "elapsed and ETA, requests due/dispatched/in flight/done/failed (by kind), "
                        "dispatch lag p99 and TTFT p50 so far, the cap",
                        "the end");
    add_end_output_options(*sub, s->no_report, s->export_format);
    add_telemetry_options(*sub, s->telemetry, s->metrics_listen);
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return run_http(*s); }};
}

} // namespace pacer::cli

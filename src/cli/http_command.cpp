// `pacer http`: the options, their checks (an http::http_plan) and the `--dry-run` plan; the
// open-loop streaming requests themselves are http::execute (src/http/http_job.cpp,
// docs/http.md).

#include <pacer/cli/auto_report.hpp>
#include <pacer/cli/checks.hpp>
#include <pacer/cli/command_line.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/cli/telemetry_options.hpp>
#include <pacer/core/units.hpp>
#include <pacer/http/http_job.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/telemetry/recorder.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
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

bool valid_header_name(std::string_view name) {
    if (name.empty())
        return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) ||
              std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos))
            return false;
    return true;
}

// The server, its TLS trust and the request's fields.
void check_server(const http_settings& s, http_plan& p) {
    try {
        p.endpoint = transport::parse_http_url(s.base_url);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    // TLS: the trust settings of `pacer run`'s wss:// (docs/tls.md), one context per run.
    if (!p.endpoint.tls && (!s.ca_file.empty() || s.insecure))
        throw usage_error(fmt::format("{} is for https:// base URLs; this one is http://",
                                      s.insecure ? "--insecure" : "--ca-file"));
    if (s.insecure && !s.ca_file.empty())
        throw usage_error("--insecure verifies nothing, so --ca-file means nothing with it: "
                          "give one");
    if (p.endpoint.tls) {
        try {
            p.endpoint.tls_context = transport::make_tls_client_context(s.ca_file, s.insecure);
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
    }
    if (s.endpoint != "/v1/completions" && s.endpoint != "/v1/chat/completions")
        throw usage_error(fmt::format(
            "--endpoint must be /v1/completions or /v1/chat/completions (got '{}')", s.endpoint));
    if (s.model.empty())
        throw usage_error("--model must not be empty");
    p.target = p.endpoint.base_path + s.endpoint;
    p.request.model = s.model;
    p.request.chat = s.endpoint == "/v1/chat/completions";
    p.request.ignore_eos = s.ignore_eos;
    p.request.temperature = s.temperature;
}

// The schedule: a saved one, or (process, rate, burstiness, seed, requests/duration); the
// plan's own arrivals of it; the cap's policy.
void check_schedule(const http_settings& s, http_plan& p) {
    const bool asked = s.rate > 0 || !s.arrival.empty() || s.requests > 0 || !s.duration.empty() ||
                       s.burstiness || !s.stages.empty();
    if (!s.schedule_file.empty()) {
        if (asked)
            throw usage_error("--schedule replays a saved schedule: drop "
                              "--arrival/--rate/--stages/--burstiness/--requests/--duration");
        try {
            p.schedule = schedule::read_schedule_file(s.schedule_file);
        } catch (const std::exception& e) {
            throw usage_error(e.what());
        }
    } else {
        schedule::schedule_spec spec;
        const auto process =
            schedule::parse_arrival_process(s.arrival.empty() ? "poisson" : s.arrival);
        if (!process)
            throw usage_error(
                fmt::format("--arrival must be poisson, gamma or constant (got '{}')", s.arrival));
        if (!s.stages.empty()) {
            // The stages give the rate and the length; --requests may end them early.
            if (s.rate > 0 || !s.duration.empty())
                throw usage_error("--stages sets the rate and the length of the schedule: drop "
                                  "--rate and --duration");
            if (s.find_capacity)
                throw usage_error("--find-capacity searches for one --rate: not with --stages");
            try {
                spec.stages = schedule::parse_stages(s.stages);
            } catch (const std::invalid_argument& e) {
                throw usage_error(e.what());
            }
        } else if (s.rate <= 0) {
            throw usage_error("pacer http needs --rate R (requests per second), --stages or "
                              "--schedule FILE");
        } else if (s.requests == 0 && s.duration.empty()) {
            throw usage_error("pacer http needs --requests N or --duration D (or both)");
        }
        if (s.burstiness && *process != schedule::arrival_process::gamma)
            throw usage_error(
                fmt::format("--burstiness applies only to --arrival gamma (got --arrival {})",
                            to_string(*process)));
        spec.process = *process;
        spec.rate = s.rate;
        spec.burstiness = s.burstiness.value_or(1);
        spec.seed = s.seed;
        if (s.requests > 0)
            spec.count = s.requests;
        if (!s.duration.empty()) {
            const auto d = parse_duration(s.duration);
            if (!d || d->count() <= 0)
                throw usage_error(fmt::format(
                    "--duration '{}' is not a positive duration such as 30s or 2m", s.duration));
            spec.duration = *d;
        }
        try {
            schedule::validate(spec);
            p.schedule = {spec, schedule::make_schedule(spec), {}};
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
        p.schedule.sha256 = schedule::schedule_sha256(p.schedule.offsets);
    }
    if (p.schedule.offsets.empty())
        throw usage_error("the schedule has no arrivals");
    if (!s.shard.empty()) {
        p.shard = runtime::parse_shard(s.shard);
        if (!p.shard)
            throw usage_error(fmt::format("--shard '{}' must be I/N with 0 <= I < N", s.shard));
    }
    try {
        http::take_arrivals(p);
    } catch (const http::invalid_schedule& e) {
        throw usage_error(e.what());
    }
    const auto policy = session::parse_cap_policy(s.cap_policy);
    if (!policy)
        throw usage_error(
            fmt::format("--cap-policy must be queue or drop (got '{}')", s.cap_policy));
    p.policy = *policy;
}

// The prompts and the request headers.
void check_prompts(const http_settings& s, http_plan& p) {
    p.synthetic = {s.input_len, s.output_len, s.range_ratio, s.seed};
    if (!s.prompts_file.empty()) {
        std::optional<std::string> text;
        try {
            text = runtime::read_file_if_exists(s.prompts_file);
        } catch (const std::exception& e) {
            throw usage_error(e.what());
        }
        if (!text)
            throw usage_error(fmt::format("--prompts {} does not exist", s.prompts_file));
        try {
            p.prompt_file = session::parse_prompt_jsonl(*text, s.prompts_file);
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
    }

    // Headers: the API key comes from the environment and is never printed nor written.
    for (const auto& h : s.headers) {
        const auto colon = h.find(':');
        const std::string name = h.substr(0, colon);
        if (colon == std::string::npos || !valid_header_name(name))
            throw usage_error(fmt::format("--header '{}' must be 'Name: value'", name));
        std::string value = h.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        if (value.find_first_of("\r\n") != std::string::npos)
            throw usage_error(fmt::format("--header {} must be on one line", name));
        p.headers.emplace_back(name, value);
        p.header_names.push_back(name);
    }
    if (!s.api_key_env.empty()) {
        const char* key = std::getenv(s.api_key_env.c_str());
        if (!key || !*key)
            throw usage_error(
                fmt::format("--api-key-env {}: the variable is not set or empty", s.api_key_env));
        if (std::string_view(key).find_first_of("\r\n") != std::string_view::npos)
            throw usage_error(
                fmt::format("--api-key-env {}: the key must be on one line", s.api_key_env));
        p.headers.emplace_back("Authorization", std::string("Bearer ") + key);
        p.header_names.push_back("Authorization");
    }
}

http_plan check(const http_settings& s) {
    http_plan p;
    check_server(s, p);
    check_schedule(s, p);
    check_prompts(s, p);
    const auto timeout = parse_duration(s.timeout);
    if (!timeout || timeout->count() <= 0)
        throw usage_error(
            fmt::format("--timeout '{}' is not a positive duration such as 60s", s.timeout));
    p.timeout = *timeout;
    if (!s.goodput.empty()) {
        try {
            p.slo = metrics::parse_goodput(s.goodput);
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
    }
    if (s.find_capacity && p.slo.empty())
        throw usage_error("--find-capacity searches for the highest rate meeting --goodput: give "
                          "--goodput ttft:...,tpot:...,e2el:...");
    if (s.find_capacity && !s.schedule_file.empty())
        throw usage_error("--find-capacity varies the rate: it takes --rate and --requests or "
                          "--duration, not --schedule");
    p.output = s.output.empty() ? default_output_dir("http") : std::filesystem::path(s.output);
    if (std::filesystem::exists(p.output))
        throw usage_error(
            fmt::format("--output {} already exists; choose a new folder", p.output.string()));
    return p;
}

void print_plan(const http_settings& s, const http_plan& p) {
    const auto& spec = p.schedule.spec;
    fmt::print("pacer http --dry-run: checked; nothing sent, nothing written\n");
    fmt::print("  server     POST {}{} (model {}), streaming, timeout {:g} s\n", p.endpoint.url(),
               s.endpoint, s.model, std::chrono::duration<double>(p.timeout).count());
    if (p.endpoint.tls)
        fmt::print("  tls        {}\n", http::tls_words(s));
    fmt::print("  schedule   {} arrivals ({} at {}, seed {}), sha256 {}\n",
               p.schedule.offsets.size(), to_string(spec.process), schedule::rate_text(spec),
               spec.seed, p.schedule.sha256);
    if (p.shard)
        fmt::print("  shard      {}/{}: {} arrivals\n", p.shard->index, p.shard->count,
                   p.offsets.size());
    fmt::print("  cap        {}\n",
               s.max_concurrency == 0
                   ? std::string("none")
                   : fmt::format("{} in flight, policy {}", s.max_concurrency, s.cap_policy));
    if (p.prompt_file)
        fmt::print("  prompts    {} ({} lines), output {} tokens unless a line says\n",
                   s.prompts_file, p.prompt_file->size(), s.output_len);
    else
        fmt::print("  prompts    synthetic, input {} and output {} tokens (range ratio {:g}, "
                   "seed {}; 1 word = 1 token)\n",
                   s.input_len, s.output_len, s.range_ratio, s.seed);
    std::string names;
    for (const auto& n : p.header_names)
        names += (names.empty() ? "" : ", ") + n;
    fmt::print("  headers    {}{}\n", names.empty() ? std::string("none") : names,
               s.api_key_env.empty() ? std::string()
                                     : fmt::format(" (Authorization from ${})", s.api_key_env));
    if (!p.slo.empty())
        fmt::print("  goodput    {}\n", s.goodput);
    fmt::print("  output     {}/ (requests.jsonl, summary.json, schedule.json{}{})\n",
               p.output.string(), s.no_report ? "" : ", report.html",
               s.export_format.empty() ? "" : ", tables-" + s.export_format + "/");
}

int run_http(const http_settings& s) {
    http::http_job job;
    job.plan = check(s);
    auto opened = open_telemetry(s.telemetry, s.metrics_listen, s.dry_run);
    if (s.dry_run) {
        const auto descriptors = http::check_descriptors(s, job.plan); // as the run checks them
        print_plan(s, job.plan);
        for (const auto& line : opened.plan)
            fmt::print("  telemetry  {}\n", line);
        fmt::print("  descriptors about {} needed (one per request in flight, and 64)\n",
                   descriptors);
        if (s.find_capacity)
            fmt::print("  capacity   search from {:g}/s: double (or halve) then {} bisection(s); a "
                       "probe passes when it keeps its schedule and {:g} of its requests meet "
                       "--goodput; one folder per probe and capacity.json\n",
                       job.plan.schedule.spec.rate, s.capacity_steps, s.goodput_fraction);
        return runtime::exit_ok;
    }
    job.options = s;
    job.telemetry = std::move(opened.recorder);
    job.command_line = recorded_command_line({"-H", "--header"});
    job.end.report = [](const std::filesystem::path& dir) { return write_end_report(dir); };
    job.end.tables = [](const std::filesystem::path& dir, std::string_view format) {
        return write_end_tables(dir, format);
    };
    job.create_folder = [](const std::filesystem::path& dir) { create_output_dir(dir); };
    try {
        return runtime::exit_status(http::execute(job));
    } catch (const http::invalid_schedule& e) {
        throw usage_error(e.what()); // a probe's rate gives no schedule
    }
}

// The options of group "Schedule": the arrivals, the shard and the cap.
void add_schedule_options(CLI::App& sub, http_settings& s) {
    sub.add_option("--arrival", s.arrival, "poisson (default), gamma or constant")
        ->group("Schedule");
    sub.add_option("--rate", s.rate, "Requests per second (mean)")
        ->check(number_in(0, 1e9, true))
        ->group("Schedule");
    sub.add_option("--stages", s.stages,
                   "The rate in stages instead of --rate and --duration: DURATION:RATE/s "
                   "(constant) or DURATION:FROM-TO/s (a linear ramp), comma-separated, e.g. "
                   "30s:10/s,2m:10-50/s,30s:50/s; --requests may end it early (docs/http.md)")
        ->group("Schedule");
    sub.add_option("--burstiness", s.burstiness,
                   "gamma: coefficient of variation of the gaps (1 = Poisson; vLLM's "
                   "--burstiness is 1/B^2)")
        ->check(number_in(0.001, 1000))
        ->group("Schedule");
    sub.add_option("--seed", s.seed, "Schedule and prompt seed")
        ->check(whole_number(0, UINT64_MAX))
        ->capture_default_str()
        ->group("Schedule");
    sub.add_option("-n,--requests,--count", s.requests,
                   "How many requests arrive (--count is the same, as in run and schedule)")
        ->check(whole_number(1, schedule::max_arrivals))
        ->group("Schedule");
    sub.add_option("-d,--duration", s.duration,
                   "Keep the arrivals within this time, e.g. 60s (with --requests: whichever "
                   "ends first)")
        ->group("Schedule");
    sub.add_option("--schedule", s.schedule_file,
                   "Replay a saved schedule.json (as written next to every run)")
        ->group("Schedule");
    sub.add_option("--shard", s.shard, "Run arrivals I, I+N, ... of the schedule (I/N)")
        ->group("Schedule");
    sub.add_option("--max-concurrency", s.max_concurrency,
                   "Requests in flight at most; gates dispatch, never moves the schedule "
                   "(0: no cap)")
        ->check(whole_number(0, max_sessions))
        ->capture_default_str()
        ->group("Schedule");
    sub.add_option("--cap-policy", s.cap_policy,
                   "When the cap binds: queue (wait; counted in latency) or drop")
        ->capture_default_str()
        ->group("Schedule");
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
                  "Search the highest rate that keeps its schedule and meets --goodput for "
                  "--goodput-fraction of its requests: from --rate, double (or halve), then "
                  "bisect; one result folder per probe and capacity.json")
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

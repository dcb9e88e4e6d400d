// `pacer http`: open-loop streaming requests to an OpenAI-compatible LLM server
// (docs/http.md). The schedule, the concurrency cap and the dispatch-lag verdict are those of
// the open-loop module (docs/open-loop.md); each request streams SSE over a keep-alive pool.

#include <pacer/cli/auto_report.hpp>
#include <pacer/cli/checks.hpp>
#include <pacer/cli/command_line.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/http_progress.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/cli/telemetry_options.hpp>
#include <pacer/core/awaitable.hpp>
#include <pacer/core/json_text.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/llm.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/runtime/shard.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/session/llm_prompts.hpp>
#include <pacer/session/open_loop.hpp>
#include <pacer/telemetry/metrics_listener.hpp>
#include <pacer/transport/http_client.hpp>
#include <pacer/transport/openai_stream.hpp>
#include <pacer/transport/sse.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace pacer::cli {

namespace {

namespace asio = boost::asio;
namespace json = boost::json;

struct http_settings {
    std::string base_url;
    std::string endpoint = "/v1/completions";
    std::string model;
    std::string arrival;
    double rate = 0;
    std::string stages;
    std::optional<double> burstiness;
    std::uint64_t seed = 0;
    std::uint64_t requests = 0;
    std::string duration;
    std::size_t max_concurrency = 0;
    std::string cap_policy = "queue";
    std::string schedule_file;
    std::string shard;
    std::uint64_t input_len = 128;
    std::uint64_t output_len = 128;
    double range_ratio = 0;
    std::string prompts_file;
    bool ignore_eos = false;
    std::optional<double> temperature;
    std::vector<std::string> headers;
    std::string api_key_env;
    std::string ca_file;
    bool insecure = false;
    std::string timeout = "5m";
    std::string goodput;
    std::string output;
    bool find_capacity = false;
    double goodput_fraction = 0.95;
    std::size_t capacity_steps = 4;
    bool dry_run = false;
    std::string progress = "auto";
    bool no_report = false;
    std::string export_format;    ///< --export csv|jsonl: the tables at the end ("": none)
    telemetry_settings telemetry; ///< --gpu-telemetry & co. (docs/telemetry.md)
    std::string metrics_listen;   ///< --metrics-listen: the live totals, served
};

// Everything checked, ready to run.
struct http_plan {
    transport::http_endpoint endpoint;
    std::string target;
    session::request_options request;
    schedule::schedule_document schedule;
    std::optional<runtime::shard> shard;
    std::vector<std::size_t> indices; // global arrival index of each local arrival
    std::vector<std::chrono::nanoseconds> offsets;
    session::cap_policy policy = session::cap_policy::queue;
    std::optional<std::vector<session::prompt_file_entry>> prompt_file;
    session::synthetic_prompts synthetic;
    transport::header_list headers;
    std::vector<std::string> header_names; // for the record: never the values
    std::chrono::nanoseconds timeout{};
    metrics::goodput_slo slo;
    std::filesystem::path output;
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

// The plan's own arrivals of its schedule: all, or those of its shard.
void take_arrivals(http_plan& p) {
    p.indices.clear();
    p.offsets.clear();
    const std::size_t first = p.shard ? p.shard->index : 0, step = p.shard ? p.shard->count : 1;
    for (std::size_t i = first; i < p.schedule.offsets.size(); i += step) {
        p.indices.push_back(i);
        p.offsets.push_back(p.schedule.offsets[i]);
    }
    if (p.indices.empty())
        throw usage_error(fmt::format("shard {}/{} gets no arrival of the schedule's {}", first,
                                      step, p.schedule.offsets.size()));
}

http_plan check(const http_settings& s) {
    http_plan p;
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

    // The schedule: a saved one, or (process, rate, burstiness, seed, requests/duration).
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
    take_arrivals(p);
    const auto policy = session::parse_cap_policy(s.cap_policy);
    if (!policy)
        throw usage_error(
            fmt::format("--cap-policy must be queue or drop (got '{}')", s.cap_policy));
    p.policy = *policy;

    // Prompts.
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

// How the server's certificate is checked, in words; --insecure said loudly.
std::string tls_words(const http_settings& s) {
    if (s.insecure)
        return "https:// with --insecure: WARNING, the server's certificate was NOT verified";
    return fmt::format("https://, certificate verified against {}",
                       s.ca_file.empty() ? std::string("the system CA store") : s.ca_file);
}

session::prompt prompt_for(const http_plan& p, std::size_t global_index) {
    return p.prompt_file
               ? session::make_file_prompt(*p.prompt_file, global_index, p.synthetic.output_len)
               : session::make_synthetic_prompt(p.synthetic, global_index);
}

void print_plan(const http_settings& s, const http_plan& p) {
    const auto& spec = p.schedule.spec;
    fmt::print("pacer http --dry-run: checked; nothing sent, nothing written\n");
    fmt::print("  server     POST {}{} (model {}), streaming, timeout {:g} s\n", p.endpoint.url(),
               s.endpoint, s.model, std::chrono::duration<double>(p.timeout).count());
    if (p.endpoint.tls)
        fmt::print("  tls        {}\n", tls_words(s));
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

// One request: streams the answer, records every moment and any error as data.
awaitable<void> one_request(transport::http_pool& pool, const http_plan& plan,
                            metrics::llm_request& r) {
    const auto pr = prompt_for(plan, r.index);
    r.input_len = pr.input_len;
    r.output_len = pr.output_len;
    // One arrival time per token asked (capped: a server may stop early).
    r.token_times.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(pr.output_len, 256)));
    std::string body = session::request_body(plan.request, pr);
    transport::sse_parser parser;
    std::vector<transport::sse_event> events;
    bool done = false;
    transport::http_body_sink sink;
    sink.on_head = [&](unsigned status, time_point t) {
        r.first_byte = t;
        r.status = status;
    };
    sink.on_data = [&](std::string_view bytes, time_point t) {
        events.clear();
        const bool fed = parser.feed(bytes, events);
        for (const auto& e : events) {
            if (done)
                break; // anything after [DONE] is ignored
            const auto c = transport::read_openai_chunk(e.data);
            if (!c.malformed.empty()) {
                r.error = "malformed_sse";
                r.error_message = c.malformed;
                return false;
            }
            if (!c.server_error.empty()) {
                r.error = "server_error";
                r.error_message = c.server_error;
                return false;
            }
            if (c.done) {
                done = true;
                continue;
            }
            if (c.has_text) {
                if (!r.first_token)
                    r.first_token = t;
                r.token_times.push_back(t);
            }
            if (c.usage) {
                r.usage_prompt_tokens = c.usage->prompt_tokens;
                r.usage_completion_tokens = c.usage->completion_tokens;
            }
        }
        if (!fed) {
            r.error = "malformed_sse";
            r.error_message = parser.error();
            return false;
        }
        return true;
    };
    const auto ex = co_await pool.post_stream(plan.target, std::move(body), plan.headers,
                                              clock::now() + plan.timeout, sink);
    r.completed = clock::now();
    r.connect_s = ex.connect_s;
    r.tls_handshake_s = ex.tls_s;
    switch (ex.error) {
    case transport::http_error::none:
        if (!done) {
            r.error = "malformed_sse";
            r.error_message = "the stream ended without data: [DONE]";
        }
        break;
    case transport::http_error::connect:
        r.error = "connect";
        r.error_message = ex.message;
        break;
    case transport::http_error::status:
        r.error = "http_status";
        r.error_message = ex.message;
        break;
    case transport::http_error::timeout:
        r.error = "timeout";
        r.error_message = "no complete answer within --timeout";
        break;
    case transport::http_error::disconnect:
        r.error = "disconnect";
        r.error_message = ex.message;
        break;
    case transport::http_error::aborted:
        break; // the sink said why
    }
}

// When no request got an answer and the most frequent error is a connect failure (refused,
// unresolvable, a TLS handshake that failed), its message; otherwise nullopt.
std::optional<std::string> unreachable(const std::vector<metrics::llm_request>& records) {
    std::map<std::string, std::size_t> reasons;
    for (const auto& r : records) {
        if (r.first_byte)
            return std::nullopt;
        if (r.error == "connect")
            ++reasons[r.error_message];
    }
    if (reasons.empty())
        return std::nullopt;
    return std::max_element(reasons.begin(), reasons.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
}

// What one run found.
struct run_outcome {
    bool kept = false;
    bool unreachable = false; // no request reached the server: nothing was measured
    bool interrupted = false;
    std::uint64_t failed = 0;
    std::uint64_t good = 0; // requests meeting every SLO
    std::size_t scheduled = 0;
};

// Runs the plan's arrivals once and writes the result folder `out` (created here).
// The descriptors a run of `plan` needs, checked (runtime::ensure_descriptors: one line, exit 2,
// when the limit is too low), by the run and by its dry run alike. One socket per request in
// flight: at most the arrivals within one --timeout (a request lives no longer), and at most
// --max-concurrency.
std::size_t check_descriptors(const http_settings& s, const http_plan& plan) {
    std::size_t in_flight = schedule::peak_in_flight(plan.offsets, plan.timeout);
    if (s.max_concurrency > 0)
        in_flight = std::min(in_flight, s.max_concurrency);
    runtime::ensure_descriptors(in_flight + 64);
    return in_flight + 64;
}

// The telemetry of a run or a capacity search: started (telemetry.jsonl, then the idle
// baseline) in the first folder a run creates, or in the search's folder before its probes.
struct http_telemetry {
    std::shared_ptr<telemetry::recorder> recorder; // nullptr: none asked
    bool search = false; // a capacity search: sampling goes on across its probes
    bool started = false;

    void start(const std::filesystem::path& dir) {
        if (!recorder || started)
            return;
        recorder->start(dir / "telemetry.jsonl");
        recorder->measure_idle_baseline(); // before the first request
        started = true;
    }
};

// What watches a run or a capacity search as it goes: the progress line and `--metrics-listen`
// (both read the same relaxed atomic totals from a thread of their own), and the offered rate
// of the run or probe under way.
struct http_watch {
    http_progress_reporter progress;
    bool listening = false;
    std::atomic<double> offered_rate{0};

    explicit http_watch(const http_settings& s)
        : progress(run::resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1)
                       .value_or(run::progress_mode::off)),
          listening(!s.metrics_listen.empty()) {}
    bool counting() const { return progress.on() || listening; }
};

run_outcome execute(const http_settings& s, const http_plan& plan, const std::filesystem::path& out,
                    http_telemetry& telemetry, http_watch& watch) {
    check_descriptors(s, plan);
    std::vector<metrics::llm_request> records(plan.offsets.size());
    for (std::size_t i = 0; i < records.size(); ++i)
        records[i].index = plan.indices[i];

    asio::io_context io{1};
    if (s.insecure) // said on stderr before anything is sent, and again in the summary
        fmt::print(stderr, "pacer: WARNING: --insecure: the server's certificate is NOT "
                           "verified\n");
    transport::http_pool pool(io.get_executor(), plan.endpoint);
    session::open_loop_options options;
    options.max_concurrency = s.max_concurrency;
    options.policy = plan.policy;
    // The live line: its own thread, reading the dispatcher's and the requests' relaxed atomic
    // totals. Its ETA is the last arrival; the answers still in flight come on top.
    auto& progress = watch.progress;
    progress.begin("", plan.offsets, s.max_concurrency, to_seconds(plan.offsets.back()));
    const double span_s = to_seconds(plan.offsets.back());
    watch.offered_rate.store(plan.schedule.spec.rate > 0 ? plan.schedule.spec.rate
                             : span_s > 0 ? static_cast<double>(plan.offsets.size()) / span_s
                                          : 0.0);
    http_live* live = watch.counting() ? &progress.requests() : nullptr;
    if (watch.counting())
        options.live = &progress.dispatch();
    session::open_loop_result result;
    std::exception_ptr failure;
    asio::cancellation_signal cancel;
    // Signals are caught before the folder appears: a SIGINT from then on ends the run cleanly.
    asio::signal_set signals(io, SIGINT, SIGTERM);
    create_output_dir(out);
    telemetry.start(out);
    bool interrupted = false;
    signals.async_wait([&](boost::system::error_code ec, int) {
        if (ec)
            return;
        interrupted = true;
        cancel.emit(asio::cancellation_type::terminal);
    });
    // Each request counts its end in the live totals (when the line is on).
    const auto request = [&](std::size_t i, time_point scheduled) -> awaitable<void> {
        return observe_request(one_request(pool, plan, records[i]), records[i], scheduled, live);
    };
    asio::co_spawn(io, session::run_open_loop(plan.offsets, options, request),
                   asio::bind_cancellation_slot(
                       cancel.slot(), [&](std::exception_ptr e, session::open_loop_result r) {
                           failure = e;
                           result = std::move(r);
                           signals.cancel();
                           pool.close_idle();
                       }));
    io.run();
    const double end_s = to_seconds(clock::now()); // the last request's end
    progress.end();                                // the terminal line is cleared before the table
    if (failure)
        std::rethrow_exception(failure);

    for (std::size_t i = 0; i < records.size() && i < result.records.size(); ++i) {
        const auto& o = result.records[i];
        records[i].scheduled = o.scheduled;
        records[i].dispatched = o.dispatched;
        records[i].dropped = o.dropped;
    }
    json::object summary = metrics::llm_summary(records, result.start, plan.slo);
    // The verdict rule of `pacer run`'s open loop (p99 <= 5 ms, max <= 80 ms).
    json::object open_loop =
        session::open_loop_summary(result, session::client_schedule_thresholds);
    const bool kept = open_loop["schedule_kept"].as_bool();
    if (!plan.schedule.spec.stages.empty()) {
        // A request that ended with an error (HTTP status, timeout) is no completion here.
        auto staged = result;
        for (std::size_t i = 0; i < records.size() && i < staged.records.size(); ++i)
            staged.records[i].failed = staged.records[i].failed || !records[i].error.empty();
        open_loop["stages"] = schedule::stage_rows(staged, plan.schedule.spec.stages);
    }
    summary["schedule_kept"] = kept;
    summary["open_loop"] = std::move(open_loop);
    const auto& spec = plan.schedule.spec;
    summary["schedule"] = json::object{
        {"arrival", to_string(spec.process)},
        {"rate", spec.stages.empty() ? json::value(spec.rate) : json::value(nullptr)},
        {"stages", spec.stages.empty() ? json::value(nullptr)
                                       : json::value(schedule::to_string(spec.stages))},
        {"burstiness", spec.burstiness},
        {"seed", spec.seed},
        {"arrivals", plan.schedule.offsets.size()},
        {"sha256", plan.schedule.sha256},
        {"shard", plan.shard
                      ? json::value(fmt::format("{}/{}", plan.shard->index, plan.shard->count))
                      : json::value(nullptr)}};
    json::array header_names;
    for (const auto& n : plan.header_names)
        header_names.emplace_back(n);
    summary["config"] = json::object{
        {"base_url", plan.endpoint.url()},
        {"endpoint", s.endpoint},
        {"model", s.model},
        {"prompts", plan.prompt_file ? json::value(s.prompts_file) : json::value("synthetic")},
        {"input_len", s.input_len},
        {"output_len", s.output_len},
        {"range_ratio", s.range_ratio},
        {"ignore_eos", s.ignore_eos},
        {"temperature", s.temperature ? json::value(*s.temperature) : json::value(nullptr)},
        {"timeout_s", std::chrono::duration<double>(plan.timeout).count()},
        {"header_names", std::move(header_names)}};
    auto connect_times = pool.connect_times(), tls_times = pool.tls_times(); // summarize sorts
    summary["connections"] =
        json::object{{"opened", pool.connections_opened()},
                     {"reused", pool.connections_reused()},
                     {"connect_s", to_json(summarize(connect_times, protocol_fractions))}};
    if (plan.endpoint.tls)
        summary["connections"].as_object()["tls_handshake_s"] =
            to_json(summarize(tls_times, protocol_fractions));
    summary["tls"] = json::object{
        {"enabled", plan.endpoint.tls},
        {"insecure", s.insecure},
        {"ca_file", s.ca_file.empty() ? json::value(nullptr) : json::value(s.ca_file)}};
    summary["interrupted"] = interrupted || result.interrupted;
    summary["command"] = "http";
    summary["command_line"] = recorded_command_line({"-H", "--header"});
    if (char host[256] = {}; ::gethostname(host, sizeof host - 1) == 0)
        summary["host"] = host;
    if (telemetry.recorder) {
        // The window: the schedule's origin to the last request's end; per successful request
        // (completed without error), docs/telemetry.md.
        const double start_s = to_seconds(result.start);
        if (!telemetry.search)
            telemetry.recorder->stop(); // a last sample after the last request's end
        auto t = telemetry.recorder->window(start_s, std::max(end_s, start_s),
                                            {{}, {}, summary.at("completed").to_number<double>()});
        t["window_definition"] = "the schedule's origin to the last request's end, on pacer's "
                                 "clock (CLOCK_MONOTONIC)";
        t["requests_definition"] = "requests completed without error (summary `completed`)";
        summary["telemetry"] = std::move(t);
    }

    std::string lines;
    for (const auto& r : records)
        lines += json_text(metrics::llm_request_json(r, result.start)) + "\n";
    runtime::write_new_file(out / "requests.jsonl", lines);
    runtime::write_new_file(out / "schedule.json",
                            schedule::to_json(plan.schedule.spec, plan.schedule.offsets));
    runtime::write_new_file(out / "summary.json", json_text(summary) + "\n");
    std::optional<std::filesystem::path> report, tables;
    if (!s.no_report)
        report = write_end_report(out);
    if (!s.export_format.empty())
        tables = write_end_tables(out, s.export_format);

    const auto num = [&](const char* k) { return summary.at(k).to_number<double>(); };
    const auto failed = summary.at("failed").to_number<std::uint64_t>();
    fmt::print("pacer http: {} requests, {} completed, {} failed, {} dropped in {:.3f} s\n",
               records.size(), summary.at("completed").to_number<std::uint64_t>(), failed,
               summary.at("dropped").to_number<std::uint64_t>(), num("duration"));
    fmt::print("  request throughput {:.2f}/s, output {:.1f} tok/s\n", num("request_throughput"),
               num("output_throughput"));
    // A latency no request has (every one failed) is "–", never 0.
    const auto latency = [&](const char* label, const char* name, const char* anchor) {
        std::string line = fmt::format("  {} ms ", label);
        for (const char* stat : {"mean", "std", "median", "p90", "p95", "p99"}) {
            const auto& v = summary.at(fmt::format("{}_{}_ms", stat, name));
            line += fmt::format(" {} {}", stat,
                                v.is_number() ? fmt::format("{:.2f}", v.to_number<double>())
                                              : std::string("–"));
        }
        fmt::print("{}{}\n", line, anchor);
    };
    latency("TTFT", "ttft", " (from the schedule)");
    latency("TPOT", "tpot", "");
    latency("ITL ", "itl", "");
    latency("E2EL", "e2el", " (from the schedule)");
    if (!plan.slo.empty())
        fmt::print("  goodput  {:.2f} requests/s\n", num("request_goodput"));
    if (const auto* t = summary.if_contains("telemetry")) {
        const auto& o = t->as_object();
        const auto val = [&](const char* k, const char* unit) {
            const auto& v = o.at(k);
            return v.is_number() ? fmt::format("{:.4g} {}", v.to_number<double>(), unit)
                                 : std::string("–");
        };
        fmt::print("  energy   {} per successful request ({} over {:.2f} s, mean {}, peak {}; "
                   "telemetry.jsonl: {} samples)\n",
                   val("j_per_request", "J"), val("energy_j", "J"),
                   o.at("window").at("duration_s").to_number<double>(), val("mean_power_w", "W"),
                   val("peak_power_w", "W"), o.at("samples").to_number<std::uint64_t>());
    }
    // The failed requests' errors, as `pacer run` prints its sessions': by kind, then one
    // message of each kind.
    std::vector<std::pair<std::string, std::size_t>> kinds;
    std::map<std::string, std::string> example;
    for (const auto& r : records) {
        if (r.error.empty())
            continue;
        auto k = std::find_if(kinds.begin(), kinds.end(),
                              [&](const auto& x) { return x.first == r.error; });
        if (k == kinds.end())
            kinds.emplace_back(r.error, 1);
        else
            ++k->second;
        if (example[r.error].empty())
            example[r.error] = r.error_message.empty() ? r.error : r.error_message;
    }
    std::stable_sort(kinds.begin(), kinds.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string by_kind;
    for (const auto& [kind, n] : kinds)
        by_kind += fmt::format("{}{} {} request(s)", by_kind.empty() ? "" : ", ", kind, n);
    if (!by_kind.empty())
        fmt::print("  errors   by kind: {}\n", by_kind);
    for (const auto& [kind, n] : kinds)
        fmt::print("  error    {} ({} request(s)): {}\n", kind, n, example[kind]);
    const auto unreached = unreachable(records);
    // A server nobody reached is the finding; the client's timing of requests that went nowhere
    // is not a verdict on anything (as `pacer serve` judges an unreachable level).
    fmt::print("  schedule {}\n", unreached ? "not judged: no request reached the server"
                                  : kept    ? "kept (dispatch lag within bounds)"
                                            : "NOT kept: the client fell behind (exit 3)");
    if (plan.endpoint.tls) {
        std::string line = tls_words(s);
        if (!pool.tls_times().empty()) {
            const auto d = summarize(tls_times, protocol_fractions);
            line += fmt::format("; TLS handshake p50 {:.1f} ms p99 {:.1f} ms over {} connection(s)",
                                *d.at(0.50) * 1e3, *d.at(0.99) * 1e3, pool.tls_times().size());
        }
        fmt::print("  tls      {}\n", line);
    }
    if (unreached)
        fmt::print(stderr, "pacer: cannot reach {}: {} (no request reached the server)\n",
                   plan.endpoint.url(), *unreached);
    fmt::print("  results  {}{}\n", out.string(), report ? ", " + report->string() : "");
    if (tables)
        fmt::print("  tables   {}\n", tables->string());
    // As `pacer run`, `serve` and `record` say it: the figures above are a part of the run.
    if (interrupted || result.interrupted)
        fmt::print("  INTERRUPTED by a signal: the summary covers the arrivals dispatched until "
                   "then\n");

    run_outcome o;
    o.kept = kept;
    o.unreachable = unreached.has_value();
    o.interrupted = interrupted || result.interrupted;
    o.failed = failed;
    o.good = summary.contains("goodput_requests")
                 ? summary.at("goodput_requests").to_number<std::uint64_t>()
                 : 0;
    o.scheduled = records.size();
    return o;
}

// --find-capacity: the highest rate whose run keeps its schedule and meets the SLOs for
// `goodput_fraction` of its requests. From --rate, double while probes pass (or halve while they
// fail), then bisect `capacity_steps` times. Each probe is a whole run of its own folder.
int find_capacity(const http_settings& s, http_plan plan, http_telemetry& telemetry,
                  http_watch& watch) {
    create_output_dir(plan.output);
    telemetry.start(plan.output); // one baseline and one telemetry.jsonl for every probe
    json::array probes;
    std::optional<double> pass, fail;
    bool client_limited = false, interrupted = false, unreachable_server = false;
    // A probe's verdict, or nullopt when the rate gives no arrival in --duration (halving has
    // gone below one request per run): the search cannot go lower.
    const auto probe = [&](double rate) -> std::optional<bool> {
        auto spec = plan.schedule.spec;
        spec.rate = rate;
        try {
            schedule::validate(spec);
            plan.schedule = {spec, schedule::make_schedule(spec), {}};
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
        if (plan.schedule.offsets.empty()) {
            fmt::print("probe {}: {:g} requests/s gives no arrival: the search stops here\n",
                       probes.size() + 1, rate);
            return std::nullopt;
        }
        plan.schedule.sha256 = schedule::schedule_sha256(plan.schedule.offsets);
        take_arrivals(plan);
        const auto dir =
            plan.output / fmt::format("probe-{:02}-rate-{:g}", probes.size() + 1, rate);
        fmt::print("probe {}: {:g} requests/s\n", probes.size() + 1, rate);
        const run_outcome o = execute(s, plan, dir, telemetry, watch);
        const double fraction =
            o.scheduled ? static_cast<double>(o.good) / static_cast<double>(o.scheduled) : 0;
        const bool ok = o.kept && !o.interrupted && fraction >= s.goodput_fraction;
        client_limited = client_limited || (!o.kept && !o.unreachable);
        unreachable_server = unreachable_server || o.unreachable;
        interrupted = interrupted || o.interrupted;
        probes.push_back(json::object{{"rate", rate},
                                      {"schedule_kept", o.kept},
                                      {"goodput_fraction", fraction},
                                      {"failed", o.failed},
                                      {"passed", ok},
                                      {"folder", dir.filename().string()}});
        if (ok)
            pass = pass ? std::max(*pass, rate) : rate;
        else
            fail = fail ? std::min(*fail, rate) : rate;
        return ok;
    };
    double rate = plan.schedule.spec.rate;
    const bool first = probe(rate).value_or(false);
    for (int i = 0; i < 10 && !interrupted && !unreachable_server; ++i) {
        if ((first && fail) || (!first && pass))
            break;
        rate = first ? rate * 2 : rate / 2;
        if (rate > schedule::max_rate || !probe(rate))
            break;
    }
    for (std::size_t i = 0;
         i < s.capacity_steps && pass && fail && !interrupted && !unreachable_server; ++i)
        probe((*pass + *fail) / 2);

    json::object doc;
    doc["capacity_rps"] = pass ? json::value(*pass) : json::value(nullptr);
    doc["first_failing_rps"] = fail ? json::value(*fail) : json::value(nullptr);
    doc["criterion"] = json::object{
        {"goodput", s.goodput}, {"goodput_fraction", s.goodput_fraction}, {"schedule_kept", true}};
    doc["client_limited"] = client_limited;
    doc["interrupted"] = interrupted;
    doc["unreachable"] = unreachable_server;
    doc["probes"] = std::move(probes);
    doc["command"] = "http";
    doc["command_line"] = recorded_command_line({"-H", "--header"});
    runtime::write_new_file(plan.output / "capacity.json", json_text(doc) + "\n");
    // The search's own page (the probes; each probe's folder has its own).
    if (!s.no_report)
        if (const auto report = write_end_report(plan.output))
            fmt::print("  report   {}\n", report->string());
    if (!s.export_format.empty())
        if (const auto tables = write_end_tables(plan.output, s.export_format))
            fmt::print("  tables   {}\n", tables->string());
    fmt::print("pacer http --find-capacity: {}{}\n",
               pass ? fmt::format("{:g} requests/s meet the SLOs", *pass)
                    : std::string("no probed rate meets the SLOs"),
               client_limited ? "; a probe did not keep its schedule (the client fell behind, "
                                "exit 3): its rate was not measurable"
               : unreachable_server ? "; no request reached the server: the search stopped (exit 4)"
                                    : "");
    if (interrupted)
        fmt::print("INTERRUPTED by a signal: the search stopped at the probe it was running\n");
    runtime::run_verdict v;
    v.interrupted = interrupted;
    v.client_fell_behind = client_limited;
    v.unreachable = unreachable_server; // the search stopped there
    return runtime::exit_status(v);
}

int run_http(const http_settings& s) {
    const http_plan plan = check(s);
    auto opened = open_telemetry(s.telemetry, s.metrics_listen, s.dry_run);
    if (s.dry_run) {
        const auto descriptors = check_descriptors(s, plan); // as the run checks them
        print_plan(s, plan);
        for (const auto& line : opened.plan)
            fmt::print("  telemetry  {}\n", line);
        fmt::print("  descriptors about {} needed (one per request in flight, and 64)\n",
                   descriptors);
        if (s.find_capacity)
            fmt::print("  capacity   search from {:g}/s: double (or halve) then {} bisection(s); a "
                       "probe passes when it keeps its schedule and {:g} of its requests meet "
                       "--goodput; one folder per probe and capacity.json\n",
                       plan.schedule.spec.rate, s.capacity_steps, s.goodput_fraction);
        return runtime::exit_ok;
    }
    // The recorder's destructor stops its threads however the run ends.
    http_telemetry telemetry{std::move(opened.recorder), s.find_capacity};
    http_watch watch(s);
    // --metrics-listen: the running run's (or probe's) totals, on a thread of its own, for the
    // whole command (a capacity search's probes one after another).
    std::optional<pacer::telemetry::metrics_listener> listener;
    if (watch.listening) {
        listener.emplace(s.metrics_listen, [&watch] {
            return http_metrics_text(watch.progress.snapshot(clock::now()),
                                     watch.offered_rate.load(std::memory_order_relaxed));
        });
        fmt::print(stderr, "pacer: serving the live counters at {} (--metrics-listen)\n",
                   listener->url());
        std::fflush(stderr);
    }
    if (s.find_capacity)
        return find_capacity(s, plan, telemetry, watch);
    const run_outcome o = execute(s, plan, plan.output, telemetry, watch);
    runtime::run_verdict v;
    v.interrupted = o.interrupted;
    v.client_fell_behind = !o.kept;
    v.server_failed = o.failed > 0;
    v.unreachable = o.unreachable;
    return runtime::exit_status(v);
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
    sub->add_option("--arrival", s->arrival, "poisson (default), gamma or constant")
        ->group("Schedule");
    sub->add_option("--rate", s->rate, "Requests per second (mean)")
        ->check(number_in(0, 1e9, true))
        ->group("Schedule");
    sub->add_option("--stages", s->stages,
                    "The rate in stages instead of --rate and --duration: DURATION:RATE/s "
                    "(constant) or DURATION:FROM-TO/s (a linear ramp), comma-separated, e.g. "
                    "30s:10/s,2m:10-50/s,30s:50/s; --requests may end it early (docs/http.md)")
        ->group("Schedule");
    sub->add_option("--burstiness", s->burstiness,
                    "gamma: coefficient of variation of the gaps (1 = Poisson; vLLM's "
                    "--burstiness is 1/B^2)")
        ->check(number_in(0.001, 1000))
        ->group("Schedule");
    sub->add_option("--seed", s->seed, "Schedule and prompt seed")
        ->check(whole_number(0, UINT64_MAX))
        ->capture_default_str()
        ->group("Schedule");
    sub->add_option("-n,--requests,--count", s->requests,
                    "How many requests arrive (--count is the same, as in run and schedule)")
        ->check(whole_number(1, schedule::max_arrivals))
        ->group("Schedule");
    sub->add_option("-d,--duration", s->duration,
                    "Keep the arrivals within this time, e.g. 60s (with --requests: whichever "
                    "ends first)")
        ->group("Schedule");
    sub->add_option("--schedule", s->schedule_file,
                    "Replay a saved schedule.json (as written next to every run)")
        ->group("Schedule");
    sub->add_option("--shard", s->shard, "Run arrivals I, I+N, ... of the schedule (I/N)")
        ->group("Schedule");
    sub->add_option("--max-concurrency", s->max_concurrency,
                    "Requests in flight at most; gates dispatch, never moves the schedule "
                    "(0: no cap)")
        ->check(whole_number(0, max_sessions))
        ->capture_default_str()
        ->group("Schedule");
    sub->add_option("--cap-policy", s->cap_policy,
                    "When the cap binds: queue (wait; counted in latency) or drop")
        ->capture_default_str()
        ->group("Schedule");
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
    sub->add_option("--progress", s->progress,
                    "Live progress on stderr: elapsed and ETA, requests due/dispatched/in "
                    "flight/done/failed (by kind), dispatch lag p99 and TTFT p50 so far, the cap. "
                    "auto: on when stderr is a terminal (one line refreshed 4 times a second); "
                    "always: also into a pipe or file (a line every 10 s and one at the end); "
                    "never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
    add_end_output_options(*sub, s->no_report, s->export_format);
    add_telemetry_options(*sub, s->telemetry, s->metrics_listen);
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return run_http(*s); }};
}

} // namespace pacer::cli

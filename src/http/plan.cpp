// The inputs of a `pacer http` plan, and its `--dry-run` plan (plan.hpp).

#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/http/plan.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/shard.hpp>
#include <pacer/schedule/arrival_options.hpp>
#include <pacer/schedule/schedule_file.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace pacer::http {

namespace {

bool valid_header_name(std::string_view name) {
    if (name.empty())
        return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) ||
              std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos))
            return false;
    return true;
}

} // namespace

void resolve_server(const http_options& s, http_plan& p) {
    p.endpoint = transport::parse_http_url(s.base_url);
    // TLS: the trust settings of `pacer run`'s wss:// (docs/tls.md), one context per run.
    if (!p.endpoint.tls && (!s.ca_file.empty() || s.insecure))
        throw bad_input(fmt::format("{} is for https:// base URLs; this one is http://",
                                    s.insecure ? "--insecure" : "--ca-file"));
    if (s.insecure && !s.ca_file.empty())
        throw bad_input("--insecure verifies nothing, so --ca-file means nothing "
                        "with it: give one");
    if (p.endpoint.tls)
        p.endpoint.tls_context = transport::make_tls_client_context(s.ca_file, s.insecure);
    if (s.endpoint != "/v1/completions" && s.endpoint != "/v1/chat/completions")
        throw bad_input(fmt::format(
            "--endpoint must be /v1/completions or /v1/chat/completions (got '{}')", s.endpoint));
    if (s.model.empty())
        throw bad_input("--model must not be empty");
    p.target = p.endpoint.base_path + s.endpoint;
    p.request.model = s.model;
    p.request.chat = s.endpoint == "/v1/chat/completions";
    p.request.ignore_eos = s.ignore_eos;
    p.request.temperature = s.temperature;
}

void resolve_schedule(const http_options& s, http_plan& p) {
    static constexpr schedule::arrival_command command{"pacer http", "--requests", true, true,
                                                       false};
    p.schedule = *schedule::open_loop_of(s.arrivals, command, s.schedule_file);
    if (p.schedule.offsets.empty())
        throw bad_input("the schedule has no arrivals");
    if (!s.shard.empty()) {
        p.shard = runtime::parse_shard(s.shard);
        if (!p.shard)
            throw bad_input(fmt::format("--shard '{}' must be I/N with 0 <= I < N", s.shard));
    }
    take_arrivals(p);
    const auto policy = session::parse_cap_policy(s.cap_policy);
    if (!policy)
        throw bad_input(fmt::format("--cap-policy must be queue or drop (got '{}')", s.cap_policy));
    p.policy = *policy;
}

void add_headers(const std::vector<std::string>& headers, const std::string& api_key_env,
                 http_plan& p) {
    for (const auto& h : headers) {
        const auto colon = h.find(':');
        const std::string name = h.substr(0, colon);
        if (colon == std::string::npos || !valid_header_name(name))
            throw bad_input(fmt::format("--header '{}' must be 'Name: value'", name));
        std::string value = h.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        if (value.find_first_of("\r\n") != std::string::npos)
            throw bad_input(fmt::format("--header {} must be on one line", name));
        p.headers.emplace_back(name, value);
        p.header_names.push_back(name);
    }
    if (api_key_env.empty())
        return;
    const char* key = std::getenv(api_key_env.c_str());
    if (!key || !*key)
        throw bad_input(
            fmt::format("--api-key-env {}: the variable is not set or empty", api_key_env));
    if (std::string_view(key).find_first_of("\r\n") != std::string_view::npos)
        throw bad_input(fmt::format("--api-key-env {}: the key must be on one line", api_key_env));
    p.headers.emplace_back("Authorization", std::string("Bearer ") + key);
    p.header_names.push_back("Authorization");
}

std::vector<session::prompt_file_entry> read_prompts(const std::string& path) {
    const auto text = runtime::read_input_file_if_exists(path);
    if (!text)
        throw bad_input(fmt::format("--prompts {} does not exist", path));
    return session::parse_prompt_jsonl(*text, path);
}

void print_dry_run(const http_options& s, const http_plan& p,
                   const std::vector<std::string>& telemetry, std::size_t descriptors) {
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
                   s.input_len, s.output_len, s.range_ratio, s.arrivals.seed);
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
    for (const auto& line : telemetry)
        fmt::print("  telemetry  {}\n", line);
    fmt::print("  descriptors about {} needed (one per request in flight, and 64)\n", descriptors);
    if (!s.find_capacity)
        return;
    fmt::print("  capacity   search from {:g}/s: double (or halve) then {} bisection(s); a "
               "probe passes when it keeps its schedule and {:g} of its requests meet "
               "--goodput; one folder per probe and capacity.json\n",
               spec.rate, s.capacity_steps, s.goodput_fraction);
    if (s.confirm > 0 || s.verify_repeats > 0)
        fmt::print("  confirm    a failed probe's rate is tried {} more time(s) before it counts "
                   "as failing; the capacity and the first failing rate are re-run {} time(s) "
                   "each at the end\n",
                   s.confirm, s.verify_repeats);
}

} // namespace pacer::http

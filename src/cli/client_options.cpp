#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

namespace pacer::cli {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

} // namespace

void add_client_options(CLI::App& sub, run::client_settings& s) {
    sub.add_option("--ca-file", s.ca_file,
                   "wss://: trust the CA certificates of this PEM file instead of the system's "
                   "CA store (docs/tls.md)")
        ->check(CLI::ExistingFile);
    sub.add_flag("--insecure", s.insecure,
                 "wss:// without verifying the server's certificate or name (said loudly in the "
                 "summary; for test servers only)");
    sub.add_option("--header", s.headers,
                   "Extra handshake header 'Name: value' (repeatable). Values are treated as "
                   "secrets: only names are recorded. Host, Upgrade, Connection and "
                   "Sec-WebSocket-* are refused");
    sub.add_option("--api-key-env", s.api_key_env,
                   "Send 'Authorization: Bearer <key>' with the key read from this environment "
                   "variable (never from the command line, never recorded)");
    sub.add_option("--headers-env", s.headers_env)->group(""); // a worker's headers
}

transport::ws_endpoint url_option(const std::string& url) {
    if (url.empty())
        return {};
    try {
        return transport::parse_ws_url(url);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
}

void apply_client_settings(const run::client_settings& s, transport::ws_endpoint& ep) {
    auto& c = ep.client;
    c.ca_file = s.ca_file;
    c.insecure = s.insecure;
    c.headers.clear();
    std::vector<std::string> lines = s.headers;
    if (!s.headers_env.empty()) {
        const char* all = std::getenv(s.headers_env.c_str());
        std::string_view rest = all ? all : "";
        while (!rest.empty()) {
            const auto nl = rest.find('\n');
            lines.emplace_back(rest.substr(0, nl));
            rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        }
    }
    for (const auto& line : lines) {
        try {
            c.headers.push_back(transport::parse_header(line));
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
    }
    for (std::size_t i = 0; i < c.headers.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (lower(c.headers[i].first) == lower(c.headers[j].first))
                throw usage_error(fmt::format("--header {} is given twice", c.headers[i].first));
    if (!s.api_key_env.empty()) {
        const char* key = std::getenv(s.api_key_env.c_str());
        if (key == nullptr || *key == '\0')
            throw usage_error(fmt::format("--api-key-env {}: the environment variable is {}",
                                          s.api_key_env, key == nullptr ? "not set" : "empty"));
        const std::string_view k(key);
        if (k.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos)
            throw usage_error(
                fmt::format("--api-key-env {}: the key has a CR, LF or NUL in it", s.api_key_env));
        for (const auto& h : c.headers)
            if (lower(h.first) == "authorization")
                throw usage_error("--api-key-env and --header Authorization both set "
                                  "Authorization: give one");
        c.headers.emplace_back("Authorization", fmt::format("Bearer {}", k));
    }
    if (!ep.tls && (!s.ca_file.empty() || s.insecure))
        throw usage_error(fmt::format("{} is for wss:// URLs; this one is ws://",
                                      s.insecure ? "--insecure" : "--ca-file"));
    if (s.insecure && !s.ca_file.empty())
        throw usage_error("--insecure verifies nothing, so --ca-file means nothing with it: "
                          "give one");
    try {
        transport::prepare_tls(ep);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    if (!c.handshakes)
        c.handshakes = std::make_shared<transport::handshake_log>();
}

std::optional<protocol::realtime_protocol> protocol_option(const std::string& name,
                                                           const std::string& model) {
    if (name == "native")
        return std::nullopt;
    protocol::realtime_protocol p{};
    if (!protocol::parse_realtime_protocol(name, p))
        throw usage_error(fmt::format("--protocol '{}' is not known: use native, "
                                      "openai-realtime or vllm-realtime",
                                      name));
    if (p == protocol::realtime_protocol::vllm && model.empty())
        throw usage_error("--protocol vllm-realtime needs --model (the served model)");
    return p;
}

void model_in_url(transport::ws_endpoint& ep, std::optional<protocol::realtime_protocol> p,
                  const std::string& model) {
    if (p != protocol::realtime_protocol::openai || model.empty())
        return;
    if (const auto given = transport::query_parameter(ep.target, "model")) {
        if (*given != model)
            throw usage_error(fmt::format("--model {} and the model={} in --url differ: give one",
                                          model, *given));
        return;
    }
    ep.target = transport::with_query_parameter(ep.target, "model", model);
}

protocol::realtime_turns turns_option(const std::string& turns) {
    if (turns != "server-vad" && turns != "manual")
        throw usage_error(
            fmt::format("--turns '{}' is not known: use server-vad or manual", turns));
    return turns == "manual" ? protocol::realtime_turns::manual
                             : protocol::realtime_turns::server_vad;
}

} // namespace pacer::cli

#include <pacer/core/bad_input.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/protocol/omni_events.hpp>
#include <pacer/run/client_settings.hpp>
#include <pacer/runtime/exit_status.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

namespace pacer::run {

namespace {

constexpr const char* worker_headers_variable = "PACER_WORKER_HEADERS";

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

} // namespace

std::vector<std::string> client_worker_args(const client_settings& s) {
    std::vector<std::string> a;
    if (!s.ca_file.empty())
        a.insert(a.end(), {"--ca-file", s.ca_file});
    if (s.insecure)
        a.emplace_back("--insecure");
    if (!s.api_key_env.empty())
        a.insert(a.end(), {"--api-key-env", s.api_key_env});
    std::vector<std::string> lines = s.headers;
    if (!s.headers_env.empty()) // a worker starting workers: pass its own on
        if (const char* all = std::getenv(s.headers_env.c_str()); all && *all)
            lines.emplace_back(all);
    if (!lines.empty()) {
        std::string joined;
        for (const auto& l : lines)
            joined += (joined.empty() ? "" : "\n") + l;
        ::setenv(worker_headers_variable, joined.c_str(), 1);
        a.insert(a.end(), {"--headers-env", worker_headers_variable});
    }
    return a;
}

boost::json::object transport_json(const transport::ws_endpoint& ep) {
    boost::json::object o;
    o["tls"] = ep.tls;
    o["insecure"] = ep.client.insecure;
    if (ep.client.ca_file.empty())
        o["ca_file"] = nullptr;
    else
        o["ca_file"] = ep.client.ca_file;
    boost::json::array names;
    for (const auto& n : ep.client.header_names())
        names.emplace_back(n);
    o["headers"] = std::move(names);
    std::vector<transport::handshake_times> times;
    if (ep.client.handshakes)
        times = ep.client.handshakes->snapshot();
    std::vector<double> connect, tls, upgrade;
    for (const auto& t : times) {
        connect.push_back(t.connect_s);
        tls.push_back(t.tls_s);
        upgrade.push_back(t.upgrade_s);
    }
    boost::json::object h;
    h["connections"] = times.size();
    h["connect"] = to_json(summarize(connect, protocol_fractions));
    if (ep.tls)
        h["tls"] = to_json(summarize(tls, protocol_fractions));
    h["upgrade"] = to_json(summarize(upgrade, protocol_fractions));
    o["handshake_s"] = std::move(h);
    return o;
}

std::string transport_line(const transport::ws_endpoint& ep) {
    std::string line;
    if (ep.tls)
        line = ep.client.insecure
                   ? "wss:// with --insecure: WARNING, the server's certificate was NOT verified"
                   : fmt::format("wss://, certificate verified against {}",
                                 ep.client.ca_file.empty() ? std::string("the system CA store")
                                                           : ep.client.ca_file);
    if (!ep.client.headers.empty())
        line += fmt::format("{}headers {}", line.empty() ? "" : "; ",
                            fmt::join(ep.client.header_names(), ", "));
    if (ep.tls && ep.client.handshakes) {
        auto times = ep.client.handshakes->snapshot();
        std::vector<double> tls;
        for (const auto& t : times)
            tls.push_back(t.tls_s);
        if (!tls.empty()) {
            const auto d = summarize(tls, protocol_fractions);
            line += fmt::format("; TLS handshake p50 {:.1f} ms p99 {:.1f} ms", *d.at(0.50) * 1e3,
                                *d.at(0.99) * 1e3);
        }
    }
    return line;
}

transport::ws_endpoint url_option(const std::string& url) {
    if (url.empty())
        return {};
    return transport::parse_ws_url(url);
}

void apply_client_settings(const client_settings& s, transport::ws_endpoint& ep) {
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
        c.headers.push_back(transport::parse_header(line));
    }
    for (std::size_t i = 0; i < c.headers.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (lower(c.headers[i].first) == lower(c.headers[j].first))
                throw bad_input(fmt::format("--header {} is given twice", c.headers[i].first));
    if (!s.api_key_env.empty()) {
        const char* key = std::getenv(s.api_key_env.c_str());
        if (key == nullptr || *key == '\0')
            throw bad_input(fmt::format("--api-key-env {}: the environment variable is {}",
                                        s.api_key_env, key == nullptr ? "not set" : "empty"));
        const std::string_view k(key);
        if (k.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos)
            throw bad_input(
                fmt::format("--api-key-env {}: the key has a CR, LF or NUL in it", s.api_key_env));
        for (const auto& h : c.headers)
            if (lower(h.first) == "authorization")
                throw bad_input("--api-key-env and --header Authorization both set "
                                "Authorization: give one");
        c.headers.emplace_back("Authorization", fmt::format("Bearer {}", k));
    }
    if (!ep.tls && (!s.ca_file.empty() || s.insecure))
        throw bad_input(fmt::format("{} is for wss:// URLs; this one is ws://",
                                    s.insecure ? "--insecure" : "--ca-file"));
    if (s.insecure && !s.ca_file.empty())
        throw bad_input("--insecure verifies nothing, so --ca-file means nothing with it: "
                        "give one");
    transport::prepare_tls(ep);
    if (!c.handshakes)
        c.handshakes = std::make_shared<transport::handshake_log>();
}

std::optional<protocol::realtime_protocol> protocol_option(const std::string& name,
                                                           const std::string& model) {
    if (name == "native")
        return std::nullopt;
    protocol::realtime_protocol p{};
    if (!protocol::parse_realtime_protocol(name, p))
        throw bad_input(fmt::format("--protocol '{}' is not known: use native, "
                                    "openai-realtime, vllm-realtime or vllm-omni",
                                    name));
    if (p == protocol::realtime_protocol::vllm && model.empty())
        throw bad_input("--protocol vllm-realtime needs --model (the served model)");
    return p;
}

void model_in_url(transport::ws_endpoint& ep, std::optional<protocol::realtime_protocol> p,
                  const std::string& model) {
    if (p == protocol::realtime_protocol::vllm_omni) {
        if (const auto given = transport::query_parameter(ep.target, "autostart");
            given && *given != "0")
            throw bad_input(fmt::format("--protocol vllm-omni opens with session.update: the "
                                        "URL's autostart={} must be 0 (or left out)",
                                        *given));
        for (const char* key : {"duplex", "autostart"})
            if (!transport::query_parameter(ep.target, key))
                ep.target =
                    transport::with_query_parameter(ep.target, key, key[0] == 'd' ? "1" : "0");
        return;
    }
    if (p != protocol::realtime_protocol::openai || model.empty())
        return;
    if (const auto given = transport::query_parameter(ep.target, "model")) {
        if (*given != model)
            throw bad_input(fmt::format("--model {} and the model={} in --url differ: give one",
                                        model, *given));
        return;
    }
    ep.target = transport::with_query_parameter(ep.target, "model", model);
}

protocol::realtime_turns turns_option(const std::string& turns) {
    if (turns != "server-vad" && turns != "manual" && turns != "model")
        throw bad_input(fmt::format(
            "--turns '{}' is not known: use server-vad or manual (vllm-omni: also model)", turns));
    return turns == "server-vad" ? protocol::realtime_turns::server_vad
                                 : protocol::realtime_turns::manual;
}

namespace {

// The --ref-audio file as a data URL: it must be there and be a WAV (RIFF/WAVE).
std::shared_ptr<const std::string> ref_audio_url(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw bad_input(fmt::format("--ref-audio {}: cannot read the file", path));
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < 12 || bytes.compare(0, 4, "RIFF") != 0 || bytes.compare(8, 4, "WAVE") != 0)
        throw bad_input(fmt::format("--ref-audio {}: not a WAV file (RIFF/WAVE)", path));
    return std::make_shared<const std::string>(protocol::wav_data_url(bytes));
}

} // namespace

omni_plan omni_option(const omni_cli& o, std::optional<protocol::realtime_protocol> p,
                      const std::string& turns) {
    omni_plan plan;
    if (p != protocol::realtime_protocol::vllm_omni) {
        const char* given = o.chunk_ms != 0        ? "--chunk-ms"
                            : !o.ref_audio.empty() ? "--ref-audio"
                            : !o.ack.empty()       ? "--ack"
                            : o.ack_ms != 0        ? "--ack-ms"
                            : turns == "model"     ? "--turns model"
                                                   : nullptr;
        if (given != nullptr)
            throw bad_input(fmt::format("{} is for --protocol vllm-omni", given));
        return plan;
    }
    const int chunk = o.chunk_ms == 0 ? 200 : o.chunk_ms;
    if (chunk < 10 || chunk > 2000 || chunk % 10 != 0)
        throw bad_input(
            fmt::format("--chunk-ms {}: must be a multiple of 10 ms, from 10 to 2000", o.chunk_ms));
    plan.chunk = std::chrono::milliseconds(chunk);
    if (o.ack != "" && o.ack != "played" && o.ack != "never")
        throw bad_input(fmt::format("--ack '{}' is not known: use played or never", o.ack));
    if (o.ack_ms < 0)
        throw bad_input(fmt::format("--ack-ms {}: must be positive", o.ack_ms));
    auto& s = plan.settings;
    s.ack = o.ack != "never";
    if (o.ack_ms > 0)
        s.ack_every = std::chrono::milliseconds(o.ack_ms);
    s.turns = turns == "server-vad" ? protocol::omni_turns::server_vad
              : turns == "model"    ? protocol::omni_turns::model
                                    : protocol::omni_turns::manual;
    if (!o.ref_audio.empty())
        s.ref_audio = ref_audio_url(o.ref_audio);
    return plan;
}

} // namespace pacer::run

#include <pacer/core/stats.hpp>
#include <pacer/run/client_settings.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <cstdlib>

namespace pacer::run {

namespace {

constexpr const char* worker_headers_variable = "PACER_WORKER_HEADERS";

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

} // namespace pacer::run

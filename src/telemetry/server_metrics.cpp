// `--server-metrics`: a Prometheus endpoint scraped with pacer's HTTP client, on the sampling
// thread's own io_context (one exchange at a time, run to its end before the read returns).

#include <pacer/core/clock.hpp>
#include <pacer/telemetry/server_metrics.hpp>
#include <pacer/transport/http_client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <fmt/format.h>

#include <cmath>
#include <exception>
#include <set>
#include <stdexcept>

namespace pacer::telemetry {

namespace asio = boost::asio;

namespace {

// A scrape larger than this is cut (a runaway exporter must not grow pacer's memory).
constexpr std::size_t max_body_bytes = 16u << 20;

std::string series_name(const metric_sample& s) {
    if (s.labels.empty())
        return s.name;
    metric_sample bare = s;
    bare.value = 0;
    auto text = format_sample(bare);
    return text.substr(0, text.rfind(' ')); // name{labels}
}

// The GPU a DCGM series is about: its UUID, else its `gpu` index, else "" (an exporter of one
// GPU may label none).
std::string gpu_of(const metric_sample& m) {
    std::string index;
    for (const auto& [name, value] : m.labels) {
        if (name == "UUID")
            return "UUID:" + value;
        if (name == "gpu")
            index = "gpu:" + value;
    }
    return index;
}

} // namespace

sample server_sample(const exposition& e, double monotonic_s, double realtime_s) {
    sample s;
    s.source = "server";
    s.monotonic_s = monotonic_s;
    s.realtime_s = realtime_s;
    double energy = 0, power = 0, util = 0, fb_used = 0;
    std::size_t energies = 0, powers = 0, utils = 0, fbs = 0;
    std::set<std::string> gpus;
    for (const auto& m : e.samples) {
        const bool finite = std::isfinite(m.value);
        if (m.name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" ||
            m.name == "DCGM_FI_DEV_POWER_USAGE" || m.name == "DCGM_FI_DEV_GPU_UTIL" ||
            m.name == "DCGM_FI_DEV_FB_USED")
            gpus.insert(gpu_of(m));
        if (m.name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") {
            if (finite && m.value >= 0) {
                energy += m.value; // mJ since the exporter's GPUs booted, one series per GPU
                ++energies;
            }
        } else if (m.name == "DCGM_FI_DEV_POWER_USAGE") {
            if (finite) {
                power += m.value; // W
                ++powers;
            }
        } else if (m.name == "DCGM_FI_DEV_GPU_UTIL") {
            if (finite) {
                util += m.value; // %
                ++utils;
            }
        } else if (m.name == "DCGM_FI_DEV_FB_USED") {
            if (finite) {
                fb_used += m.value; // MiB
                ++fbs;
            }
        }
        if (e.type_of(m.name) == metric_type::gauge)
            s.gauges.emplace_back(series_name(m), m.value);
    }
    if (energies > 0 && energy < 1.8e19) // below 2^64: the conversion is defined
        s.energy_mj = static_cast<std::uint64_t>(std::round(energy));
    if (powers > 0)
        s.power_w = power;
    if (utils > 0)
        s.utilization_pct = util / static_cast<double>(utils); // the GPUs' mean
    if (fbs > 0)
        s.memory_used_bytes = fb_used * 1024 * 1024;
    s.gpus = gpus.size();
    return s;
}

struct server_metrics_source::client {
    asio::io_context io{1};
    transport::http_pool pool;
    std::string target;
    explicit client(transport::http_endpoint ep) : pool(io.get_executor(), std::move(ep)) {}
};

server_metrics_source::server_metrics_source(const std::string& url,
                                             std::chrono::nanoseconds timeout,
                                             std::function<void(const std::string&)> warn)
    : url_(url), timeout_(timeout), warn_(std::move(warn)) {
    transport::http_endpoint ep;
    try {
        ep = transport::parse_http_url(url);
    } catch (const std::invalid_argument&) {
        throw telemetry_error(fmt::format(
            "--server-metrics '{}' is not an http:// URL such as http://127.0.0.1:9400/metrics "
            "(no query, no credentials)",
            url));
    }
    std::string target = ep.target();
    client_ = std::make_unique<client>(std::move(ep));
    client_->target = std::move(target);
}

server_metrics_source::~server_metrics_source() = default;

void server_metrics_source::read(std::vector<sample>& out) {
    ++scrapes_;
    std::string body;
    bool cut = false;
    transport::http_body_sink sink;
    sink.on_data = [&](std::string_view bytes, time_point) {
        if (body.size() + bytes.size() > max_body_bytes) {
            cut = true;
            return false;
        }
        body.append(bytes);
        return true;
    };
    const transport::header_list headers{{"Accept", "text/plain;version=0.0.4"}};
    transport::http_exchange result;
    std::exception_ptr failure;
    auto& c = *client_;
    asio::co_spawn(c.io, c.pool.get_stream(c.target, headers, clock::now() + timeout_, sink),
                   [&](std::exception_ptr e, transport::http_exchange x) {
                       failure = e;
                       result = std::move(x);
                   });
    c.io.restart();
    c.io.run();
    // Stamped when the answer is in: the exporter read its GPUs shortly before.
    const auto clocks = read_clock_pair();
    const auto report = [&](const std::string& what) {
        if (!warned_.insert(what).second)
            return;
        warnings_.fetch_add(1, std::memory_order_relaxed);
        if (warn_)
            warn_(fmt::format("--server-metrics {}: {}", url_, what));
    };
    std::string error;
    if (failure) {
        try {
            std::rethrow_exception(failure);
        } catch (const std::exception& e) {
            error = e.what();
        }
    } else if (cut) {
        error = fmt::format("the answer is larger than {} MiB", max_body_bytes >> 20);
    } else if (result.error == transport::http_error::status) {
        error = fmt::format("HTTP {}: {}", result.status, result.message);
    } else if (result.error != transport::http_error::none) {
        // The message says it ("cannot connect to HOST:PORT: Connection refused").
        error = result.message.empty() ? std::string(transport::to_string(result.error))
                                       : result.message;
    }
    if (!error.empty()) {
        ++failed_;
        report("scrape failed: " + error);
        sample s;
        s.source = "server";
        s.monotonic_s = clocks.monotonic_s;
        s.realtime_s = clocks.realtime_s;
        s.error = std::move(error);
        out.push_back(std::move(s));
        return;
    }
    const auto parsed = parse_exposition(body);
    for (const auto& w : parsed.warnings)
        report(w);
    out.push_back(server_sample(parsed, clocks.monotonic_s, clocks.realtime_s));
}

std::string server_metrics_source::describe() const {
    return fmt::format("server metrics from {} (Prometheus text)", url_);
}

} // namespace pacer::telemetry

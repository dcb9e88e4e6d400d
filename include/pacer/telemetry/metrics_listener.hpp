#pragma once
// `--metrics-listen HOST:PORT`: an HTTP endpoint serving the Prometheus text format, on a
// thread (and io_context) of its own, for people who watch load tests in Grafana. Every GET
// of `/metrics` (or `/`) answers with what `render` returns at that moment; anything else is
// 404. `render` runs on the listener's thread: it must read only what is safe to read from
// another thread (relaxed atomics).

#include <functional>
#include <memory>
#include <string>

namespace pacer::telemetry {

class metrics_listener {
public:
    /// Binds `host_port` (HOST:PORT, [V6]:PORT; port 0 picks a free one) and starts serving.
    /// Throws telemetry_error (one line) for a bad address or one that cannot be bound.
    metrics_listener(const std::string& host_port, std::function<std::string()> render);
    /// Stops serving (open connections are closed) and joins the thread.
    ~metrics_listener();
    metrics_listener(const metrics_listener&) = delete;
    metrics_listener& operator=(const metrics_listener&) = delete;

    /// The bound address as a URL: `http://127.0.0.1:PORT/metrics`.
    std::string url() const;
    /// Scrapes answered so far.
    std::size_t scrapes() const;

private:
    struct state;
    std::unique_ptr<state> state_;
};

/// Checks HOST:PORT without binding; throws telemetry_error naming what is wrong.
void check_listen_address(const std::string& host_port);

} // namespace pacer::telemetry

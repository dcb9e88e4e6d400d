#pragma once
// `--metrics-listen HOST:PORT`: an HTTP endpoint serving the Prometheus text format, on a
// thread (and io_context) of its own, for people who watch load tests in Grafana. Every GET
// of `/metrics` (or `/`) answers with what `render` returns at that moment; anything else is
// 404. `render` runs on the listener's thread: it must read only what is safe to read from
// another thread (relaxed atomics).
//
// A command binds the address first, before it prints or writes anything (a busy port is one
// usage error line), serves its counters from the idle baseline on, and at its end serves the
// final totals and lingers until a watcher has scraped them (`--metrics-linger`).

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace pacer::telemetry {

class metrics_listener {
public:
    /// Binds `host_port` (HOST:PORT, [V6]:PORT; port 0 picks a free one) and starts serving.
    /// Throws telemetry_error (one line) for a bad address or one that cannot be bound.
    /// Without `render`, each scrape answers an empty page until `serve`. `linger`: how long
    /// `linger()` waits at most for the final totals' scrape.
    metrics_listener(const std::string& host_port, std::function<std::string()> render = {},
                     std::chrono::nanoseconds linger = {});
    /// Stops serving (open connections are closed) and joins the thread.
    ~metrics_listener();
    metrics_listener(const metrics_listener&) = delete;
    metrics_listener& operator=(const metrics_listener&) = delete;

    /// What each scrape answers from now on (`render` runs on the listener's thread).
    void serve(std::function<std::string()> render);
    /// The final totals: from now on each scrape answers `text`.
    void serve_final(std::string text);
    /// Whether `linger()` would wait: the endpoint has been scraped (someone watches) and not
    /// since `serve_final`, and the linger is not 0.
    bool watched() const;
    /// After `serve_final`: when `watched()`, waits until a scrape has answered the final
    /// totals or the linger has passed. Returns whether the final totals were scraped.
    bool linger();
    std::chrono::nanoseconds linger_time() const;

    /// The bound address as a URL: `http://127.0.0.1:PORT/metrics`.
    std::string url() const;
    /// Scrapes answered so far.
    std::size_t scrapes() const;

private:
    struct state;
    std::unique_ptr<state> state_;
};

/// While it lives, `l` (nullptr: none) serves `render`; once it is gone, an empty page (or the
/// final totals, once served): what `render` reads may go with the scope, however it ends.
class served_page {
public:
    served_page(metrics_listener* l, std::function<std::string()> render) : l_(l) {
        if (l_)
            l_->serve(std::move(render));
    }
    ~served_page() {
        if (l_)
            l_->serve({});
    }
    served_page(const served_page&) = delete;
    served_page& operator=(const served_page&) = delete;

private:
    metrics_listener* l_;
};

/// Checks HOST:PORT without binding; throws telemetry_error naming what is wrong.
void check_listen_address(const std::string& host_port);

} // namespace pacer::telemetry

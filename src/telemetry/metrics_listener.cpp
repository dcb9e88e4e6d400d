// `--metrics-listen`: one HTTP/1.1 answer per connection (Connection: close), on an io_context
// and a thread of its own, so a slow or stuck scraper never touches a session context.

#include <pacer/core/awaitable.hpp>
#include <pacer/telemetry/metrics_listener.hpp>
#include <pacer/telemetry/sample.hpp>
#include <pacer/transport/detail/maybe_tls_stream.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <fmt/format.h>

#include <atomic>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace pacer::telemetry {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

struct host_port {
    std::string host;
    unsigned short port = 0;
};

host_port split_address(const std::string& s) {
    const auto bad = [&](std::string_view why) {
        return telemetry_error(fmt::format("--metrics-listen '{}' {}", s, why));
    };
    const auto colon = s.rfind(':');
    if (colon == std::string::npos)
        throw bad("is not HOST:PORT (e.g. 127.0.0.1:9464, [::1]:9464)");
    std::string host = s.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    if (host.empty())
        throw bad("has no host (0.0.0.0 listens on every interface)");
    const std::string port = s.substr(colon + 1);
    unsigned v = 0;
    const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
    if (port.empty() || ec != std::errc{} || p != port.data() + port.size() || v > 65535)
        throw bad("has a port that is not 0..65535");
    boost::system::error_code aec;
    asio::ip::make_address(host, aec);
    if (aec)
        throw bad("has a host that is not an IP address");
    return {host, static_cast<unsigned short>(v)};
}

} // namespace

void check_listen_address(const std::string& host_port) {
    split_address(host_port);
}

struct metrics_listener::state {
    asio::io_context io{1};
    transport::detail::tcp_acceptor acceptor{io.get_executor()};
    std::chrono::nanoseconds linger{};
    std::atomic<std::size_t> scrapes{0};
    std::string url;
    std::thread thread;
    // What a scrape answers, and the scrapes of the final totals: under `mutex`.
    std::mutex mutex;
    std::condition_variable final_scraped;
    std::function<std::string()> render;
    std::optional<std::string> final_text;
    std::size_t final_scrapes = 0;

    std::string page() {
        const std::lock_guard lock(mutex);
        if (final_text) {
            ++final_scrapes;
            final_scraped.notify_all();
            return *final_text;
        }
        return render ? render() : std::string();
    }

    awaitable<void> serve(transport::detail::tcp_socket socket) {
        beast::flat_buffer buffer;
        http::request<http::string_body> req;
        auto [ec, n] = co_await http::async_read(socket, buffer, req, use_tuple);
        if (ec)
            co_return;
        http::response<http::string_body> res;
        res.version(11);
        res.set(http::field::server, "pacer");
        res.keep_alive(false);
        const auto target = req.target();
        if (req.method() != http::verb::get && req.method() != http::verb::head) {
            res.result(http::status::method_not_allowed);
            res.body() = "GET /metrics\n";
        } else if (target == "/metrics" || target == "/" || target.starts_with("/metrics?")) {
            res.result(http::status::ok);
            res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
            res.body() = page();
            scrapes.fetch_add(1, std::memory_order_relaxed);
        } else {
            res.result(http::status::not_found);
            res.body() = "pacer serves /metrics\n";
        }
        res.prepare_payload();
        if (req.method() == http::verb::head)
            res.body().clear();
        co_await http::async_write(socket, res, use_tuple);
        boost::system::error_code ignored;
        socket.shutdown(tcp::socket::shutdown_both, ignored);
    }

    awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
            if (ec == asio::error::operation_aborted || !acceptor.is_open())
                co_return;
            if (ec)
                continue; // a connection that failed before it was ours
            asio::co_spawn(io, serve(std::move(socket)), asio::detached);
        }
    }
};

metrics_listener::metrics_listener(const std::string& host_port,
                                   std::function<std::string()> render,
                                   std::chrono::nanoseconds linger)
    : state_(std::make_unique<state>()) {
    const auto a = split_address(host_port);
    auto& st = *state_;
    st.render = std::move(render);
    st.linger = linger;
    const tcp::endpoint ep(asio::ip::make_address(a.host), a.port);
    boost::system::error_code ec;
    st.acceptor.open(ep.protocol(), ec);
    if (!ec)
        st.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec)
        st.acceptor.bind(ep, ec);
    if (!ec)
        st.acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
        throw telemetry_error(
            fmt::format("--metrics-listen {}: cannot listen: {}", host_port, ec.message()));
    const auto bound = st.acceptor.local_endpoint();
    const auto addr = bound.address();
    st.url = fmt::format("http://{}{}{}:{}/metrics", addr.is_v6() ? "[" : "", addr.to_string(),
                         addr.is_v6() ? "]" : "", bound.port());
    // The one detached coroutine: its errors are data (a failed accept is skipped), and it
    // ends when the acceptor closes.
    asio::co_spawn(st.io, st.accept_loop(), asio::detached);
    st.thread = std::thread([&st] { st.io.run(); });
}

metrics_listener::~metrics_listener() {
    auto& st = *state_;
    asio::post(st.io, [&st] {
        boost::system::error_code ignored;
        st.acceptor.close(ignored);
        st.io.stop(); // a connection still open is dropped with the io_context
    });
    st.thread.join();
}

void metrics_listener::serve(std::function<std::string()> render) {
    const std::lock_guard lock(state_->mutex);
    state_->render = std::move(render);
}

void metrics_listener::serve_final(std::string text) {
    const std::lock_guard lock(state_->mutex);
    state_->final_text = std::move(text);
    state_->final_scrapes = 0;
}

bool metrics_listener::watched() const {
    auto& st = *state_;
    const std::lock_guard lock(st.mutex);
    return st.linger.count() > 0 && st.final_text && st.final_scrapes == 0 &&
           st.scrapes.load(std::memory_order_relaxed) > 0;
}

bool metrics_listener::linger() {
    auto& st = *state_;
    std::unique_lock lock(st.mutex);
    if (!st.final_text)
        return false;
    if (st.final_scrapes > 0)
        return true;
    if (st.linger.count() <= 0 || st.scrapes.load(std::memory_order_relaxed) == 0)
        return false; // no one watches: no one waits for the final totals
    return st.final_scraped.wait_for(lock, st.linger, [&] { return st.final_scrapes > 0; });
}

std::chrono::nanoseconds metrics_listener::linger_time() const {
    return state_->linger;
}

std::string metrics_listener::url() const {
    return state_->url;
}

std::size_t metrics_listener::scrapes() const {
    return state_->scrapes.load(std::memory_order_relaxed);
}

} // namespace pacer::telemetry

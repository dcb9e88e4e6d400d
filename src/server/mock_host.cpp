#include <pacer/core/awaitable.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/core/base64.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/server/detail/mock_host.hpp>
#include <pacer/transport/detail/tls_context.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdexcept>
#include <sys/socket.h>
#include <system_error>
#include <vector>

namespace pacer::server::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

const std::string& constant_audio::base64(std::size_t samples, std::int16_t value) {
    if (samples == samples_ && value == value_)
        return base64_;
    std::vector<std::uint8_t> pcm(samples * 2);
    const auto v = static_cast<std::uint16_t>(value);
    for (std::size_t i = 0; i < samples; ++i) {
        pcm[2 * i] = static_cast<std::uint8_t>(v & 0xff);
        pcm[2 * i + 1] = static_cast<std::uint8_t>(v >> 8);
    }
    base64_.clear();
    base64_append(base64_, pcm.data(), pcm.size());
    samples_ = samples;
    value_ = value;
    return base64_;
}

void append_frame(std::string& out, std::string_view payload, bool binary) {
    append_frame_header(out, payload.size(), binary);
    out.append(payload);
}

void append_frame_header(std::string& out, std::size_t n, bool binary) {
    out.push_back(static_cast<char>(binary ? 0x82 : 0x81)); // FIN + opcode
    if (n < 126) {
        out.push_back(static_cast<char>(n));
    } else if (n <= 0xffff) {
        out.push_back(static_cast<char>(126));
        out.push_back(static_cast<char>(n >> 8));
        out.push_back(static_cast<char>(n & 0xff));
    } else {
        out.push_back(static_cast<char>(127));
        for (int shift = 56; shift >= 0; shift -= 8)
            out.push_back(static_cast<char>((static_cast<std::uint64_t>(n) >> shift) & 0xff));
    }
}

std::size_t parse_choice(std::span<const std::string_view> names, std::string_view name,
                         std::string_view flag) {
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == name)
            return i;
    throw bad_input(
        fmt::format("{} must be one of {} (got '{}')", flag, fmt::join(names, ", "), name));
}

// One thread's part of the host: everything here is touched on that thread only (stop() hands
// its part over with dispatch), except `sessions`, an atomic any thread may read.
struct mock_host::shard {
    explicit shard(asio::io_context& c) : ctx(c), stopped_signal(c) {
        stopped_signal.expires_at(time_point::max());
    }
    asio::io_context& ctx;
    pacer::steady_timer stopped_signal; // cancelled by stop()
    runtime::loop_monitor monitor;
    bool stopped = false;
    double stopped_cpu_s = -1;
    std::atomic<std::size_t> sessions{0};
    std::set<transport::detail::tcp_socket*> open; // the open sessions' sockets, closed by stop()
};

mock_host::mock_host(asio::io_context& ctx, host_options options)
    : mock_host(std::span<asio::io_context* const>(std::array<asio::io_context*, 1>{&ctx}),
                std::move(options)) {}

mock_host::mock_host(std::span<asio::io_context* const> contexts, host_options options)
    : options_(std::move(options)),
      tls_(transport::detail::make_tls_server_context(options_.tls_cert, options_.tls_key)),
      acceptor_(*contexts.front()), started_(clock::now()) {
    for (auto* ctx : contexts)
        shards_.push_back(std::make_unique<shard>(*ctx));
}

mock_host::~mock_host() = default;

void mock_host::listen() {
    const tcp::endpoint ep(asio::ip::make_address(options_.host), options_.port);
    acceptor_.open(ep.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    // Before listen: the window scale and MSS of the SYN-ACK already follow them.
    if (options_.receive_buffer > 0)
        acceptor_.set_option(asio::socket_base::receive_buffer_size(options_.receive_buffer));
    if (options_.max_segment > 0) {
        const int mss = options_.max_segment;
        if (::setsockopt(acceptor_.native_handle(), IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss) != 0)
            throw std::system_error(errno, std::generic_category(), "setsockopt(TCP_MAXSEG)");
    }
    acceptor_.bind(ep);
    acceptor_.listen(asio::socket_base::max_listen_connections);
}

std::uint16_t mock_host::port() const {
    return acceptor_.local_endpoint().port();
}

std::size_t mock_host::shard_of(const pacer::executor& ex) const {
    for (std::size_t i = 0; i < shards_.size(); ++i)
        if (&shards_[i]->ctx == &ex.context())
            return i;
    return 0;
}

pacer::executor mock_host::shard_executor(std::size_t i) const {
    return shards_.at(i)->ctx.get_executor();
}

std::vector<std::size_t> mock_host::sessions_per_shard() const {
    std::vector<std::size_t> out;
    for (const auto& s : shards_)
        out.push_back(s->sessions.load(std::memory_order_relaxed));
    return out;
}

mock_host::shard& mock_host::my_shard(const pacer::executor& ex) {
    return *shards_[shard_of(ex)];
}

awaitable<void> mock_host::serve(const session_handler& handler, const get_handler& get) {
    auto self = shared_from_this();
    for (auto& s : shards_)
        asio::co_spawn(s->ctx, s->monitor.run(), [self](std::exception_ptr) {});
    std::size_t next = 0;
    while (!stopped_) {
        // Accepted straight onto the next shard's context: the socket and its session live
        // there from the first byte on.
        shard& where = *shards_[next];
        next = (next + 1) % shards_.size();
        auto [ec, socket] = co_await acceptor_.async_accept(where.ctx.get_executor(), use_tuple);
        if (ec) {
            if (stopped_ || ec == asio::error::operation_aborted)
                break;
            continue; // e.g. EMFILE: keep serving the sessions we have
        }
        asio::co_spawn(where.ctx, handle(std::move(socket), handler, get, where),
                       [self](std::exception_ptr) {});
    }
}

awaitable<void> mock_host::handle(transport::detail::tcp_socket socket, session_handler handler,
                                  get_handler get, shard& where) {
    ws_stream ws(std::move(socket));
    auto& layer = ws.next_layer(); // TLS when serving wss://
    if (tls_)
        layer.use_tls(*tls_); // before the reference below: it moves the TCP socket
    auto& stream = beast::get_lowest_layer(ws);
    if (where.stopped)
        co_return; // accepted as the mock stopped: its sockets are already closed
    // Registered for stop() while the stream lives; the guard holds the host, so it outlives
    // the registration even when the coroutine frame is destroyed with its io_context.
    struct registration {
        std::shared_ptr<mock_host> host;
        shard* where;
        transport::detail::tcp_socket* stream;
        ~registration() { where->open.erase(stream); }
    } registered{shared_from_this(), &where, &stream};
    where.open.insert(registered.stream);
    // The TLS handshake and the upgrade request within 30 s, or the connection is closed.
    transport::detail::socket_deadline deadline(stream, std::chrono::seconds(30));
    if (auto* t = layer.tls()) {
        auto [tec] = co_await t->async_handshake(asio::ssl::stream_base::server, use_tuple);
        if (tec || stopped_)
            co_return; // e.g. a client that does not trust the certificate
    }
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    auto [rec, n] = co_await http::async_read(layer, buffer, request, use_tuple);
    if (rec || stopped_)
        co_return;
    deadline.disarm();
    auto answer = [&](http::status status, std::string body,
                      std::string_view type) -> awaitable<void> {
        http::response<http::string_body> res{status, request.version()};
        res.set(http::field::content_type, type);
        res.body() = std::move(body);
        res.prepare_payload();
        res.keep_alive(false);
        co_await http::async_write(layer, res, use_tuple);
        if (auto* t = layer.tls())
            co_await t->async_shutdown(use_tuple);
        boost::system::error_code ignored;
        stream.shutdown(tcp::socket::shutdown_both, ignored);
    };
    auto refuse = [&](http::status status, std::string body) {
        return answer(status, std::move(body), "text/plain");
    };
    // A plain GET the mock serves itself (native-mock's /stats): not a handshake, so it counts
    // toward neither --reject-first nor the sessions.
    if (!websocket::is_upgrade(request) && request.method() == http::verb::get && get) {
        if (auto body = co_await get(std::string(request.target()))) {
            co_await answer(http::status::ok, std::move(*body), "application/json");
            co_return;
        }
    }
    const std::size_t handshake = handshakes_.fetch_add(1, std::memory_order_relaxed) + 1;
    {
        const std::lock_guard lock(names_mutex_);
        for (const auto& field : request) {
            std::string name(field.name_string());
            for (auto& c : name)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (name == "openai-beta")
                openai_beta_.insert(std::string(field.value()));
            header_names_.insert(std::move(name));
        }
        record_query(request.target());
    }
    if (!websocket::is_upgrade(request)) {
        co_await refuse(http::status::bad_request, "expected a WebSocket upgrade\n");
        co_return;
    }
    // The path alone: clients put parameters in the query (the OpenAI API's `?model=`).
    const std::string_view target = request.target();
    const auto query = target.find('?');
    const std::string_view path = target.substr(0, query);
    if (path != "/v1/realtime" && (options_.alias_path.empty() || path != options_.alias_path)) {
        co_await refuse(http::status::not_found, "the realtime endpoint is /v1/realtime\n");
        co_return;
    }
    // The slot is taken from the upgrade on, so a burst of handshakes cannot overshoot it
    // (a compare-and-swap: shards admit at once).
    const bool admitted = handshake > options_.reject_first && take_slot();
    // Over capacity with a protocol that says so in the session (vllm-omni): upgraded, told,
    // and never counted as open. Rejected before --reject-first's count: HTTP 503 still.
    const bool told =
        !admitted && handshake > options_.reject_first && options_.capacity_error_in_session;
    if (!admitted) {
        rejected_.fetch_add(1, std::memory_order_relaxed);
        if (!told) {
            co_await refuse(http::status::service_unavailable, "connection capacity exhausted\n");
            co_return;
        }
    }
    ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws.read_message_max(8 * 1024 * 1024);
    auto [aec] = co_await ws.async_accept(request, use_tuple);
    if (aec) {
        if (!told)
            active_.fetch_sub(1, std::memory_order_relaxed);
        co_return;
    }
    stream.set_option(tcp::no_delay(true));
    session_start start{0, std::string(target), told};
    if (told) {
        co_await handler(ws, start);
        co_return;
    }
    start.index = seen_.fetch_add(1, std::memory_order_relaxed);
    where.sessions.fetch_add(1, std::memory_order_relaxed);
    co_await handler(ws, start);
    active_.fetch_sub(1, std::memory_order_relaxed);
}

// One more open session, unless --max-sessions are open (a compare-and-swap: shards admit at
// once).
bool mock_host::take_slot() {
    auto open = active_.load(std::memory_order_relaxed);
    do {
        if (options_.max_sessions != 0 && open >= options_.max_sessions)
            return false;
    } while (!active_.compare_exchange_weak(open, open + 1, std::memory_order_relaxed));
    return true;
}

// With names_mutex_ held.
void mock_host::record_query(std::string_view target) {
    const auto q = target.find('?');
    std::string_view rest = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
    while (!rest.empty()) {
        const auto amp = rest.find('&');
        const auto pair = rest.substr(0, amp);
        query_names_.emplace(pair.substr(0, pair.find('=')));
        rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    }
    if (auto model = transport::query_parameter(target, "model"))
        models_.insert(std::move(*model));
}

void mock_host::stop_shard(shard& s) {
    if (s.stopped)
        return;
    s.stopped = true;
    s.stopped_cpu_s = runtime::thread_cpu_seconds();
    s.monitor.stop();
    s.stopped_signal.cancel();
    boost::system::error_code ignored;
    for (auto* socket : s.open)
        socket->close(ignored); // its pending operations complete with operation_aborted
}

void mock_host::stop() {
    if (stopped_.exchange(true))
        return;
    stopped_wall_s_ = to_seconds(clock::now() - started_);
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    // Each shard's sockets are closed on its own thread; the caller's own shard (the first,
    // by the contract) at once.
    auto self = shared_from_this();
    for (auto& s : shards_)
        asio::dispatch(s->ctx, [self, where = s.get()] { self->stop_shard(*where); });
}

awaitable<void> mock_host::until_stopped() {
    auto& s = my_shard(co_await asio::this_coro::executor);
    if (!s.stopped)
        co_await s.stopped_signal.async_wait(use_tuple);
}

boost::json::object mock_host::stats() const {
    std::vector<double> lags;
    for (const auto& s : shards_)
        lags.insert(lags.end(), s->monitor.lags_s().begin(), s->monitor.lags_s().end());
    std::size_t lags_over = 0;
    for (double l : lags)
        lags_over += l > protocol::late_threshold_s;
    const double wall = stopped_ ? stopped_wall_s_ : to_seconds(clock::now() - started_);
    boost::json::object o;
    o["sessions_seen"] = seen_.load();
    o["sessions_completed"] = completed_.load();
    o["sessions_rejected"] = rejected_.load();
    o["tls"] = tls_ != nullptr;
    boost::json::array names;
    {
        const std::lock_guard lock(names_mutex_);
        for (const auto& name : header_names_)
            names.emplace_back(name);
    }
    o["request_header_names"] = std::move(names);
    for (const auto& [key, values] :
         {std::pair{"request_query_names", &query_names_}, std::pair{"request_models", &models_},
          std::pair{"openai_beta", &openai_beta_}}) {
        boost::json::array a;
        for (const auto& v : *values)
            a.emplace_back(v);
        o[key] = std::move(a);
    }
    auto lag = to_json(summarize(lags, pacing_fractions));
    lag["over_80ms"] = lags_over;
    o["loop_lag_s"] = std::move(lag);
    o["wall_s"] = wall;
    o["threads"] = shards_.size();
    boost::json::array per_thread;
    for (const auto n : sessions_per_shard())
        per_thread.emplace_back(n);
    o["sessions_per_thread"] = std::move(per_thread);
    double cpu = 0;
    bool all_stopped = true;
    boost::json::array cpu_per_thread;
    for (const auto& s : shards_) {
        all_stopped = all_stopped && s->stopped_cpu_s >= 0;
        cpu += std::max(s->stopped_cpu_s, 0.0);
        cpu_per_thread.emplace_back(s->stopped_cpu_s);
    }
    if (stopped_ && all_stopped) {
        o["thread_cpu_s"] = cpu;
        o["thread_cpu_cores"] = wall > 0 ? cpu / wall : 0.0;
        if (shards_.size() > 1)
            o["thread_cpu_s_per_thread"] = std::move(cpu_per_thread);
    }
    return o;
}

awaitable<std::optional<std::string>> mock_sessions::get(std::string) {
    co_return std::nullopt;
}

} // namespace pacer::server::detail

namespace pacer::server {

mock_server::mock_server(std::shared_ptr<detail::mock_sessions> sessions)
    : sessions_(std::move(sessions)) {}

mock_server::~mock_server() = default;

void mock_server::listen() {
    sessions_->host->listen();
}

std::uint16_t mock_server::port() const {
    return sessions_->host->port();
}

pacer::awaitable<void> mock_server::serve() {
    auto s = sessions_; // every session holds the mock's state
    // A named handler, not a lambda built inside the co_await expression: g++ 12 destroys such
    // a capturing temporary twice (GCC PR c++/100611, temporaries in a co_await expression
    // destroyed more than once; seen here as one release too many of `s`, then a call into
    // the destroyed mock; reproduced with g++ 12.2, fine once named).
    const detail::mock_host::session_handler handler = [s](detail::ws_stream& ws,
                                                           const detail::session_start& start) {
        return s->run_session(ws, start);
    };
    const detail::mock_host::get_handler get = [s](std::string target) {
        return s->get(std::move(target));
    };
    co_await s->host->serve(handler, get);
}

void mock_server::stop() {
    sessions_->host->stop();
}

boost::json::object mock_server::stats() const {
    return sessions_->stats();
}

} // namespace pacer::server

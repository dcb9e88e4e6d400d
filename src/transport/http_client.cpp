#include <pacer/core/awaitable.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/transport/detail/maybe_tls_stream.hpp>
#include <pacer/transport/detail/tls_context.hpp>
#include <pacer/transport/http_client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <stdexcept>

namespace pacer::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t max_error_body = 512;

bool is_disconnect(const boost::system::error_code& ec) {
    return ec == http::error::end_of_stream || ec == http::error::partial_message ||
           ec == asio::error::eof || ec == asio::error::connection_reset ||
           ec == asio::error::broken_pipe || ec == asio::error::connection_aborted ||
           ec == asio::ssl::error::stream_truncated; // over TLS: closed without close_notify
}

} // namespace

http_endpoint parse_http_url(std::string_view url, std::string_view flag, url_use use) {
    const auto bad = [&](std::string_view why) {
        return bad_input(fmt::format("{} '{}' {}", flag, url, why));
    };
    http_endpoint ep;
    std::string_view rest;
    if (use == url_use::base && url.starts_with("https://")) {
        ep.tls = true;
        ep.port = "443";
        rest = url.substr(8);
    } else if (url.starts_with("http://")) {
        rest = url.substr(7);
    } else {
        throw bad(use == url_use::base ? "must start with http:// or https://"
                                       : "must start with http:// (e.g. "
                                         "http://127.0.0.1:8097/stats)");
    }
    if (rest.find('#') != std::string_view::npos)
        throw bad(use == url_use::base ? "must not have a query or fragment"
                                       : "must not have a fragment");
    const auto question = rest.find('?');
    if (question != std::string_view::npos) {
        if (use == url_use::base)
            throw bad("must not have a query or fragment");
        ep.query = std::string(rest.substr(question + 1));
        rest = rest.substr(0, question);
    }
    const auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) {
        std::string_view path = rest.substr(slash);
        while (use == url_use::base && !path.empty() && path.back() == '/')
            path.remove_suffix(1);
        ep.base_path = std::string(path);
    }
    if (authority.find('@') != std::string_view::npos)
        throw bad("must not carry credentials (use --api-key-env)");
    std::string_view host = authority;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos)
            throw bad("has an unclosed '['");
        host = authority.substr(1, close - 1);
        const auto after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':')
                throw bad("has bytes after ']'");
            ep.port = std::string(after.substr(1));
        }
    } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        ep.port = std::string(authority.substr(colon + 1));
    }
    if (host.empty())
        throw bad("has no host");
    unsigned port = 0;
    const auto* end = ep.port.data() + ep.port.size();
    const auto [p, ec] = std::from_chars(ep.port.data(), end, port);
    if (ep.port.empty() || ec != std::errc{} || p != end || port == 0 || port > 65535 ||
        ep.port.front() == '+')
        throw bad("has a port that is not 1..65535");
    ep.host = std::string(host);
    return ep;
}

std::string http_endpoint::url() const {
    const bool v6 = host.find(':') != std::string::npos;
    return fmt::format("{}://{}{}{}:{}{}", tls ? "https" : "http", v6 ? "[" : "", host,
                       v6 ? "]" : "", port, base_path);
}

std::string http_endpoint::target() const {
    const std::string path = base_path.empty() ? "/" : base_path;
    return query.empty() ? path : fmt::format("{}?{}", path, query);
}

std::string http_endpoint::target_with(std::string_view key_value) const {
    return fmt::format("{}{}{}", target(), query.empty() ? '?' : '&', key_value);
}

std::string_view to_string(http_error e) noexcept {
    switch (e) {
    case http_error::none:
        return "none";
    case http_error::connect:
        return "connect";
    case http_error::status:
        return "status";
    case http_error::timeout:
        return "timeout";
    case http_error::disconnect:
        return "disconnect";
    case http_error::aborted:
        return "aborted";
    }
    return "none";
}

using stream_type = detail::maybe_tls_stream;

// One connection and its read buffer: the buffer keeps its capacity from one request to the
// next, so a response is read in as few reads as it arrived in (a new flat_buffer reads 512
// bytes at first).
struct http_pool::connection {
    explicit connection(const executor& ex) : stream(ex) {}
    stream_type stream;
    beast::flat_buffer buffer;
};

struct http_pool::idle_set {
    std::vector<std::unique_ptr<connection>> streams;
};

namespace {

constexpr std::size_t read_buffer_capacity = 4096;

// The bytes Beast writes for the head of `req` (start line, fields, blank line).
std::string serialize_head(http::request<http::string_body>& req) {
    http::request_serializer<http::string_body> sr{req};
    sr.split(true);
    std::string head;
    boost::system::error_code ec;
    while (!ec && !sr.is_header_done())
        sr.next(ec, [&](boost::system::error_code&, const auto& buffers) {
            for (const auto b : beast::buffers_range_ref(buffers))
                head.append(static_cast<const char*>(b.data()), b.size());
            sr.consume(beast::buffer_bytes(buffers));
        });
    return head;
}

} // namespace

// The request Beast would send, with an empty body: the head of every request to one target
// with one set of headers is the same but for the Content-Length value, so it is serialized
// once and split around that value. Held by shared_ptr: a request still writing keeps the head
// it started with even if a later one, to another target, replaces it.
struct http_pool::request_head {
    bool post = true;
    std::string target;
    header_list headers;
    std::string before; ///< up to and with "Content-Length: "
    std::string after;  ///< from the "\r\n" after its value to the end of the head
};

std::shared_ptr<const http_pool::request_head>
http_pool::head_for(bool post, const std::string& target, const header_list& headers) {
    if (head_ && head_->post == post && head_->target == target && head_->headers == headers)
        return head_;
    http::request<http::string_body> req{post ? http::verb::post : http::verb::get, target, 11};
    req.set(http::field::host, endpoint_.host);
    req.set(http::field::user_agent, "pacer");
    if (post)
        req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "text/event-stream");
    for (const auto& [name, value] : headers)
        req.set(name, value);
    if (post)
        req.prepare_payload(); // a POST always gets a Content-Length, 0 included
    else
        req.content_length(0); // a GET's head has the same shape: "Content-Length: 0" is valid
    req.keep_alive(true);
    const std::string head = serialize_head(req);
    constexpr std::string_view field = "\r\nContent-Length: 0\r\n";
    const auto at = head.find(field);
    if (at == std::string::npos)
        throw std::logic_error("http_pool: the request head has no Content-Length");
    auto h = std::make_shared<request_head>();
    h->post = post;
    h->target = target;
    h->headers = headers;
    h->before = head.substr(0, at + field.size() - 3);
    h->after = head.substr(at + field.size() - 2);
    head_ = std::move(h);
    return head_;
}

http_pool::http_pool(executor ex, http_endpoint endpoint)
    : ex_(std::move(ex)), endpoint_(std::move(endpoint)), idle_(std::make_unique<idle_set>()) {
    if (endpoint_.tls && !endpoint_.tls_context)
        endpoint_.tls_context = make_tls_client_context("", false);
}

http_pool::~http_pool() = default;

std::size_t http_pool::idle() const noexcept {
    return idle_->streams.size();
}

void http_pool::close_idle() {
    for (auto& s : idle_->streams) {
        boost::system::error_code ignored;
        s->stream.next_layer().close(ignored);
    }
    idle_->streams.clear();
}

awaitable<http_exchange> http_pool::post_stream(std::string target, std::string body,
                                                const header_list& headers, time_point deadline,
                                                http_body_sink& sink) {
    return exchange(true, std::move(target), std::move(body), headers, deadline, sink);
}

awaitable<http_exchange> http_pool::get_stream(std::string target, const header_list& headers,
                                               time_point deadline, http_body_sink& sink) {
    return exchange(false, std::move(target), {}, headers, deadline, sink);
}

namespace {

// Reads the body: to `sink` when the status is 2xx, else its first bytes into the message.
// False with `out`'s error set when the read failed or the sink stopped it.
awaitable<bool> read_body(stream_type& stream, beast::flat_buffer& buffer,
                          http::response_parser<http::buffer_body>& parser, http_body_sink& sink,
                          const detail::socket_deadline& watchdog, http_exchange& out) {
    const bool ok = out.status >= 200 && out.status < 300;
    std::string error_body;
    std::array<char, 4096> piece{};
    bool stopped = false;
    while (!parser.is_done()) {
        parser.get().body().data = piece.data();
        parser.get().body().size = piece.size();
        auto [rec, n] = co_await http::async_read_some(stream, buffer, parser, use_tuple);
        if (rec == http::error::need_buffer)
            rec = {};
        const std::size_t got = piece.size() - parser.get().body().size;
        if (got > 0) {
            const std::string_view bytes(piece.data(), got);
            if (ok) {
                if (sink.on_data && !sink.on_data(bytes, clock::now())) {
                    stopped = true;
                    break;
                }
            } else if (error_body.size() < max_error_body) {
                error_body.append(bytes.substr(0, max_error_body - error_body.size()));
            }
        }
        if (rec) {
            out.error = watchdog.fired() ? http_error::timeout : http_error::disconnect;
            out.message = rec.message();
            co_return false;
        }
    }
    if (stopped) {
        out.error = http_error::aborted;
        co_return false; // the stream is closed with its connection
    }
    if (!ok) {
        out.error = http_error::status;
        out.message = fmt::format("HTTP {}", out.status);
        for (char& c : error_body)
            if (c == '\n' || c == '\r')
                c = ' ';
        if (!error_body.empty())
            out.message += ": " + error_body;
    }
    co_return true;
}

} // namespace

awaitable<bool> http_pool::open(connection& conn, detail::socket_deadline& watchdog,
                                http_exchange& out) {
    stream_type* const stream = &conn.stream;
    auto& tcp_layer = stream->next_layer();
    if (resolved_.empty()) {
        detail::tcp_resolver resolver(ex_);
        auto [ec, results] =
            co_await resolver.async_resolve(endpoint_.host, endpoint_.port, use_tuple);
        if (ec) {
            out.error = http_error::connect;
            out.message = fmt::format("cannot resolve {}: {}", endpoint_.host, ec.message());
            co_return false;
        }
        for (const auto& r : results)
            resolved_.push_back(r.endpoint());
    }
    if (watchdog.fired()) {
        out.error = http_error::timeout;
        out.message = fmt::format("cannot connect to {}:{}: the deadline passed", endpoint_.host,
                                  endpoint_.port);
        co_return false;
    }
    auto phase_start = clock::now();
    auto [ec, ep] = co_await asio::async_connect(tcp_layer, resolved_, use_tuple);
    if (ec) {
        out.error = watchdog.fired() ? http_error::timeout : http_error::connect;
        out.message = fmt::format("cannot connect to {}:{}: {}", endpoint_.host, endpoint_.port,
                                  ec.message());
        co_return false;
    }
    if (watchdog.fired()) { // connected as the deadline passed: the socket is closed
        out.error = http_error::timeout;
        out.message = fmt::format("cannot connect to {}:{}: the deadline passed", endpoint_.host,
                                  endpoint_.port);
        co_return false;
    }
    tcp_layer.set_option(tcp::no_delay(true));
    out.connect_s = to_seconds(clock::now() - phase_start);
    connect_times_.push_back(*out.connect_s);
    if (auto* tls = stream->tls()) {
        phase_start = clock::now();
        const auto& ctx = *endpoint_.tls_context;
        if (auto why = detail::prepare_client_handshake(*tls, ctx, endpoint_.host); !why.empty()) {
            out.error = http_error::connect;
            out.message = std::move(why);
            co_return false;
        }
        auto [tec] = co_await tls->async_handshake(asio::ssl::stream_base::client, use_tuple);
        if (tec) {
            out.error = watchdog.fired() ? http_error::timeout : http_error::connect;
            out.message =
                detail::describe_handshake_failure(*tls, ctx, tec, endpoint_.host, endpoint_.port);
            co_return false;
        }
        out.tls_s = to_seconds(clock::now() - phase_start);
        tls_times_.push_back(*out.tls_s);
    }
    co_return true;
}

awaitable<http_exchange> http_pool::exchange(bool post, std::string target, std::string body,
                                             const header_list& headers, time_point deadline,
                                             http_body_sink& sink) {
    // The bytes Beast's serializer would write, without building the message each time.
    const auto head = head_for(post, target, headers);
    std::array<char, 24> length{};
    const auto length_end =
        std::to_chars(length.data(), length.data() + length.size(), body.size()).ptr;
    const std::array<asio::const_buffer, 4> request{
        asio::buffer(head->before),
        asio::buffer(length.data(), static_cast<std::size_t>(length_end - length.data())),
        asio::buffer(head->after), asio::buffer(body)};

    // The deadline: one timer for the whole exchange, where Beast's tcp_stream would arm and
    // cancel one around every read and write. When it fires it closes the connection in use,
    // which ends the pending operation; `fired()` then says the deadline ended it.
    detail::socket_deadline watchdog(ex_, deadline);

    http_exchange out;
    // Each retry uses up one pooled connection; a new connection is never retried.
    for (;;) {
        std::unique_ptr<connection> conn;
        const bool reused = !idle_->streams.empty();
        if (reused) {
            conn = std::move(idle_->streams.back());
            idle_->streams.pop_back();
            conn->buffer.clear(); // nothing of the last answer is left to read
        } else {
            conn = std::make_unique<connection>(ex_);
            conn->buffer.reserve(read_buffer_capacity);
        }
        stream_type* const stream = &conn->stream;
        if (!reused && endpoint_.tls)
            stream->use_tls(endpoint_.tls_context->ctx); // before touching the TCP layer
        watchdog.watch(&stream->next_layer());
        if (!reused) {
            if (!co_await open(*conn, watchdog, out))
                co_return out;
            ++opened_;
        }
        out.reused = reused;

        auto [wec, written] = co_await asio::async_write(*stream, request, use_tuple);
        beast::flat_buffer& buffer = conn->buffer;
        http::response_parser<http::buffer_body> parser;
        parser.body_limit(boost::none);
        boost::system::error_code ec = wec;
        if (!ec)
            std::tie(ec, std::ignore) =
                co_await http::async_read_header(*stream, buffer, parser, use_tuple);
        if (ec && reused && !parser.got_some() && !watchdog.fired() &&
            (is_disconnect(ec) || ec == asio::error::not_connected)) {
            continue; // the server closed the idle connection: try the next one, or a new one
        }
        if (reused)
            ++reused_;
        if (ec) {
            out.error = watchdog.fired()    ? http_error::timeout
                        : is_disconnect(ec) ? http_error::disconnect
                                            : http_error::disconnect;
            out.message = ec.message();
            co_return out;
        }
        out.status = parser.get().result_int();
        if (sink.on_head)
            sink.on_head(out.status, clock::now());
        if (!co_await read_body(*stream, buffer, parser, sink, watchdog, out))
            co_return out;
        if (parser.keep_alive() && !watchdog.fired()) { // a fired deadline closed the socket
            watchdog.watch(nullptr);
            idle_->streams.push_back(std::move(conn));
        }
        co_return out;
    }
}

} // namespace pacer::transport

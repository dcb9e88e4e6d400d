#include <pacer/core/awaitable.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/server/llm_mock.hpp>
#include <pacer/transport/detail/maybe_tls_stream.hpp>
#include <pacer/transport/detail/tls_context.hpp>
#include <pacer/transport/openai_stream.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace pacer::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using stream_type = transport::detail::maybe_tls_stream;

namespace {

constexpr std::uint64_t max_tokens_limit = 1'000'000;
constexpr std::array<std::string_view, 2> token_keys = {"max_tokens", "max_completion_tokens"};

} // namespace

std::string_view to_string(llm_fault f) noexcept {
    switch (f) {
    case llm_fault::none:
        return "none";
    case llm_fault::server_error:
        return "server_error";
    case llm_fault::stall:
        return "stall";
    case llm_fault::malformed_sse:
        return "malformed_sse";
    case llm_fault::disconnect:
        return "disconnect";
    }
    return "none";
}

llm_fault parse_llm_fault(std::string_view name) {
    for (auto f : {llm_fault::none, llm_fault::server_error, llm_fault::stall,
                   llm_fault::malformed_sse, llm_fault::disconnect})
        if (name == to_string(f))
            return f;
    throw bad_input(fmt::format(
        "--fault must be none, server_error, stall, malformed_sse or disconnect (got '{}')", name));
}

time_point after_pause(time_point due, time_point origin, duration every, duration pause) {
    if (every <= duration::zero() || pause <= duration::zero() || due < origin)
        return due;
    const auto into = (due - origin) % every;
    return into < pause ? due - into + pause : due;
}

struct llm_mock::state : std::enable_shared_from_this<state> {
    state(asio::io_context& io, llm_mock_options o)
        : ex(io.get_executor()), options(std::move(o)),
          tls(transport::detail::make_tls_server_context(options.tls_cert, options.tls_key)),
          acceptor(io) {}
    executor ex;
    llm_mock_options options;
    std::unique_ptr<asio::ssl::context> tls; // set when serving https://
    transport::detail::tcp_acceptor acceptor;
    std::size_t requests = 0, completed = 0, rejected = 0, faulted = 0, bad_requests = 0;
    std::size_t bearer = 0; // generation requests with an `Authorization: Bearer` header
    std::size_t in_flight = 0, peak_in_flight = 0, connections = 0;
    std::size_t tls_failures = 0; // connections whose TLS handshake failed
    std::uint64_t paused_tokens = 0;
    time_point started = clock::now(); // the origin of the pauses

    // When the token due at `due` may leave (a pause holds it).
    time_point release(time_point due) {
        const auto at = after_pause(due, started, options.pause_every, options.pause);
        if (at != due)
            ++paused_tokens;
        return at;
    }
    std::uint64_t tokens = 0;

    duration delay(duration base) const {
        const auto others = static_cast<long>(in_flight > 0 ? in_flight - 1 : 0);
        return base + options.batch_cost * others;
    }

    awaitable<void> connection(transport::detail::tcp_socket socket);
    // Returns whether the connection may carry another request.
    awaitable<bool> handle(stream_type& stream, const http::request<http::string_body>& req);
    awaitable<bool> generate(stream_type& stream, const json::object& body, bool chat,
                             bool keep_alive, llm_fault fault);
};

namespace {

http::response<http::string_body> json_response(http::status status, std::string body,
                                                bool keep_alive) {
    http::response<http::string_body> res{status, 11};
    res.set(http::field::server, "pacer-llm-mock");
    res.set(http::field::content_type, "application/json");
    res.keep_alive(keep_alive);
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

std::string error_body(std::string_view message, std::string_view type, int code) {
    json::object e{{"message", message}, {"type", type}, {"code", code}};
    return json::serialize(json::object{{"error", std::move(e)}});
}

} // namespace

awaitable<void> llm_mock::state::connection(transport::detail::tcp_socket socket) {
    auto self = shared_from_this();
    ++connections;
    stream_type stream(std::move(socket));
    if (tls) {
        stream.use_tls(*tls); // before any reference to the TCP layer
        transport::detail::socket_deadline deadline(stream.next_layer(), std::chrono::seconds(30));
        auto [hec] =
            co_await stream.tls()->async_handshake(asio::ssl::stream_base::server, use_tuple);
        deadline.disarm();
        if (hec) {
            ++tls_failures;
            boost::system::error_code ignored;
            stream.next_layer().close(ignored);
            co_return;
        }
    }
    beast::flat_buffer buffer;
    for (;;) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(16 * 1024 * 1024);
        auto [ec, n] = co_await http::async_read(stream, buffer, parser, use_tuple);
        if (ec)
            break;
        const auto req = parser.release();
        if (!co_await handle(stream, req) || !req.keep_alive())
            break;
    }
    boost::system::error_code ignored;
    stream.next_layer().shutdown(tcp::socket::shutdown_send, ignored);
    stream.next_layer().close(ignored);
}

awaitable<bool> llm_mock::state::handle(stream_type& stream,
                                        const http::request<http::string_body>& req) {
    const bool keep = req.keep_alive();
    const auto send = [&](http::status status, std::string body) -> awaitable<bool> {
        auto res = json_response(status, std::move(body), keep);
        auto [ec, n] = co_await http::async_write(stream, res, use_tuple);
        co_return !ec;
    };
    const std::string_view target = req.target();
    if (req.method() == http::verb::get && target == "/health")
        co_return co_await send(http::status::ok, "{}");
    if (req.method() == http::verb::get && target == "/v1/models")
        co_return co_await send(
            http::status::ok,
            R"({"object":"list","data":[{"id":"pacer-llm-mock","object":"model","owned_by":"pacer"}]})");
    const bool chat = target == "/v1/chat/completions";
    if (!chat && target != "/v1/completions") {
        ++bad_requests;
        co_return co_await send(
            http::status::not_found,
            error_body(fmt::format("no route {}", target), "NotFoundError", 404));
    }
    if (req.method() != http::verb::post) {
        ++bad_requests;
        co_return co_await send(http::status::method_not_allowed,
                                error_body("use POST", "BadRequestError", 405));
    }
    boost::system::error_code ec;
    const json::value body = json::parse(req.body(), ec);
    if (ec || !body.is_object()) {
        ++bad_requests;
        co_return co_await send(
            http::status::bad_request,
            error_body("the body is not a JSON object", "BadRequestError", 400));
    }
    const std::size_t k = requests++;
    if (req[http::field::authorization].starts_with("Bearer "))
        ++bearer;
    if (options.max_concurrency > 0 && in_flight >= options.max_concurrency) {
        ++rejected;
        co_return co_await send(http::status::service_unavailable,
                                error_body("server at capacity", "ServiceUnavailableError", 503));
    }
    const bool hit = options.fault != llm_fault::none &&
                     (!options.fault_requests || options.fault_requests->contains(k));
    const llm_fault fault = hit ? options.fault : llm_fault::none;
    if (hit)
        ++faulted;
    if (fault == llm_fault::server_error)
        co_return co_await send(http::status::internal_server_error,
                                error_body("injected fault", "InternalServerError", 500));
    ++in_flight;
    peak_in_flight = std::max(peak_in_flight, in_flight);
    const bool again = co_await generate(stream, body.get_object(), chat, keep, fault);
    --in_flight;
    co_return again;
}

namespace {

// What a generation request asks, and every frame of its answer, built outside coroutines.
struct generation {
    std::uint64_t tokens = 0;
    bool stream = false;
    std::string full_body;        // the non-streaming answer
    std::string role_frame;       // chat: the first chunk, with the role and no text
    std::string token_frame;      // one token's chunk
    std::string last_token_frame; // the last token's chunk (finish_reason "length")
    std::string usage_frame;      // empty unless stream_options.include_usage
};

std::string frame(std::string_view data) {
    std::string f = "data: ";
    f.append(data);
    f.append("\n\n");
    return f;
}

generation plan_generation(const json::object& body, bool chat, std::uint64_t default_tokens,
                           std::size_t number) {
    generation g;
    std::uint64_t n = default_tokens;
    for (const std::string_view key : token_keys)
        if (const auto* v = body.if_contains(key)) {
            if (v->is_uint64())
                n = v->get_uint64();
            else if (v->is_int64() && v->get_int64() > 0)
                n = static_cast<std::uint64_t>(v->get_int64());
        }
    n = std::clamp<std::uint64_t>(n, 1, max_tokens_limit);
    g.tokens = n;
    std::uint64_t prompt_tokens = 0;
    if (const auto* p = body.if_contains("prompt"); p && p->is_string())
        prompt_tokens = transport::approx_tokens(p->get_string());
    if (const auto* m = body.if_contains("messages"); m && m->is_array())
        for (const auto& msg : m->get_array())
            if (msg.is_object())
                if (const auto* c = msg.get_object().if_contains("content"); c && c->is_string())
                    prompt_tokens += transport::approx_tokens(c->get_string());
    std::string model = "pacer-llm-mock";
    if (const auto* m = body.if_contains("model"); m && m->is_string())
        model = std::string(m->get_string());
    if (const auto* st = body.if_contains("stream"); st && st->is_bool())
        g.stream = st->get_bool();
    bool include_usage = false;
    if (const auto* so = body.if_contains("stream_options"); so && so->is_object())
        if (const auto* iu = so->get_object().if_contains("include_usage"); iu && iu->is_bool())
            include_usage = iu->get_bool();
    const json::object usage{{"prompt_tokens", prompt_tokens},
                             {"completion_tokens", n},
                             {"total_tokens", prompt_tokens + n}};
    const std::string id = fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", number);
    const std::string_view object = chat ? "chat.completion.chunk" : "text_completion";
    const auto chunk = [&](json::object choice) {
        json::array choices;
        choices.push_back(std::move(choice));
        json::object o{{"id", id}, {"object", object}, {"created", 0}, {"model", model}};
        o["choices"] = std::move(choices);
        return frame(json::serialize(o));
    };
    if (!g.stream) {
        std::string text;
        for (std::uint64_t t = 0; t < n; ++t)
            text += " tok";
        json::object choice{{"index", 0}, {"finish_reason", "length"}};
        if (chat)
            choice["message"] = json::object{{"role", "assistant"}, {"content", text}};
        else
            choice["text"] = text;
        json::array choices;
        choices.push_back(std::move(choice));
        json::object res{{"id", id},
                         {"object", chat ? "chat.completion" : "text_completion"},
                         {"created", 0},
                         {"model", model}};
        res["choices"] = std::move(choices);
        res["usage"] = usage;
        g.full_body = json::serialize(res);
        return g;
    }
    if (chat)
        g.role_frame = chunk({{"index", 0},
                              {"delta", json::object{{"role", "assistant"}, {"content", ""}}},
                              {"finish_reason", nullptr}});
    for (const bool last : {false, true}) {
        json::object choice{{"index", 0},
                            {"logprobs", nullptr},
                            {"finish_reason", last ? json::value("length") : nullptr}};
        if (chat)
            choice["delta"] = json::object{{"content", " tok"}};
        else
            choice["text"] = " tok";
        (last ? g.last_token_frame : g.token_frame) = chunk(std::move(choice));
    }
    if (include_usage) {
        json::object o{{"id", id}, {"object", object}, {"created", 0}, {"model", model}};
        o["choices"] = json::array{};
        o["usage"] = usage;
        g.usage_frame = frame(json::serialize(o));
    }
    return g;
}

const std::string malformed_frame = frame("{not valid json");
const std::string done_frame = frame("[DONE]");

} // namespace

awaitable<bool> llm_mock::state::generate(stream_type& stream, const json::object& body, bool chat,
                                          bool keep_alive, llm_fault fault) {
    const generation g = plan_generation(body, chat, options.default_max_tokens, requests);
    const std::uint64_t n = g.tokens;
    steady_timer timer(ex);
    time_point due = clock::now();

    if (!g.stream) {
        for (std::uint64_t t = 0; t < n; ++t) {
            due = release(due + delay(t == 0 ? options.ttft : options.itl));
            timer.expires_at(due);
            co_await timer.async_wait(use_tuple);
        }
        tokens += n;
        ++completed;
        auto r = json_response(http::status::ok, g.full_body, keep_alive);
        auto [ec, w] = co_await http::async_write(stream, r, use_tuple);
        co_return !ec;
    }

    http::response<http::empty_body> head{http::status::ok, 11};
    head.set(http::field::server, "pacer-llm-mock");
    head.set(http::field::content_type, "text/event-stream");
    head.set(http::field::cache_control, "no-cache");
    head.keep_alive(keep_alive);
    head.chunked(true);
    http::response_serializer<http::empty_body> sr{head};
    if (auto [ec, w] = co_await http::async_write_header(stream, sr, use_tuple); ec)
        co_return false;
    if (!g.role_frame.empty()) {
        auto [ec, w] = co_await asio::async_write(
            stream, http::make_chunk(asio::buffer(g.role_frame)), use_tuple);
        if (ec)
            co_return false;
    }
    for (std::uint64_t t = 0; t < n; ++t) {
        due = release(due + delay(t == 0 ? options.ttft : options.itl));
        timer.expires_at(due);
        co_await timer.async_wait(use_tuple);
        if (fault == llm_fault::disconnect && t == n / 2) {
            boost::system::error_code ignored;
            stream.next_layer().shutdown(tcp::socket::shutdown_both, ignored);
            stream.next_layer().close(ignored);
            co_return false;
        }
        if (fault == llm_fault::malformed_sse && t == std::min<std::uint64_t>(1, n - 1)) {
            auto [ec, w] = co_await asio::async_write(
                stream, http::make_chunk(asio::buffer(malformed_frame)), use_tuple);
            if (ec)
                co_return false;
        }
        if (fault == llm_fault::stall && t == std::min<std::uint64_t>(1, n - 1)) {
            // Nothing more: wait for the client to give up and close.
            std::array<char, 1> byte{};
            co_await stream.next_layer().async_read_some(asio::buffer(byte), use_tuple);
            co_return false;
        }
        const std::string& f = t + 1 == n ? g.last_token_frame : g.token_frame;
        auto [ec, w] =
            co_await asio::async_write(stream, http::make_chunk(asio::buffer(f)), use_tuple);
        if (ec)
            co_return false;
        ++tokens;
    }
    if (!g.usage_frame.empty()) {
        auto [ec, w] = co_await asio::async_write(
            stream, http::make_chunk(asio::buffer(g.usage_frame)), use_tuple);
        if (ec)
            co_return false;
    }
    {
        auto [ec, w] = co_await asio::async_write(
            stream, http::make_chunk(asio::buffer(done_frame)), use_tuple);
        if (ec)
            co_return false;
    }
    auto [ec, w] = co_await asio::async_write(stream, http::make_chunk_last(), use_tuple);
    if (ec)
        co_return false;
    ++completed;
    co_return true;
}

llm_mock::llm_mock(asio::io_context& io, llm_mock_options options)
    : st_(std::make_shared<state>(io, std::move(options))) {}

llm_mock::~llm_mock() = default;

void llm_mock::listen() {
    const tcp::endpoint ep(asio::ip::make_address(st_->options.host), st_->options.port);
    st_->acceptor.open(ep.protocol());
    st_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    st_->acceptor.bind(ep);
    st_->acceptor.listen(asio::socket_base::max_listen_connections);
}

bool llm_mock::tls() const {
    return st_->tls != nullptr;
}

std::uint16_t llm_mock::port() const {
    return st_->acceptor.local_endpoint().port();
}

awaitable<void> llm_mock::serve() {
    auto st = st_;
    for (;;) {
        auto [ec, socket] = co_await st->acceptor.async_accept(use_tuple);
        if (ec) {
            if (!st->acceptor.is_open())
                co_return;
            continue;
        }
        socket.set_option(tcp::no_delay(true));
        asio::co_spawn(st->ex, st->connection(std::move(socket)), asio::detached);
    }
}

void llm_mock::stop() {
    boost::system::error_code ignored;
    st_->acceptor.close(ignored);
}

json::object llm_mock::stats() const {
    const auto& s = *st_;
    return {{"requests", s.requests},
            {"completed", s.completed},
            {"rejected", s.rejected},
            {"faulted", s.faulted},
            {"bad_requests", s.bad_requests},
            {"peak_in_flight", s.peak_in_flight},
            {"connections", s.connections},
            {"tokens", s.tokens},
            {"fault", to_string(s.options.fault)},
            {"with_bearer_token", s.bearer},
            {"tls", s.tls != nullptr},
            {"tls_handshake_failures", s.tls_failures},
            {"paused_tokens", s.paused_tokens}};
}

} // namespace pacer::server

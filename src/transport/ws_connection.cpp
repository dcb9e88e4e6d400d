#include <pacer/core/awaitable.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/transport/detail/maybe_tls_stream.hpp>
#include <pacer/transport/detail/tls_context.hpp>
#include <pacer/transport/error.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <stdexcept>

namespace pacer::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

std::vector<std::string> client_options::header_names() const {
    std::vector<std::string> names;
    for (const auto& h : headers)
        names.push_back(h.first);
    return names;
}

ws_endpoint parse_ws_url(std::string_view url) {
    constexpr std::string_view plain = "ws://";
    constexpr std::string_view secure = "wss://";
    ws_endpoint ep;
    std::string_view rest;
    if (url.substr(0, plain.size()) == plain) {
        rest = url.substr(plain.size());
    } else if (url.substr(0, secure.size()) == secure) {
        rest = url.substr(secure.size());
        ep.tls = true;
        ep.port = "443";
    } else {
        throw bad_input(fmt::format("--url must start with ws:// or wss:// (got '{}')", url));
    }
    const auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    ep.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos)
            throw bad_input(fmt::format("--url has an unclosed '[': '{}'", url));
        ep.host = std::string(authority.substr(1, close - 1));
        authority.remove_prefix(close + 1);
        if (!authority.empty() && authority.front() == ':')
            ep.port = std::string(authority.substr(1));
        else if (!authority.empty())
            throw bad_input(fmt::format("--url is not ws://HOST:PORT/PATH: '{}'", url));
    } else {
        const auto colon = authority.rfind(':');
        ep.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos)
            ep.port = std::string(authority.substr(colon + 1));
    }
    if (ep.host.empty() || ep.port.empty() ||
        ep.port.find_first_not_of("0123456789") != std::string::npos)
        throw bad_input(fmt::format("--url is not ws://HOST:PORT/PATH: '{}'", url));
    unsigned port = 0;
    const auto* end = ep.port.data() + ep.port.size();
    if (const auto [p, ec] = std::from_chars(ep.port.data(), end, port);
        ec != std::errc{} || p != end || port == 0 || port > 65535)
        throw bad_input(fmt::format("--url has a port that is not 1..65535: '{}'", url));
    return ep;
}

namespace {

// The query of a target (after the first '?'), without a fragment; empty when there is none.
std::string_view query_of(std::string_view target) {
    const auto q = target.find('?');
    if (q == std::string_view::npos)
        return {};
    target.remove_prefix(q + 1);
    return target.substr(0, target.find('#'));
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

} // namespace

std::optional<std::string> query_parameter(std::string_view target, std::string_view name) {
    std::string_view rest = query_of(target);
    while (!rest.empty()) {
        const auto amp = rest.find('&');
        const std::string_view pair = rest.substr(0, amp);
        rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
        const auto eq = pair.find('=');
        if (pair.substr(0, eq) != name)
            continue;
        const std::string_view raw =
            eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
        std::string value;
        for (std::size_t i = 0; i < raw.size(); ++i) {
            const int hi = raw[i] == '%' && i + 2 < raw.size() ? hex_digit(raw[i + 1]) : -1;
            const int lo = hi >= 0 ? hex_digit(raw[i + 2]) : -1;
            if (lo >= 0) {
                value.push_back(static_cast<char>(hi * 16 + lo));
                i += 2;
            } else if (raw[i] == '+') {
                value.push_back(' '); // form encoding, as servers read a query
            } else {
                value.push_back(raw[i]);
            }
        }
        return value;
    }
    return std::nullopt;
}

std::string with_query_parameter(std::string_view target, std::string_view name,
                                 std::string_view value) {
    std::string out(target);
    if (out.find('?') == std::string::npos)
        out += '?';
    else if (out.back() != '?' && out.back() != '&')
        out += '&';
    out.append(name);
    out += '=';
    constexpr std::string_view unreserved = "-._~";
    for (const char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
            unreserved.find(c) != std::string_view::npos)
            out.push_back(c);
        else
            out += fmt::format("%{:02X}", static_cast<unsigned>(u));
    }
    return out;
}

void prepare_tls(ws_endpoint& ep) {
    if (!ep.tls)
        return;
    ep.client.tls_context = make_tls_client_context(ep.client.ca_file, ep.client.insecure);
}

std::pair<std::string, std::string> parse_header(std::string_view text) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos || colon == 0)
        throw bad_input("--header must be 'Name: value'");
    std::string name(text.substr(0, colon));
    // RFC 9110 token characters only: no blanks, no CR/LF, no separators.
    constexpr std::string_view token_extra = "!#$%&'*+-.^_`|~";
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) ||
              token_extra.find(c) != std::string_view::npos))
            throw bad_input(fmt::format(
                "--header name '{}' is not an HTTP token (letters, digits, -, _ ...)", name));
    std::string_view value = text.substr(colon + 1);
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos)
        throw bad_input(fmt::format("--header {} has a CR, LF or NUL in its value", name));
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
        value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
        value.remove_suffix(1);
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    constexpr std::array<std::string_view, 4> reserved{"host", "upgrade", "connection",
                                                       "content-length"};
    if (std::find(reserved.begin(), reserved.end(), lower) != reserved.end() ||
        lower.rfind("sec-websocket-", 0) == 0)
        throw bad_input(fmt::format(
            "--header {} would override the WebSocket handshake: pacer sets it itself", name));
    return {std::move(name), std::string(value)};
}

struct ws_connection::impl {
    explicit impl(executor ex) : ws(ex), in(max_message_bytes + 1) {}
    websocket::stream<detail::maybe_tls_stream> ws;
    beast::flat_buffer in;                   // the last message read
    std::shared_ptr<tls_client_context> tls; // keeps the context alive beside its stream
    handshake_times times;
};

ws_connection::ws_connection(executor ex) : impl_(std::make_unique<impl>(ex)) {}
ws_connection::~ws_connection() = default;

awaitable<handshake_result> ws_connection::connect(const ws_endpoint& ep) {
    auto& ws = impl_->ws;
    impl_->times = {};
    handshake_result result;
    if (ep.tls) {
        impl_->tls = ep.client.tls_context;
        if (!impl_->tls) { // built here when the caller did not prepare one
            ws_endpoint copy = ep;
            try {
                prepare_tls(copy);
            } catch (const std::invalid_argument& e) {
                result.ec = asio::error::invalid_argument;
                result.error = {transport_errc::tls_setup_failed, e.what()};
                co_return result;
            }
            impl_->tls = copy.client.tls_context;
        }
        ws.next_layer().use_tls(impl_->tls->ctx); // before any reference to the TCP socket
    }
    auto& socket = beast::get_lowest_layer(ws);
    detail::tcp_resolver resolver(ws.get_executor());
    auto [rec, endpoints] = co_await resolver.async_resolve(ep.host, ep.port, use_tuple);
    if (rec) {
        result.ec = rec;
        result.error = {transport_errc::resolve_failed, ep.host, rec};
        co_return result;
    }
    auto phase_start = clock::now();
    auto [cec, endpoint] = co_await asio::async_connect(socket, endpoints, use_tuple);
    if (cec) {
        result.ec = cec;
        result.error = {transport_errc::connect_failed, fmt::format("{}:{}", ep.host, ep.port),
                        cec};
        co_return result;
    }
    socket.set_option(tcp::no_delay(true));
    impl_->times.connect_s = to_seconds(clock::now() - phase_start);

    if (ep.tls) {
        phase_start = clock::now();
        auto& tls = *ws.next_layer().tls();
        if (auto why = detail::prepare_client_handshake(tls, *impl_->tls, ep.host); !why.empty()) {
            result.ec = asio::error::invalid_argument;
            result.error = {transport_errc::tls_handshake_failed, std::move(why)};
            co_return result;
        }
        detail::socket_deadline deadline(socket, std::chrono::seconds(30));
        auto [tec] = co_await tls.async_handshake(asio::ssl::stream_base::client, use_tuple);
        deadline.disarm();
        if (deadline.fired())
            tec = asio::error::timed_out;
        if (tec) {
            result.ec = tec;
            result.error = {
                transport_errc::tls_handshake_failed,
                detail::describe_handshake_failure(tls, *impl_->tls, tec, ep.host, ep.port), tec};
            co_return result;
        }
        impl_->times.tls_s = to_seconds(clock::now() - phase_start);
    }

    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = std::chrono::seconds(30);
    timeouts.idle_timeout = websocket::stream_base::none();
    timeouts.keep_alive_pings = false;
    ws.set_option(timeouts);
    ws.read_message_max(max_message_bytes);
    ws.auto_fragment(false);
    ws.text(true);
    if (!ep.client.headers.empty())
        ws.set_option(websocket::stream_base::decorator(
            [headers = ep.client.headers](websocket::request_type& req) {
                for (const auto& [name, value] : headers)
                    req.set(name, value);
            }));

    const std::string host = ep.host.find(':') != std::string::npos
                                 ? fmt::format("[{}]:{}", ep.host, ep.port)
                                 : fmt::format("{}:{}", ep.host, ep.port);
    phase_start = clock::now();
    websocket::response_type response;
    auto [hec] = co_await ws.async_handshake(response, host, ep.target, use_tuple);
    if (hec) {
        result.ec = hec;
        if (hec == websocket::error::upgrade_declined) {
            result.http_status = response.result_int();
            result.error = {transport_errc::upgrade_declined, std::to_string(result.http_status)};
        } else {
            result.error = {transport_errc::upgrade_failed, "", hec};
        }
        co_return result;
    }
    impl_->times.upgrade_s = to_seconds(clock::now() - phase_start);
    if (ep.client.handshakes)
        ep.client.handshakes->add(impl_->times);
    co_return result;
}

handshake_times ws_connection::times() const {
    return impl_->times;
}

awaitable<boost::system::error_code> ws_connection::write(std::string_view text) {
    auto [ec, n] =
        co_await impl_->ws.async_write(asio::buffer(text.data(), text.size()), use_tuple);
    co_return ec;
}

awaitable<boost::system::error_code> ws_connection::read() {
    impl_->in.clear();
    auto [ec, n] = co_await impl_->ws.async_read(impl_->in, use_tuple);
    co_return ec;
}

std::string_view ws_connection::message() const {
    const auto data = impl_->in.cdata();
    return {static_cast<const char*>(data.data()), data.size()};
}

awaitable<void> ws_connection::close(std::chrono::milliseconds timeout) {
    auto& ws = impl_->ws;
    if (ws.is_open()) {
        websocket::stream_base::timeout timeouts{};
        timeouts.handshake_timeout = timeout;
        timeouts.idle_timeout = websocket::stream_base::none();
        timeouts.keep_alive_pings = false;
        ws.set_option(timeouts);
        co_await ws.async_close(websocket::close_code::normal, use_tuple);
    }
    boost::system::error_code ignored;
    beast::get_lowest_layer(ws).close(ignored);
}

void ws_connection::cancel() {
    boost::system::error_code ignored;
    beast::get_lowest_layer(impl_->ws).cancel(ignored);
}

bool ws_connection::is_open() const {
    return impl_->ws.is_open();
}

bool ws_connection::last_was_binary() const {
    return impl_->ws.got_binary();
}

bool ws_connection::closed_by_peer(boost::system::error_code ec) const {
    return ec == websocket::error::closed;
}

namespace {

// A close frame as the Python `websockets` library prints it: `1011 (internal error) reason`.
std::string close_frame_text(unsigned code, std::string_view reason) {
    std::string_view why = "unknown";
    switch (code) {
    case 1000:
        why = "OK";
        break;
    case 1001:
        why = "going away";
        break;
    case 1002:
        why = "protocol error";
        break;
    case 1003:
        why = "unsupported data";
        break;
    case 1005:
        why = "no status received [internal]";
        break;
    case 1006:
        why = "connection closed abnormally [internal]";
        break;
    case 1007:
        why = "invalid frame payload data";
        break;
    case 1008:
        why = "policy violation";
        break;
    case 1009:
        why = "message too big";
        break;
    case 1010:
        why = "extension is required";
        break;
    case 1011:
        why = "internal error";
        break;
    case 1012:
        why = "service restart";
        break;
    case 1013:
        why = "try again later";
        break;
    case 1014:
        why = "bad gateway";
        break;
    case 1015:
        why = "TLS handshake failure [internal]";
        break;
    default:
        if (code >= 3000 && code < 4000)
            why = "registered";
        else if (code >= 4000 && code < 5000)
            why = "private use";
    }
    return reason.empty() ? fmt::format("{} ({})", code, why)
                          : fmt::format("{} ({}) {}", code, why, reason);
}

} // namespace

failure ws_connection::failure_of(boost::system::error_code ec) const {
    if (ec == websocket::error::closed) {
        // The server closed first and Beast echoed its close frame, as `websockets` does:
        // "received X; then sent X" (ConnectionClosedOK for 1000, ConnectionClosedError else).
        const auto& reason = impl_->ws.reason();
        const auto code = static_cast<unsigned>(reason.code);
        return {code == websocket::close_code::normal ? transport_errc::closed_normally
                                                      : transport_errc::closed_with_error,
                close_frame_text(code, reason.reason.c_str()), ec};
    }
    // Over TLS a peer that drops the connection without a close_notify reads as a truncated
    // stream: the same abrupt end as EOF on plain TCP.
    if (ec == beast::http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
        ec == asio::ssl::error::stream_truncated)
        return {transport_errc::closed_without_frame, "", ec};
    if (ec == websocket::error::message_too_big || ec == asio::error::no_buffer_space)
        return {transport_errc::message_too_big, std::to_string(max_message_bytes), ec};
    return {transport_errc::io_failed, "", ec};
}

} // namespace pacer::transport

#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace pacer::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
}

ws_endpoint parse_ws_url(std::string_view url) {
    constexpr std::string_view scheme = "ws://";
    if (url.substr(0, scheme.size()) != scheme)
        throw std::invalid_argument(fmt::format("--url must start with ws:// (got '{}')", url));
    std::string_view rest = url.substr(scheme.size());
    ws_endpoint ep;
    const auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    ep.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos)
            throw std::invalid_argument(fmt::format("--url has an unclosed '[': '{}'", url));
        ep.host = std::string(authority.substr(1, close - 1));
        authority.remove_prefix(close + 1);
        if (!authority.empty() && authority.front() == ':')
            ep.port = std::string(authority.substr(1));
        else if (!authority.empty())
            throw std::invalid_argument(fmt::format("--url is not ws://HOST:PORT/PATH: '{}'", url));
    } else {
        const auto colon = authority.rfind(':');
        ep.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos)
            ep.port = std::string(authority.substr(colon + 1));
    }
    if (ep.host.empty() || ep.port.empty() ||
        ep.port.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument(fmt::format("--url is not ws://HOST:PORT/PATH: '{}'", url));
    return ep;
}

struct ws_connection::impl {
    explicit impl(asio::any_io_executor ex) : ws(ex) {}
    websocket::stream<beast::tcp_stream> ws;
};

ws_connection::ws_connection(asio::any_io_executor ex) : impl_(std::make_unique<impl>(ex)) {}
ws_connection::~ws_connection() = default;

asio::awaitable<handshake_result> ws_connection::connect(const ws_endpoint& ep) {
    auto& ws = impl_->ws;
    auto& stream = beast::get_lowest_layer(ws);
    handshake_result result;
    tcp::resolver resolver(ws.get_executor());
    auto [rec, endpoints] = co_await resolver.async_resolve(ep.host, ep.port, use_tuple);
    if (rec) {
        result.ec = rec;
        result.message = fmt::format("OSError: cannot resolve {}: {}", ep.host, rec.message());
        co_return result;
    }
    auto [cec, endpoint] = co_await stream.async_connect(endpoints, use_tuple);
    if (cec) {
        result.ec = cec;
        result.message =
            fmt::format("OSError: connect to {}:{}: {}", ep.host, ep.port, cec.message());
        co_return result;
    }
    stream.socket().set_option(tcp::no_delay(true));

    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = std::chrono::seconds(30);
    timeouts.idle_timeout = websocket::stream_base::none();
    timeouts.keep_alive_pings = false;
    ws.set_option(timeouts);
    ws.read_message_max(max_message_bytes);
    ws.auto_fragment(false);
    ws.text(true);

    const std::string host = ep.host.find(':') != std::string::npos
                                 ? fmt::format("[{}]:{}", ep.host, ep.port)
                                 : fmt::format("{}:{}", ep.host, ep.port);
    websocket::response_type response;
    auto [hec] = co_await ws.async_handshake(response, host, ep.target, use_tuple);
    if (hec) {
        result.ec = hec;
        if (hec == websocket::error::upgrade_declined) {
            result.http_status = response.result_int();
            result.message = fmt::format(
                "InvalidStatus: server rejected WebSocket connection: HTTP {}", result.http_status);
        } else {
            result.message = fmt::format("OSError: handshake: {}", hec.message());
        }
    }
    co_return result;
}

asio::awaitable<boost::system::error_code> ws_connection::write(std::string_view text) {
    auto [ec, n] =
        co_await impl_->ws.async_write(asio::buffer(text.data(), text.size()), use_tuple);
    co_return ec;
}

asio::awaitable<boost::system::error_code> ws_connection::read(std::string& out) {
    out.clear();
    auto buffer = asio::dynamic_buffer(out, max_message_bytes + 1);
    auto [ec, n] = co_await impl_->ws.async_read(buffer, use_tuple);
    co_return ec;
}

asio::awaitable<void> ws_connection::close(std::chrono::milliseconds timeout) {
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
    beast::get_lowest_layer(ws).socket().close(ignored);
}

void ws_connection::cancel() {
    boost::system::error_code ignored;
    beast::get_lowest_layer(impl_->ws).socket().cancel(ignored);
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

std::string ws_connection::describe(boost::system::error_code ec) const {
    if (ec == websocket::error::closed) {
        // The server closed first and Beast echoed its close frame, as `websockets` does:
        // "received X; then sent X" (ConnectionClosedOK for 1000, ConnectionClosedError else).
        const auto& reason = impl_->ws.reason();
        const auto code = static_cast<unsigned>(reason.code);
        const auto frame = close_frame_text(code, reason.reason.c_str());
        return fmt::format("{}: received {}; then sent {}",
                           code == websocket::close_code::normal ? "ConnectionClosedOK"
                                                                 : "ConnectionClosedError",
                           frame, frame);
    }
    if (ec == beast::http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::broken_pipe)
        return fmt::format("ConnectionClosedError: no close frame received or sent ({})",
                           ec.message());
    if (ec == websocket::error::message_too_big || ec == asio::error::no_buffer_space)
        return fmt::format(
            "ConnectionClosedError: sent 1009 (message too big); frame exceeds {} bytes",
            max_message_bytes);
    return fmt::format("OSError: {}", ec.message());
}

} // namespace pacer::transport

#include <pacer/core/base64.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/runtime/loop_monitor.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/server/probe_mock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdexcept>
#include <sys/socket.h>
#include <system_error>
#include <vector>

namespace pacer::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t fault_after_appends = 5;
// `fault::stop_reading`: the receive buffer and MSS every accepted socket gets. Linux doubles
// the buffer (8 KiB) and derives the window scale from it; the client's kernel sizes its send
// buffer from the MSS it is offered (2-3 x cwnd segments' worth of memory): 69 kB with an
// Ethernet MSS, growing with the congestion window to 100-220 kB, against 3.9 MB with
// loopback's 64 KiB one (measured on Linux 6.18, BBR; smaller MSS values grow it further).
// So a client streaming 44 kB/s blocks for good 2-4 s after the mock's last read, not after
// 90 s.
constexpr int stop_reading_receive_buffer = 4096;
constexpr int stop_reading_mss = 1460;

// Appends one unmasked, final text frame (RFC 6455 section 5.2) carrying `text`.
void append_server_frame(std::string& out, std::string_view text) {
    const std::size_t n = text.size();
    out.push_back(static_cast<char>(0x81));
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
    out.append(text);
}
} // namespace

namespace {
constexpr std::pair<std::string_view, fault> fault_names[] = {
    {"none", fault::none},
    {"server_error", fault::server_error},
    {"fatal_error", fault::fatal_error},
    {"malformed", fault::malformed},
    {"vanish", fault::vanish},
    {"stall", fault::stall},
    {"no_created", fault::no_created},
    {"nonfinite", fault::nonfinite},
    {"binary", fault::binary},
    {"huge_frame", fault::huge_frame},
    {"stop_reading", fault::stop_reading},
};
} // namespace

fault parse_fault(std::string_view name) {
    std::string names;
    for (const auto& [n, f] : fault_names) {
        if (n == name)
            return f;
        names += names.empty() ? "" : ", ";
        names += n;
    }
    throw std::invalid_argument(fmt::format("--fault must be one of {} (got '{}')", names, name));
}

struct probe_mock::impl {
    impl(asio::io_context& c, mock_options o)
        : ctx(c), options(std::move(o)), acceptor(c), stop_signal(c) {
        stop_signal.expires_at(time_point::max());
        // 80 ms of output audio at the profile rate, encoded once: every delta carries it.
        const std::size_t samples =
            static_cast<std::size_t>(options.output_sample_rate) * 80 / 1000;
        std::vector<std::uint8_t> pcm(samples * 2);
        for (std::size_t i = 0; i < pcm.size(); ++i)
            pcm[i] = static_cast<std::uint8_t>(i * 7);
        audio_b64 =
            base64_encode(std::string_view(reinterpret_cast<const char*>(pcm.data()), pcm.size()));
        started = clock::now();
    }

    asio::io_context& ctx;
    mock_options options;
    tcp::acceptor acceptor;
    asio::steady_timer stop_signal; // cancelled by stop(); waited on by sessions that never read
    std::string audio_b64;
    runtime::loop_monitor monitor;
    bool stopped = false;
    time_point started;
    double stopped_cpu_s = -1;
    double stopped_wall_s = 0;

    std::uint64_t next_event = 0;
    std::size_t handshakes = 0;
    std::size_t sessions_seen = 0;
    std::size_t sessions_active = 0;
    std::size_t sessions_rejected = 0;
    std::size_t sessions_completed = 0;
    std::uint64_t appends = 0;
    std::vector<double> arrival_deviation_s;

    std::string event_id() { return fmt::format("server_{}", next_event++); }

    asio::awaitable<void> handle(tcp::socket socket);
    asio::awaitable<void> run_session(websocket::stream<beast::tcp_stream>& ws, std::size_t index);
};

asio::awaitable<void> probe_mock::impl::handle(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    stream.expires_after(std::chrono::seconds(30));
    auto [rec, n] = co_await http::async_read(stream, buffer, request, use_tuple);
    if (rec)
        co_return;
    stream.expires_never();
    ++handshakes;
    auto refuse = [&](http::status status, std::string body) -> asio::awaitable<void> {
        http::response<http::string_body> res{status, request.version()};
        res.set(http::field::content_type, "text/plain");
        res.body() = std::move(body);
        res.prepare_payload();
        res.keep_alive(false);
        co_await http::async_write(stream, res, use_tuple);
        boost::system::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    };
    if (!websocket::is_upgrade(request)) {
        co_await refuse(http::status::bad_request, "expected a WebSocket upgrade\n");
        co_return;
    }
    if (request.target() != "/v1/realtime") {
        co_await refuse(http::status::not_found, "the realtime endpoint is /v1/realtime\n");
        co_return;
    }
    if (handshakes <= options.reject_first ||
        (options.max_sessions != 0 && sessions_active >= options.max_sessions)) {
        ++sessions_rejected;
        co_await refuse(http::status::service_unavailable, "connection capacity exhausted\n");
        co_return;
    }
    websocket::stream<beast::tcp_stream> ws(std::move(stream));
    ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws.read_message_max(8 * 1024 * 1024);
    auto [aec] = co_await ws.async_accept(request, use_tuple);
    if (aec)
        co_return;
    beast::get_lowest_layer(ws).socket().set_option(tcp::no_delay(true));
    const std::size_t index = sessions_seen++;
    ++sessions_active;
    co_await run_session(ws, index);
    --sessions_active;
}

asio::awaitable<void> probe_mock::impl::run_session(websocket::stream<beast::tcp_stream>& ws,
                                                    std::size_t index) {
    const fault inject = (options.inject != fault::none && index % options.fault_every == 0)
                             ? options.inject
                             : fault::none;
    // Server frames are written straight to the socket, several messages in one write: the
    // replies to one append leave in one TCP segment instead of three, which saves two send
    // calls here and two wake-ups in the client. Frames are plain RFC 6455 server frames
    // (FIN, text, unmasked). Only this coroutine writes, and it never writes while Beast does:
    // Beast only reads here, and the mock closes through Beast once it stops writing.
    std::string batch;
    auto queue = [&](std::string_view text) { append_server_frame(batch, text); };
    auto flush = [&]() -> asio::awaitable<bool> {
        auto [ec, n] = co_await asio::async_write(beast::get_lowest_layer(ws).socket(),
                                                  asio::buffer(batch), use_tuple);
        batch.clear();
        co_return !ec;
    };
    auto send = [&](std::string_view text) -> asio::awaitable<bool> {
        queue(text);
        co_return co_await flush();
    };
    const std::string session_id = fmt::format("sess_{}", index);
    if (inject == fault::no_created) {
        // Say nothing; read until the client gives up and closes.
        std::string ignored;
        for (;;) {
            ignored.clear();
            auto b = asio::dynamic_buffer(ignored);
            if (auto [ec, n] = co_await ws.async_read(b, use_tuple); ec)
                co_return;
        }
    }
    if (!co_await send(fmt::format(
            R"({{"type":"session.created","event_id":"{}","session":{{"id":"{}","object":"realtime.session","type":"realtime","model":"pacer-mock","sglang":{{"granted":null}}}}}})",
            event_id(), session_id)))
        co_return;

    protocol::frame_parser parser;
    std::string frame;
    std::optional<time_point> first_arrival;
    std::uint64_t input_bytes = 0;
    std::size_t session_appends = 0;
    std::uint64_t reply = 0;
    for (;;) {
        frame.clear();
        auto buffer = asio::dynamic_buffer(frame);
        auto [ec, n] = co_await ws.async_read(buffer, use_tuple);
        const auto now = clock::now();
        if (ec)
            co_return;
        if (parser.parse(frame) != nullptr)
            continue; // the probe mock ignores what it cannot read
        const auto& event = parser.object();
        const auto type = parser.type();
        const auto* id = event.if_contains("event_id");
        const std::string client_id = id && id->is_string() ? std::string(id->get_string()) : "";
        if (type == "session.update") {
            if (!co_await send(fmt::format(
                    R"({{"type":"session.updated","event_id":"{}","client_event_id":"{}","session":{{"id":"{}","object":"realtime.session","type":"realtime","model":"pacer-mock","output_modalities":["audio"],"sglang":{{"granted":{{"interaction":"native","native_full_duplex":true,"input_audio_format":{{"type":"audio/pcm","rate":16000}},"output_audio_format":{{"type":"audio/pcm","rate":{}}},"native_unit_ms":80,"tail_policy":"pad","microturn_ms":null,"client_commit":false,"proactive_output":false,"pressure_policy":"reject","strict_order":true,"supports_server_interrupt":false,"supports_resume":false,"supports_truncate":false}}}}}}}})",
                    event_id(), client_id, session_id, options.output_sample_rate)))
                co_return;
        } else if (type == "input_audio_buffer.append") {
            std::int64_t seq = 0;
            if (const auto* sg = event.if_contains("sglang"); sg && sg->is_object())
                if (const auto* s = sg->get_object().if_contains("seq"); s && s->is_int64())
                    seq = s->get_int64();
            if (const auto* a = event.if_contains("audio"); a && a->is_string())
                input_bytes += base64_decoded_size(a->get_string());
            if (!first_arrival)
                first_arrival = now - std::chrono::milliseconds(80) * seq;
            arrival_deviation_s.push_back(to_seconds(now - *first_arrival) -
                                          0.080 * static_cast<double>(seq));
            ++appends;
            ++session_appends;
            if (session_appends == fault_after_appends && inject != fault::none) {
                switch (inject) {
                case fault::server_error:
                    co_await send(fmt::format(
                        R"({{"type":"error","event_id":"{}","error":{{"type":"invalid_request_error","code":"injected","message":"injected nonfatal error","event_id":"{}","param":null}}}})",
                        event_id(), client_id));
                    break;
                case fault::fatal_error:
                    co_await send(fmt::format(
                        R"({{"type":"error","event_id":"{}","sglang":{{"fatal":true}},"error":{{"type":"server_error","code":"injected","message":"injected fatal error","event_id":null,"param":null}}}})",
                        event_id()));
                    co_await send(fmt::format(
                        R"({{"type":"session.closed","event_id":"{}","reason":"server_error","client_event_id":null}})",
                        event_id()));
                    co_await ws.async_close(websocket::close_code::internal_error, use_tuple);
                    co_return;
                case fault::malformed:
                    co_await send(R"({"type":"response.output_audio.delta","delta":)");
                    break;
                case fault::vanish: {
                    boost::system::error_code ignored;
                    beast::get_lowest_layer(ws).socket().close(ignored);
                    co_return;
                }
                case fault::stall: {
                    // Keep reading (so the client's writes complete) but never answer again.
                    for (;;) {
                        frame.clear();
                        auto b = asio::dynamic_buffer(frame);
                        auto [sec, sn] = co_await ws.async_read(b, use_tuple);
                        if (sec)
                            co_return;
                    }
                }
                case fault::stop_reading: {
                    // Never read again, never send again: the client's frames fill this
                    // socket's small receive buffer, the window closes and the client's writes
                    // block. Not reading, the session cannot see its peer leave either: it
                    // holds the connection until the mock stops.
                    if (!stopped)
                        co_await stop_signal.async_wait(use_tuple);
                    co_return;
                }
                case fault::nonfinite:
                    co_await send(
                        R"({"type":"response.output_audio.delta","delta":"AAAA","gain":NaN})");
                    break;
                case fault::binary: {
                    const std::string_view json =
                        R"({"type":"sglang.unit.done","unit_id":"unit_0"})";
                    batch.push_back(static_cast<char>(0x82)); // FIN + binary opcode
                    batch.push_back(static_cast<char>(json.size()));
                    batch.append(json);
                    co_await flush();
                    break;
                }
                case fault::huge_frame:
                    co_await send(R"({"type":"response.output_text.delta","delta":")" +
                                  std::string(9 * 1024 * 1024, 'x') + R"("})");
                    break;
                case fault::no_created:
                case fault::none:
                    break;
                }
            }
            for (int i = 0; i < options.replies_per_append; ++i, ++reply) {
                std::string out;
                switch (reply % 3) {
                case 0:
                    out = fmt::format(
                        R"({{"type":"response.output_audio.delta","event_id":"{}","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"{}"}})",
                        event_id(), audio_b64);
                    break;
                case 1:
                    out = fmt::format(
                        R"({{"type":"response.output_audio_transcript.delta","event_id":"{}","response_id":"resp_0","item_id":"item_0","output_index":0,"content_index":0,"delta":"a"}})",
                        event_id());
                    break;
                default:
                    out = fmt::format(
                        R"({{"type":"sglang.unit.done","event_id":"{}","unit_id":"unit_{}"}})",
                        event_id(), seq);
                    break;
                }
                queue(out);
            }
            if (!batch.empty() && !co_await flush())
                co_return;
        } else if (type == "sglang.input_audio.end") {
            const std::uint64_t total_ms = input_bytes / 32;
            const std::uint64_t padding = (total_ms + 79) / 80 * 80 - total_ms;
            if (!co_await send(fmt::format(
                    R"({{"type":"sglang.input_audio.ended","event_id":"{}","accepted_end_ms":{},"tail_policy":"pad","client_event_id":"{}"}})",
                    event_id(), total_ms, client_id)))
                co_return;
            if (!co_await send(fmt::format(
                    R"({{"type":"sglang.input_audio.drained","event_id":"{}","accepted_end_ms":{},"consumed_ms":{},"discarded_ms":0,"padding_ms":{},"client_event_id":"{}"}})",
                    event_id(), total_ms, total_ms, padding, client_id)))
                co_return;
        } else if (type == "session.close") {
            if (!co_await send(fmt::format(
                    R"({{"type":"session.closed","event_id":"{}","reason":"client_closed","client_event_id":"{}"}})",
                    event_id(), client_id)))
                co_return;
            ++sessions_completed;
            co_await ws.async_close(websocket::close_code::normal, use_tuple);
            co_return;
        }
    }
}

probe_mock::probe_mock(asio::io_context& ctx, mock_options options)
    : impl_(std::make_shared<impl>(ctx, std::move(options))) {
    if (impl_->options.replies_per_append < 0)
        throw std::invalid_argument("--replies-per-append must be >= 0");
    if (impl_->options.fault_every == 0)
        throw std::invalid_argument("--fault-every must be >= 1");
}

probe_mock::~probe_mock() = default;

void probe_mock::listen() {
    auto& a = impl_->acceptor;
    const tcp::endpoint ep(asio::ip::make_address(impl_->options.host), impl_->options.port);
    a.open(ep.protocol());
    a.set_option(asio::socket_base::reuse_address(true));
    if (impl_->options.inject == fault::stop_reading) {
        // Set on the listener, before listen: accepted sockets inherit both, and the window
        // scale and MSS offered in the SYN-ACK already follow them.
        a.set_option(asio::socket_base::receive_buffer_size(stop_reading_receive_buffer));
        const int mss = stop_reading_mss;
        if (::setsockopt(a.native_handle(), IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss) != 0)
            throw std::system_error(errno, std::generic_category(), "setsockopt(TCP_MAXSEG)");
    }
    a.bind(ep);
    a.listen(asio::socket_base::max_listen_connections);
}

std::uint16_t probe_mock::port() const {
    return impl_->acceptor.local_endpoint().port();
}

asio::awaitable<void> probe_mock::serve() {
    auto self = impl_;
    auto ex = self->acceptor.get_executor();
    asio::co_spawn(ex, self->monitor.run(), [self](std::exception_ptr) {});
    while (!self->stopped) {
        auto [ec, socket] = co_await self->acceptor.async_accept(use_tuple);
        if (ec) {
            if (self->stopped || ec == asio::error::operation_aborted)
                break;
            continue; // e.g. EMFILE: keep serving the sessions we have
        }
        // Each connection is its own coroutine; its failures end only that connection.
        asio::co_spawn(ex, self->handle(std::move(socket)), [self](std::exception_ptr) {});
    }
}

void probe_mock::stop() {
    auto& s = *impl_;
    if (s.stopped)
        return;
    s.stopped = true;
    s.stopped_cpu_s = runtime::thread_cpu_seconds();
    s.stopped_wall_s = to_seconds(clock::now() - s.started);
    s.monitor.stop();
    s.stop_signal.cancel();
    boost::system::error_code ignored;
    s.acceptor.close(ignored);
}

boost::json::object probe_mock::stats() const {
    const auto& s = *impl_;
    std::vector<double> deviations = s.arrival_deviation_s;
    std::vector<double> abs_dev;
    abs_dev.reserve(deviations.size());
    for (double d : deviations)
        abs_dev.push_back(d < 0 ? -d : d);
    std::vector<double> lags = s.monitor.lags_s();
    std::size_t lags_over = 0;
    for (double l : lags)
        lags_over += l > 0.080;
    const double wall = s.stopped ? s.stopped_wall_s : to_seconds(clock::now() - s.started);
    boost::json::object o;
    o["sessions_seen"] = s.sessions_seen;
    o["sessions_completed"] = s.sessions_completed;
    o["sessions_rejected"] = s.sessions_rejected;
    o["appends"] = s.appends;
    o["arrival_deviation_s"] = to_json(summarize(deviations, pacing_fractions));
    o["arrival_abs_deviation_s"] = to_json(summarize(abs_dev, pacing_fractions));
    auto lag = to_json(summarize(lags, pacing_fractions));
    lag["over_80ms"] = lags_over;
    o["loop_lag_s"] = std::move(lag);
    o["wall_s"] = wall;
    if (s.stopped_cpu_s >= 0) {
        o["thread_cpu_s"] = s.stopped_cpu_s;
        o["thread_cpu_cores"] = wall > 0 ? s.stopped_cpu_s / wall : 0.0;
    }
    return o;
}

} // namespace pacer::server

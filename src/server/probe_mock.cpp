#include <pacer/core/awaitable.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/core/base64.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/core/histogram.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/server/detail/mock_host.hpp>
#include <pacer/server/detail/probe_replies.hpp>
#include <pacer/server/probe_mock.hpp>

#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

namespace pacer::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using detail::use_tuple;

namespace {
constexpr std::size_t fault_after_appends = 5;
// In the order of `fault`.
constexpr std::string_view fault_names[] = {
    "none",       "server_error", "fatal_error", "malformed",  "vanish",       "stall",
    "no_created", "nonfinite",    "binary",      "huge_frame", "stop_reading",
};
// `fault::stop_reading`: the receive buffer and MSS every accepted socket gets. Linux doubles
// the buffer (8 KiB) and derives the window scale from it; the client's kernel sizes its send
// buffer from the MSS it is offered (2-3 x cwnd segments' worth of memory): 69 kB with an
// Ethernet MSS, growing with the congestion window to 100-220 kB, against 3.9 MB with
// loopback's 64 KiB one (measured on Linux 6.18, BBR; smaller MSS values grow it further).
// So a client streaming 44 kB/s blocks for good 2-4 s after the mock's last read, not after
// 90 s.
constexpr int stop_reading_receive_buffer = 4096;
constexpr int stop_reading_mss = 1460;

mock_options with_socket_options(mock_options o) {
    if (o.inject == fault::stop_reading) {
        o.receive_buffer = stop_reading_receive_buffer;
        o.max_segment = stop_reading_mss;
    }
    return o;
}
} // namespace

fault parse_fault(std::string_view name) {
    return static_cast<fault>(detail::parse_choice(fault_names, name, "--fault"));
}

namespace {

// 80 ms of output audio at `sample_rate`, base64-encoded: every audio delta carries it.
std::string output_audio_b64(int sample_rate) {
    const std::size_t samples = static_cast<std::size_t>(std::max(sample_rate, 0)) * 80 / 1000;
    std::vector<std::uint8_t> pcm(samples * 2);
    for (std::size_t i = 0; i < pcm.size(); ++i)
        pcm[i] = static_cast<std::uint8_t>(i * 7);
    return base64_encode(std::string_view(reinterpret_cast<const char*>(pcm.data()), pcm.size()));
}

// What the sessions of one thread count: touched on that thread only, merged by stats() once
// every thread has stopped. A cache line of its own: threads never write one another's.
struct alignas(64) probe_shard {
    std::uint64_t next_event = 0;
    std::uint64_t appends = 0;
    /// Folded as the appends arrive: the mock's memory does not grow with the packets.
    log_histogram arrival_deviation_s;
};

struct probe_sessions final : detail::mock_sessions {
    probe_sessions(std::shared_ptr<detail::mock_host> h, mock_options o)
        : mock_sessions(std::move(h)), options(std::move(o)),
          replies(output_audio_b64(options.output_sample_rate)), shards(host->shard_count()) {
        if (options.replies_per_append < 0)
            throw bad_input("--replies-per-append must be >= 0");
        if (options.fault_every == 0)
            throw bad_input("--fault-every must be >= 1");
    }

    awaitable<void> run_session(detail::ws_stream& ws, const detail::session_start& start) override;
    boost::json::object stats() const override;
    awaitable<bool> inject_fault(fault inject, detail::ws_stream& ws, std::string& batch,
                                 beast::flat_buffer& buffer, probe_shard& shard,
                                 std::string_view client_id);

    mock_options options;
    detail::probe_replies replies; // encoded once: every append's replies are copied from it

    std::vector<probe_shard> shards; // one per host shard

    // Event ids are unique across the mock: thread i of N numbers i, i + N, i + 2N, ...
    std::uint64_t next_event(probe_shard& shard) {
        const auto i = static_cast<std::uint64_t>(&shard - shards.data());
        return shard.next_event++ * shards.size() + i;
    }
    std::string event_id(probe_shard& shard) { return fmt::format("server_{}", next_event(shard)); }
};

// Writes the batch of server frames and empties it; false when the write failed. Through TLS
// when it is on: next_layer() is the TLS stream's owner.
awaitable<bool> write_batch(detail::ws_stream& ws, std::string& batch) {
    auto [ec, n] = co_await asio::async_write(ws.next_layer(), asio::buffer(batch), use_tuple);
    batch.clear();
    co_return !ec;
}

// Appends `text` as one frame to the batch and writes the batch.
awaitable<bool> send_frame(detail::ws_stream& ws, std::string& batch, std::string_view text) {
    detail::append_frame(batch, text);
    co_return co_await write_batch(ws, batch);
}

awaitable<void> probe_sessions::run_session(detail::ws_stream& ws,
                                            const detail::session_start& start) {
    const std::size_t index = start.index;
    auto& shard = shards[host->shard_of(ws.get_executor())];
    auto event_id = [&] { return probe_sessions::event_id(shard); };
    const fault inject = (options.inject != fault::none && index % options.fault_every == 0)
                             ? options.inject
                             : fault::none;
    // Server frames are written straight to the socket, several messages in one write: the
    // replies to one append leave in one TCP segment instead of three, which saves two send
    // calls here and two wake-ups in the client. Frames are plain RFC 6455 server frames
    // (FIN, text, unmasked). Only this coroutine writes, and it never writes while Beast does:
    // Beast only reads here, and the mock closes through Beast once it stops writing.
    std::string batch;
    auto flush = [&] { return write_batch(ws, batch); };
    auto send = [&](std::string_view text) { return send_frame(ws, batch, text); };
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

    // Client frames are read into one reused buffer and scanned, not parsed into a DOM: the
    // mock needs only an event's type, its event_id and, for an append, `sglang.seq` and the
    // size of its audio.
    protocol::event_scanner scanner;
    beast::flat_buffer buffer;
    std::optional<time_point> first_arrival;
    std::uint64_t input_bytes = 0;
    std::size_t session_appends = 0;
    std::uint64_t reply = 0;
    for (;;) {
        buffer.consume(buffer.size());
        auto [ec, n] = co_await ws.async_read(buffer, use_tuple);
        const auto now = clock::now();
        if (ec)
            co_return;
        const auto data = buffer.cdata();
        if (scanner.scan({static_cast<const char*>(data.data()), data.size()}) != nullptr)
            continue; // the probe mock ignores what it cannot read
        const auto type = scanner.type();
        const std::string_view client_id = scanner.event_id(); // valid until the next scan
        if (type == "session.update") {
            if (!co_await send(fmt::format(
                    R"({{"type":"session.updated","event_id":"{}","client_event_id":"{}","session":{{"id":"{}","object":"realtime.session","type":"realtime","model":"pacer-mock","output_modalities":["audio"],"sglang":{{"granted":{{"interaction":"native","native_full_duplex":true,"input_audio_format":{{"type":"audio/pcm","rate":16000}},"output_audio_format":{{"type":"audio/pcm","rate":{}}},"native_unit_ms":80,"tail_policy":"pad","microturn_ms":null,"client_commit":false,"proactive_output":false,"pressure_policy":"reject","strict_order":true,"supports_server_interrupt":false,"supports_resume":false,"supports_truncate":false}}}}}}}})",
                    event_id(), client_id, session_id, options.output_sample_rate)))
                co_return;
        } else if (type == "input_audio_buffer.append") {
            const std::int64_t seq = scanner.seq().value_or(0);
            input_bytes += scanner.audio_decoded_size();
            if (!first_arrival)
                first_arrival = now - protocol::packet_period * seq;
            shard.arrival_deviation_s.record(to_seconds(now - *first_arrival) -
                                             protocol::packet_period_s * static_cast<double>(seq));
            ++shard.appends;
            ++session_appends;
            if (session_appends == fault_after_appends && inject != fault::none) {
                if (!co_await inject_fault(inject, ws, batch, buffer, shard, client_id))
                    co_return;
            }
            // Audio delta, transcript delta, unit.done in turn, straight into the batch.
            for (int i = 0; i < options.replies_per_append; ++i, ++reply)
                replies.append(batch, reply, next_event(shard), seq);
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
            host->session_completed();
            co_await ws.async_close(websocket::close_code::normal, use_tuple);
            co_return;
        }
    }
}

// What fault `inject` does at the session's fifth append: a frame sent (false when it could not
// be), or the session's end (false).
awaitable<bool> probe_sessions::inject_fault(fault inject, detail::ws_stream& ws,
                                             std::string& batch, beast::flat_buffer& buffer,
                                             probe_shard& shard, std::string_view client_id) {
    auto event_id = [&] { return probe_sessions::event_id(shard); };
    auto send = [&](std::string_view text) { return send_frame(ws, batch, text); };
    bool sent = true; // a fault's frame that could not be sent ends the session
    switch (inject) {
    case fault::server_error:
        sent = co_await send(fmt::format(
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
        co_return false;
    case fault::malformed:
        sent = co_await send(R"({"type":"response.output_audio.delta","delta":)");
        break;
    case fault::vanish: {
        boost::system::error_code ignored;
        beast::get_lowest_layer(ws).close(ignored);
        co_return false;
    }
    case fault::stall: {
        // Keep reading (so the client's writes complete) but never answer again.
        for (;;) {
            buffer.consume(buffer.size());
            auto [sec, sn] = co_await ws.async_read(buffer, use_tuple);
            if (sec)
                co_return false;
        }
    }
    case fault::stop_reading:
        // Never read again, never send again: the client's frames fill this
        // socket's small receive buffer, the window closes and the client's writes
        // block. Not reading, the session cannot see its peer leave either: it
        // holds the connection until the mock stops.
        co_await host->until_stopped();
        co_return false;
    case fault::nonfinite:
        sent = co_await send(R"({"type":"response.output_audio.delta","delta":"AAAA","gain":NaN})");
        break;
    case fault::binary: {
        const std::string_view json = R"({"type":"sglang.unit.done","unit_id":"unit_0"})";
        detail::append_frame(batch, json, true);
        sent = co_await write_batch(ws, batch);
        break;
    }
    case fault::huge_frame:
        sent = co_await send(R"({"type":"response.output_text.delta","delta":")" +
                             std::string(9 * 1024 * 1024, 'x') + R"("})");
        break;
    case fault::no_created:
    case fault::none:
        break;
    }
    co_return sent;
}

boost::json::object probe_sessions::stats() const {
    boost::json::object o = host->stats();
    std::uint64_t appends = 0;
    log_histogram arrival_deviation_s;
    for (const auto& shard : shards) {
        appends += shard.appends;
        arrival_deviation_s.merge(shard.arrival_deviation_s);
    }
    o["appends"] = appends;
    o["arrival_deviation_s"] = to_json(arrival_deviation_s.summarize(pacing_fractions));
    o["arrival_abs_deviation_s"] =
        to_json(arrival_deviation_s.absolute().summarize(pacing_fractions));
    // As in summary.json's pacing: n, max and mean exact, the quantiles within 1/2,048.
    o["arrival_quantile_precision"] = log_histogram::relative_precision;
    return o;
}

} // namespace

probe_mock::probe_mock(asio::io_context& ctx, mock_options options)
    : mock_server(
          detail::make_sessions<probe_sessions>(ctx, with_socket_options(std::move(options)))) {}

probe_mock::probe_mock(std::span<asio::io_context* const> contexts, mock_options options)
    : mock_server(detail::make_sessions<probe_sessions>(contexts,
                                                        with_socket_options(std::move(options)))) {}

} // namespace pacer::server

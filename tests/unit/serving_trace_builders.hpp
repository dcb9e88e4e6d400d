#pragma once
// Builders of hand-made traces and receipts for the serving metrics tests (docs/protocol.md §3.1,
// 3.2): one line or one file at a time, in memory or as the files' text.

#include <pacer/core/base64.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/protocol/events.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace pacer::metrics::test {

inline trace_line line(std::string dir, double t, std::string_view event) {
    trace_line l;
    l.direction = std::move(dir);
    l.time_s = t;
    l.event = boost::json::parse(event).as_object();
    return l;
}

/// Base64 of `samples` silent PCM16 samples.
inline std::string pcm_b64(std::size_t samples) {
    return base64_encode(std::string(samples * 2, '\0'));
}

/// The `input_audio_buffer.append` of packet `seq` (event id "c<seq>").
inline trace_line append(double t, int seq, std::size_t bytes = 2560) {
    return line("send", t,
                fmt::format(R"({{"type":"input_audio_buffer.append","event_id":"c{}","audio":"{}",)"
                            R"("sglang":{{"seq":{},"t_start_ms":{:.1f}}}}})",
                            seq, pcm_b64(bytes / 2), seq, seq * 80.0));
}

/// An output audio delta of `response_id`, with `sglang.media_time.t_start_ms` when given.
inline trace_line audio(double t, std::size_t samples, int n, std::string_view response_id = "r",
                        std::optional<double> media_ms = std::nullopt) {
    const std::string media =
        media_ms ? fmt::format(R"(,"sglang":{{"media_time":{{"t_start_ms":{},"duration_ms":80}}}})",
                               *media_ms)
                 : std::string();
    return line("receive", t,
                fmt::format(R"({{"type":"response.output_audio.delta","event_id":"a{}",)"
                            R"("response_id":"{}","item_id":"i","output_index":0,)"
                            R"("content_index":0,"delta":"{}"{}}})",
                            n, response_id, pcm_b64(samples), media));
}

/// An event with only a type and an event id.
inline trace_line event(std::string dir, double t, std::string_view type, int n) {
    return line(std::move(dir), t, fmt::format(R"({{"type":"{}","event_id":"e{}"}})", type, n));
}

/// One append receipt; `scheduled` nullopt: none recorded (C1/C2).
inline pacer::trace::append_receipt receipt(std::string_view id, std::uint64_t seq,
                                            std::optional<double> scheduled, double start,
                                            double completed) {
    pacer::trace::append_receipt a;
    a.set_id(id);
    a.seq = seq;
    a.scheduled_s = scheduled.value_or(std::numeric_limits<double>::quiet_NaN());
    a.start_s = start;
    a.completed_s = completed;
    return a;
}

/// Receipts of `appends` packets sent exactly on the 80 ms grid from `start`.
inline send_receipts receipts_for(double start, std::size_t appends) {
    send_receipts r;
    r.session_start_s = start;
    r.admitted = true;
    for (std::size_t i = 0; i < appends; ++i) {
        const double at = start + 0.08 * static_cast<double>(i);
        r.appends.push_back(receipt(fmt::format("c{}", i), i, at, at, at + 1e-4));
    }
    return r;
}

/// The text of `trace.jsonl` holding `lines`.
inline std::string trace_text(std::span<const trace_line> lines) {
    std::string out;
    for (const auto& l : lines)
        out += boost::json::serialize(boost::json::object{
                   {"direction", l.direction}, {"time_s", l.time_s}, {"event", l.event}}) +
               "\n";
    return out;
}

/// The text of `input-send-receipts.json` (C4 shape) holding `r`.
inline std::string receipts_text(const send_receipts& r) {
    boost::json::array appends;
    for (const auto& a : r.appends) {
        boost::json::object o{{"event_id", a.id()},
                              {"seq", a.seq},
                              {"start_s", a.start_s},
                              {"completed_s", a.completed_s}};
        if (const auto scheduled = a.scheduled())
            o["scheduled_s"] = *scheduled;
        appends.emplace_back(std::move(o));
    }
    boost::json::object o{{"appends", std::move(appends)}};
    o["session_start_s"] =
        r.session_start_s ? boost::json::value(*r.session_start_s) : boost::json::value(nullptr);
    if (r.admitted)
        o["admitted"] = *r.admitted;
    return boost::json::serialize(o) + "\n";
}

inline const protocol::profile& voicechat() {
    return *protocol::find_profile("nemotron");
}

inline const protocol::profile& minicpmo() {
    return *protocol::find_profile("minicpmo");
}

} // namespace pacer::metrics::test

// The native mock's native protocol (docs/protocol.md §1.4): the acknowledgements of the
// client's commands, each unit's output, the EOS sequence, and the reference peer's faults.

#include "native_session.hpp"
#include <algorithm>
#include <cmath>

namespace pacer::server::detail {

void native_session::on_update(const std::string& client_id) {
    if (fault_ == peer_fault::close_without_update) {
        auto& job = queue(clock::now());
        closed(job.frames, "client_closed", client_id);
        job.after = then::close;
        stop_reading_ = true;
        return;
    }
    event(immediate_,
          R"("type":"session.updated","client_event_id":"{}","session":{{"id":"{}",)"
          R"("object":"realtime.session","type":"realtime","model":"pacer-native-mock",)"
          R"("output_modalities":{},"sglang":{{"granted":{}}}}})",
          client_id, session_id_, protocol::output_modalities_json(*options_.profile),
          mock_.granted);
}

void native_session::on_append(const protocol::event_scanner& scanner, const std::string& client_id,
                               time_point now) {
    ++shard_.appends;
    if (fault_ != peer_fault::none && fault_ != peer_fault::linger &&
        fault_ != peer_fault::close_without_update) {
        inject(client_id, now);
        return;
    }
    const std::int64_t seq = scanner.seq().value_or(-1);
    input_bytes_ += scanner.audio_decoded_size();
    event(immediate_,
          R"("type":"sglang.input_audio.accepted","seq":{},"accepted_end_ms":{},)"
          R"("client_event_id":"{}")",
          seq, input_ms(), client_id);
    while ((units_done_ + 1) * unit_bytes_ <= input_bytes_) {
        unit_output(held_, units_done_);
        ++units_done_;
        const auto [note, due] = compute(now);
        held_units_.push_back(note);
        held_due_ = due; // the worker is first in first out: the burst's last is its latest
        if (held_units_.size() == options_.burst_units) {
            auto& job = queue(due);
            job.frames = std::move(held_);
            job.units = std::move(held_units_);
            held_.clear();
            held_units_.clear();
        }
    }
}

void native_session::on_end(const std::string& client_id, time_point now) {
    const std::uint64_t units = (input_bytes_ + unit_bytes_ - 1) / unit_bytes_;
    const bool tail = units > units_done_; // a partial last unit
    // The EOS sequence leaves with the tail unit's output, behind any held units.
    auto due = now + unit_delay();
    std::optional<unit_note> tail_note;
    if (tail) {
        const auto [note, tail_due] = compute(now);
        tail_note = note;
        due = std::max(due, tail_due);
    }
    if (mock_.worker_on && !held_units_.empty())
        due = std::max(due, held_due_);
    auto& job = queue(due);
    std::string& out = job.frames;
    out = std::move(held_); // held units go first: the EOS sequence stays behind them
    held_.clear();
    job.units = std::move(held_units_);
    held_units_.clear();
    const double total_ms = input_ms();
    event(out,
          R"("type":"sglang.input_audio.ended","accepted_end_ms":{},"tail_policy":"pad",)"
          R"("client_event_id":"{}")",
          total_ms, client_id);
    const std::uint64_t tail_unit = tail || units == 0 ? units_done_ : units - 1;
    const double tail_ms = total_ms - static_cast<double>(tail_unit * unit_ms_);
    if (options_.profile->continuous) {
        if (units > 0) {
            open_response(out);
            // The holdback flush: the total is exactly units x samples per unit.
            audio_delta(out, "response_0", "item_0", samples_until(units) - emitted_, tail_unit,
                        tail ? tail_ms : static_cast<double>(unit_ms_));
            emitted_ = samples_until(units);
            if (tail)
                transcript_delta(out, "response_0", "item_0", tail_unit);
            finish_response(out, "response_0", "item_0", transcript_);
        }
    } else if (tail && ends_question(tail_unit)) {
        reply(out, tail_unit);
    }
    if (tail) {
        unit_done(out, tail_unit, tail_ms);
        job.units.push_back(*tail_note);
    }
    const double padding_ms =
        std::ceil(total_ms / static_cast<double>(unit_ms_)) * static_cast<double>(unit_ms_) -
        total_ms;
    event(out,
          R"("type":"sglang.input_audio.drained","accepted_end_ms":{},"consumed_ms":{},)"
          R"("discarded_ms":0,"padding_ms":{},"client_event_id":"{}")",
          total_ms, total_ms, padding_ms, client_id);
}

void native_session::on_close(const std::string& client_id) {
    auto& job = queue(clock::now());
    closed(job.frames, "client_closed", client_id);
    if (fault_ == peer_fault::linger) {
        deaf_ = true; // keep the socket open: the client must stop listening on its own
        return;
    }
    job.after = then::close;
    stop_reading_ = true;
    mock_.host->session_completed();
}

// The reference peer's fault on an append (DuplexPeer.handler).
void native_session::inject(const std::string& client_id, time_point now) {
    switch (fault_) {
    case peer_fault::server_error: {
        auto& job = queue(now);
        error(job.frames, client_id, true);
        closed(job.frames, "server_error", "");
        job.after = then::close;
        stop_reading_ = true;
        break;
    }
    case peer_fault::delayed_fatal: {
        error(queue(now).frames, client_id, true);
        auto& late = queue(now + fatal_close_delay);
        closed(late.frames, "server_error", "");
        late.after = then::close;
        stop_reading_ = true;
        break;
    }
    case peer_fault::nonfatal_error:
        error(immediate_, client_id, false);
        break;
    case peer_fault::timeout:
        deaf_ = true;
        break;
    case peer_fault::malformed_json:
        detail::append_frame(immediate_, "{not valid json");
        deaf_ = true;
        break;
    case peer_fault::nonfinite:
        detail::append_frame(immediate_, R"({"type":"sglang.unit.done","event_id":"server_nan",)"
                                         R"("unit_id":"unit_0","sglang":{"backlog_ms":NaN}})");
        deaf_ = true;
        break;
    case peer_fault::disconnect:
        queue(now).after = then::close_1011;
        stop_reading_ = true;
        break;
    case peer_fault::none:
    case peer_fault::linger:
    case peer_fault::close_without_update:
        break;
    }
}

// The output of a completed unit k.
void native_session::unit_output(std::string& out, std::uint64_t k) {
    if (options_.profile->continuous) {
        open_response(out);
        const auto fresh = samples_until(k + 1) - holdback_samples - emitted_;
        audio_delta(out, "response_0", "item_0", fresh, k, static_cast<double>(unit_ms_));
        emitted_ += fresh;
        transcript_delta(out, "response_0", "item_0", k);
    } else if (ends_question(k)) {
        reply(out, k);
    }
    unit_done(out, k, static_cast<double>(unit_ms_));
}

void native_session::open_response(std::string& out) {
    if (response_open_)
        return;
    response_open_ = true;
    response_created(out, "response_0");
}

void native_session::response_created(std::string& out, std::string_view id) {
    event(out,
          R"("type":"response.created","response":{{"id":"{}","object":"realtime.response",)"
          R"("status":"in_progress","output":[]}})",
          id);
}

// A MiniCPM-o reply after unit k: its own response, one unit of audio in a few deltas.
void native_session::reply(std::string& out, std::uint64_t k) {
    const std::string id = fmt::format("response_{}", replies_);
    const std::string item = fmt::format("item_{}", replies_);
    ++replies_;
    response_created(out, id);
    const std::uint64_t samples = samples_until(1);
    for (std::uint64_t c = 0; c < reply_chunks; ++c)
        audio_delta(out, id, item, samples * (c + 1) / reply_chunks - samples * c / reply_chunks, k,
                    static_cast<double>(unit_ms_));
    const std::string text = fmt::format("answer {} ", replies_);
    event(out,
          R"("type":"response.{}.delta","response_id":"{}",)"
          R"("item_id":"{}","output_index":0,"content_index":0,"delta":"{}")",
          text_, id, item, text);
    finish_response(out, id, item, text);
}

void native_session::audio_delta(std::string& out, std::string_view response, std::string_view item,
                                 std::uint64_t samples, std::uint64_t unit, double duration_ms) {
    event(out,
          R"("type":"response.output_audio.delta","response_id":"{}","item_id":"{}",)"
          R"("output_index":0,"content_index":0,"delta":"{}","sglang":{{"unit_id":)"
          R"("unit_{}","chunk_seq":{},"media_time":{{"t_start_ms":{},"duration_ms":{}}}}})",
          response, item, audio_.base64(samples, 1), unit, chunk_seq_++, unit * unit_ms_,
          duration_ms); // 1: DuplexPeer's sample value
}

void native_session::transcript_delta(std::string& out, std::string_view response,
                                      std::string_view item, std::uint64_t unit) {
    const std::string text = fmt::format("w{} ", unit);
    transcript_ += text;
    event(out,
          R"("type":"response.{}.delta","response_id":"{}",)"
          R"("item_id":"{}","output_index":0,"content_index":0,"delta":"{}")",
          text_, response, item, text);
}

// output_audio.done, transcript.done, response.done completed/stop.
void native_session::finish_response(std::string& out, std::string_view id, std::string_view item,
                                     std::string_view transcript) {
    event(out,
          R"("type":"response.output_audio.done","response_id":"{}","item_id":"{}",)"
          R"("output_index":0,"content_index":0)",
          id, item);
    event(out,
          R"("type":"response.{}.done","response_id":"{}",)"
          R"("item_id":"{}","output_index":0,"content_index":0,"{}":"{}")",
          text_, id, item, text_field_, transcript);
    const std::string text_part =
        text_ == "output_text" ? fmt::format(R"({{"type":"output_text","text":"{}"}},)", transcript)
                               : std::string();
    event(out,
          R"("type":"response.done","response":{{"id":"{}","object":"realtime.response",)"
          R"("status":"completed","status_details":{{"reason":"stop"}},"output":[{{"id":)"
          R"("{}","object":"realtime.item","type":"message","role":"assistant","content":)"
          R"([{}{{"type":"output_audio","transcript":"{}"}}]}}],"usage":{{}}}})",
          id, item, text_part, transcript);
    ++shard_.responses;
}

void native_session::unit_done(std::string& out, std::uint64_t k, double duration_ms) {
    event(out,
          R"("type":"sglang.unit.done","unit_id":"unit_{}","sglang":{{"unit_id":"unit_{}",)"
          R"("media_time":{{"t_start_ms":{},"duration_ms":{}}}}})",
          k, k, k * unit_ms_, duration_ms);
    count_unit();
}

// session.closed; an empty `client_id` (server-initiated) is null.
void native_session::closed(std::string& out, std::string_view reason,
                            const std::string& client_id) {
    event(out, R"("type":"session.closed","reason":"{}","client_event_id":{})", reason,
          client_id.empty() ? std::string("null") : fmt::format("\"{}\"", client_id));
}

void native_session::error(std::string& out, const std::string& client_id, bool fatal) {
    event(out,
          R"("type":"error","sglang":{{"fatal":{}}},"error":{{"type":"{}","code":)"
          R"("fixture_failure","message":"deliberate peer failure","event_id":"{}",)"
          R"("param":null}})",
          fatal, fatal ? "server_error" : "invalid_request_error", client_id);
}

} // namespace pacer::server::detail

// The native mock's session loop: a reader that answers the client's commands and a writer that
// sends what is due, and the queue of output between them (native_session.hpp).

#include "native_session.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>

#include <algorithm>
#include <array>

namespace pacer::server::detail {

namespace asio = boost::asio;
namespace websocket = boost::beast::websocket;

namespace {

// vLLM-Omni's session ids are `duplex-<uuid>`, never reused; the others count sessions.
std::string session_id(const native_mock_options& o, std::size_t index) {
    if (o.realtime == protocol::realtime_protocol::vllm_omni)
        return "duplex-" + boost::uuids::to_string(boost::uuids::random_generator()());
    return fmt::format("sess_{}", index);
}

// Writes `n` into the blanks of a `server_event_seq` slot at `at`.
void stamp(std::string& batch, std::size_t at, std::uint64_t n) {
    char digits[seq_width];
    const auto end = fmt::format_to_n(digits, seq_width, "{}", n).out;
    std::copy(digits, end, batch.begin() + static_cast<std::ptrdiff_t>(at));
}

} // namespace

native_session::native_session(native_sessions& mock, ws_stream& ws, const session_start& start)
    : mock_(mock), shard_(mock.shards[mock.host->shard_of(ws.get_executor())]),
      options_(mock.options), ws_(ws), wake_(ws.get_executor()),
      session_id_(session_id(mock.options, start.index)),
      fault_(options_.fault != peer_fault::none &&
                     (!options_.fault_sessions || options_.fault_sessions->contains(start.index))
                 ? options_.fault
                 : peer_fault::none),
      unit_ms_(static_cast<std::uint64_t>(options_.profile->unit_ms)),
      unit_bytes_(unit_ms_ * input_bytes_per_ms),
      rate_(static_cast<std::uint64_t>(options_.output_sample_rate)),
      text_(std::ranges::equal(options_.profile->output_modalities,
                               std::array<std::string_view, 1>{"audio"})
                ? "output_audio_transcript"
                : "output_text"),
      text_field_(text_ == "output_text" ? "text" : "transcript") {}

awaitable<void> native_session::run(const session_start& start) {
    using namespace asio::experimental::awaitable_operators;
    if (options_.realtime == protocol::realtime_protocol::vllm_omni) {
        omni_open(start);
        if (start.over_capacity) { // told, and closed: not a session of the mock's
            co_await (read_loop() && write_loop());
            co_return;
        }
    }
    if (fault_ != peer_fault::none)
        ++shard_.faults;
    ++shard_.window.sessions_started;
    mock_.cold.opened(mock_.host->open_sessions(), clock::now());
    // Each protocol's own opening shape (protocol/opening.hpp), so that a client of
    // another protocol can tell: vLLM's is flat, OpenAI's has no `sglang`.
    if (!options_.realtime)
        event(immediate_,
              R"("type":"session.created","session":{{"id":"{}","object":)"
              R"("realtime.session","type":"realtime","model":"pacer-native-mock",)"
              R"("sglang":{{"granted":null}}}})",
              session_id_);
    else if (*options_.realtime == protocol::realtime_protocol::openai)
        event(immediate_,
              R"("type":"session.created","session":{{"id":"{}","object":)"
              R"("realtime.session","type":"realtime","model":"pacer-native-mock"}})",
              session_id_);
    else if (*options_.realtime == protocol::realtime_protocol::vllm)
        event(immediate_, R"("type":"session.created","id":"{}","created":0)", session_id_);
    co_await (read_loop() && write_loop());
}

// Reads until the client leaves or the session ends on the mock's side. Frames are read
// into one reused buffer and scanned, not parsed into a DOM (an append is 3.5 kB): the
// scanner gives the type, event_id, `sglang.seq` and the audio size; the rare command
// that needs more (a vllm-realtime commit's `final`) is parsed whole.
awaitable<void> native_session::read_loop() {
    protocol::event_scanner scanner;
    boost::beast::flat_buffer buffer;
    std::string client_id;
    for (;;) {
        buffer.consume(buffer.size());
        auto [ec, n] = co_await ws_.async_read(buffer, use_tuple);
        const auto now = clock::now();
        if (ec) {
            peer_gone_ = true;
            if (options_.realtime && !completed_) {
                completed_ = true; // the realtime APIs end by the client's close
                mock_.host->session_completed();
            }
            break;
        }
        const auto data = buffer.cdata();
        const std::string_view frame(static_cast<const char*>(data.data()), data.size());
        if (deaf_ || scanner.scan(frame) != nullptr)
            continue; // a silent fault, or a frame the mock cannot read: no answer
        client_id.assign(scanner.event_id());
        const auto type = scanner.type();
        if (options_.realtime)
            on_realtime(type, scanner, frame, now);
        else if (type == "session.update")
            on_update(client_id);
        else if (type == "input_audio_buffer.append")
            on_append(scanner, client_id, now);
        else if (type == "sglang.input_audio.end")
            on_end(client_id, now);
        else if (type == "session.close")
            on_close(client_id);
        wake_.cancel();
        if (stop_reading_)
            break;
    }
    wake_.cancel();
}

// Writes whatever is due, in order; sleeps until the next job is due or the reader wakes it.
awaitable<void> native_session::write_loop() {
    auto& socket = boost::beast::get_lowest_layer(ws_);
    auto& layer = ws_.next_layer(); // raw frames go through TLS when it is on
    std::string batch;
    std::vector<std::uint32_t> slots; // vllm-omni's server_event_seq slots in the batch
    for (;;) {
        if (peer_gone_)
            co_return;
        const auto now = clock::now();
        batch.swap(immediate_);
        slots.swap(immediate_slots_);
        then after = then::nothing;
        while (!pending_.empty() && pending_.front().due <= now && after == then::nothing) {
            auto& job = pending_.front();
            const auto base = static_cast<std::uint32_t>(batch.size());
            batch += job.frames;
            for (const auto at : job.seq_slots)
                slots.push_back(base + at);
            record(job, now);
            after = job.after;
            pending_.pop_front();
        }
        for (const auto at : slots)
            stamp(batch, at, next_seq_++);
        slots.clear();
        if (!batch.empty()) {
            auto [ec, n] = co_await asio::async_write(layer, asio::buffer(batch), use_tuple);
            batch.clear();
            if (ec) {
                peer_gone_ = true;
                boost::system::error_code ignored;
                socket.close(ignored); // ends the reader too
                co_return;
            }
        } else if (after == then::nothing) {
            wake_.expires_at(pending_.empty() ? time_point::max() : pending_.front().due);
            co_await wake_.async_wait(use_tuple);
        }
        if (after != then::nothing) {
            const websocket::close_reason reason =
                after == then::close
                    ? websocket::close_reason(websocket::close_code::normal)
                    : websocket::close_reason(websocket::close_code::internal_error,
                                              "deliberate disconnect");
            co_await ws_.async_close(reason, use_tuple);
            co_return;
        }
    }
}

// A new job at the end of the queue, due at `due` but never before the job ahead of it.
output_job& native_session::queue(time_point due) {
    if (!pending_.empty() && pending_.back().due > due)
        due = pending_.back().due;
    pending_.push_back(output_job{due, {}, {}, then::nothing, 0, false, {}});
    return pending_.back();
}

// A unit completed at `now` (its last input byte arrived): through the shared worker when
// there is one, then the capacity model's latency, plus the cold start's cost inside a
// cold window and the overload penalty while degraded. Returns the unit's note and when its
// output may leave.
std::pair<unit_note, time_point> native_session::compute(time_point now) {
    unit_note note{now};
    time_point done = now;
    if (mock_.worker_on) {
        const auto a = mock_.worker.admit(now);
        note.wait = a.wait;
        note.queued = a.queued;
        done = a.done;
    }
    const auto delay = unit_delay();
    const auto cold = mock_.cold.extra(now);
    if (cold > duration::zero())
        ++shard_.window.cold_units;
    return {note, done + delay + cold + penalty(now, done - now + delay)};
}

// The overload penalty of a unit (or a response) ready at `now` whose modelled lag is `lag`.
duration native_session::penalty(time_point now, duration lag) {
    const auto extra = mock_.overload.unit(now, lag);
    if (extra > duration::zero())
        ++shard_.window.overloaded_units;
    return extra;
}

// The stats of the units of a job written at `now`.
void native_session::record(const output_job& job, time_point now) {
    if (job.completes) {
        ++shard_.responses;
        ++shard_.window.responses_completed;
    }
    for (const auto& u : job.units) {
        const double lag = to_seconds(now - u.ready);
        shard_.unit_output_lag_s.push_back(lag);
        auto& w = shard_.window;
        w.unit_latency_s.record(lag);
        w.queue_wait_s.record(to_seconds(u.wait));
        const auto batch = u.queued != 0 ? u.queued : job.units.size();
        w.batch_size.record(static_cast<double>(batch) * batch_scale);
    }
}

// The capacity model: L + P x (open sessions - 1).
duration native_session::unit_delay() const {
    const auto open = mock_.host->open_sessions();
    const auto d = options_.unit_latency +
                   options_.per_session_cost * static_cast<double>(open > 0 ? open - 1 : 0);
    return std::chrono::duration_cast<duration>(d);
}

} // namespace pacer::server::detail

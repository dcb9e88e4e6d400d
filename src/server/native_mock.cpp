#include <pacer/core/awaitable.hpp>
#include <pacer/core/base64.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/core/histogram.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/server/detail/compute_model.hpp>
#include <pacer/server/detail/mock_host.hpp>
#include <pacer/server/detail/speech_detector.hpp>
#include <pacer/server/native_mock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cmath>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>

namespace pacer::server {

namespace asio = boost::asio;
namespace websocket = boost::beast::websocket;
using detail::use_tuple;

namespace {

constexpr std::uint64_t input_bytes_per_ms = 32; // 16 kHz PCM16 mono
constexpr std::uint64_t holdback_samples = 256;  // the codec tail DuplexPeer keeps back
constexpr std::uint64_t reply_chunks = 5;        // a MiniCPM-o reply: one unit in 5 deltas
// DuplexPeer's FATAL_CLOSE_DELAY_S: three times the client's 0.2 s post-close window.
constexpr auto fatal_close_delay = std::chrono::milliseconds(600);

// In the order of `peer_fault`.
constexpr std::string_view fault_names[] = {
    "none",           "server_error", "delayed_fatal", "nonfatal_error", "timeout",
    "malformed_json", "nonfinite",    "disconnect",    "linger",         "close_without_update",
};

// What the writer does once a job's frames are out.
enum class then { nothing, close, close_1011 };

// A unit an output job carries, for the stats: when its last input byte arrived, how long it
// waited for the shared worker, and the units at the worker when it joined (0: no worker; the
// job's own unit count is its batch).
struct unit_note {
    time_point ready;
    duration wait{};
    std::uint64_t queued = 0;
};

// Output that leaves at `due`: the frames, the units it carries, and what follows it.
struct output_job {
    time_point due;
    std::string frames;
    std::vector<unit_note> units;
    then after = then::nothing;
    std::uint64_t response = 0; // openai-realtime: 1 + the response these frames are of, or 0
    bool completes = false;     // openai-realtime: carries a response.done completed
};

// Batch sizes go into a log_histogram as nanoseconds (one exact bucket each below 2,048),
// so their figures are whole counts, not a bucket midpoint near one.
constexpr double batch_scale = 1e-9;

// `x` as a JSON number in plain decimals (never `1E0`): nanosecond resolution, trailing zeros
// dropped.
std::string plain(double x) {
    std::string s = fmt::format("{:.9f}", x);
    while (s.size() > 2 && s.back() == '0' && s[s.size() - 2] != '.')
        s.pop_back();
    return s;
}

std::string plain(std::optional<double> x, double scale = 1) {
    return x ? plain(*x * scale) : std::string("null");
}

std::size_t parse_index(std::string_view text) {
    std::size_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        throw std::invalid_argument("");
    return v;
}

} // namespace

peer_fault parse_peer_fault(std::string_view name) {
    return static_cast<peer_fault>(detail::parse_choice(fault_names, name, "--fault"));
}

session_set session_set::parse(const std::string_view text) {
    session_set s;
    std::string_view list = text;
    try {
        while (true) {
            const auto comma = list.find(',');
            const auto item = list.substr(0, comma);
            const auto dash = item.find('-');
            const std::size_t first = parse_index(item.substr(0, dash));
            const std::size_t last =
                dash == std::string_view::npos ? first : parse_index(item.substr(dash + 1));
            if (last < first)
                throw std::invalid_argument("");
            s.ranges_.emplace_back(first, last);
            if (comma == std::string_view::npos)
                break;
            list.remove_prefix(comma + 1);
        }
    } catch (const std::invalid_argument&) {
        throw std::invalid_argument(fmt::format(
            "--fault-sessions must list session indices like 0,2,5-7 (got '{}')", text));
    }
    return s;
}

bool session_set::contains(std::size_t index) const {
    for (const auto& [first, last] : ranges_)
        if (first <= index && index <= last)
            return true;
    return false;
}

namespace {

// What `GET /stats` reports, kept per thread since the last reset.
struct stats_window {
    std::uint64_t sessions_started = 0;
    std::uint64_t units = 0;
    std::uint64_t cold_units = 0; // units that paid the cold start
    log_histogram unit_latency_s, queue_wait_s, batch_size;

    void merge(const stats_window& o) {
        sessions_started += o.sessions_started;
        units += o.units;
        cold_units += o.cold_units;
        unit_latency_s.merge(o.unit_latency_s);
        queue_wait_s.merge(o.queue_wait_s);
        batch_size.merge(o.batch_size);
    }
};

// What the sessions of one thread count: touched on that thread only, merged when read (by
// `GET /stats` on each thread in turn, or by stats() once every thread has stopped). A cache
// line of its own: threads never write one another's.
struct alignas(64) native_shard {
    std::uint64_t appends = 0;
    std::uint64_t units = 0;
    std::uint64_t responses = 0;
    std::uint64_t cancelled = 0;   // openai-realtime: responses cancelled (cancel or server VAD)
    std::uint64_t vad_cancels = 0; // openai-realtime: of those, by speech (server VAD)
    std::uint64_t speech_started = 0, speech_stopped = 0, truncates = 0;
    std::uint64_t faults = 0;
    std::vector<double> unit_output_lag_s;
    stats_window window;
};

// The mock's state across sessions: options, the shared compute model, and each thread's
// counters.
struct native_sessions final : detail::mock_sessions {
    native_sessions(std::shared_ptr<detail::mock_host> h, native_mock_options o);

    awaitable<void> run_session(detail::ws_stream& ws, std::size_t index) override;
    boost::json::object stats() const override;
    awaitable<std::optional<std::string>> get(std::string target) override;

    // Shard `i`'s window, reset when asked; runs on that shard's thread.
    awaitable<stats_window> take_window(std::size_t i, bool reset);
    // The GET /stats document of `merged` (every shard's window) at `now`.
    std::string stats_document(const stats_window& merged, time_point now) const;

    native_mock_options options;
    std::string granted; // the granted capabilities, the same JSON for every session
    bool worker_on = false;
    detail::service_queue worker;
    detail::cold_start cold;
    std::vector<native_shard> shards; // one per host shard
    // Where the current stats window began, and the cold starts before it.
    std::atomic<duration::rep> since;
    std::atomic<std::uint64_t> cold_starts_before{0};
};

} // namespace

native_mock::native_mock(asio::io_context& ctx, native_mock_options options)
    : mock_server(detail::make_sessions<native_sessions>(ctx, std::move(options))) {}

native_mock::native_mock(std::span<asio::io_context* const> contexts, native_mock_options options)
    : mock_server(detail::make_sessions<native_sessions>(contexts, std::move(options))) {}

namespace {

// One session: a reader that answers the client's commands and a writer that sends what is
// due. Acknowledgements leave at once; unit output and everything behind it (EOS sequence,
// session.closed) queue in order, each job due on the capacity model's clock.
//
// Frames are written straight to the socket beneath Beast (several per write) by the writer
// alone; Beast only reads, and closes once the reader has stopped. The one overlap left is a
// close frame the client sends mid-stream, which Beast answers while the writer may be writing:
// the client is leaving then, and only its goodbye can suffer.
class native_session {
public:
    native_session(native_sessions& mock, detail::ws_stream& ws, std::size_t index)
        : mock_(mock), shard_(mock.shards[mock.host->shard_of(ws.get_executor())]),
          options_(mock.options), ws_(ws), wake_(ws.get_executor()),
          session_id_(fmt::format("sess_{}", index)),
          fault_(options_.fault != peer_fault::none &&
                         (!options_.fault_sessions || options_.fault_sessions->contains(index))
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

    awaitable<void> run() {
        using namespace asio::experimental::awaitable_operators;
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
        else
            event(immediate_, R"("type":"session.created","id":"{}","created":0)", session_id_);
        co_await (read_loop() && write_loop());
    }

private:
    // Reads until the client leaves or the session ends on the mock's side. Frames are read
    // into one reused buffer and scanned, not parsed into a DOM (an append is 3.5 kB): the
    // scanner gives the type, event_id, `sglang.seq` and the audio size; the rare command
    // that needs more (a vllm-realtime commit's `final`) is parsed whole.
    awaitable<void> read_loop() {
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
    awaitable<void> write_loop() {
        auto& socket = boost::beast::get_lowest_layer(ws_);
        auto& layer = ws_.next_layer(); // raw frames go through TLS when it is on
        std::string batch;
        for (;;) {
            if (peer_gone_)
                co_return;
            const auto now = clock::now();
            batch.swap(immediate_);
            then after = then::nothing;
            while (!pending_.empty() && pending_.front().due <= now && after == then::nothing) {
                auto& job = pending_.front();
                batch += job.frames;
                record(job, now);
                after = job.after;
                pending_.pop_front();
            }
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

    // ---- the client's commands

    // openai-realtime and vllm-realtime (see native_mock_options::realtime).
    void on_realtime(std::string_view type, const protocol::event_scanner& scanner,
                     std::string_view frame, time_point now) {
        if (*options_.realtime == protocol::realtime_protocol::openai) {
            on_openai(type, scanner, frame, now);
            return;
        }
        if (type == "input_audio_buffer.append") {
            ++shard_.appends;
            input_bytes_ += scanner.audio_decoded_size();
            while ((units_done_ + 1) * protocol::packet_bytes <= input_bytes_) {
                const auto [note, due] = compute(now);
                auto& job = queue(due);
                event(job.frames, R"("type":"transcription.delta","delta":"w{} ")", units_done_);
                transcript_ += fmt::format("w{} ", units_done_);
                job.units.push_back(note);
                ++units_done_;
                count_unit();
            }
        } else if (type == "input_audio_buffer.commit") {
            protocol::frame_parser parser; // commits are rare: a DOM is affordable here
            if (parser.parse(frame) != nullptr)
                return;
            const auto* f = parser.object().if_contains("final");
            if (f && f->is_bool() && f->get_bool())
                event(queue(now + unit_delay()).frames,
                      R"("type":"transcription.done","text":"{}","usage":{{}})", transcript_);
        }
    }

    void on_openai(std::string_view type, const protocol::event_scanner& scanner,
                   std::string_view frame, time_point now) {
        if (type == "session.update") {
            protocol::frame_parser parser; // rare: a DOM
            if (parser.parse(frame) == nullptr)
                configure_turns(parser.object());
            const std::string detection =
                vad_ ? fmt::format(R"({{"type":"server_vad","silence_duration_ms":{}}})",
                                   vad_silence_ms_)
                     : std::string("null");
            event(immediate_,
                  R"("type":"session.updated","session":{{"id":"{}","object":)"
                  R"("realtime.session","type":"realtime","model":"pacer-native-mock",)"
                  R"("output_modalities":["audio"],"audio":{{"input":{{"format":{{"type":)"
                  R"("audio/pcm","rate":24000}},"turn_detection":{}}},"output":{{"format":)"
                  R"({{"type":"audio/pcm","rate":24000}}}}}}}})",
                  session_id_, detection);
        } else if (type == "input_audio_buffer.append") {
            ++shard_.appends;
            input_bytes_ += scanner.audio_decoded_size();
            while ((units_done_ + 1) * protocol::openai_packet_bytes <= input_bytes_) {
                ++units_done_;
                count_unit();
            }
            if (vad_)
                listen(frame, now);
        } else if (type == "input_audio_buffer.commit") {
            committed(immediate_);
        } else if (type == "response.create") {
            start_response(now);
        } else if (type == "response.cancel") {
            if (!cancel_response(now, "client_cancelled")) {
                // As the API answers a cancel with nothing to cancel.
                const auto id = scanner.event_id();
                event(immediate_,
                      R"("type":"error","error":{{"type":"invalid_request_error","code":)"
                      R"("response_cancel_not_active","message":"Cancellation failed: no )"
                      R"(active response found","param":null,"event_id":{}}})",
                      id.empty() ? std::string("null") : fmt::format(R"("{}")", id));
            }
        } else if (type == "conversation.item.truncate") {
            protocol::frame_parser parser;
            if (parser.parse(frame) != nullptr)
                return;
            const auto& o = parser.object();
            const auto* item = o.if_contains("item_id");
            const auto* end = o.if_contains("audio_end_ms");
            ++shard_.truncates;
            event(immediate_,
                  R"("type":"conversation.item.truncated","item_id":"{}","content_index":0,)"
                  R"("audio_end_ms":{})",
                  item && item->is_string() ? std::string_view(item->get_string()) : "",
                  end && end->is_number() ? end->to_number<std::uint64_t>() : 0);
        }
    }

    // session.update's turn detection: GA `session.audio.input.turn_detection`, or the beta's
    // `session.turn_detection`. Absent: unchanged (server VAD, as OpenAI's default); null:
    // manual turns; an object: server VAD, with its `silence_duration_ms` if it has one.
    void configure_turns(const boost::json::object& update) {
        const auto* session = update.if_contains("session");
        if (session == nullptr || !session->is_object())
            return;
        const boost::json::value* td = session->get_object().if_contains("turn_detection");
        if (const auto* audio = session->get_object().if_contains("audio");
            audio && audio->is_object())
            if (const auto* in = audio->get_object().if_contains("input"); in && in->is_object())
                if (const auto* t = in->get_object().if_contains("turn_detection"))
                    td = t;
        if (td == nullptr)
            return;
        vad_ = td->is_object();
        if (vad_)
            if (const auto* ms = td->get_object().if_contains("silence_duration_ms");
                ms && ms->is_number())
                vad_silence_ms_ = ms->to_number<std::uint64_t>();
        detector_.reset();
    }

    // Server VAD on an append's PCM: speech_started (cancelling a response under way) and
    // speech_stopped, then the commit and a response, as OpenAI's server VAD does.
    void listen(std::string_view frame, time_point now) {
        protocol::frame_parser parser;
        if (parser.parse(frame) != nullptr)
            return;
        const auto* audio = parser.object().if_contains("audio");
        if (audio == nullptr || !audio->is_string())
            return;
        const auto pcm = base64_decode(audio->get_string());
        if (!pcm)
            return;
        if (!detector_)
            detector_.emplace(detail::speech_detector_options{
                options_.vad_threshold_dbfs, vad_silence_ms_, protocol::openai_sample_rate});
        vad_events_.clear();
        detector_->feed(*pcm, vad_events_);
        // A window is judged once it has played out, 80 ms after its packet began to arrive,
        // as a server listening in real time does (the client's turn ends there too).
        using kind = detail::speech_detector::event::kind;
        const time_point decided =
            now + std::chrono::milliseconds(detail::speech_detector::window_ms);
        for (const auto& e : vad_events_) {
            std::string frames;
            if (e.what == kind::started) {
                ++shard_.speech_started;
                event(frames,
                      R"("type":"input_audio_buffer.speech_started","audio_start_ms":{},)"
                      R"("item_id":"item_input_{}")",
                      e.audio_ms, commits_);
                if (cancel_response(decided, "turn_detected", &frames))
                    ++shard_.vad_cancels;
                else
                    queue(decided).frames = std::move(frames);
            } else {
                ++shard_.speech_stopped;
                event(frames,
                      R"("type":"input_audio_buffer.speech_stopped","audio_end_ms":{},)"
                      R"("item_id":"item_input_{}")",
                      e.audio_ms, commits_);
                committed(frames);
                queue(decided).frames = std::move(frames);
                start_response(decided);
            }
        }
    }

    // input_audio_buffer.committed: the user item the commit makes, after the previous one.
    void committed(std::string& out) {
        const std::string previous =
            commits_ == 0 ? "null" : fmt::format(R"("item_input_{}")", commits_ - 1);
        event(out,
              R"("type":"input_audio_buffer.committed","previous_item_id":{},)"
              R"("item_id":"item_input_{}")",
              previous, commits_);
        ++commits_;
    }

    // A response of `reply` audio: response.created and the first delta after the capacity
    // model's latency, the next deltas 80 ms apart (behind any response still queued), then
    // output_audio.done and response.done completed with the last.
    void start_response(time_point now) {
        const std::uint64_t r = replies_++;
        const auto step = std::chrono::milliseconds(80);
        const auto deltas = std::max<std::uint64_t>(
            1, static_cast<std::uint64_t>(std::ceil(options_.reply.count() / 80.0)));
        time_point first{};
        for (std::uint64_t k = 0; k < deltas; ++k) {
            auto& job =
                queue(k == 0 ? now + unit_delay() : first + step * static_cast<std::int64_t>(k));
            if (k == 0)
                first = job.due;
            job.response = r + 1;
            if (k == 0)
                response_created(job.frames, fmt::format("response_{}", r));
            event(job.frames,
                  R"("type":"response.output_audio.delta","response_id":"response_{}",)"
                  R"("item_id":"item_{}","output_index":0,"content_index":0,"delta":"{}")",
                  r, r, audio_.base64(protocol::openai_packet_bytes / 2, 0));
            event(job.frames,
                  R"("type":"response.output_audio_transcript.delta","response_id":)"
                  R"("response_{}","item_id":"item_{}","delta":"w{} ")",
                  r, r, k);
            if (k + 1 == deltas) {
                job.completes = true;
                event(job.frames,
                      R"("type":"response.output_audio.done","response_id":"response_{}",)"
                      R"("item_id":"item_{}","output_index":0,"content_index":0)",
                      r, r);
                event(job.frames,
                      R"("type":"response.done","response":{{"id":"response_{}","object":)"
                      R"("realtime.response","status":"completed","output":[{{"id":"item_{}",)"
                      R"("object":"realtime.item","type":"message","role":"assistant"}}],)"
                      R"("usage":{{}}}})",
                      r, r);
            }
        }
    }

    // Cancels the responses under way: nothing of theirs due after now + the reaction time
    // leaves, and each gets response.done cancelled then, behind `lead` (frames due at `now`,
    // left alone when nothing is under way). False when none is under way (every
    // response.done already written).
    bool cancel_response(time_point now, std::string_view reason, std::string* lead = nullptr) {
        const time_point cutoff =
            now + std::chrono::duration_cast<duration>(options_.cancel_reaction);
        bool active = false;
        std::vector<std::uint64_t> cut;
        for (auto it = pending_.begin(); it != pending_.end();) {
            if (it->response == 0) {
                ++it;
                continue;
            }
            active = true;
            if (it->due <= cutoff) {
                ++it;
                continue;
            }
            if (std::find(cut.begin(), cut.end(), it->response) == cut.end())
                cut.push_back(it->response);
            it = pending_.erase(it);
        }
        if (!active)
            return false;
        if (lead != nullptr)
            queue(now).frames = std::move(*lead);
        for (const auto r : cut) {
            event(queue(cutoff).frames,
                  R"("type":"response.done","response":{{"id":"response_{}","object":)"
                  R"("realtime.response","status":"cancelled","status_details":{{"type":)"
                  R"("cancelled","reason":"{}"}},"output":[],"usage":{{}}}})",
                  r - 1, reason);
            ++shard_.cancelled;
        }
        return active;
    }

    void on_update(const std::string& client_id) {
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

    void on_append(const protocol::event_scanner& scanner, const std::string& client_id,
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

    void on_end(const std::string& client_id, time_point now) {
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

    void on_close(const std::string& client_id) {
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
    void inject(const std::string& client_id, time_point now) {
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
            detail::append_frame(immediate_,
                                 R"({"type":"sglang.unit.done","event_id":"server_nan",)"
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

    // ---- output

    // A new job at the end of the queue, due at `due` but never before the job ahead of it.
    output_job& queue(time_point due) {
        if (!pending_.empty() && pending_.back().due > due)
            due = pending_.back().due;
        pending_.push_back(output_job{due, {}, {}, then::nothing, 0, false});
        return pending_.back();
    }

    // A unit completed at `now` (its last input byte arrived): through the shared worker when
    // there is one, then the capacity model's latency, plus the cold start's cost inside a
    // cold window. Returns the unit's note and when its output may leave.
    std::pair<unit_note, time_point> compute(time_point now) {
        unit_note note{now};
        time_point done = now;
        if (mock_.worker_on) {
            const auto a = mock_.worker.admit(now);
            note.wait = a.wait;
            note.queued = a.queued;
            done = a.done;
        }
        const auto cold = mock_.cold.extra(now);
        if (cold > duration::zero())
            ++shard_.window.cold_units;
        return {note, done + unit_delay() + cold};
    }

    // The stats of the units of a job written at `now`.
    void record(const output_job& job, time_point now) {
        if (job.completes)
            ++shard_.responses;
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

    void count_unit() {
        ++shard_.units;
        ++shard_.window.units;
    }

    // The capacity model: L + P x (open sessions - 1).
    duration unit_delay() const {
        const auto open = mock_.host->open_sessions();
        const auto d = options_.unit_latency +
                       options_.per_session_cost * static_cast<double>(open > 0 ? open - 1 : 0);
        return std::chrono::duration_cast<duration>(d);
    }

    // Appends the frame of one server event: `fields` (fmt format) after the event_id.
    template <class... Args>
    void event(std::string& out, fmt::format_string<Args...> fields, Args&&... args) {
        json_.clear();
        fmt::format_to(std::back_inserter(json_), R"({{"event_id":"server_{}",)", next_event_++);
        fmt::format_to(std::back_inserter(json_), fields, std::forward<Args>(args)...);
        json_ += '}';
        detail::append_frame(out, json_);
    }

    // The output of a completed unit k.
    void unit_output(std::string& out, std::uint64_t k) {
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

    std::uint64_t samples_until(std::uint64_t units) const {
        return units * rate_ * unit_ms_ / 1000;
    }

    bool ends_question(std::uint64_t k) const { return (k + 1) % options_.question_every == 0; }

    void open_response(std::string& out) {
        if (response_open_)
            return;
        response_open_ = true;
        response_created(out, "response_0");
    }

    void response_created(std::string& out, std::string_view id) {
        event(out,
              R"("type":"response.created","response":{{"id":"{}","object":"realtime.response",)"
              R"("status":"in_progress","output":[]}})",
              id);
    }

    // A MiniCPM-o reply after unit k: its own response, one unit of audio in a few deltas.
    void reply(std::string& out, std::uint64_t k) {
        const std::string id = fmt::format("response_{}", replies_);
        const std::string item = fmt::format("item_{}", replies_);
        ++replies_;
        response_created(out, id);
        const std::uint64_t samples = samples_until(1);
        for (std::uint64_t c = 0; c < reply_chunks; ++c)
            audio_delta(out, id, item,
                        samples * (c + 1) / reply_chunks - samples * c / reply_chunks, k,
                        static_cast<double>(unit_ms_));
        const std::string text = fmt::format("answer {} ", replies_);
        event(out,
              R"("type":"response.{}.delta","response_id":"{}",)"
              R"("item_id":"{}","output_index":0,"content_index":0,"delta":"{}")",
              text_, id, item, text);
        finish_response(out, id, item, text);
    }

    void audio_delta(std::string& out, std::string_view response, std::string_view item,
                     std::uint64_t samples, std::uint64_t unit, double duration_ms) {
        event(out,
              R"("type":"response.output_audio.delta","response_id":"{}","item_id":"{}",)"
              R"("output_index":0,"content_index":0,"delta":"{}","sglang":{{"unit_id":)"
              R"("unit_{}","chunk_seq":{},"media_time":{{"t_start_ms":{},"duration_ms":{}}}}})",
              response, item, audio_.base64(samples, 1), unit, chunk_seq_++, unit * unit_ms_,
              duration_ms); // 1: DuplexPeer's sample value
    }

    void transcript_delta(std::string& out, std::string_view response, std::string_view item,
                          std::uint64_t unit) {
        const std::string text = fmt::format("w{} ", unit);
        transcript_ += text;
        event(out,
              R"("type":"response.{}.delta","response_id":"{}",)"
              R"("item_id":"{}","output_index":0,"content_index":0,"delta":"{}")",
              text_, response, item, text);
    }

    // output_audio.done, transcript.done, response.done completed/stop.
    void finish_response(std::string& out, std::string_view id, std::string_view item,
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
            text_ == "output_text"
                ? fmt::format(R"({{"type":"output_text","text":"{}"}},)", transcript)
                : std::string();
        event(out,
              R"("type":"response.done","response":{{"id":"{}","object":"realtime.response",)"
              R"("status":"completed","status_details":{{"reason":"stop"}},"output":[{{"id":)"
              R"("{}","object":"realtime.item","type":"message","role":"assistant","content":)"
              R"([{}{{"type":"output_audio","transcript":"{}"}}]}}],"usage":{{}}}})",
              id, item, text_part, transcript);
        ++shard_.responses;
    }

    void unit_done(std::string& out, std::uint64_t k, double duration_ms) {
        event(out,
              R"("type":"sglang.unit.done","unit_id":"unit_{}","sglang":{{"unit_id":"unit_{}",)"
              R"("media_time":{{"t_start_ms":{},"duration_ms":{}}}}})",
              k, k, k * unit_ms_, duration_ms);
        count_unit();
    }

    // session.closed; an empty `client_id` (server-initiated) is null.
    void closed(std::string& out, std::string_view reason, const std::string& client_id) {
        event(out, R"("type":"session.closed","reason":"{}","client_event_id":{})", reason,
              client_id.empty() ? std::string("null") : fmt::format("\"{}\"", client_id));
    }

    void error(std::string& out, const std::string& client_id, bool fatal) {
        event(out,
              R"("type":"error","sglang":{{"fatal":{}}},"error":{{"type":"{}","code":)"
              R"("fixture_failure","message":"deliberate peer failure","event_id":"{}",)"
              R"("param":null}})",
              fatal, fatal ? "server_error" : "invalid_request_error", client_id);
    }

    double input_ms() const {
        return static_cast<double>(input_bytes_) / static_cast<double>(input_bytes_per_ms);
    }

    native_sessions& mock_;
    native_shard& shard_; // this thread's counters
    const native_mock_options& options_;
    detail::ws_stream& ws_;
    steady_timer wake_;
    const std::string session_id_;
    const peer_fault fault_;
    const std::uint64_t unit_ms_, unit_bytes_, rate_;
    // As the real server names its text events: audio transcripts when the session was granted
    // audio alone, text output when it was granted text as well.
    const std::string_view text_, text_field_;

    std::string immediate_;          // acknowledgements: out at the next write
    std::deque<output_job> pending_; // unit output and what must stay behind it
    std::string held_;               // units of an unfinished burst
    std::vector<unit_note> held_units_;
    time_point held_due_{}; // when the held units' output may leave
    bool stop_reading_ = false, deaf_ = false, peer_gone_ = false;

    std::uint64_t next_event_ = 0;
    std::uint64_t input_bytes_ = 0;
    std::uint64_t units_done_ = 0;
    std::uint64_t emitted_ = 0; // output samples sent in response_0
    std::uint64_t chunk_seq_ = 0;
    std::uint64_t replies_ = 0;
    bool response_open_ = false;
    std::uint64_t commits_ = 0; // openai-realtime: input_audio_buffer.commit events
    bool vad_ = true;           // openai-realtime: server VAD (OpenAI's default)
    std::uint64_t vad_silence_ms_ = static_cast<std::uint64_t>(options_.vad_silence.count());
    std::optional<detail::speech_detector> detector_;
    std::vector<detail::speech_detector::event> vad_events_;
    bool completed_ = false;
    std::string transcript_;
    std::string json_;
    detail::constant_audio audio_;
};

} // namespace

std::string granted_capabilities(const native_mock_options& o) {
    // The profile's output modalities, exactly: the reference oracle of the MiniCPM-o profile
    // that asks for audio and text fails a grant of audio alone.
    return fmt::format(
        R"({{"interaction":"native","native_full_duplex":true,"proactive_output":false,)"
        R"("turn_control":[null],"client_commit":false,"input_modalities":["audio"],)"
        R"("output_modalities":{},"input_audio_format":{{"type":"audio/pcm","rate":16000}},)"
        R"("output_audio_format":{{"type":"audio/pcm","rate":{}}},"native_unit_ms":{},)"
        R"("first_unit_ms":{},"microturn_ms":null,"tail_policy":"pad",)"
        R"("supports_server_interrupt":false,"supports_truncate":false,"supports_resume":false,)"
        R"("partial_style":"append_only","pressure_policy":"reject","strict_order":true,)"
        R"("rejections":[],"limits":{{"max_input_bytes":1920000,"max_input_chunks":128,)"
        R"("max_output_bytes":4194304,"max_output_events":256,"max_responses":128,)"
        R"("max_segments":256,"max_history_chars":65536,"session_timeout_s":240,)"
        R"("cleanup_timeout_s":30}}}})",
        protocol::output_modalities_json(*o.profile), o.output_sample_rate, o.profile->unit_ms,
        o.profile->unit_ms);
}

namespace {

awaitable<void> native_sessions::run_session(detail::ws_stream& ws, std::size_t index) {
    native_session session(*this, ws, index);
    co_await session.run();
}

// The options, normalised (a rate of 0 becomes the profile's) and checked.
native_mock_options checked(native_mock_options o) {
    if (o.profile == nullptr || o.profile->name == "qwen3-omni-half-duplex")
        throw std::invalid_argument(
            "--profile must be nemotron or minicpmo (the legacy qwen3 protocol is not mocked)");
    if (o.output_sample_rate == 0)
        o.output_sample_rate = o.profile->output_sample_rate;
    if (o.output_sample_rate < 8000 || o.output_sample_rate > 192000)
        throw std::invalid_argument("--output-sample-rate must be within 8000..192000 Hz");
    if (o.burst_units == 0)
        throw std::invalid_argument("--burst-units must be >= 1");
    if (o.question_every == 0)
        throw std::invalid_argument("--question-every must be >= 1");
    auto finite_ms = [](double v) { return v >= 0 && v <= 3.6e6; }; // at most an hour
    if (!finite_ms(o.unit_latency.count()))
        throw std::invalid_argument("--unit-latency-ms must be a finite number >= 0");
    if (!finite_ms(o.per_session_cost.count()))
        throw std::invalid_argument("--per-session-cost-ms must be a finite number >= 0");
    if (!finite_ms(o.service_time.count()))
        throw std::invalid_argument("--service-ms must be a number of ms within 0..3600000");
    if (!finite_ms(o.cold_start_extra.count()))
        throw std::invalid_argument("--cold-start-ms must be a number of ms within 0..3600000");
    if (!finite_ms(o.vad_silence.count()) || o.vad_silence.count() < 80)
        throw std::invalid_argument("--vad-silence-ms must be a number of ms within 80..3600000");
    if (!finite_ms(o.reply.count()))
        throw std::invalid_argument("--reply-ms must be a number of ms within 0..3600000");
    if (!finite_ms(o.cancel_reaction.count()))
        throw std::invalid_argument(
            "--cancel-reaction-ms must be a number of ms within 0..3600000");
    if (!(o.vad_threshold_dbfs >= -120 && o.vad_threshold_dbfs <= 0))
        throw std::invalid_argument("--vad-threshold-dbfs must be a number within -120..0");
    if (!(o.cold_start_window.count() > 0 && o.cold_start_window.count() <= 3600))
        throw std::invalid_argument("--cold-start-s must be a number of seconds within (0, 3600]");
    return o;
}

template <class Rep, class Period>
duration ticks(std::chrono::duration<Rep, Period> d) {
    return std::chrono::duration_cast<duration>(d);
}

native_sessions::native_sessions(std::shared_ptr<detail::mock_host> h, native_mock_options opts)
    : mock_sessions(std::move(h)), options(checked(std::move(opts))),
      granted(granted_capabilities(options)), worker_on(options.service_time.count() > 0),
      worker(ticks(options.service_time)),
      cold(ticks(options.cold_start_extra), ticks(options.cold_start_window)),
      shards(host->shard_count()), since(clock::now().time_since_epoch().count()) {}

awaitable<stats_window> native_sessions::take_window(std::size_t i, bool reset) {
    stats_window w = shards[i].window;
    if (reset)
        shards[i].window = stats_window{};
    co_return w;
}

awaitable<std::optional<std::string>> native_sessions::get(std::string target) {
    const std::string_view t = target;
    const auto mark = t.find('?');
    if (t.substr(0, mark) != "/stats")
        co_return std::nullopt;
    bool reset = false;
    for (std::string_view query = mark == std::string_view::npos ? "" : t.substr(mark + 1);
         !query.empty();) {
        const auto amp = query.find('&');
        reset = reset || query.substr(0, amp) == "reset=1";
        query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    }
    // Each thread's window is read (and reset) on that thread, one after the other: no lock
    // in the sessions' path, at the price of a window that is not one instant across threads.
    stats_window merged;
    for (std::size_t i = 0; i < shards.size(); ++i)
        merged.merge(co_await asio::co_spawn(host->shard_executor(i), take_window(i, reset),
                                             pacer::use_awaitable));
    const auto now = clock::now();
    std::string doc = stats_document(merged, now);
    if (reset) {
        since.store(now.time_since_epoch().count());
        cold_starts_before.store(cold.count());
    }
    co_return doc;
}

std::string native_sessions::stats_document(const stats_window& w, time_point now) const {
    constexpr double fractions[] = {0.50, 0.90, 0.95, 0.99};
    auto dist = [&](const log_histogram& h, double scale) {
        const auto d = h.summarize(fractions);
        return fmt::format(
            R"({{"count":{},"mean":{},"p50":{},"p90":{},"p95":{},"p99":{},"max":{}}})", d.n,
            plain(d.mean, scale), plain(d.at(0.50), scale), plain(d.at(0.90), scale),
            plain(d.at(0.95), scale), plain(d.at(0.99), scale), plain(d.max, scale));
    };
    std::string per_thread;
    for (const auto n : host->sessions_per_shard())
        per_thread += (per_thread.empty() ? "" : ",") + std::to_string(n);
    return fmt::format(
        R"({{"since_s":{},"now_s":{},"sessions_open":{},"sessions_started":{},"units":{},)"
        R"("unit_latency_s":{},"queue_wait_s":{},"batch_size":{},"backlog_s":{},)"
        R"("cold_starts":{},"cold_units":{},"high_water_sessions":{},"threads":{},)"
        R"("sessions_per_thread":[{}]}})",
        plain(to_seconds(time_point(duration(since.load())))), plain(to_seconds(now)),
        host->open_sessions(), w.sessions_started, w.units, dist(w.unit_latency_s, 1),
        dist(w.queue_wait_s, 1), dist(w.batch_size, 1 / batch_scale),
        plain(to_seconds(worker.backlog(now))), cold.count() - cold_starts_before.load(),
        w.cold_units, cold.high_water(), shards.size(), per_thread);
}

boost::json::object native_sessions::stats() const {
    const auto& s = *this;
    boost::json::object o = host->stats();
    o["profile"] = s.options.profile->name;
    o["protocol"] = !s.options.realtime                                          ? "native"
                    : *s.options.realtime == protocol::realtime_protocol::openai ? "openai-realtime"
                                                                                 : "vllm-realtime";
    o["output_sample_rate"] = s.options.output_sample_rate;
    o["burst_units"] = s.options.burst_units;
    o["unit_latency_ms"] = s.options.unit_latency.count();
    o["per_session_cost_ms"] = s.options.per_session_cost.count();
    o["service_ms"] = s.options.service_time.count();
    o["cold_start_ms"] = s.options.cold_start_extra.count();
    o["cold_start_s"] = s.options.cold_start_window.count();
    if (s.options.realtime == protocol::realtime_protocol::openai) {
        o["vad_threshold_dbfs"] = s.options.vad_threshold_dbfs;
        o["vad_silence_ms"] = s.options.vad_silence.count();
        o["reply_ms"] = s.options.reply.count();
        o["cancel_reaction_ms"] = s.options.cancel_reaction.count();
    }
    // Read once every thread has stopped (or on the one thread): each shard's counts as they are.
    std::uint64_t appends = 0, units = 0, responses = 0, cancelled = 0, faults = 0, vad_cancels = 0,
                  speech_started = 0, speech_stopped = 0, truncates = 0;
    std::vector<double> lags;
    stats_window window;
    for (const auto& shard : s.shards) {
        appends += shard.appends;
        units += shard.units;
        responses += shard.responses;
        cancelled += shard.cancelled;
        vad_cancels += shard.vad_cancels;
        speech_started += shard.speech_started;
        speech_stopped += shard.speech_stopped;
        truncates += shard.truncates;
        faults += shard.faults;
        lags.insert(lags.end(), shard.unit_output_lag_s.begin(), shard.unit_output_lag_s.end());
        window.merge(shard.window);
    }
    o["appends"] = appends;
    o["units"] = units;
    o["responses"] = responses;
    o["responses_cancelled"] = cancelled;
    o["responses_cancelled_by_vad"] = vad_cancels;
    o["speech_started"] = speech_started;
    o["speech_stopped"] = speech_stopped;
    o["truncates"] = truncates;
    o["faults_injected"] = faults;
    o["unit_output_lag_s"] = to_json(summarize(lags, pacing_fractions));
    o["cold_starts"] = s.cold.count();
    o["high_water_sessions"] = s.cold.high_water();
    o["server_stats"] = boost::json::parse(stats_document(window, clock::now()));
    return o;
}

} // namespace

} // namespace pacer::server

#pragma once
// The native mock's insides, shared by its sources (private to src/server): the mock's state
// across sessions (native_mock.cpp: options, GET /stats, stats()) and one session, whose
// members are defined by concern:
//   native_session.cpp   the session loop (reader, writer) and the output queue
//   native_replies.cpp   the native protocol (sglang): acknowledgements, unit output, faults
//   native_realtime.cpp  openai-realtime and vllm-realtime
//   native_omni.cpp      vllm-omni (the session, input, playback ledger, barge-in)
//   omni_replies.cpp     vllm-omni's responses and events

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/core/histogram.hpp>
#include <pacer/protocol/event_scanner.hpp>
#include <pacer/server/detail/compute_model.hpp>
#include <pacer/server/detail/mock_host.hpp>
#include <pacer/server/detail/speech_detector.hpp>
#include <pacer/server/native_mock.hpp>

#include <boost/json/object.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pacer::server::detail {

inline constexpr std::uint64_t input_bytes_per_ms = 32; // 16 kHz PCM16 mono
inline constexpr std::uint64_t holdback_samples = 256;  // the codec tail DuplexPeer keeps back
inline constexpr std::uint64_t reply_chunks = 5;        // a MiniCPM-o reply: one unit in 5 deltas
// DuplexPeer's FATAL_CLOSE_DELAY_S: three times the client's 0.2 s post-close window.
inline constexpr auto fatal_close_delay = std::chrono::milliseconds(600);

// Batch sizes go into a log_histogram as nanoseconds (one exact bucket each below 2,048),
// so their figures are whole counts, not a bucket midpoint near one.
inline constexpr double batch_scale = 1e-9;

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
    // vllm-omni: where each frame's `server_event_seq` digits go (offsets into `frames`),
    // stamped as the job is written so that the numbers rise in the order the client reads.
    std::vector<std::uint32_t> seq_slots{};
};

// The width of a `server_event_seq` slot: the number, then blanks (JSON whitespace).
inline constexpr std::size_t seq_width = 20;

// What `GET /stats` reports, kept per thread since the last reset.
struct stats_window {
    std::uint64_t sessions_started = 0;
    std::uint64_t units = 0;
    std::uint64_t cold_units = 0;       // units that paid the cold start
    std::uint64_t overloaded_units = 0; // units that paid the overload penalty
    // Responses completed (written) and cancelled; vllm-omni's playback acknowledgements,
    // those refused, and commits deferred.
    std::uint64_t responses_completed = 0, responses_cancelled = 0;
    std::uint64_t playback_acks = 0, playback_ack_errors = 0, deferred_commits = 0;
    log_histogram unit_latency_s, queue_wait_s, batch_size;

    void merge(const stats_window& o) {
        sessions_started += o.sessions_started;
        units += o.units;
        responses_completed += o.responses_completed;
        responses_cancelled += o.responses_cancelled;
        playback_acks += o.playback_acks;
        playback_ack_errors += o.playback_ack_errors;
        deferred_commits += o.deferred_commits;
        cold_units += o.cold_units;
        overloaded_units += o.overloaded_units;
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
    // vllm-omni: playback.ack answered, refused (by code), commits deferred, listen decisions,
    // event acks, heartbeats, sessions told the capacity is exhausted.
    std::uint64_t playback_acks = 0, ack_mismatch = 0, ack_not_found = 0, ack_too_late = 0;
    std::uint64_t deferred_commits = 0, listens = 0, event_acks = 0, heartbeats = 0;
    std::uint64_t capacity_errors = 0;
    std::vector<double> unit_output_lag_s;
    stats_window window;
};

// The mock's state across sessions: options, the shared compute model, and each thread's
// counters.
struct native_sessions final : mock_sessions {
    native_sessions(std::shared_ptr<mock_host> h, native_mock_options o);

    awaitable<void> run_session(ws_stream& ws, const session_start& start) override;
    boost::json::object stats() const override;
    void add_omni_stats(boost::json::object& o) const;
    awaitable<std::optional<std::string>> get(std::string target) override;

    // Shard `i`'s window, reset when asked; runs on that shard's thread.
    awaitable<stats_window> take_window(std::size_t i, bool reset);
    // The GET /stats document of `merged` (every shard's window) at `now`.
    std::string stats_document(const stats_window& merged, time_point now) const;
    std::uint64_t pending_units(time_point now) const;

    native_mock_options options;
    std::string granted; // the granted capabilities, the same JSON for every session
    bool worker_on = false;
    service_queue worker;
    cold_start cold;
    overload_penalty overload;
    std::vector<native_shard> shards; // one per host shard
    // Where the current stats window began, and the cold starts before it.
    std::atomic<duration::rep> since;
    std::atomic<std::uint64_t> cold_starts_before{0}, overloads_before{0};
};

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
    native_session(native_sessions& mock, ws_stream& ws, const session_start& start);

    awaitable<void> run(const session_start& start);

private:
    // ---- the loop (native_session.cpp)
    awaitable<void> read_loop();
    awaitable<void> write_loop();

    // ---- the native protocol's commands and replies (native_replies.cpp)
    void on_update(const std::string& client_id);
    void on_append(const protocol::event_scanner& scanner, const std::string& client_id,
                   time_point now);
    void on_end(const std::string& client_id, time_point now);
    void on_close(const std::string& client_id);
    void inject(const std::string& client_id, time_point now);
    void unit_output(std::string& out, std::uint64_t k);
    void open_response(std::string& out);
    void response_created(std::string& out, std::string_view id);
    void reply(std::string& out, std::uint64_t k);
    void audio_delta(std::string& out, std::string_view response, std::string_view item,
                     std::uint64_t samples, std::uint64_t unit, double duration_ms);
    void transcript_delta(std::string& out, std::string_view response, std::string_view item,
                          std::uint64_t unit);
    void finish_response(std::string& out, std::string_view id, std::string_view item,
                         std::string_view transcript);
    void unit_done(std::string& out, std::uint64_t k, double duration_ms);
    void closed(std::string& out, std::string_view reason, const std::string& client_id);
    void error(std::string& out, const std::string& client_id, bool fatal);

    // ---- openai-realtime and vllm-realtime (native_realtime.cpp)
    void on_realtime(std::string_view type, const protocol::event_scanner& scanner,
                     std::string_view frame, time_point now);
    void on_openai(std::string_view type, const protocol::event_scanner& scanner,
                   std::string_view frame, time_point now);
    void configure_turns(const boost::json::object& update);
    void listen(std::string_view frame, time_point now);
    void committed(std::string& out);
    void start_response(time_point now);
    bool cancel_response(time_point now, std::string_view reason, std::string* lead = nullptr);

    // ---- vllm-omni (native_omni.cpp: the session, input, ledger, barge-in)
    void omni_open(const session_start& start);
    void on_omni(std::string_view type, const protocol::event_scanner& scanner,
                 std::string_view frame, time_point now);
    void omni_update(std::string_view frame, std::string_view event_id);
    void omni_append(const protocol::event_scanner& scanner, std::string_view frame,
                     time_point now);
    void omni_vad(std::string_view frame, time_point now);
    void omni_commit(std::string_view frame, std::string_view event_id, time_point now);
    void omni_turn(time_point now, bool busy);
    void omni_ack(std::string_view frame, std::string_view event_id);
    void omni_clear(time_point now);
    void omni_close();
    bool omni_generating(time_point now) const;
    bool omni_unplayed() const;
    void omni_release(time_point now);
    // ---- vllm-omni's replies (omni_replies.cpp)
    void omni_session(std::string& out, std::vector<std::uint32_t>& slots, std::string_view type);
    void omni_answer(time_point now);
    void omni_start(time_point now);
    std::optional<std::uint64_t> omni_cancel(time_point now, std::string_view reason, bool cleared);
    void omni_error(std::string_view code, std::string_view message, std::string_view event_id,
                    std::string_view param = {}, std::string_view type = "invalid_request_error");
    void omni_playback(std::string& out, std::uint64_t generated, std::uint64_t played,
                       std::uint64_t committed);

    // One frame of a vllm-omni server event: `fields` (fmt format) after its
    // `server_event_seq` slot (recorded in `slots`) and event_id.
    template <class... Args>
    void omni_event(std::string& out, std::vector<std::uint32_t>& slots,
                    fmt::format_string<Args...> fields, Args&&... args) {
        json_.assign(R"({"server_event_seq":)");
        const std::size_t at = json_.size();
        json_.append(seq_width, ' ');
        fmt::format_to(std::back_inserter(json_), R"(,"event_id":"server_{}",)", next_event_++);
        fmt::format_to(std::back_inserter(json_), fields, std::forward<Args>(args)...);
        json_ += '}';
        append_frame_header(out, json_.size());
        slots.push_back(static_cast<std::uint32_t>(out.size() + at));
        out += json_;
    }
    template <class... Args>
    void omni_now(fmt::format_string<Args...> fields, Args&&... args) {
        omni_event(immediate_, immediate_slots_, fields, std::forward<Args>(args)...);
    }
    template <class... Args>
    void omni_job(output_job& job, fmt::format_string<Args...> fields, Args&&... args) {
        omni_event(job.frames, job.seq_slots, fields, std::forward<Args>(args)...);
    }

    // ---- output (native_session.cpp)
    output_job& queue(time_point due);
    std::pair<unit_note, time_point> compute(time_point now);
    duration penalty(time_point now, duration lag);
    void record(const output_job& job, time_point now);
    duration unit_delay() const;

    void count_unit() {
        ++shard_.units;
        ++shard_.window.units;
    }

    // Appends the frame of one server event: `fields` (fmt format) after the event_id.
    template <class... Args>
    void event(std::string& out, fmt::format_string<Args...> fields, Args&&... args) {
        json_.clear();
        fmt::format_to(std::back_inserter(json_), R"({{"event_id":"server_{}",)", next_event_++);
        fmt::format_to(std::back_inserter(json_), fields, std::forward<Args>(args)...);
        json_ += '}';
        append_frame(out, json_);
    }

    std::uint64_t samples_until(std::uint64_t units) const {
        return units * rate_ * unit_ms_ / 1000;
    }

    bool ends_question(std::uint64_t k) const { return (k + 1) % options_.question_every == 0; }

    double input_ms() const {
        return static_cast<double>(input_bytes_) / static_cast<double>(input_bytes_per_ms);
    }

    native_sessions& mock_;
    native_shard& shard_; // this thread's counters
    const native_mock_options& options_;
    ws_stream& ws_;
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
    std::optional<speech_detector> detector_;
    std::vector<speech_detector::event> vad_events_;
    bool completed_ = false;

    // vllm-omni: one response of the session, for the playback ledger and the busy rule.
    struct omni_response {
        std::uint64_t audio_ms = 0; // audio it was planned (or, cancelled, sent) to carry
        std::uint64_t deltas = 0;   // the deltas planned
        time_point done_due{};      // when its response.done leaves (or left)
        std::uint64_t answered = 0; // commits answered when it began, itself included
        std::uint64_t played_ms = 0, committed_ms = 0;
        bool acked = false;    // a playback.ack of it was accepted
        bool released = false; // cancelled or cleared: it keeps nothing busy
    };
    std::vector<omni_response> omni_responses_;
    std::vector<std::uint32_t> immediate_slots_; // seq slots in immediate_
    std::uint64_t next_seq_ = 1;                 // the next server_event_seq written
    bool omni_created_ = false;                  // session.created sent
    bool omni_ref_audio_ = false;                // a session.update gave ref_audio
    bool omni_ack_only_ = options_.ack_only;
    std::string omni_model_ = R"("pacer-native-mock")"; // as JSON: quoted, escaped
    std::uint64_t omni_deferred_ = 0;    // commits waiting for the session to be free
    std::uint64_t omni_answered_ = 0;    // commits answered (a response or a listen)
    std::uint64_t omni_uncommitted_ = 0; // input bytes since the last commit
    std::uint64_t omni_epoch_ = 0;       // advances on every cancel and clear
    time_point omni_unit_due_{};         // when the latest unit is done (the capacity model)
    std::string transcript_;
    std::string json_;
    constant_audio audio_;
};

} // namespace pacer::server::detail

#pragma once
// The client logic of vLLM-Omni's full-duplex realtime protocol (`--protocol vllm-omni`,
// docs/protocols.md), as one sans-io state machine beside `native_session` and
// `realtime_session`: events and the clock go in, actions come out.
//
// The flow: `session.update` is the first frame (the URL says `autostart=0`), the server answers
// `session.created` then `session.updated`; appends of `chunk` (200 ms by default) on the
// absolute grid; at each turn's end, with manual turns, `input_audio_buffer.commit`; the replies
// (`response.created`, `response.speak`, audio and transcript deltas, `response.done`, or
// `response.listen` alone); at the end `session.close`, answered by `session.closed`. Every
// server event's `server_event_seq` is acknowledged (`session.event_ack`, cumulative) and a
// heartbeat keeps the lease.
//
// The listener is a simulated player inside the machine: each audio delta plays in real time
// from its arrival, serialized behind what is still playing; while a response plays, its
// played audio is acknowledged (`playback.ack`, cumulative `played_ms`) at least every
// `ack_every`, and once exactly at the end (its response done and its audio played). The
// server's `output_audio_buffer.cleared` drops the response's unplayed tail. The three ack
// errors are counted and tolerated. With acks off the server's `ack_only` policy keeps the
// session busy after the first reply: later commits are deferred, which the session reports as
// the server's stall (`stall()`), not as its own failure.

#include <pacer/core/clock.hpp>
#include <pacer/protocol/opening.hpp>
#include <pacer/schedule/stagger.hpp>
#include <pacer/schedule/turn_grid.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::protocol {

/// How turns end: the server's VAD, the client's commit, or the model itself (no commit; the
/// model decides when to speak).
enum class omni_turns { server_vad, manual, model };

/// vllm-omni's output rate (24 kHz PCM16) and the input chunk when none is given.
inline constexpr std::size_t omni_output_rate = 24000;
inline constexpr std::chrono::milliseconds omni_default_chunk{200};
inline constexpr std::chrono::milliseconds omni_default_ack{200};
inline constexpr std::chrono::seconds omni_heartbeat_period{10};
/// After the input's end: how long a session waits for a quiet server before it closes.
inline constexpr std::chrono::seconds omni_quiet{3};

/// The server events the machine tells apart.
enum class omni_event_kind {
    session_created,
    session_updated,
    heartbeat_ack,
    speech_started,
    speech_stopped,
    committed,
    response_created,
    speak,
    listen,
    audio_delta,
    transcript_delta,
    response_done,
    output_cleared,
    playback_acknowledged,
    session_closed,
    error,
    other,
};

/// The event an incoming `type` names (the GA and the beta names of the deltas).
omni_event_kind classify_omni_event(std::string_view type);

/// What the machine takes from one server event.
struct omni_event {
    omni_event_kind kind = omni_event_kind::other;
    std::optional<std::int64_t> seq; ///< `server_event_seq`
    std::string response_id;
    duration audio{};                        ///< audio_delta: the PCM it carries, at 24 kHz
    std::optional<double> audio_duration_ms; ///< audio_delta: `metadata.audio_duration_ms`
    bool deferred = false;                   ///< committed: `event.response_create_deferred`
    std::string status;                      ///< response_done: `response.status`
    std::string reason;                      ///< response_done: `status_details.reason`; listen too
    std::string code;                        ///< error: `error.code`
};

/// Reads an event from its frame (already scanned as a JSON object with a string `type`).
/// An audio delta is not parsed whole: its id and decoded size come from the scanner
/// (`response_id`, `audio_bytes`), its numbers by key.
omni_event read_omni_event(std::string_view type, std::string_view frame,
                           std::string_view response_id, std::size_t audio_bytes);

/// The three `playback.ack` errors a listener tolerates (counted).
bool is_playback_ack_error(std::string_view code);

struct omni_session_options {
    omni_turns turns = omni_turns::manual;
    std::size_t pcm_bytes = 0; ///< the 16 kHz PCM16 input's size (whole samples, not empty)
    std::optional<time_point> origin;
    std::optional<time_point> stagger_phase;
    duration start_delay{};
    bool gate = false;
    duration start_offset{};
    std::vector<schedule::turn_layout> turn_plan;
    bool pause_packets = true;
    duration chunk = omni_default_chunk;
    bool ack = true;
    duration ack_every = omni_default_ack;
    duration heartbeat = omni_heartbeat_period;
    duration quiet = omni_quiet;
};

/// The driver's next step.
struct omni_action {
    enum class kind {
        send_update,       ///< `session.update` (the first frame)
        send_append,       ///< append `seq` (report its start with `append_sent`)
        send_commit,       ///< `input_audio_buffer.commit` (manual turns)
        send_interrupt,    ///< barge-in: `output_audio_buffer.clear` (manual, model turns)
        send_event_ack,    ///< `session.event_ack` up to `event_seq`
        send_heartbeat,    ///< `session.heartbeat`
        send_playback_ack, ///< `playback.ack` of `response_id` at `played_ms`
        send_close,        ///< `session.close`
        turn_end,          ///< turn `turn`'s speech ended at `at`
        join_gate,         ///< report ready to the start gate
        wait_event,        ///< wait for an event, no later than `at` when set
        wait_until,        ///< wait until `at`
        close,             ///< close the socket (an abort)
        done,
    };
    kind what;
    std::size_t seq = 0;
    time_point at{};
    std::size_t turn = 0;
    std::size_t packet = 0;
    bool silence = false;
    bool barge_in = false;
    std::int64_t event_seq = 0;
    std::string response_id{};
    std::int64_t played_ms = 0;
};

/// What the listener and the exchange counted (the session's result takes them).
struct omni_counts {
    std::size_t responses = 0;            ///< `response.created`
    std::size_t completed = 0;            ///< `response.done` completed
    std::size_t cancelled = 0;            ///< `response.done` cancelled
    std::size_t listens = 0;              ///< `response.listen`
    std::size_t commits = 0;              ///< commits sent
    std::size_t deferred = 0;             ///< commits answered `response_create_deferred`
    std::size_t playback_acks = 0;        ///< `playback.ack` sent
    std::size_t acknowledged = 0;         ///< `playback.acknowledged`
    std::size_t ack_errors = 0;           ///< the three ack errors
    std::size_t event_acks = 0;           ///< `session.event_ack` sent
    std::size_t heartbeats = 0;           ///< `session.heartbeat` sent
    std::size_t cleared = 0;              ///< `output_audio_buffer.cleared`
    double audio_received_ms = 0;         ///< the audio the deltas carried
    double server_audio_ms = 0;           ///< the sum of each response's last `audio_duration_ms`
    double dropped_ms = 0;                ///< audio a clear dropped before it played
    std::vector<double> ack_round_trip_s; ///< `playback.ack` → its answer
};

/// The driver of one vllm-omni session, sans-io.
class omni_session {
public:
    explicit omni_session(omni_session_options o);

    // Inputs ---------------------------------------------------------------------------------
    void on_event(const omni_event& e, time_point now);
    bool checks_opening() const { return opening_.active(); }
    std::optional<std::string> check_opening(std::string_view type, const opening_shape& s);
    void on_receiver_ended() { receiver_ended_ = true; }
    void append_sent(time_point start);
    void send_failed() { aborted_ = true; }
    void gate_started(time_point start) { gate_start_ = start; }
    /// A `playback.ack` went out at `at` (its answer's round trip is measured from here).
    void playback_ack_sent(time_point at) { ack_sent_at_.push_back(at); }

    // Output ---------------------------------------------------------------------------------
    omni_action next(time_point now);

    // State ----------------------------------------------------------------------------------
    bool aborted() const { return aborted_; }
    bool finished() const { return finished_; }
    /// The server ends the session with `session.closed`, then closes the socket.
    bool closed_by_server() const { return closed_seen_; }
    std::size_t expected_appends() const { return expected_; }
    std::size_t sample_rate() const { return omni_output_rate; }
    std::optional<time_point> given_origin() const { return o_.origin; }
    std::optional<time_point> origin() const {
        return grid_ ? grid_->origin() : std::optional<time_point>{};
    }
    omni_turns turn_mode() const { return o_.turns; }
    bool response_active() const { return !active_.empty(); }
    std::optional<time_point> input_end() const { return input_end_at_; }
    std::optional<time_point> first_audio_at() const { return first_audio_at_; }
    std::optional<time_point> first_transcript_at() const { return first_transcript_at_; }
    const omni_counts& counts() const { return counts_; }
    /// The server's stall: commits it never answered when the session ended, and why (the
    /// last deferral's `response_create_deferred`, else `no reply`); empty when none.
    std::string stall() const;
    std::size_t unanswered() const {
        return counts_.commits > answers_ ? counts_.commits - answers_ : 0;
    }

private:
    enum class phase {
        created,
        opening,
        join,
        gate,
        stagger,
        streaming,
        turn_commit,
        interrupt,
        end_of_input,
        awaiting,
        closing,
        closing_wait,
        close,
        closed
    };
    // One response as the player holds it.
    struct playing {
        std::string id;
        std::vector<std::pair<time_point, time_point>> segments; // played [from, to)
        duration received{};
        double server_ms = 0;
        bool done = false;
        bool cleared = false;
        bool final_acked = false;
        std::int64_t acked_ms = -1;
        time_point next_ack{};
    };

    playing* find(std::string_view id);
    playing& response(std::string_view id);
    void on_audio(const omni_event& e, time_point now);
    void on_cleared(std::string_view id, time_point now);
    static std::int64_t played_ms(const playing& p, time_point now);
    std::optional<omni_action> housekeeping(time_point now);
    time_point housekeeping_due(time_point now) const;
    bool player_idle(time_point now) const;
    omni_action wait(time_point at, time_point now) const;
    std::optional<omni_action> await_replies(time_point now);

    omni_session_options o_;
    std::size_t expected_ = 0;
    phase phase_ = phase::created;
    bool aborted_ = false;
    bool receiver_ended_ = false;
    bool finished_ = false;
    bool created_seen_ = false;
    bool updated_seen_ = false;
    bool closed_seen_ = false;
    opening_check opening_{wire_protocol::vllm_omni};
    schedule::stagger_wait stagger_{o_.stagger_phase, o_.start_delay};
    std::optional<time_point> gate_start_;
    std::optional<schedule::turn_grid> grid_;
    bool interrupt_pending_ = false;
    std::size_t interrupt_turn_ = 0;
    std::optional<time_point> input_end_at_;
    std::optional<time_point> last_event_at_;
    std::optional<time_point> close_sent_at_;
    std::optional<time_point> first_audio_at_;
    std::optional<time_point> first_transcript_at_;
    std::int64_t seq_seen_ = -1;
    std::int64_t seq_acked_ = -1;
    std::optional<time_point> next_heartbeat_;
    std::vector<std::string> active_; // created, not yet done
    std::deque<playing> player_;      // responses with audio, oldest first
    time_point play_end_{};           // where the player's queue ends
    std::deque<time_point> ack_sent_at_;
    std::size_t answers_ = 0;
    std::string last_deferral_;
    omni_counts counts_;
};

} // namespace pacer::protocol

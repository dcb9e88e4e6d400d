#pragma once
// The client logic of the two OpenAI-style realtime protocols (docs/protocols.md), as one
// sans-io state machine beside `native_session`: events and the clock go in, actions come out.
//
// - `openai-realtime`: `session.update` (audio formats), appends on the absolute 80 ms grid,
//   then with `--turns manual` `input_audio_buffer.commit` + `response.create` and the wait for
//   `response.done`; with `--turns server-vad` the server finds the turns, and the session ends
//   at the first `response.done` after the input's end or after a bounded quiet period. There
//   is no `session.close` in that API: the client closes the socket.
// - `vllm-realtime` (transcription): `session.update` with the model, a `commit` with
//   `final:false` that starts generation, appends, a final `commit` (`final:true`), and the
//   wait for `transcription.done`.
//
// The grid counts 80 ms packets of the 16 kHz input pacer holds; the coroutine resamples each
// packet to the protocol's rate (24 kHz for openai-realtime: 3,840 bytes a packet).

#include <pacer/core/clock.hpp>
#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/opening.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/schedule/stagger.hpp>
#include <pacer/schedule/turn_grid.hpp>

#include <bitset>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::protocol {

enum class realtime_protocol { openai, vllm, vllm_omni };
enum class realtime_turns { server_vad, manual };

/// openai-realtime's default PCM16 rate, and its bytes per 80 ms packet.
inline constexpr std::size_t openai_sample_rate = 24000;
inline constexpr std::size_t openai_packet_bytes = openai_sample_rate * 2 * 80 / 1000;
static_assert(openai_packet_bytes == 3840);
/// With server-side turn detection: how long the session waits, after its input's end, for a
/// quiet server (no event) before it closes when no `response.done` comes.
inline constexpr std::chrono::seconds server_vad_quiet{3};

/// The server events the realtime machines tell apart.
enum class realtime_event {
    session_created,
    session_updated,
    speech_stopped,
    audio_delta,
    transcript_delta,
    response_done,
    transcription_delta,
    transcription_done,
    rate_limits_updated,
    error,
    other,
};
inline constexpr std::size_t realtime_event_count = 11;

/// The event an incoming `type` names: the GA names, and the beta names on receive.
realtime_event classify_realtime_event(std::string_view type);

struct realtime_session_options {
    realtime_protocol protocol = realtime_protocol::openai;
    realtime_turns turns = realtime_turns::server_vad;
    std::size_t pcm_bytes = 0; ///< the 16 kHz PCM16 input's size (whole samples, not empty)
    /// A common start for packet 0; without it the grid is anchored to packet 0's actual send.
    std::optional<time_point> origin;
    /// Without an origin: the stagger's phase (as native_session_options::stagger_phase);
    /// nullopt: `start_delay` after negotiation.
    std::optional<time_point> stagger_phase;
    duration start_delay{};
    duration quiet = server_vad_quiet;
    /// Join a serving level's start gate once negotiated (openai-realtime: `session.updated`
    /// received; vllm-realtime: `session.update` and the starting commit sent, since vLLM
    /// answers neither); the gate's common start + `start_offset` is the origin.
    bool gate = false;
    duration start_offset{};
    /// A multi-turn scenario (docs/scenarios.md): its turns on the one grid and whether the
    /// pauses carry silence packets; empty: one turn of `pcm_bytes`. At each turn's end but
    /// the last, openai-realtime manual commits and sends `response.create`; server VAD sends
    /// nothing (the server ends the turn); vllm-realtime sends nothing (one transcription).
    std::vector<schedule::turn_layout> turn_plan;
    bool pause_packets = true;
};

/// The driver's next step.
struct realtime_action {
    enum class kind {
        send_update,    ///< send `session.update`
        send_start,     ///< vllm: send `input_audio_buffer.commit` with `final:false`
        send_append,    ///< send packet `seq`, reporting its send start with `append_sent`
        send_commit,    ///< send `input_audio_buffer.commit` (vllm: `final:true`)
        send_response,  ///< openai manual: send `response.create`
        turn_end,       ///< turn `turn`'s speech ended at `at` (multi-turn; nothing to send)
        send_interrupt, ///< openai barge-in: `response.cancel` (manual) and the truncate
        join_gate,      ///< report ready to the start gate; `gate_started(t)` when it starts
        wait_event,     ///< wait for a server event (or the receive loop's end); with `at`
                        ///< set, no later than `at`
        wait_until,     ///< wait until `at` (the grid: events do not wake it), then ask again
        close,          ///< close the socket (neither API has a close event)
        done,           ///< nothing left to do
    };
    kind what;
    std::size_t seq = 0;
    time_point at{};
    /// As driver_action's: send_append's turn, audio packet, silence, barge-in; the turn of
    /// turn_end and send_interrupt.
    std::size_t turn = 0;
    std::size_t packet = 0;
    bool silence = false;
    bool barge_in = false;
};

/// The driver of one openai-realtime or vllm-realtime session, sans-io.
class realtime_session {
public:
    explicit realtime_session(realtime_session_options o);

    // Inputs ---------------------------------------------------------------------------------

    /// A server event arrived at `now`.
    void on_event(realtime_event e, time_point now);
    /// While `checks_opening()`: the first event's type and shape, before `on_event`. When they
    /// are another protocol's (opening.hpp), the session is aborted (the next step closes the
    /// socket) and the error is returned: the event is then not given to `on_event`.
    bool checks_opening() const { return opening_.active(); }
    std::optional<std::string> check_opening(std::string_view type, const opening_shape& s);
    void on_receiver_ended() { receiver_ended_ = true; }
    void append_sent(time_point start);
    void send_failed() { aborted_ = true; }
    /// The start gate released the level at `start`.
    void gate_started(time_point start) { gate_start_ = start; }

    // Output ---------------------------------------------------------------------------------

    /// What to do at `now`. Sends and `close` are returned once; `send_append` stays the step
    /// until `append_sent`; waits are returned until their condition or deadline is met.
    realtime_action next(time_point now);

    // State and timings ----------------------------------------------------------------------

    bool has_seen(realtime_event e) const { return seen_[static_cast<std::size_t>(e)]; }
    bool aborted() const { return aborted_; }
    /// The server speaks another protocol (`check_opening`).
    bool wrong_protocol() const { return wrong_protocol_; }
    /// The flow ran to its end (the awaited terminal event, or server-vad's quiet period).
    bool finished() const { return finished_; }
    realtime_protocol protocol() const { return o_.protocol; }
    /// The PCM16 rate of the audio both ways on the wire (`wire_sample_rate`).
    std::size_t sample_rate() const;
    /// The server ended the session with a close event: neither API has one.
    static constexpr bool closed_by_server() { return false; }
    std::size_t expected_appends() const { return expected_; }
    std::size_t appends_sent() const { return grid_ ? grid_->sent_count() : 0; }
    /// The origin the session was given or got from the gate (not the anchored one).
    std::optional<time_point> given_origin() const { return o_.origin; }
    /// The grid's origin (packet 0's deadline), once packet 0 has gone.
    std::optional<time_point> origin() const {
        return grid_ ? grid_->origin() : std::optional<time_point>{};
    }
    /// The end of the utterance: `speech_stopped` with server-vad, else the input's end (the
    /// commit).
    std::optional<time_point> utterance_end() const;
    std::optional<time_point> first_audio_at() const { return first_audio_at_; }
    std::optional<time_point> first_transcript_at() const { return first_transcript_at_; }
    std::optional<time_point> final_transcript_at() const { return final_transcript_at_; }
    bool multi_turn() const { return o_.turn_plan.size() > 1; }
    /// openai manual: a `response.create` has no `response.done` yet (a barge-in cancels it).
    bool response_active() const { return responses_done_ < responses_asked_; }
    std::size_t turns() const { return o_.turn_plan.size(); }
    realtime_turns turn_mode() const { return o_.turns; }

private:
    enum class phase {
        created,
        updated,
        join,
        gate,
        stagger,
        streaming,
        end_of_input,
        response,
        turn_commit,
        turn_response,
        interrupt,
        awaiting,
        close,
        closed
    };

    realtime_session_options o_;
    std::size_t expected_;
    phase phase_ = phase::created;
    std::bitset<realtime_event_count> seen_;
    bool aborted_ = false;
    bool receiver_ended_ = false;
    bool wrong_protocol_ = false;
    opening_check opening_{o_.protocol == realtime_protocol::openai ? wire_protocol::openai_realtime
                                                                    : wire_protocol::vllm_realtime};
    bool done_after_input_ = false;
    bool interrupt_pending_ = false;
    std::size_t interrupt_turn_ = 0;
    std::size_t responses_asked_ = 0;
    std::size_t responses_done_ = 0;
    std::size_t speech_stops_ = 0;
    bool finished_ = false;
    schedule::stagger_wait stagger_{o_.stagger_phase, o_.start_delay};
    std::optional<time_point> gate_start_;
    std::optional<schedule::turn_grid> grid_;
    time_point last_append_start_{};
    std::optional<time_point> input_end_at_;
    std::optional<time_point> last_event_at_;
    std::optional<time_point> speech_stopped_at_;
    std::optional<time_point> first_audio_at_;
    std::optional<time_point> first_transcript_at_;
    std::optional<time_point> final_transcript_at_;
};

} // namespace pacer::protocol

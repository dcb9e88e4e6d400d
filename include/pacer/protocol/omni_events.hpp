#pragma once
// The client events of vLLM-Omni's full-duplex realtime protocol (docs/protocols.md), built
// once each: the handshake's `session.update`, the appends, commits, acks and the close.

#include <pacer/protocol/omni_session.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace pacer::protocol {

/// What a session's `session.update` says beyond the audio formats.
struct omni_update {
    std::string_view model;
    omni_turns turns = omni_turns::manual;
    /// The assistant's voice as a `data:audio/wav;base64,` URL; empty: none.
    std::string_view ref_audio;
    std::string_view instructions;
};

/// `session.update`, the first frame: 16 kHz PCM16 in, 24 kHz PCM16 out, the turn detection
/// (`server_vad`, or null for manual and model turns), `ack_only` playback commits, and
/// `extra_body.auto_response` (false with the model's own turns: the model decides).
std::string omni_session_update(std::string_view event_id, const omni_update& u);
/// `input_audio_buffer.append` of base64 PCM16 with its `duration_ms`, into `out` (its
/// capacity reused).
void omni_append(std::string& out, std::string_view event_id, std::string_view audio_b64,
                 std::int64_t duration_ms);
std::string omni_commit(std::string_view event_id);
std::string omni_event_ack(std::int64_t server_event_seq);
std::string omni_heartbeat(std::string_view event_id);
/// `playback.ack` of `response_id` (its item `item_<response_id>`): cumulative `played_ms`,
/// committed as played.
std::string omni_playback_ack(std::string_view event_id, std::string_view response_id,
                              std::int64_t played_ms);
/// Barge-in: `output_audio_buffer.clear`.
std::string omni_output_clear(std::string_view event_id);
std::string omni_close(std::string_view event_id);
/// `bytes` of a WAV file as a `data:audio/wav;base64,` URL.
std::string wav_data_url(std::string_view bytes);

} // namespace pacer::protocol

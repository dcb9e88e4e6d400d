#pragma once
// The client events of vLLM-Omni's full-duplex realtime protocol (docs/protocols.md), built
// once each: the handshake's `session.update`, the appends, commits, acks and the close.

#include <pacer/protocol/omni_session.hpp>

#include <cstdint>
#include <span>
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
/// capacity reused); `video_frames` (base64 JPEG/PNG, none by default) go in its
/// `video_frames` array, on the append that closes a model unit (`omni_closes_unit`).
void omni_append(std::string& out, std::string_view event_id, std::string_view audio_b64,
                 std::int64_t duration_ms, std::span<const std::string> video_frames = {});
/// Whether an append of `chunk_ms` after `sent_ms` of audio closes one of the model's units
/// (MiniCPM-o: 1,000 ms units, the first closing at 1,030 ms, then every 1,000 ms): the append
/// that carries a unit's `video_frames`.
bool omni_closes_unit(std::int64_t sent_ms, std::int64_t chunk_ms);
/// `--video-frames synthetic`: one small fixed image (a 1×1 PNG), base64.
std::string_view omni_synthetic_frame();
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

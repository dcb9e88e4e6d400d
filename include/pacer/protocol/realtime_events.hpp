#pragma once
// The client events of the openai-realtime and vllm-realtime protocols (docs/protocols.md),
// and the resampling of pacer's 16 kHz input to a protocol's rate.

#include <pacer/protocol/pcm_input.hpp>
#include <pacer/protocol/realtime_session.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::protocol {

/// The protocol named `name` (`openai-realtime`, `vllm-realtime`); false for any other name.
bool parse_realtime_protocol(std::string_view name, realtime_protocol& out);

/// The PCM16 rate on the wire: openai-realtime 24 kHz, vllm-realtime pacer's 16 kHz input.
std::size_t wire_sample_rate(realtime_protocol p);
/// The bytes of one 80 ms packet of PCM16 mono at `rate` Hz (the last packet of an input may
/// be shorter).
constexpr std::size_t packet_bytes_at(std::size_t rate) {
    return rate * 2 * 80 / 1000;
}
static_assert(packet_bytes_at(openai_sample_rate) == openai_packet_bytes);
/// `pcm` (16 kHz) at the protocol's wire rate: resampled for openai-realtime, as is for vllm.
pcm_input at_wire_rate(const pcm_input& pcm, realtime_protocol p);

/// The protocol's `session.update`: openai-realtime's with the turn detection, vllm-realtime's
/// with the model.
std::string realtime_session_update(std::string_view event_id, realtime_protocol p,
                                    realtime_turns turns, std::string_view model);
/// openai-realtime's `session.update`: PCM16 in and out at `rate` Hz, and turn detection
/// (`server_vad`, or none with manual turns).
std::string openai_session_update(std::string_view event_id, realtime_turns turns,
                                  std::size_t rate = openai_sample_rate);
/// vllm-realtime's `session.update` with the model.
std::string vllm_session_update(std::string_view event_id, std::string_view model);
/// `input_audio_buffer.append` with audio already in base64, into `out` (its capacity reused).
void realtime_append(std::string& out, std::string_view event_id, std::string_view audio_b64);
/// `input_audio_buffer.commit`; vllm-realtime adds `final` (false: start, true: end of input).
std::string realtime_commit(std::string_view event_id, realtime_protocol p, bool final_input);
/// openai-realtime's `response.create`.
std::string response_create(std::string_view event_id);

/// openai-realtime's `response.cancel` (a barge-in with manual turns).
std::string response_cancel(std::string_view event_id);
/// openai-realtime's `conversation.item.truncate` of the assistant's item `item_id` at
/// `audio_end_ms` (what the client's player had played when the user barged in).
std::string item_truncate(std::string_view event_id, std::string_view item_id,
                          std::uint64_t audio_end_ms);

/// Packet `seq` of `count` 80 ms packets of `pcm` at `rate` Hz: `rate * 0.16` bytes each,
/// the last one taking whatever remains (a resampled input need not end on a packet).
std::span<const std::uint8_t> rate_packet(std::span<const std::uint8_t> pcm, std::size_t rate,
                                          std::size_t seq, std::size_t count);

} // namespace pacer::protocol

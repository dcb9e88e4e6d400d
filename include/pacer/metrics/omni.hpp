#pragma once
// The figures of vLLM-Omni's full-duplex protocol (docs/protocols.md, "vllm-omni") for
// summary.json's `server.omni` and the run table: what the sessions' listeners and exchanges
// counted (replies, listen decisions, deferred commits, the server's stalls, acks), the
// playback-ack round trip, and the server's `audio_duration_ms` against the audio received.

#include <pacer/trace/receipts.hpp>

#include <boost/json/object.hpp>

#include <string>
#include <vector>

namespace pacer::metrics {

/// `{sessions, responses, completed, cancelled, listens, commits, deferred, unanswered,
/// stalled_sessions, stall_reasons: {reason: sessions}, playback_acks, acknowledged,
/// ack_errors, event_acks, heartbeats, cleared, ack_round_trip_s: {count, p50, p99, max},
/// audio_received_s, server_audio_s, dropped_s}` over the sessions that spoke vllm-omni.
boost::json::object omni_json(const std::vector<trace::session_result>& sessions);

/// `server.omni` of several parts' summaries (`pacer run --processes N`'s workers) pooled:
/// counts and audio seconds summed, stall reasons merged, the ack round trip's count summed
/// and its max the largest; its p50/p99 are not poolable from the parts' percentiles, so they
/// are null and the worst part's are given (`worst_part_p50`, `worst_part_p99`), as the loop
/// lag's. Parts without `server.omni` are skipped; none with it gives an empty object.
boost::json::object pool_omni_json(const std::vector<const boost::json::object*>& parts);

/// The run table's line from `omni_json`'s object: replies, listens, deferred commits, acks
/// and their round trip, the audio, and a loud line for the server's stall (with its reason).
std::string omni_line(const boost::json::object& omni);

} // namespace pacer::metrics

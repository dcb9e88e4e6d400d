#pragma once
// Latency figures of the openai-realtime and vllm-realtime protocols (docs/protocols.md), for
// summary.json's `server`: time to the first audio delta and to the first transcript delta,
// from the end of the utterance and from the schedule anchor (the packet grid's origin), and
// vllm's final transcript latency (`transcription.done` after the end of the utterance).

#include <pacer/trace/receipts.hpp>

#include <boost/json/object.hpp>

#include <vector>

namespace pacer::metrics {

/// `{count, p50, p95, max}` in seconds for each figure (null figures when no session has one).
boost::json::object realtime_latency_json(const std::vector<trace::session_result>& sessions);

/// How long each session's `session.update` took to be acknowledged (`session.updated`
/// received - the update's send start), over the sessions that got an ack: `{n, p50, ...}`.
boost::json::object update_ack_json(const std::vector<trace::session_result>& sessions);

} // namespace pacer::metrics

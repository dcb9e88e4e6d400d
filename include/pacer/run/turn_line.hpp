#pragma once
// The per-turn line of `pacer run`'s table for a multi-turn `--scenario` (summary.json's
// `turns`, docs/scenarios.md): turns answered and interrupted, voice-to-voice latency (the end
// of the user's voice to the reply's first audio) p50/p95 and the interruption latency p50/p95.

#include <boost/json/object.hpp>

#include <string>

namespace pacer::run {

/// "  turns      6 of 6 answered, 2 interrupted; voice-to-voice p50 … p95 …; interruption
/// latency p50 … p95 …" from `summary.turns.all`; "" when the summary has no `turns` (a
/// single-turn run). A summary without `ttfa_from_voice_end_s` (written before pacer measured
/// the voice's end) shows `ttfa_from_speech_end_s`, named for what it is: "first audio after
/// the turn's input ended".
std::string turn_line(const boost::json::object& summary);

} // namespace pacer::run

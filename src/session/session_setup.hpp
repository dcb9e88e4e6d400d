#pragma once
// Internal to src/session: how a session's options become what it runs, before any I/O (its
// inputs at the wire's rate, its sans-io machines). Used by duplex_session.cpp; not installed,
// not part of the public API.

#include <pacer/protocol/native_session.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/session/duplex_session.hpp>

#include <optional>

namespace pacer::session::detail {

/// Checks the inputs (non-empty whole PCM16 samples, else std::invalid_argument) and fills
/// what the options leave to the session: a turn without audio streams the session's own
/// input, and a realtime protocol's inputs at its rate (resampled here when not given).
void prepare_inputs(session_options& options);

/// The native protocol's machine for these options.
protocol::native_session_options machine_options(const session_options& options);

/// openai-realtime / vllm-realtime: their machine, which drives instead of the native one;
/// nullopt for the native protocol.
std::optional<protocol::realtime_session> realtime_machine(const session_options& options);

} // namespace pacer::session::detail

#pragma once
// Internal to src/session: how a session's options become what it runs, before any I/O (its
// inputs at the wire's rate, its sans-io machines). Used by duplex_session.cpp; not installed,
// not part of the public API.

#include <pacer/protocol/native_session.hpp>
#include <pacer/protocol/omni_session.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/session/duplex_session.hpp>

namespace pacer::session::detail {

/// A protocol's input at its wire rate (its client's `wire_input`): empty when the protocol
/// sends pacer's 16 kHz input itself.
using wire_input_fn = protocol::pcm_input (*)(const session_options&, const protocol::pcm_input&);

/// Checks the inputs (non-empty whole PCM16 samples, else std::invalid_argument) and fills
/// what the options leave to the session: a turn without audio streams the session's own
/// input, and the inputs at the protocol's wire rate (`wire_input`) when not given.
void prepare_inputs(session_options& options, wire_input_fn wire_input);

/// The native protocol's machine for these options.
protocol::native_session_options machine_options(const session_options& options);

/// openai-realtime / vllm-realtime: their machine (`options.realtime` is set).
protocol::realtime_session realtime_machine(const session_options& options);

/// vllm-omni: its machine, with the listener's settings (`options.omni`).
protocol::omni_session omni_machine(const session_options& options);

} // namespace pacer::session::detail

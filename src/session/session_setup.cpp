#include "session_setup.hpp"

#include <pacer/protocol/constants.hpp>
#include <pacer/schedule/packet_grid.hpp>

#include <stdexcept>
#include <vector>

namespace pacer::session::detail {

namespace {

// The turns as the grid sees them; empty for a one-turn session. A turn's audio is not padded:
// its last packet may be short, its end of input is its audio's end, and the next turn starts
// on the next slot (the native wire alone pads that packet with silence on the wire, as its
// protocol wants; docs/scenarios.md).
std::vector<schedule::turn_layout> turn_plan(const session_options& o) {
    std::vector<schedule::turn_layout> plan;
    for (const auto& t : o.conversation)
        plan.push_back({t.pcm.size(), t.pause, t.interrupt_after});
    return plan;
}

} // namespace

void prepare_inputs(session_options& options, wire_input_fn wire_input) {
    if (options.pcm.empty() || options.pcm.size() % 2 != 0)
        throw std::invalid_argument("session input must be non-empty whole PCM16 samples");
    if (!options.wire_pcm)
        options.wire_pcm = wire_input(options, options.pcm);
    for (auto& t : options.conversation) {
        if (!t.pcm) { // the session's own input (shared: nothing is copied, silence is not held)
            t.pcm = options.pcm;
            t.wire_pcm = options.wire_pcm;
        }
        if (t.pcm.empty() || t.pcm.size() % 2 != 0)
            throw std::invalid_argument("a turn's input must be non-empty whole PCM16 samples");
        if (!t.wire_pcm)
            t.wire_pcm = wire_input(options, t.pcm);
    }
}

protocol::native_session_options machine_options(const session_options& o) {
    protocol::native_session_options m;
    m.pcm_bytes = o.pcm.size();
    m.origin = o.origin;
    if (o.stagger_origin)
        m.stagger_phase = *o.stagger_origin + o.start_delay;
    m.start_delay = o.start_delay;
    m.gate = o.gate != nullptr;
    m.start_offset = o.start_offset;
    m.lockstep_unit_bytes = o.lockstep_unit_bytes;
    m.turn_plan = turn_plan(o);
    m.pause_packets = o.pause_packets;
    return m;
}

protocol::realtime_session realtime_machine(const session_options& o) {
    protocol::realtime_session_options m;
    m.protocol = *o.realtime;
    m.turns = o.turns;
    m.pcm_bytes = o.pcm.size();
    m.origin = o.origin;
    if (o.stagger_origin)
        m.stagger_phase = *o.stagger_origin + o.start_delay;
    m.start_delay = o.start_delay;
    m.quiet = o.quiet;
    m.gate = o.gate != nullptr;
    m.start_offset = o.start_offset;
    m.turn_plan = turn_plan(o);
    m.pause_packets = o.pause_packets;
    return protocol::realtime_session(m);
}

protocol::omni_session omni_machine(const session_options& o) {
    protocol::omni_session_options m;
    m.turns = o.omni.turns;
    m.pcm_bytes = o.pcm.size();
    m.origin = o.origin;
    if (o.stagger_origin)
        m.stagger_phase = *o.stagger_origin + o.start_delay;
    m.start_delay = o.start_delay;
    m.gate = o.gate != nullptr;
    m.start_offset = o.start_offset;
    m.turn_plan = turn_plan(o);
    m.pause_packets = o.pause_packets;
    m.chunk = o.chunk;
    m.ack = o.omni.ack;
    m.ack_every = o.omni.ack_every;
    m.heartbeat = o.omni.heartbeat;
    m.quiet = o.quiet;
    return protocol::omni_session(m);
}

} // namespace pacer::session::detail

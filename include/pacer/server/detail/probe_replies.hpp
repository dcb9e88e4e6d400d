#pragma once
// The probe mock's replies to an append, built once. The three events it sends in turn (an
// audio delta carrying 80 ms of output audio, a transcript delta, `sglang.unit.done`) differ
// from one append to the next only in their event id and unit number, so each is kept as fixed
// text around those numbers and written straight into the batch of server frames: no
// formatting of the long literals and no string per reply. Only the mocks' own sources (and
// the microbenchmark of the mock's append path) include it.

#include <cstdint>
#include <string>
#include <string_view>

namespace pacer::server::detail {

class probe_replies {
public:
    /// `audio_b64`: the base64 audio every audio delta carries.
    explicit probe_replies(std::string_view audio_b64);

    /// Appends reply number `reply` of a session to `out` as one unmasked server text frame:
    /// `reply % 3` picks the audio delta, the transcript delta or `sglang.unit.done` (unit id
    /// `unit_<seq>`), with event id `server_<event>`.
    void append(std::string& out, std::uint64_t reply, std::uint64_t event, std::int64_t seq) const;

private:
    std::string audio_tail_; // the audio delta after its event id, audio included
};

} // namespace pacer::server::detail

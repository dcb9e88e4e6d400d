#pragma once
// The packet grid of a multi-turn session (docs/scenarios.md), as a sans-io state machine: the
// turns of a conversation scenario on ONE absolute 80 ms grid, anchored once at packet 0.
//
// Slot k is due at origin + k x 80 ms. Turn 0's audio takes slots 0..n0-1, then its pause
// follows: silence packets on the pause's slots (`pause_packets`), or nothing. The next turn
// starts on the first slot after the pause (ceil(pause / 80 ms) slots), or, with a barge-in
// (`interrupt_after`), on the first slot not before the assistant's first audio for the turn +
// `interrupt_after` (never before the turn's own audio has ended); a barge-in whose assistant
// has not begun speaking when the pause is over starts the next turn after the pause. A late
// sender sends its overdue packets at once and returns to the grid: a delay never shifts a
// later deadline. Appends are numbered 0, 1, 2, ... in the order sent (audio and silence).
//
// One turn with no pause is `packet_grid` exactly: the same deadlines, the same numbering.
//
// The period is 80 ms unless a protocol appends in other chunks (vllm-omni's `--chunk-ms`, a
// multiple of 10 ms): slot k is then due at origin + k x period and carries period x 32 bytes.

#include <pacer/core/clock.hpp>
#include <pacer/schedule/constants.hpp>
#include <pacer/schedule/packet_grid.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

namespace pacer::schedule {

/// One user turn as the grid sees it.
struct turn_layout {
    std::size_t bytes = 0; ///< the turn's audio, 16 kHz PCM16 (whole samples, not empty)
    duration pause{};      ///< after the audio (the last turn's is ignored)
    std::optional<duration> interrupt_after;
};

/// What the sender should do next.
struct turn_action {
    enum class kind {
        send,     ///< send append `seq` (slot `slot`): audio packet `packet` of `turn`, or silence
        wait,     ///< wait until `scheduled`, then ask again
        turn_end, ///< turn `turn`'s audio has ended (its end-of-input instant): returned once
                  ///< per turn, the last one's too unless the session has one turn
        done,     ///< the last turn's last packet has gone (and its turn_end)
    };
    kind what;
    std::size_t seq = 0;
    std::size_t slot = 0;
    std::size_t turn = 0;
    std::size_t packet = 0; ///< send: the packet of the turn's audio (unless `silence`)
    bool silence = false;   ///< send: a pause's silence packet
    bool barge_in = false;  ///< send: the first packet of a turn that barges in
    time_point scheduled{}; ///< send: the slot's deadline (`now` for an unanchored packet 0)
};

class turn_grid {
public:
    turn_grid(std::vector<turn_layout> turns, bool pause_packets,
              std::optional<time_point> origin = {}, duration period = packet_period)
        : turns_(std::move(turns)), pause_packets_(pause_packets), origin_(origin),
          starts_(turns_.size(), 0), first_audio_(turns_.size()), period_(period),
          chunk_bytes_(chunk_bytes(period)) {}

    /// The input bytes one slot of `period` carries (16 kHz PCM16: 32 bytes a millisecond).
    static std::size_t chunk_bytes(duration period) {
        return static_cast<std::size_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(period).count() *
            static_cast<std::int64_t>(input_bytes_per_second / 1000));
    }
    /// How many slots carry `bytes` of audio (the last one shorter, never padded).
    std::size_t chunks(std::size_t bytes) const {
        return (bytes + chunk_bytes_ - 1) / chunk_bytes_;
    }
    duration period() const { return period_; }

    /// The deadline of slot `k`; requires an origin.
    time_point scheduled(std::size_t k) const {
        return *origin_ + period_ * static_cast<std::int64_t>(k);
    }

    turn_action next(time_point now) {
        using k = turn_action::kind;
        for (;;) {
            if (turn_ >= turns_.size())
                return {k::done, seq_};
            const std::size_t n = chunks(turns_[turn_].bytes);
            if (!pausing_) {
                if (index_ < n) {
                    const std::size_t slot = starts_[turn_] + index_;
                    if (!origin_)
                        return {k::send, seq_, slot, turn_, index_, false, false, now};
                    const auto due = scheduled(slot);
                    if (now < due)
                        return {k::wait, seq_, slot, turn_, index_, false, false, due};
                    return {k::send, seq_, slot, turn_, index_, false, barge_in_ && index_ == 0,
                            due};
                }
                const bool last = turn_ + 1 == turns_.size();
                if (last && turns_.size() == 1) {
                    turn_ = turns_.size(); // one turn: packet_grid's steps, nothing more
                    return {k::done, seq_};
                }
                const auto end = end_of_turn_at(turn_);
                if (now < end)
                    return {k::wait, seq_, 0, turn_, 0, false, false, end};
                if (last) {
                    turn_ = turns_.size();
                    return {k::turn_end, seq_, 0, turns_.size() - 1, 0, false, false, end};
                }
                pausing_ = true;
                slot_ = starts_[turn_] + n;
                ended_at_ = end;
                const std::size_t pause_slots = static_cast<std::size_t>(
                    (turns_[turn_].pause + period_ - duration(1)) / period_);
                pause_end_ = slot_ + pause_slots;
                return {k::turn_end, seq_, 0, turn_, 0, false, false, end};
            }
            // The pause after turn_: does the next turn start on slot_?
            const auto& t = turns_[turn_];
            if (!t.interrupt_after && !pause_packets_)
                slot_ = std::max(slot_, pause_end_); // nothing to send until then
            const auto due = scheduled(slot_);
            if (now < due)
                return {k::wait, seq_, slot_, turn_, 0, true, false, due};
            bool start = false;
            bool barge = false;
            if (t.interrupt_after && first_audio_[turn_]) {
                start = due >= *first_audio_[turn_] + *t.interrupt_after;
                barge = start;
            } else {
                start = slot_ >= pause_end_;
            }
            if (start) {
                ++turn_;
                starts_[turn_] = slot_;
                index_ = 0;
                pausing_ = false;
                barge_in_ = barge;
                continue;
            }
            if (pause_packets_)
                return {k::send, seq_, slot_, turn_, 0, true, false, due};
            ++slot_;
        }
    }

    /// The next append's send started at `start` (packet 0 anchors the grid).
    void sent(time_point start) {
        if (!origin_)
            origin_ = start;
        last_start_ = start;
        ++seq_;
        if (pausing_)
            ++slot_;
        else
            ++index_;
    }

    /// The assistant's audio arrived at `at`: the first after a turn's end is that turn's
    /// response (what a barge-in counts from).
    void assistant_audio(time_point at) {
        if (pausing_ && !first_audio_[turn_] && at >= ended_at_)
            first_audio_[turn_] = at;
    }

    /// Turn `j`'s end-of-input instant (docs/protocol.md §2.4 per turn): the later of its
    /// grid end (its first slot + its audio's unpadded duration) and its last packet's send
    /// + that packet's duration. Requires the turn's last packet to have gone.
    time_point end_of_turn_at(std::size_t j) const {
        const std::size_t bytes = turns_[j].bytes;
        const std::size_t last = bytes - (chunks(bytes) - 1) * chunk_bytes_;
        return end_of_input_at(scheduled(starts_[j]), bytes, last_start_, last);
    }

    std::optional<time_point> origin() const { return origin_; }
    std::size_t sent_count() const { return seq_; }
    std::size_t turn() const { return turn_; }
    std::size_t turns() const { return turns_.size(); }
    /// The slot turn `j` started on (known once it has started).
    std::size_t start_slot(std::size_t j) const { return starts_[j]; }
    /// The audio packets of every turn: the appends of a session with no pause packets.
    std::size_t audio_packets() const {
        std::size_t sum = 0;
        for (const auto& t : turns_)
            sum += chunks(t.bytes);
        return sum;
    }

private:
    std::vector<turn_layout> turns_;
    bool pause_packets_;
    std::optional<time_point> origin_;
    std::vector<std::size_t> starts_;
    std::vector<std::optional<time_point>> first_audio_;
    std::size_t turn_ = 0;
    std::size_t index_ = 0; // the next audio packet of turn_
    bool pausing_ = false;  // in the pause after turn_
    bool barge_in_ = false; // turn_ started by barging in
    std::size_t slot_ = 0;  // pausing: the next slot
    std::size_t pause_end_ = 0;
    time_point ended_at_{};
    std::size_t seq_ = 0;
    time_point last_start_{};
    duration period_;
    std::size_t chunk_bytes_;
};

} // namespace pacer::schedule

#pragma once
// What a multi-turn session records per user turn (docs/scenarios.md), sans-io: the driver
// reports its turn starts, turn ends and commits, the receive loop the assistant's audio and
// the server's `speech_stopped`; `results()` gives one `trace::turn_result` per turn. Unit tests
// drive it with hand-made instants.
//
// Attribution: assistant audio that arrives at t belongs to the latest turn whose speech had
// ended by t (audio before turn 0 ends belongs to none). So the audio of a response that the
// next turn barges in on still counts for the interrupted turn until the barge-in's own
// speech ends; what of it arrived after the barge-in's first packet is the audio produced
// after the interruption, and its last delta ends the interruption latency.

#include <pacer/core/clock.hpp>
#include <pacer/trace/receipts.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

namespace pacer::session {

class turn_timeline {
public:
    explicit turn_timeline(std::size_t turns) : turns_(turns) {}

    /// Turn `j`'s first packet started going out at `at` (`barge_in`: over the assistant).
    void turn_started(std::size_t j, time_point at, bool barge_in) {
        auto& t = turns_[j].r;
        t.start_s = to_seconds(at);
        t.barge_in = barge_in;
        if (barge_in && j > 0) {
            auto& prev = turns_[j - 1];
            prev.r.interrupted_s = to_seconds(at);
            // The player had played all it received but what is still queued at `at`.
            const double queued =
                prev.play_end ? std::max(0.0, to_seconds(*prev.play_end - at)) : 0.0;
            prev.r.played_s = std::max(0.0, prev.r.audio_s - queued);
        }
    }
    /// Turn `j`'s speech ended at `at` (its end-of-input instant).
    void turn_ended(std::size_t j, time_point at) {
        turns_[j].r.speech_end_s = to_seconds(at);
        turns_[j].ended = at;
    }
    void committed(std::size_t j, time_point at) {
        if (!turns_[j].r.commit_s)
            turns_[j].r.commit_s = to_seconds(at);
    }
    /// The server's `speech_stopped`: the first for each turn, in order, once the turn has
    /// started (one the server sends in a pause, before the next turn, is the previous one's).
    void speech_stopped(time_point at) {
        for (auto& t : turns_)
            if (t.r.start_s && !t.r.speech_stopped_s) {
                t.r.speech_stopped_s = to_seconds(at);
                return;
            }
    }
    /// `audio` of assistant PCM arrived at `at`.
    void audio(time_point at, duration audio) {
        turn* owner = nullptr;
        for (auto& t : turns_)
            if (t.ended && *t.ended <= at)
                owner = &t;
        if (!owner)
            return;
        auto& r = owner->r;
        const double d = to_seconds(audio);
        if (!r.first_audio_s)
            r.first_audio_s = to_seconds(at);
        r.last_audio_s = to_seconds(at);
        r.audio_s += d;
        if (r.interrupted_s)
            r.audio_after_interrupt_s += d;
        if (owner->play_end && at > *owner->play_end) {
            ++r.underruns;
            r.gap_s += to_seconds(at - *owner->play_end);
        }
        const time_point from = owner->play_end ? std::max(*owner->play_end, at) : at;
        owner->play_end = from + audio;
    }

    /// What the player had played of turn `j`'s reply when the next turn barged in (0 when
    /// it did not).
    double played_s(std::size_t j) const { return turns_[j].r.played_s.value_or(0); }

    std::vector<trace::turn_result> results() const {
        std::vector<trace::turn_result> out;
        out.reserve(turns_.size());
        for (const auto& t : turns_)
            out.push_back(t.r);
        return out;
    }

private:
    struct turn {
        trace::turn_result r;
        std::optional<time_point> ended;
        std::optional<time_point> play_end; // the player's end of what it has queued
    };
    std::vector<turn> turns_;
};

} // namespace pacer::session

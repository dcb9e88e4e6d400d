#pragma once
// What a multi-turn session records per user turn (docs/scenarios.md), sans-io: the driver
// reports its turn starts, packets, turn ends and commits, the receive loop the responses the
// server names, the assistant's audio and the server's `speech_stopped`; `results()` gives one
// `trace::turn_result` per turn. Unit tests drive it with hand-made instants.
//
// Which turn a reply answers (docs/scenarios.md):
// - a protocol that names its responses (openai-realtime: `response.created`, each delta's
//   `response_id`): each turn's commit or first `speech_stopped` is a *trigger*, and each
//   response, when an event first names it, answers the oldest trigger not yet answered; its
//   audio is that turn's reply whenever it arrives. A response with no trigger left is
//   unsolicited (counted, its audio nobody's).
// - audio that names no response (the native protocol): the time rule, audio that arrives at t
//   belongs to the latest turn whose speech had ended by t (audio before turn 0 ends belongs
//   to none). So the audio of a response that the next turn barges in on still counts for the
//   interrupted turn until the barge-in's own speech ends.
// Either way, what of an interrupted reply arrived after the barge-in's first packet is the
// audio produced after the interruption, and its last delta ends the interruption latency.

#include <pacer/core/clock.hpp>
#include <pacer/schedule/constants.hpp>
#include <pacer/trace/receipts.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pacer::session {

/// The simulated player's gaps shorter than this are no underrun (a delta a few microseconds
/// behind the audio queued is no audible glitch); they still count in `gap_s`.
inline constexpr std::chrono::milliseconds player_underrun_tolerance{5};

class turn_timeline {
public:
    /// `voice`: each turn's voice end from the start of its audio (find_voice_end), none for a
    /// turn without voice; empty: none known.
    /// `period`: the append grid's (80 ms; vllm-omni's `--chunk-ms`).
    explicit turn_timeline(std::size_t turns, std::vector<std::optional<duration>> voice = {},
                           duration period = schedule::packet_period)
        : turns_(turns), period_(period) {
        for (std::size_t j = 0; j < voice.size() && j < turns_.size(); ++j)
            turns_[j].voice = voice[j];
    }

    /// Turn `j`'s first packet started going out at `at` (`barge_in`: over the assistant).
    void turn_started(std::size_t j, time_point at, bool barge_in) {
        auto& t = turns_[j].r;
        t.start_s = to_seconds(at);
        t.barge_in = barge_in;
        latest_ = j;
        if (barge_in && j > 0) {
            auto& prev = turns_[j - 1];
            prev.r.interrupted_s = to_seconds(at);
            // The player had played all it received but what is still queued at `at`.
            const double queued =
                prev.play_end ? std::max(0.0, to_seconds(*prev.play_end - at)) : 0.0;
            prev.r.played_s = std::max(0.0, prev.r.audio_s - queued);
        }
    }
    /// Audio packet `k` of turn `j` (due at `deadline`) started going out at `start`: the
    /// packet that carries the turn's voice end sets `voice_end_s`, where that frame's end plays
    /// out (the packet played from the later of its deadline and its send start).
    void packet_sent(std::size_t j, std::size_t k, time_point deadline, time_point start) {
        auto& t = turns_[j];
        if (!t.voice || t.r.voice_end_s || *t.voice <= duration::zero())
            return;
        const auto period = period_;
        const auto packet_start = period * static_cast<std::int64_t>(k);
        if (*t.voice <= packet_start || *t.voice > packet_start + period)
            return;
        t.r.voice_end_s = to_seconds(std::max(deadline, start) + (*t.voice - packet_start));
    }
    /// Turn `j`'s speech ended at `at` (its end-of-input instant).
    void turn_ended(std::size_t j, time_point at) {
        turns_[j].r.speech_end_s = to_seconds(at);
        turns_[j].ended = at;
    }
    void committed(std::size_t j, time_point at) {
        if (!turns_[j].r.commit_s)
            turns_[j].r.commit_s = to_seconds(at);
        ++turns_[j].commits;
        trigger(j);
    }
    /// The server's `speech_stopped`: the first for each turn, in order, once the turn has
    /// started (one the server sends in a pause, before the next turn, is the previous one's);
    /// one more than each started turn's is the latest turn's (its speech went on after it).
    void speech_stopped(time_point at) {
        for (std::size_t j = 0; j < turns_.size(); ++j) {
            auto& t = turns_[j];
            if (t.r.start_s && !t.r.speech_stopped_s) {
                t.r.speech_stopped_s = to_seconds(at);
                ++t.stops;
                trigger(j);
                return;
            }
        }
        if (turns_[latest_].r.start_s) {
            ++turns_[latest_].stops;
            trigger(latest_);
        }
    }
    /// An event named response `id` (`response.created`, a delta, `response.done`): the first
    /// time, the response answers the oldest trigger not yet answered, or is unsolicited.
    void response_seen(std::string_view id, time_point) { owner_of(id); }

    /// `audio` of assistant PCM arrived at `at`, of response `response_id` (empty: the
    /// response is not named, the time rule decides).
    void audio(time_point at, duration audio, std::string_view response_id = {}) {
        turn* owner = nullptr;
        if (!response_id.empty()) {
            const auto j = owner_of(response_id);
            if (!j)
                return;
            owner = &turns_[*j];
        } else {
            for (auto& t : turns_)
                if (t.ended && *t.ended <= at)
                    owner = &t;
        }
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
            const auto gap = at - *owner->play_end;
            r.gap_s += to_seconds(gap);
            if (gap >= player_underrun_tolerance) {
                ++r.underruns;
                r.underrun_s += to_seconds(gap);
            }
        }
        const time_point from = owner->play_end ? std::max(*owner->play_end, at) : at;
        owner->play_end = from + audio;
    }

    /// vllm-omni's `output_audio_buffer.cleared` of response `response_id` at `at`: the player
    /// drops the reply's unplayed tail, so an interrupted turn's audio stopped for the listener
    /// at `at`, or where it had already played out (`output_stopped_s`).
    void output_cleared(std::string_view response_id, time_point at) {
        for (const auto& [known, j] : responses_) {
            if (known != response_id || !j)
                continue;
            auto& t = turns_[*j];
            if (!t.r.interrupted_s || t.r.output_stopped_s)
                return;
            const time_point stop = t.play_end ? std::min(*t.play_end, at) : at;
            t.r.output_stopped_s = to_seconds(stop);
            t.play_end = stop;
            return;
        }
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
        std::optional<duration> voice;      // the voice end in the turn's audio
        std::size_t commits = 0, stops = 0, triggers = 0;
    };

    // Turn `j` has a new commit or speech_stopped: a trigger when it is more of one kind than
    // the turn has triggers (a commit and a speech_stopped of one turn are one trigger).
    void trigger(std::size_t j) {
        auto& t = turns_[j];
        if (std::max(t.commits, t.stops) <= t.triggers)
            return;
        ++t.triggers;
        pending_.push_back(j);
    }

    // The turn response `id` answers (nullopt: unsolicited), tied when first named.
    std::optional<std::size_t> owner_of(std::string_view id) {
        for (const auto& [known, j] : responses_)
            if (known == id)
                return j;
        std::optional<std::size_t> j;
        if (!pending_.empty()) {
            j = pending_.front();
            pending_.pop_front();
            if (!turns_[*j].r.response_id)
                turns_[*j].r.response_id = std::string(id);
        } else {
            ++turns_[latest_].r.unsolicited;
        }
        responses_.emplace_back(std::string(id), j);
        return j;
    }

    std::vector<turn> turns_;
    duration period_;
    std::size_t latest_ = 0;          // the latest turn started
    std::deque<std::size_t> pending_; // triggers not yet answered, oldest first
    std::vector<std::pair<std::string, std::optional<std::size_t>>> responses_;
};

} // namespace pacer::session

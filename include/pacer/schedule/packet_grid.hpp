#pragma once
// Module `schedule` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns the 80
// ms packet grid and the pacing constants (packet period and size, late and send-stall thresholds);
// arrival processes, the seeded RNG and samplers, schedule files; the open-loop dispatcher, its
// records and their summary. It may include core, runtime; it may not include trace, protocol,
// transport, session, metrics, server, telemetry, report, record, sweep, run, http, cli, console,
// capacity_search (the build fails if it does).
//
// The packet grid of a duplex session (docs/protocol.md §2), as a sans-io state machine.
//
// Packet i is due at origin + i * 80 ms. The origin is either given (a common start gate) or
// anchored to the actual send start of packet 0. A late sender sends its overdue packets at
// once and returns to the grid: a delay never shifts a later deadline. The session coroutine
// asks `next(now)` and either sends or waits on an absolute timer; tests drive it by hand.

#include <pacer/core/clock.hpp>
#include <pacer/schedule/constants.hpp>

#include <chrono>
#include <cstddef>
#include <optional>

namespace pacer::schedule {

/// How many packets carry `pcm_bytes` of input: the tail packet is shorter, never padded.
constexpr std::size_t packet_count(std::size_t pcm_bytes) {
    return (pcm_bytes + packet_bytes - 1) / packet_bytes;
}

/// The size of packet `seq` of an input of `pcm_bytes`.
constexpr std::size_t packet_size(std::size_t pcm_bytes, std::size_t seq) {
    const std::size_t begin = seq * packet_bytes;
    return begin >= pcm_bytes
               ? 0
               : (pcm_bytes - begin < packet_bytes ? pcm_bytes - begin : packet_bytes);
}

/// The duration of `bytes` of input PCM16 at 16 kHz.
constexpr duration input_duration(std::size_t bytes) {
    return std::chrono::duration_cast<duration>(std::chrono::nanoseconds(
        static_cast<std::int64_t>(bytes) * 1'000'000'000LL / input_bytes_per_second));
}

/// What the sender should do next.
template <class TimePoint>
struct basic_pacing_action {
    enum class kind { send, wait, done };
    kind what;
    std::size_t seq = 0;   ///< the packet concerned (send and wait)
    TimePoint scheduled{}; ///< its deadline on the grid (`now` for an unanchored packet 0)
};

using pacing_action = basic_pacing_action<time_point>;

/// Sans-io pacing of `count` packets on the absolute 80 ms grid.
template <class TimePoint = time_point>
class basic_packet_grid {
public:
    /// `origin` fixes packet 0's deadline (a start gate); without it, the grid is anchored to
    /// the send start of packet 0 passed to `sent(0, ...)`.
    explicit basic_packet_grid(std::size_t count, std::optional<TimePoint> origin = {})
        : count_(count), origin_(origin) {}

    /// The deadline of packet `seq`; requires an origin.
    TimePoint scheduled(std::size_t seq) const {
        return *origin_ + std::chrono::duration_cast<typename TimePoint::duration>(
                              packet_period * static_cast<std::int64_t>(seq));
    }

    using action = basic_pacing_action<TimePoint>;

    /// Send now, wait until the next deadline, or done.
    action next(TimePoint now) const {
        using kind = typename action::kind;
        if (next_ >= count_)
            return {kind::done, next_, {}};
        if (!origin_)
            return {kind::send, next_, now};
        const TimePoint due = scheduled(next_);
        if (now < due)
            return {kind::wait, next_, due};
        return {kind::send, next_, due};
    }

    /// Records that the next packet's send started at `start`; packet 0 anchors the grid.
    void sent(TimePoint start) {
        if (!origin_)
            origin_ = start;
        ++next_;
    }

    std::optional<TimePoint> origin() const { return origin_; }
    std::size_t sent_count() const { return next_; }
    std::size_t count() const { return count_; }

private:
    std::size_t count_;
    std::size_t next_ = 0;
    std::optional<TimePoint> origin_;
};

using packet_grid = basic_packet_grid<>;

/// When `sglang.input_audio.end` is due (docs/protocol.md §2.4): the later of origin + the input's
/// unpadded duration and the last append's start + min(80 ms, its own duration).
template <class TimePoint>
TimePoint end_of_input_at(TimePoint origin, std::size_t pcm_bytes, TimePoint last_append_start,
                          std::size_t last_packet_bytes) {
    using d = typename TimePoint::duration;
    const TimePoint by_grid = origin + std::chrono::duration_cast<d>(input_duration(pcm_bytes));
    const TimePoint by_last =
        last_append_start + std::chrono::duration_cast<d>(input_duration(last_packet_bytes));
    return by_grid > by_last ? by_grid : by_last;
}

} // namespace pacer::schedule

#pragma once
// The session side of the trace channel: never drops a line, and counts every time the
// channel was full so a slow disk shows up in the summary instead of as a silent gap.

#include <pacer/core/awaitable.hpp>
#include <pacer/trace/record.hpp>

namespace pacer::trace {

class sink {
public:
    /// `lines` false (`pacer run --trace receipts|none`): `emit` drops every line at once.
    sink(channel& ch, std::uint32_t session, bool lines = true)
        : channel_(&ch), session_(session), lines_(lines) {}

    /// Whether lines are traced: a caller may skip building a line nobody writes.
    bool lines() const { return lines_; }

    /// Queues one line (nothing when `lines()` is false), the event copied into a string from
    /// the payload pool. Usually `try_send` succeeds at once; when the channel is full the
    /// calling coroutine waits for room (counted in `waits()`/`wait_s()`).
    pacer::awaitable<void> emit(direction dir, double time_s, std::string_view event_json);

    /// Queues the next bytes of the session's receipts file (see record::kind::receipt), copied
    /// into a string from the payload pool, as `emit` does.
    pacer::awaitable<void> receipt(std::string_view text);

    /// Queues the end of the session (the rest of its receipts) and waits until the writer reports
    /// that everything is on disk. Returns the writer's error message, empty on success.
    pacer::awaitable<std::string> finish(std::string receipts_json);

    std::uint64_t waits() const { return waits_; }
    double wait_s() const { return wait_s_; }

private:
    pacer::awaitable<void> push(record r);

    channel* channel_;
    std::uint32_t session_;
    bool lines_;
    std::uint64_t waits_ = 0;
    double wait_s_ = 0;
};

} // namespace pacer::trace

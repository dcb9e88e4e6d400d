#pragma once
// A WebSocket connection with a scripted server behind it, in process and on the manual clock
// (tests/unit/manual_timer.hpp): the session coroutine runs on it as it runs on
// `transport::ws_connection`. The server is the test's: it sees each client frame as it is
// written (with the manual time) and answers by `push`ing frames, which the session's read
// takes in order; `close()` ends the stream after the frames pushed. A write completes at
// once, or after `write_takes` of manual time (a stalled socket).

#include <pacer/core/awaitable.hpp>
#include <pacer/transport/error.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/error.hpp>

#include "unit/manual_timer.hpp"
#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pacer::test {

struct scripted_server {
    struct received {
        time_point at;
        std::string frame;
    };
    /// What the client wrote, in order, with the manual time each write started.
    std::vector<received> frames;
    /// The server's answer to each client frame (may `push`, `close`, set `write_takes`).
    std::function<void(scripted_server&, std::string_view frame)> on_frame;
    /// Sent as soon as the upgrade is accepted.
    std::vector<std::string> greeting;
    /// Upgrades declined with HTTP 503 before one is accepted.
    int declines = 0;
    /// How long the next write takes (reset to zero after it).
    duration write_takes{};

    void push(std::string frame) {
        queue.push_back(std::move(frame));
        if (reader)
            reader->cancel();
    }
    void close() {
        closed = true;
        if (reader)
            reader->cancel();
    }

    std::deque<std::string> queue;
    bool closed = false;
    manual_timer* reader = nullptr; // the read waiting for a frame
    int connects = 0;
};

/// The session's connection type under test: every connection a test's session opens talks to
/// `scripted_connection::server`.
class scripted_connection {
public:
    static inline scripted_server* server = nullptr;

    explicit scripted_connection(pacer::executor ex) : wait_(ex), write_wait_(ex) {}

    awaitable<transport::handshake_result> connect(const transport::ws_endpoint&) {
        auto& s = *server;
        ++s.connects;
        if (s.declines > 0) {
            --s.declines;
            co_return transport::handshake_result{
                make_error_code(transport::transport_errc::upgrade_declined), 503,
                failure(transport::transport_errc::upgrade_declined, "503")};
        }
        open_ = true;
        for (auto& g : s.greeting)
            s.queue.push_back(g);
        co_return transport::handshake_result{};
    }
    transport::handshake_times times() const { return {}; }

    awaitable<boost::system::error_code> write(std::string_view text) {
        auto& s = *server;
        s.frames.push_back({manual_clock::now(), std::string(text)});
        const auto takes = std::exchange(s.write_takes, duration{});
        if (takes > duration{}) {
            write_wait_.expires_at(manual_clock::now() + takes);
            auto [ec] = co_await write_wait_.async_wait(use_tuple);
            if (ec)
                co_return boost::asio::error::operation_aborted;
        }
        if (s.on_frame)
            s.on_frame(s, text);
        co_return boost::system::error_code{};
    }

    awaitable<boost::system::error_code> read() {
        auto& s = *server;
        for (;;) {
            if (!s.queue.empty()) {
                message_ = std::move(s.queue.front());
                s.queue.pop_front();
                co_return boost::system::error_code{};
            }
            if (s.closed) {
                open_ = false;
                co_return make_error_code(transport::transport_errc::closed_normally);
            }
            // Until the server pushes (it cancels this wait), or the read is cancelled.
            cancelled_ = false;
            wait_.expires_at(time_point::max());
            s.reader = &wait_;
            co_await wait_.async_wait(use_tuple); // aborted: a push, a close or a cancel
            s.reader = nullptr;
            if (cancelled_ || (s.queue.empty() && !s.closed)) {
                cancelled_ = false;
                co_return boost::asio::error::operation_aborted;
            }
        }
    }
    std::string_view message() const { return message_; }
    bool last_was_binary() const { return false; }

    /// The client's close: a read still pending ends (as the socket's would).
    awaitable<void> close(std::chrono::milliseconds) {
        open_ = false;
        cancel();
        co_return;
    }
    void cancel() {
        cancelled_ = true;
        wait_.cancel();
        write_wait_.cancel();
    }
    bool is_open() const { return open_; }
    failure failure_of(boost::system::error_code ec) const { return failure(ec); }

private:
    manual_timer wait_;
    manual_timer write_wait_;
    std::string message_;
    bool open_ = false;
    bool cancelled_ = false;
};

/// The session's I/O under test.
struct manual_io {
    using timer = manual_timer;
    using connection = scripted_connection;
};

} // namespace pacer::test

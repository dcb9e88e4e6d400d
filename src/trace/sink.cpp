#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/trace/payload_pool.hpp>
#include <pacer/trace/sink.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>

namespace pacer::trace {

namespace asio = boost::asio;

awaitable<void> sink::push(record r) {
    // try_send leaves `r` untouched when it fails, so it can be sent again.
    if (channel_->try_send(boost::system::error_code{}, std::move(r)))
        co_return;
    ++waits_;
    const auto started = clock::now();
    co_await channel_->async_send(boost::system::error_code{}, std::move(r), use_tuple);
    wait_s_ += to_seconds(clock::now() - started);
}

awaitable<void> sink::emit(direction dir, double time_s, std::string_view event_json) {
    if (!lines_)
        co_return;
    record r;
    r.dir = dir;
    r.session = session_;
    r.time_s = time_s;
    r.payload = payload_pool::take();
    r.payload.assign(event_json);
    co_await push(std::move(r));
}

awaitable<void> sink::receipt(std::string_view text) {
    record r;
    r.what = record::kind::receipt;
    r.session = session_;
    r.payload = payload_pool::take();
    r.payload.assign(text);
    co_await push(std::move(r));
}

awaitable<std::string> sink::finish(std::string receipts_json) {
    auto done = std::make_shared<done_channel>(co_await asio::this_coro::executor, 1);
    record r;
    r.what = record::kind::end;
    r.session = session_;
    r.payload = std::move(receipts_json);
    r.done = done;
    co_await push(std::move(r));
    // The writer's own error code arrives as the first element, like a channel error would.
    auto [ec, message] = co_await done->async_receive(use_tuple);
    if (ec && message.empty())
        co_return "trace writer stopped before the session's files were written: " + ec.message();
    co_return message;
}

} // namespace pacer::trace

#include <pacer/core/awaitable.hpp>
#include <pacer/trace/payload_pool.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace pacer::trace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

struct writer_core::session_state {
    std::string pending;        // formatted lines not yet written
    time_point pending_since{}; // arrival of the oldest pending line
    int fd = -1;
    fs::path trace_path;
    std::string error; // first failure of this session; later lines are not written
    bool ended = false;
    time_point ended_at{};
    std::string receipts; // receipts bytes not yet written
    int receipts_fd = -1;

    // Write-behind (see `write_behind`). Without it the kernel let gigabytes of
    // dirty pages pile up and wrote them back in bursts, and the traces filled the page cache
    // until reclaim evicted other pages; both took CPU and stalls from the sessions at 1,024
    // sessions (docs/performance.md, soak).
    std::optional<write_behind> behind;
    void wrote(std::uint64_t length) {
        if (!behind)
            return;
        if (const auto step = behind->wrote(length))
            write_behind::apply(fd, *step);
    }

    // Bytes that the flush interval applies to: lines, and receipts streamed before the end
    // (an ended session's receipts are completed by finish(), on the end grouping).
    bool has_due_bytes() const { return !pending.empty() || (!ended && !receipts.empty()); }
    std::shared_ptr<done_channel> done;
};

namespace {

int open_exclusive(const fs::path& path) {
    return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
}

// Writes all of `data`; returns 0 or the errno of the failure.
int write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

std::string failure(const fs::path& path, std::string_view what, int err) {
    return fmt::format("trace {} failed: {}: {}", what, path.string(), std::strerror(err));
}

} // namespace

std::optional<mode> parse_mode(std::string_view text) {
    if (text == "full")
        return mode::full;
    if (text == "receipts")
        return mode::receipts;
    if (text == "none")
        return mode::none;
    return std::nullopt;
}

std::string_view to_string(mode m) {
    switch (m) {
    case mode::full:
        return "full";
    case mode::receipts:
        return "receipts";
    case mode::none:
        return "none";
    }
    return "full";
}

std::optional<write_behind::step> write_behind::wrote(std::uint64_t length) {
    written_ += length;
    if (written_ < next_)
        return std::nullopt;
    step s{{behind_, written_ - behind_}, {cached_from_, last_window_ - cached_from_}};
    cached_from_ = last_window_;
    last_window_ = behind_;
    behind_ = written_;
    next_ = written_ + window_;
    return s;
}

void write_behind::apply(int fd, const step& s) {
    (void)::sync_file_range(fd, static_cast<off_t>(s.start_writeback.offset),
                            static_cast<off_t>(s.start_writeback.length), SYNC_FILE_RANGE_WRITE);
    if (s.drop.length > 0)
        (void)::posix_fadvise(fd, static_cast<off_t>(s.drop.offset),
                              static_cast<off_t>(s.drop.length), POSIX_FADV_DONTNEED);
}

std::uint64_t write_behind::first_window(std::uint64_t window, std::size_t n) {
    const double fraction = std::fmod(static_cast<double>(n) * 0.6180339887498949, 1.0);
    return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(fraction * window), 1,
                                     std::max<std::uint64_t>(window, 1));
}

std::string session_folder_name(std::uint32_t session) {
    return fmt::format("session-{:03d}", session);
}

writer_core::writer_core(writer_options options) : options_(std::move(options)) {
    if (!options_.open_file)
        options_.open_file = open_exclusive;
    if (options_.what == mode::none)
        kept_receipts_ = std::make_shared<receipt_spool>(options_.root);
}

writer_core::~writer_core() {
    for (auto& [id, s] : sessions_) {
        if (s.fd >= 0)
            ::close(s.fd);
        if (s.receipts_fd >= 0)
            ::close(s.receipts_fd);
    }
}

writer_core::session_state& writer_core::state_for(std::uint32_t session, time_point now) {
    auto [it, inserted] = sessions_.try_emplace(session);
    auto& s = it->second;
    if (inserted) {
        const fs::path dir = options_.root / session_folder_name(session);
        s.trace_path = dir / "trace.jsonl";
        if (options_.what == mode::none) // no session file: the receipts go to the spool
            return s;
        if (::mkdir(dir.c_str(), 0755) != 0)
            s.error = failure(dir, "folder creation", errno);
        else if (options_.what == mode::full && (s.fd = options_.open_file(s.trace_path)) < 0)
            s.error = failure(s.trace_path, "open", errno);
        else if (options_.what == mode::full && options_.write_behind_window > 0)
            s.behind.emplace(
                options_.write_behind_window,
                write_behind::first_window(options_.write_behind_window, sessions_.size()));
        if (!s.error.empty())
            ++stats_.write_errors;
        s.pending_since = now;
    }
    return s;
}

void writer_core::prepare(std::uint32_t session, time_point now) {
    auto& s = state_for(session, now);
    if (options_.what == mode::none || !s.error.empty() || s.receipts_fd >= 0)
        return;
    const fs::path path = s.trace_path.parent_path() / "input-send-receipts.json";
    if ((s.receipts_fd = options_.open_file(path)) < 0) {
        s.error = failure(path, "open", errno);
        ++stats_.write_errors;
    }
}

void writer_core::on_record(time_point now, const record& r) {
    auto& s = state_for(r.session, now);
    // --trace none: the receipts go to the spool, for samples.json (take_receipts).
    if (options_.what == mode::none && r.what != record::kind::line)
        kept_receipts_->append(r.session, r.payload);
    else if (r.what == record::kind::end)
        s.receipts += r.payload;
    if (r.what == record::kind::end) {
        s.ended = true;
        s.ended_at = now;
        s.done = r.done;
        return;
    }
    if (r.what == record::kind::receipt && options_.what == mode::none)
        return;
    if (r.what == record::kind::receipt) {
        if (s.pending.empty() && s.receipts.empty())
            s.pending_since = now;
        s.receipts += r.payload;
        buffered_ += r.payload.size();
        stats_.peak_buffered_bytes = std::max(stats_.peak_buffered_bytes, buffered_);
        return;
    }
    if (options_.what != mode::full)
        return; // --trace receipts|none: no trace.jsonl
    if (s.pending.empty() && s.receipts.empty())
        s.pending_since = now;
    const std::size_t before = s.pending.size();
    append_line(s.pending, r.dir, r.time_s, r.payload);
    buffered_ += s.pending.size() - before;
    stats_.peak_buffered_bytes = std::max(stats_.peak_buffered_bytes, buffered_);
    ++stats_.lines;
}

void writer_core::write_receipts(session_state& s) {
    if (s.receipts.empty())
        return;
    buffered_ -= std::min<std::uint64_t>(buffered_, s.receipts.size());
    if (s.error.empty()) {
        const fs::path path = s.trace_path.parent_path() / "input-send-receipts.json";
        if (s.receipts_fd < 0 && (s.receipts_fd = options_.open_file(path)) < 0) {
            s.error = failure(path, "open", errno);
            ++stats_.write_errors;
        } else if (const int err = write_all(s.receipts_fd, s.receipts); err != 0) {
            s.error = failure(path, "write", err);
            ++stats_.write_errors;
        } else {
            stats_.bytes += s.receipts.size();
        }
    }
    s.receipts.clear();
}

void writer_core::write_pending(std::uint32_t, session_state& s) {
    if (!s.ended)
        write_receipts(s); // an ended session's receipts are completed by finish()
    if (s.pending.empty())
        return;
    buffered_ -= s.pending.size();
    if (s.error.empty()) {
        if (const int err = write_all(s.fd, s.pending); err != 0) {
            s.error = failure(s.trace_path, "write", err);
            ++stats_.write_errors;
        } else {
            s.wrote(s.pending.size());
            stats_.bytes += s.pending.size();
            ++stats_.writes;
        }
    }
    s.pending.clear();
}

std::string writer_core::take_receipts(std::uint32_t session) {
    return kept_receipts_ ? kept_receipts_->take(session) : std::string();
}

void writer_core::finish(std::uint32_t id, session_state& s) {
    write_pending(id, s);
    if (s.fd >= 0) {
        if (::close(s.fd) != 0 && s.error.empty()) {
            s.error = failure(s.trace_path, "close", errno);
            ++stats_.write_errors;
        }
        s.fd = -1;
    }
    write_receipts(s);
    if (s.receipts_fd >= 0) {
        if (::close(s.receipts_fd) != 0 && s.error.empty()) {
            s.error =
                failure(s.trace_path.parent_path() / "input-send-receipts.json", "close", errno);
            ++stats_.write_errors;
        }
        s.receipts_fd = -1;
    }
    ++stats_.sessions_closed;
    if (s.done) {
        const auto ec = s.error.empty()
                            ? boost::system::error_code{}
                            : boost::system::error_code(EIO, boost::system::generic_category());
        s.done->try_send(ec, s.error);
    }
}

std::size_t writer_core::flush_due(time_point now) {
    std::size_t flushed = 0;
    // Ends are grouped: once the oldest unfinished end is `end_grouping` old, every session that
    // has ended by now is finished in the same batch.
    time_point oldest_end = time_point::max();
    for (const auto& [id, s] : sessions_)
        if (s.ended)
            oldest_end = std::min(oldest_end, s.ended_at);
    const bool ends_due =
        oldest_end != time_point::max() && now >= oldest_end + options_.end_grouping;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
        auto& [id, s] = *it;
        if (s.ended && ends_due) {
            finish(id, s);
            it = sessions_.erase(it);
            ++flushed;
            continue;
        }
        if (s.has_due_bytes() && now >= s.pending_since + options_.flush_interval) {
            write_pending(id, s);
            ++flushed;
        }
        ++it;
    }
    return flushed;
}

void writer_core::flush_all() {
    for (auto& [id, s] : sessions_)
        finish(id, s);
    sessions_.clear();
}

time_point writer_core::next_due() const {
    time_point due = time_point::max();
    for (const auto& [id, s] : sessions_) {
        if (s.ended)
            due = std::min(due, s.ended_at + options_.end_grouping);
        if (s.has_due_bytes())
            due = std::min(due, s.pending_since + options_.flush_interval);
    }
    return due;
}

drain_result drain(channel& ch, writer_core& core, std::size_t budget) {
    drain_result d;
    // The payloads, back to the sessions (payload_pool): lines and receipts come from the pool,
    // so what goes back balances what is taken, whatever the trace mode.
    std::vector<std::string> spent;
    auto handle = [&](boost::system::error_code ec, record r) {
        if (ec || r.what == record::kind::shutdown) {
            d.stopping = true;
        } else {
            core.on_record(clock::now(), r);
            spent.push_back(std::move(r.payload));
            ++d.taken;
        }
    };
    while (!d.stopping && d.taken < budget && ch.try_receive(handle)) {
    }
    payload_pool::give(spent);
    return d;
}

awaitable<void> run_writer(channel& ch, writer_core& core, std::size_t drain_budget) {
    // The writer polls the channel on a 10 ms grid instead of awaiting each record: a session's
    // try_send then never has to wake a waiting receiver (a futex call and a context switch per
    // line), it only appends to the channel's buffer. Only a full channel makes a session wait.
    // A pass that hits the drain budget goes on without waiting (the writer is behind), yielding.
    constexpr auto tick = std::chrono::milliseconds(10);
    steady_timer timer(co_await asio::this_coro::executor);
    auto next = clock::now();
    for (;;) {
        const auto d = drain(ch, core, drain_budget);
        const auto now = clock::now();
        core.flush_due(now);
        if (d.stopping)
            break;
        if (d.taken == drain_budget) {
            // Behind: go on at once, but through the queue, never as a tight loop. Whatever
            // else is posted to this context runs between two passes; a loop that only returns
            // once the channel is short would hold it for as long as the writer stays behind,
            // a whole run on a starved host. (The run's SIGINT/SIGTERM are not taken here: they
            // have a thread of their own at normal priority, session/runner.cpp.)
            next = now;
            co_await asio::post(co_await asio::this_coro::executor, use_awaitable);
            continue;
        }
        next = std::max(next + tick, now); // a slow batch skips ticks, never bursts
        timer.expires_at(next);
        co_await timer.async_wait(use_tuple);
    }
    core.flush_all();
}

} // namespace pacer::trace

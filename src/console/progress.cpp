#include <pacer/console/progress.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <pthread.h>
#include <sys/ioctl.h>

namespace pacer::console {

std::optional<progress_mode> resolve_progress(std::string_view option, bool stderr_is_terminal) {
    if (option == "never")
        return progress_mode::off;
    if (option == "always")
        return stderr_is_terminal ? progress_mode::terminal : progress_mode::plain;
    if (option == "auto")
        return stderr_is_terminal ? progress_mode::terminal : progress_mode::off;
    return std::nullopt;
}

progress_snapshot take_snapshot(const session::live_counters& c) {
    constexpr auto relaxed = std::memory_order_relaxed;
    progress_snapshot s;
    // Ends before starts: a session counted as ended is then always counted as started.
    s.done = c.done.load(relaxed);
    s.failed = c.failed.load(relaxed);
    s.started = c.started.load(relaxed);
    s.packets_sent = c.packets_sent.load(relaxed);
    s.late_packets = c.late_packets.load(relaxed);
    s.errors = c.errors.load(relaxed);
    s.loop_lag_max_s = static_cast<double>(c.loop_lag_max_ns.load(relaxed)) / 1e9;
    return s;
}

// "7s", "1m05s", "2h03m04s": whole seconds.
std::string short_duration(double s) {
    const auto t = static_cast<std::uint64_t>(std::max(0.0, std::floor(s)));
    if (t < 60)
        return fmt::format("{}s", t);
    if (t < 3600)
        return fmt::format("{}m{:02}s", t / 60, t % 60);
    return fmt::format("{}h{:02}m{:02}s", t / 3600, t / 60 % 60, t % 60);
}

std::string format_progress(const progress_snapshot& s, const progress_view& v, bool terminal,
                            std::size_t width) {
    const std::uint64_t ended = s.done + s.failed;
    const std::uint64_t active = s.started > ended ? s.started - ended : 0;
    std::string eta;
    if (v.expected_s && *v.expected_s > v.elapsed_s)
        eta = fmt::format(" (ETA {})", short_duration(*v.expected_s - v.elapsed_s + 0.999));
    else if (v.expected_s && active > 0)
        // The input is sent: what is left is the server's answer, or the sessions' timeout.
        // With the sessions' timeout known, the run ends by then at the latest: that is the
        // ETA (the server may answer sooner, but nothing says when).
        eta = v.deadline_s && *v.deadline_s > v.elapsed_s
                  ? fmt::format(" (input sent; waiting for the server, timeout in {}; ETA at "
                                "most {})",
                                short_duration(*v.deadline_s - v.elapsed_s + 0.999),
                                short_duration(*v.deadline_s - v.elapsed_s + 0.999))
                  : std::string(" (input sent; waiting for the server)");
    std::string text = fmt::format(
        "progress {}{}{}  sessions {} active, {} done, {} failed  packets {} sent, {} late  loop "
        "lag max {:.1f} ms  errors {}",
        v.label.empty() ? "" : v.label + "  ", short_duration(v.elapsed_s), eta, active, s.done,
        s.failed, s.packets_sent, s.late_packets, s.loop_lag_max_s * 1e3, s.errors);
    if (terminal && width > 1 && text.size() > width - 1)
        text.resize(width - 1); // ASCII: one column a character
    return terminal ? "\r\033[K" + text : text + "\n";
}

bool progress_due(progress_mode mode, std::optional<double> last_s, double now_s) {
    switch (mode) {
    case progress_mode::off:
        return false;
    case progress_mode::terminal:
        return !last_s || now_s - *last_s >= terminal_period_s;
    case progress_mode::plain:
        return now_s - last_s.value_or(0.0) >= plain_period_s;
    }
    return false;
}

progress_reporter::progress_reporter(progress_mode mode, std::FILE* out) : mode_(mode), out_(out) {
    if (mode_ != progress_mode::off)
        thread_ = std::thread([this] {
            ::pthread_setname_np(::pthread_self(), "pacer-progress");
            loop();
        });
}

progress_reporter::~progress_reporter() {
    end();
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
}

void progress_reporter::set_source(std::function<progress_snapshot()> source) {
    std::lock_guard lock(mutex_);
    source_ = std::move(source);
}

void progress_reporter::set_line(line_maker make) {
    std::lock_guard lock(mutex_);
    make_line_ = std::move(make);
}

void progress_reporter::begin(std::string label, std::optional<double> expected_s,
                              std::optional<double> deadline_s) {
    if (mode_ == progress_mode::off)
        return;
    counters_.reset();
    {
        std::lock_guard lock(mutex_);
        view_.label = std::move(label);
        view_.expected_s = expected_s;
        view_.deadline_s = deadline_s;
        phase_start_ = std::chrono::steady_clock::now();
        last_printed_s_.reset();
        active_ = true;
    }
    wake_.notify_all();
}

void progress_reporter::end() {
    if (mode_ == progress_mode::off)
        return;
    std::lock_guard lock(mutex_);
    if (!active_)
        return;
    active_ = false;
    if (mode_ == progress_mode::plain) {
        // The last line: the figures as the phase ended, whatever the 10 s period.
        print_locked(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - phase_start_).count());
    } else if (line_shown_) {
        std::fputs("\r\033[K", out_);
        std::fflush(out_);
        line_shown_ = false;
    }
}

void progress_reporter::print_locked(double now_s) {
    view_.elapsed_s = now_s;
    std::size_t width = 0;
    if (winsize ws{};
        mode_ == progress_mode::terminal && ::ioctl(::fileno(out_), TIOCGWINSZ, &ws) == 0)
        width = ws.ws_col;
    const bool terminal = mode_ == progress_mode::terminal;
    const auto line = make_line_ ? make_line_(view_, terminal, width)
                                 : format_progress(source_ ? source_() : take_snapshot(counters_),
                                                   view_, terminal, width);
    std::fputs(line.c_str(), out_);
    std::fflush(out_);
    last_printed_s_ = now_s;
    line_shown_ = mode_ == progress_mode::terminal;
}

void progress_reporter::loop() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        // Checked four times a second; progress_due decides whether a line goes out.
        wake_.wait_for(lock, std::chrono::milliseconds(250));
        if (stopping_ || !active_)
            continue;
        const double now_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - phase_start_).count();
        if (progress_due(mode_, last_printed_s_, now_s))
            print_locked(now_s);
    }
}

} // namespace pacer::console

#include <pacer/run/live_file.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <pthread.h>
#include <sstream>
#include <unistd.h>

namespace pacer::run {

std::string live_file_text(const live_file& f) {
    const auto& t = f.totals;
    boost::json::object o{{"pid", f.pid},
                          {"started", t.started},
                          {"done", t.done},
                          {"failed", t.failed},
                          {"packets_sent", t.packets_sent},
                          {"late_packets", t.late_packets},
                          {"errors", t.errors},
                          {"loop_lag_max_s", t.loop_lag_max_s}};
    return boost::json::serialize(o) + "\n";
}

std::optional<live_file> parse_live_file(std::string_view text) {
    boost::system::error_code ec;
    const auto v = boost::json::parse(text, ec);
    if (ec || !v.is_object())
        return std::nullopt;
    const auto& o = v.as_object();
    auto count = [&](const char* key) -> std::optional<std::uint64_t> {
        const auto* x = o.if_contains(key);
        if (!x || !(x->is_uint64() || (x->is_int64() && x->as_int64() >= 0)))
            return std::nullopt;
        return x->to_number<std::uint64_t>();
    };
    const auto* lag = o.if_contains("loop_lag_max_s");
    const auto pid = count("pid");
    const auto started = count("started"), done = count("done"), failed = count("failed"),
               sent = count("packets_sent"), late = count("late_packets"), errors = count("errors");
    if (!pid || !started || !done || !failed || !sent || !late || !errors || !lag ||
        !lag->is_number())
        return std::nullopt;
    live_file f;
    f.pid = static_cast<pid_t>(*pid);
    f.totals = {*started, *done, *failed, *sent, *late, *errors, lag->to_number<double>()};
    return f;
}

bool write_live_file(const std::filesystem::path& path, const live_file& f) {
    auto tmp = path;
    tmp += ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << live_file_text(f);
        if (!out.flush())
            return false;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    return !ec;
}

std::optional<live_file> read_live_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return parse_live_file(s.str());
}

console::progress_snapshot pool_snapshots(std::span<const console::progress_snapshot> parts) {
    console::progress_snapshot sum;
    for (const auto& p : parts) {
        sum.started += p.started;
        sum.done += p.done;
        sum.failed += p.failed;
        sum.packets_sent += p.packets_sent;
        sum.late_packets += p.late_packets;
        sum.errors += p.errors;
        sum.loop_lag_max_s = std::max(sum.loop_lag_max_s, p.loop_lag_max_s);
    }
    return sum;
}

live_file_writer::live_file_writer(std::filesystem::path path,
                                   const session::live_counters& counters)
    : path_(std::move(path)), counters_(counters) {
    write_now(); // the pid is there before the first session starts
    thread_ = std::thread([this] {
        ::pthread_setname_np(::pthread_self(), "pacer-live");
        std::unique_lock lock(mutex_);
        while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; }))
            write_now();
    });
}

live_file_writer::~live_file_writer() {
    stop();
}

void live_file_writer::stop() {
    {
        std::lock_guard lock(mutex_);
        if (stopping_)
            return;
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
    write_now(); // the totals as the run ended
}

void live_file_writer::write_now() {
    // Best effort: a file that cannot be written leaves the parent's line at zero for this
    // worker; the run itself goes on.
    write_live_file(path_, {::getpid(), console::take_snapshot(counters_)});
}

} // namespace pacer::run

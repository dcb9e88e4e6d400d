// The kernel's floor for pacer's traffic on this machine: what one audio packet costs when
// user space does nothing but the system calls the packet needs. Against it, what `pacer run`
// spends per packet splits into the kernel's share, which no client design removes, and the
// client's own.
//
// BM_LoopbackFloor/k:K — K TCP connections over 127.0.0.1 (TCP_NODELAY, as pacer's client and
// mock set). A peer thread plays the mock: for every append it has read it writes one reply
// (the probe mock's three replies to an append, in one write). The benchmark thread plays the
// client without a WebSocket, JSON, timers or a trace: it sends one append on each connection
// in turn (one `send`), and reads the replies that have arrived (`epoll_wait`, then one `recv`
// per ready socket), never more than one append outstanding per connection. No pacing: the
// wake-ups a paced run adds are BM_TimerWakeup's. Reported: the benchmark thread's CPU per
// packet (the `CPU` column; the loopback's receive processing runs in the sender's system
// call, so it carries the peer's receive of the append and the peer carries the client's
// receive of the reply, as in a real run), `peer_us_per_packet` (the peer thread's), and what
// 1,024 sessions' 12.5 packets a second would cost at that rate (`client_cores_at_1024`).
//
// BM_TraceWriteFloor/window_kb:W — what `--trace full` writes, with nothing to format:
// 9,025 bytes a packet (the measured trace bytes per packet: the append and the three replies
// as JSON lines) appended to 1,024 files in turn, each file written in ~33 kB batches (the
// writer's measured 0.27 writes a packet), on the disk of the temporary folder. With W > 0 the
// files follow pacer's write-behind rule (`trace::write_behind`, the writer's own code) with
// W kB windows: each full window's writeback is started and the one before dropped from the
// page cache (W = 33: after every batch, as the writer did until 2026-12-02); with W = 0 the
// kernel's flusher threads do the writeback later. `machine_us_per_packet` counts every CPU of
// the machine (/proc/stat), the flusher threads included; `writer_cores_at_1024` is the writing
// thread's CPU per packet at 1,024 sessions' packet rate. BM_TraceWriteDirect writes the same
// bytes with O_DIRECT (below).
//
// BM_LoopbackFloor's second argument, sock_kb, sets every socket's SO_SNDBUF and SO_RCVBUF:
// issue 14's socket-buffer lever, on the traffic alone.

#include <pacer/runtime/resources.hpp>
#include <pacer/trace/writer.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

// One append's WebSocket frame: 80 ms of 16 kHz 16-bit audio (2,560 bytes) in base64 (3,416),
// the JSON around it and the masked frame's header.
constexpr std::size_t append_bytes = 3'530;
// The probe mock's reply to one append: an audio delta (~5.1 kB), a transcript delta and a
// unit-done event, as WebSocket frames.
constexpr std::size_t reply_bytes = 5'400;
// 1,024 sessions, one packet each every 80 ms.
constexpr double packets_per_s_at_1024 = 1024 / 0.080;

// The benchmark thread's CPU-seconds per packet times 1,024 sessions' packets a second: the
// counter holds the seconds those packets take at that rate, and kIsRate | kInvert divides the
// thread's CPU time by it.
benchmark::Counter cores_at_1024(std::int64_t packets) {
    return benchmark::Counter(static_cast<double>(packets) / packets_per_s_at_1024,
                              benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

[[noreturn]] void fail(const char* what) {
    throw std::system_error(errno, std::generic_category(), what);
}

void check(bool ok, const char* what) {
    if (!ok)
        fail(what);
}

class fd_owner {
public:
    explicit fd_owner(int fd = -1) : fd_(fd) {}
    fd_owner(fd_owner&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    fd_owner& operator=(fd_owner&&) = delete;
    fd_owner(const fd_owner&) = delete;
    ~fd_owner() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    int get() const { return fd_; }

private:
    int fd_;
};

void no_delay(int fd) {
    int one = 1;
    check(::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0, "setsockopt");
}

// SO_SNDBUF and SO_RCVBUF of `fd` set to `bytes` (the kernel doubles it and turns its
// autotuning off for that socket); 0 leaves the kernel's defaults and autotuning, as pacer does.
void buffer_sizes(int fd, int bytes) {
    if (bytes == 0)
        return;
    check(::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) == 0, "setsockopt");
    check(::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes) == 0, "setsockopt");
}

// K connected pairs over 127.0.0.1: `client[i]` talks to `peer[i]`, each socket's buffers
// `buffer_bytes` (0: the kernel's defaults).
struct loopback_pairs {
    std::vector<fd_owner> client;
    std::vector<fd_owner> peer;

    explicit loopback_pairs(int k, int buffer_bytes = 0) {
        fd_owner listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        check(listener.get() >= 0, "socket");
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        check(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0, "bind");
        buffer_sizes(listener.get(), buffer_bytes); // accepted sockets inherit it
        check(::listen(listener.get(), 128) == 0, "listen");
        check(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) == 0,
              "getsockname");
        for (int i = 0; i < k; ++i) {
            fd_owner c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
            check(c.get() >= 0, "socket");
            buffer_sizes(c.get(), buffer_bytes); // before connect: the window follows it
            check(::connect(c.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0,
                  "connect");
            fd_owner p(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
            check(p.get() >= 0, "accept");
            no_delay(c.get());
            no_delay(p.get());
            check(::fcntl(c.get(), F_SETFL, O_NONBLOCK) == 0, "fcntl");
            check(::fcntl(p.get(), F_SETFL, O_NONBLOCK) == 0, "fcntl");
            client.push_back(std::move(c));
            peer.push_back(std::move(p));
        }
    }
};

// Reads whatever `fd` holds into `buf`; returns the bytes read (0 when it was empty).
std::size_t drain(int fd, std::vector<char>& buf) {
    std::size_t total = 0;
    for (;;) {
        const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n > 0) {
            total += static_cast<std::size_t>(n);
            if (static_cast<std::size_t>(n) < buf.size())
                return total; // the socket is empty now: no second call to find out
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return total;
        fail("recv");
    }
}

void send_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
        if (n > 0) {
            data += n;
            size -= static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue; // the buffers hold far more than one message; not reached in practice
        fail("send");
    }
}

// The mock's side: one reply per append read, until `stop` is signalled.
void peer_loop(const std::vector<fd_owner>& peers, int stop, std::atomic<double>& cpu_s) {
    const double cpu0 = pacer::runtime::thread_cpu_seconds();
    fd_owner ep(::epoll_create1(EPOLL_CLOEXEC));
    check(ep.get() >= 0, "epoll_create1");
    for (std::size_t i = 0; i < peers.size(); ++i) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = i;
        check(::epoll_ctl(ep.get(), EPOLL_CTL_ADD, peers[i].get(), &ev) == 0, "epoll_ctl");
    }
    epoll_event stop_ev{};
    stop_ev.events = EPOLLIN;
    stop_ev.data.u64 = peers.size();
    check(::epoll_ctl(ep.get(), EPOLL_CTL_ADD, stop, &stop_ev) == 0, "epoll_ctl");

    std::vector<std::size_t> pending(peers.size(), 0); // bytes of an append not yet complete
    std::vector<char> buf(32 * 1024);
    const std::vector<char> reply(reply_bytes, 'r');
    std::vector<epoll_event> events(256);
    for (;;) {
        const int n = ::epoll_wait(ep.get(), events.data(), static_cast<int>(events.size()), -1);
        if (n < 0 && errno == EINTR)
            continue;
        check(n >= 0, "epoll_wait");
        for (int e = 0; e < n; ++e) {
            const auto i = events[e].data.u64;
            if (i == peers.size()) {
                cpu_s = pacer::runtime::thread_cpu_seconds() - cpu0;
                return;
            }
            pending[i] += drain(peers[i].get(), buf);
            for (; pending[i] >= append_bytes; pending[i] -= append_bytes)
                send_all(peers[i].get(), reply.data(), reply.size());
        }
    }
}

void BM_LoopbackFloor(benchmark::State& state) {
    const int k = static_cast<int>(state.range(0));
    loopback_pairs pairs(k, static_cast<int>(state.range(1)) * 1024);
    fd_owner stop(::eventfd(0, EFD_CLOEXEC));
    check(stop.get() >= 0, "eventfd");
    std::atomic<double> peer_cpu_s{0};
    std::thread peer([&] { peer_loop(pairs.peer, stop.get(), peer_cpu_s); });

    fd_owner ep(::epoll_create1(EPOLL_CLOEXEC));
    check(ep.get() >= 0, "epoll_create1");
    for (int i = 0; i < k; ++i) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = static_cast<std::uint64_t>(i);
        check(::epoll_ctl(ep.get(), EPOLL_CTL_ADD, pairs.client[i].get(), &ev) == 0, "epoll_ctl");
    }
    std::vector<std::size_t> awaited(k, 0); // reply bytes still to come per connection
    std::vector<char> buf(32 * 1024);
    const std::vector<char> append(append_bytes, 'a');
    std::vector<epoll_event> events(256);
    std::int64_t epoll_calls = 0;
    std::int64_t recv_calls = 0;
    // Takes the replies that have arrived; waits for one when `block`.
    auto collect = [&](bool block) {
        const int n =
            ::epoll_wait(ep.get(), events.data(), static_cast<int>(events.size()), block ? -1 : 0);
        ++epoll_calls;
        if (n < 0 && errno == EINTR)
            return;
        check(n >= 0, "epoll_wait");
        for (int e = 0; e < n; ++e) {
            const auto i = events[e].data.u64;
            const std::size_t got = drain(pairs.client[i].get(), buf);
            ++recv_calls;
            awaited[i] -= std::min(awaited[i], got);
        }
    };

    int next = 0;
    std::int64_t packets = 0;
    for (auto _ : state) {
        while (awaited[next] > 0)
            collect(true);
        send_all(pairs.client[next].get(), append.data(), append.size());
        awaited[next] = reply_bytes;
        collect(false);
        ++packets;
        next = (next + 1) % k;
    }
    while (std::accumulate(awaited.begin(), awaited.end(), std::size_t{0}) > 0)
        collect(true);
    const std::uint64_t one = 1;
    check(::write(stop.get(), &one, sizeof one) == sizeof one, "eventfd write");
    peer.join();

    state.counters["peer_us_per_packet"] =
        benchmark::Counter(peer_cpu_s.load() * 1e6 / static_cast<double>(packets));
    state.counters["epoll_wait_per_packet"] =
        benchmark::Counter(static_cast<double>(epoll_calls) / static_cast<double>(packets));
    state.counters["recv_per_packet"] =
        benchmark::Counter(static_cast<double>(recv_calls) / static_cast<double>(packets));
    state.counters["client_cores_at_1024"] = cores_at_1024(packets);
}
// sock_kb: SO_SNDBUF and SO_RCVBUF in kB on every socket; 0 the kernel's defaults (pacer's).
BENCHMARK(BM_LoopbackFloor)
    ->ArgNames({"k", "sock_kb"})
    ->Args({64, 0})
    ->Args({1024, 0})
    ->Args({1024, 16})
    ->Args({1024, 64})
    ->Args({1024, 1024})
    ->Iterations(200'000);

// Busy jiffies of the whole machine (every field of /proc/stat's cpu line but idle and iowait).
double machine_busy_s() {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    return static_cast<double>(user + nice + system + irq + softirq) /
           static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// A new folder under the temporary directory, for 1,024 trace files.
std::filesystem::path new_temp_folder() {
    std::string dir_template =
        (std::filesystem::temp_directory_path() / "pacer-floor-XXXXXX").string();
    check(::mkdtemp(dir_template.data()) != nullptr, "mkdtemp");
    return dir_template;
}

constexpr std::size_t trace_bytes_per_packet = 9'025;
constexpr std::size_t batch_bytes = 33 * 1024;

void BM_TraceWriteFloor(benchmark::State& state) {
    // Bytes of a file written between two write-behind calls; 0: none.
    const auto window = static_cast<std::uint64_t>(state.range(0)) * 1024;
    constexpr int files = 1024;
    const std::filesystem::path dir = new_temp_folder();

    struct file_state {
        fd_owner fd;
        std::string pending;
        std::optional<pacer::trace::write_behind> behind; // pacer's own rule (trace/writer.hpp)
    };
    std::vector<file_state> out;
    out.reserve(files);
    for (int i = 0; i < files; ++i) {
        const auto path = dir / ("trace-" + std::to_string(i) + ".jsonl");
        fd_owner fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
        check(fd.get() >= 0, "open");
        out.push_back({std::move(fd), {}, std::nullopt});
        if (window > 0)
            out.back().behind.emplace(window, pacer::trace::write_behind::first_window(window, i));
        out.back().pending.reserve(batch_bytes + trace_bytes_per_packet);
    }
    const std::string line(trace_bytes_per_packet, 'x');

    const double machine0 = machine_busy_s();
    std::int64_t packets = 0;
    std::int64_t writes = 0;
    std::int64_t write_behinds = 0;
    int next = 0;
    for (auto _ : state) {
        auto& f = out[next];
        f.pending += line;
        if (f.pending.size() >= batch_bytes) {
            const ssize_t n = ::write(f.fd.get(), f.pending.data(), f.pending.size());
            check(n == static_cast<ssize_t>(f.pending.size()), "write");
            ++writes;
            f.pending.clear();
            // As trace/writer.cpp does: once a window is full, start its writeback and drop
            // the window before it from the page cache.
            if (f.behind)
                if (const auto step = f.behind->wrote(static_cast<std::uint64_t>(n))) {
                    pacer::trace::write_behind::apply(f.fd.get(), *step);
                    ++write_behinds;
                }
        }
        ++packets;
        next = (next + 1) % files;
    }
    // Whatever the flusher threads still owe for these files is part of the cost.
    for (auto& f : out)
        check(::fdatasync(f.fd.get()) == 0, "fdatasync");
    const double machine_s = machine_busy_s() - machine0;
    out.clear();
    std::filesystem::remove_all(dir);

    const auto per_packet = [&](double v) { return v / static_cast<double>(packets); };
    state.counters["machine_us_per_packet"] = per_packet(machine_s * 1e6);
    state.counters["writes_per_packet"] = per_packet(static_cast<double>(writes));
    state.counters["write_behinds_per_packet"] = per_packet(static_cast<double>(write_behinds));
    state.counters["writer_cores_at_1024"] = cores_at_1024(packets);
}
// 30 s of 1,024 sessions' packets, as one 30 s run writes: 3.5 GB, removed at the end.
// window_kb: 0 none, 33 every batch (pacer's writer until 2026-12-02), then larger windows.
BENCHMARK(BM_TraceWriteFloor)
    ->ArgName("window_kb")
    ->Arg(0)
    ->Arg(33)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(4096)
    ->Iterations(384'000)
    ->Unit(benchmark::kMicrosecond);

// BM_TraceWriteDirect: the same trace bytes as BM_TraceWriteFloor/window_kb:0, written with
// O_DIRECT: from an aligned buffer, in whole 4 kB blocks (a file's last partial block waits for
// more), past the page cache, so each write waits for the device. `writer_cores_at_1024` is the
// writing thread's CPU (copies into the page cache and its writeback are gone, the block layer's
// work stays); the Time column (wall time a packet) says whether one thread can keep up:
// 1,024 sessions send a packet every 78 µs.
void BM_TraceWriteDirect(benchmark::State& state) {
    constexpr int files = 1024;
    constexpr std::size_t block = 4096;
    const std::filesystem::path dir = new_temp_folder();

    struct file_state {
        fd_owner fd;
        char* buffer = nullptr; // aligned, batch_bytes + one packet + one block
        std::size_t pending = 0;
    };
    const std::size_t capacity = batch_bytes + trace_bytes_per_packet + block;
    std::vector<file_state> out;
    out.reserve(files);
    std::optional<std::string> refused;
    for (int i = 0; i < files && !refused; ++i) {
        const auto path = dir / ("trace-" + std::to_string(i) + ".jsonl");
        fd_owner fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0644));
        if (fd.get() < 0) {
            refused = "O_DIRECT refused by the temporary folder's file system";
            break;
        }
        void* p = nullptr;
        check(::posix_memalign(&p, block, capacity) == 0, "posix_memalign");
        out.push_back({std::move(fd), static_cast<char*>(p), 0});
    }
    const std::string line(trace_bytes_per_packet, 'x');
    const double machine0 = machine_busy_s();
    std::int64_t packets = 0;
    std::int64_t writes = 0;
    int next = 0;
    for (auto _ : state) {
        if (refused) {
            state.SkipWithError(refused->c_str());
            break;
        }
        auto& f = out[next];
        std::copy(line.begin(), line.end(), f.buffer + f.pending);
        f.pending += line.size();
        if (f.pending >= batch_bytes) {
            const std::size_t whole = f.pending / block * block;
            const ssize_t n = ::write(f.fd.get(), f.buffer, whole);
            check(n == static_cast<ssize_t>(whole), "write");
            ++writes;
            std::copy(f.buffer + whole, f.buffer + f.pending, f.buffer);
            f.pending -= whole;
        }
        ++packets;
        next = (next + 1) % files;
    }
    const double machine_s = machine_busy_s() - machine0;
    for (auto& f : out)
        std::free(f.buffer);
    out.clear();
    std::filesystem::remove_all(dir);
    if (packets == 0)
        return;
    const auto per_packet = [&](double v) { return v / static_cast<double>(packets); };
    state.counters["machine_us_per_packet"] = per_packet(machine_s * 1e6);
    state.counters["writes_per_packet"] = per_packet(static_cast<double>(writes));
    state.counters["writer_cores_at_1024"] = cores_at_1024(packets);
}
BENCHMARK(BM_TraceWriteDirect)->Iterations(384'000)->Unit(benchmark::kMicrosecond);

} // namespace

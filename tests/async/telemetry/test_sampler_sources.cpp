// The telemetry sources for real: NVML through the fake library the tests build (its values
// from a script), the sampling thread and telemetry.jsonl, the --metrics-listen endpoint and
// the scraper reading it over loopback. Nothing here depends on timing: windows are cut at
// the samples' own times, and the threads are waited for with a bounded poll.

#include <pacer/core/clock.hpp>
#include <pacer/telemetry/energy.hpp>
#include <pacer/telemetry/metrics_listener.hpp>
#include <pacer/telemetry/nvml.hpp>
#include <pacer/telemetry/recorder.hpp>
#include <pacer/telemetry/sampler.hpp>
#include <pacer/telemetry/server_metrics.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include "fakes.hpp"
#include "unit/scratch_folder.hpp"
#include <arpa/inet.h>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace pacer::telemetry {
namespace {

using pacer::test::scratch_folder;

// A script for the fake NVML, in a fresh file named by PACER_FAKE_NVML_SCRIPT.
class fake_nvml_script {
public:
    explicit fake_nvml_script(const std::string& text) : dir_("pacer-fake-nvml") {
        path_ = dir_.path / "script";
        std::ofstream(path_) << text;
        ::setenv("PACER_FAKE_NVML_SCRIPT", path_.c_str(), 1);
    }
    ~fake_nvml_script() { ::unsetenv("PACER_FAKE_NVML_SCRIPT"); }

private:
    scratch_folder dir_;
    std::filesystem::path path_;
};

std::string lib() {
    return pacer::test::fake_nvml_library().string();
}

template <class Pred>
bool poll_until(Pred pred) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > give_up)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5)); // polling, not synchronising
    }
    return true;
}

TEST(TelemetryNvml, EnergyOverAWindowIsTheExactCounterDifference) {
    fake_nvml_script script("devices 2\n"
                            "energy_mj 0 seq 1000000 1000250 1000750 1001000\n"
                            "power_mw 0 const 250000\n"
                            "util_gpu 0 seq 10 50 90 20\n"
                            "mem_used 0 const 4000000000\nmem_total 0 const 8000000000\n"
                            "sm_clock 0 const 1410\ntemperature 0 const 61\n");
    const nvml_library nvml(lib());
    ASSERT_EQ(nvml.device_count(), 2u);
    EXPECT_EQ(nvml.device_name(1), "Fake GPU 1");
    std::vector<sample> s;
    for (int i = 0; i < 4; ++i)
        s.push_back(nvml.read(0));
    EXPECT_EQ(s[0].source, "nvml:0");
    EXPECT_EQ(s[2].energy_mj, 1000750u);
    EXPECT_EQ(s[0].power_w, 250.0);
    EXPECT_EQ(s[1].utilization_pct, 50.0);
    EXPECT_EQ(s[0].memory_used_bytes, 4e9);
    EXPECT_EQ(s[0].sm_clock_mhz, 1410.0);
    EXPECT_EQ(s[0].temperature_c, 61.0);
    // The window from the first to the third sample: exactly 750 mJ.
    const auto w = summarize_window(s, s[0].monotonic_s, s[2].monotonic_s);
    EXPECT_EQ(w.energy_method, "counter");
    EXPECT_DOUBLE_EQ(*w.energy_j, 0.75);
    EXPECT_DOUBLE_EQ(*w.utilization_max, 90);
    // GPU 1 reports nothing the script does not give: a sample without figures, no error.
    const auto other = nvml.read(1);
    EXPECT_TRUE(other.error.empty());
    EXPECT_FALSE(other.energy_mj);
    EXPECT_FALSE(other.power_w);
}

TEST(TelemetryNvml, ACounterWrapIsAddedBack) {
    fake_nvml_script script("energy_mj 0 seq 18446744073709550616 500 1500\n");
    const nvml_library nvml(lib());
    std::vector<sample> s{nvml.read(0), nvml.read(0), nvml.read(0)};
    const auto w = summarize_window(s, s[0].monotonic_s, s[2].monotonic_s);
    EXPECT_EQ(w.counter_wraps, 1u);
    EXPECT_DOUBLE_EQ(*w.energy_j, 2.5); // 1000 to the top and over, 500, then 1000
}

TEST(TelemetryNvml, AGpuWithoutTheEnergyCounterIntegratesItsPower) {
    fake_nvml_script script("energy_mj 0 unsupported\npower_mw 0 seq 100000 200000 300000\n");
    const nvml_library nvml(lib());
    std::vector<sample> s{nvml.read(0), nvml.read(0), nvml.read(0)};
    ASSERT_FALSE(s[0].energy_mj);
    const double t0 = s[0].monotonic_s, t1 = s[1].monotonic_s, t2 = s[2].monotonic_s;
    const auto w = summarize_window(s, t0, t2);
    EXPECT_EQ(w.energy_method, "power_integration");
    EXPECT_DOUBLE_EQ(*w.energy_j, (100 + 200) / 2.0 * (t1 - t0) + (200 + 300) / 2.0 * (t2 - t1));
}

TEST(TelemetryNvml, AMissingLibraryIsOneClearLine) {
    try {
        const nvml_library nvml("/nonexistent/libnvidia-ml.so.1");
        FAIL() << "loaded a library that does not exist";
    } catch (const telemetry_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos)
            << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    // A library that is not NVML, and an NVML whose init fails, are one line too.
    EXPECT_THROW(nvml_library("libc.so.6"), telemetry_error);
    fake_nvml_script script("init fail\n");
    try {
        const nvml_library nvml(lib());
        FAIL() << "init failed but the library loaded";
    } catch (const telemetry_error& e) {
        EXPECT_NE(std::string(e.what()).find("nvmlInit failed"), std::string::npos) << e.what();
    }
}

TEST(TelemetryNvml, TheGpuSelectionIsCheckedAgainstWhatNvmlSees) {
    EXPECT_TRUE(parse_gpu_telemetry("nvml").all);
    EXPECT_EQ(parse_gpu_telemetry("nvml:1,0").indexes, (std::vector<unsigned>{1, 0}));
    for (const char* bad : {"nvm", "nvml:", "nvml:a", "nvml:0,0", "nvml:1,", "dcgm"})
        EXPECT_THROW(parse_gpu_telemetry(bad), telemetry_error) << bad;
    fake_nvml_script script("devices 2\n");
    auto nvml = std::make_shared<const nvml_library>(lib());
    EXPECT_EQ(nvml_source(nvml, parse_gpu_telemetry("nvml")).indexes().size(), 2u);
    try {
        nvml_source source(nvml, parse_gpu_telemetry("nvml:2"));
        FAIL() << "GPU 2 of 2 accepted";
    } catch (const telemetry_error& e) {
        EXPECT_NE(std::string(e.what()).find("there is no GPU 2: NVML sees 2 (0..1)"),
                  std::string::npos)
            << e.what();
    }
}

TEST(TelemetrySampler, ItsThreadKeepsEverySampleAndWritesOneLineEach) {
    fake_nvml_script script("devices 2\nenergy_mj 0 linear 5000 250000\npower_mw 1 const 90000\n");
    scratch_folder dir("pacer-sampler");
    auto nvml = std::make_shared<const nvml_library>(lib());
    std::vector<std::unique_ptr<sample_source>> sources;
    sources.push_back(std::make_unique<nvml_source>(nvml, parse_gpu_telemetry("nvml")));
    sampler smp(std::move(sources), std::chrono::milliseconds(5), dir.path / "telemetry.jsonl");
    smp.start();
    ASSERT_TRUE(poll_until([&] { return smp.samples().size() >= 6; }));
    smp.stop();
    const auto all = smp.samples();
    // The file was created new: a second sampler refuses it.
    EXPECT_THROW(sampler({}, std::chrono::milliseconds(5), dir.path / "telemetry.jsonl"),
                 std::runtime_error);
    std::ifstream in(dir.path / "telemetry.jsonl");
    std::size_t lines = 0;
    double last0 = -1;
    for (std::string line; std::getline(in, line); ++lines) {
        const auto v = boost::json::parse(line).as_object();
        ASSERT_LT(lines, all.size());
        EXPECT_EQ(v.at("source").as_string(), all[lines].source);
        EXPECT_DOUBLE_EQ(v.at("monotonic_s").as_double(), all[lines].monotonic_s);
        EXPECT_GT(v.at("realtime_s").as_double(), 1e9);
        if (all[lines].source == "nvml:0") {
            EXPECT_TRUE(v.contains("energy_mj"));
            EXPECT_FALSE(v.contains("power_w"));
            EXPECT_GT(v.at("monotonic_s").as_double(), last0);
            last0 = v.at("monotonic_s").as_double();
        } else {
            EXPECT_EQ(v.at("power_w").as_double(), 90.0);
        }
    }
    EXPECT_EQ(lines, all.size());
    // The energy between the first and last sample of GPU 0 is their counters' difference.
    std::vector<sample> gpu0;
    for (const auto& s : all)
        if (s.source == "nvml:0")
            gpu0.push_back(s);
    ASSERT_GE(gpu0.size(), 3u);
    const double t0 = gpu0.front().monotonic_s, t1 = gpu0.back().monotonic_s;
    const auto w = summarize_window(gpu0, t0, t1);
    EXPECT_DOUBLE_EQ(*w.energy_j,
                     static_cast<double>(*gpu0.back().energy_mj - *gpu0.front().energy_mj) / 1e3);
    // The fake's counter grows with its own clock (250 W): the thread's samples saw it grow.
    // (No bound on the rate: a stall between a stamp and its read on a loaded host shifts it.)
    EXPECT_GT(*w.energy_j, 0);
    EXPECT_GE(smp.thread_cpu_s(), 0.0);
}

// A source on a manual clock: reading n is stamped n seconds and its counter reads
// 250'000 × n + n % 3 mJ (250 W, each reading a little off the straight line, as a real
// reading is off its stamp by the time the read takes). It notes which thread took each one.
class manual_source : public sample_source {
public:
    void read(std::vector<sample>& out) override {
        std::lock_guard lock(m_);
        const auto n = readers_.size() + 1;
        sample s;
        s.source = "manual";
        s.monotonic_s = static_cast<double>(n);
        s.realtime_s = 1.7e9 + static_cast<double>(n);
        s.energy_mj = 250'000 * n + n % 3;
        readers_.push_back(std::this_thread::get_id());
        out.push_back(std::move(s));
    }
    std::string describe() const override { return "manual"; }
    std::vector<std::thread::id> readers() const {
        std::lock_guard lock(m_);
        return readers_;
    }

private:
    mutable std::mutex m_;
    std::vector<std::thread::id> readers_;
};

// (monotonic_s, energy_mj) of each line of a telemetry.jsonl, in the file's order.
std::vector<std::pair<double, double>> counter_lines(const std::filesystem::path& jsonl) {
    std::vector<std::pair<double, double>> out;
    std::ifstream in(jsonl);
    for (std::string line; std::getline(in, line);) {
        const auto v = boost::json::parse(line).as_object();
        out.emplace_back(v.at("monotonic_s").to_number<double>(),
                         v.at("energy_mj").to_number<double>());
    }
    return out;
}

// Issue 31's microsecond discrepancy. `read_now` (the idle baseline's last reading, which
// falls on the sampling thread's tick when the baseline is a whole number of intervals) read
// the source on the caller's thread, racing the thread's own reading: each was read under the
// source's lock, but kept after it, so the reading stamped later could be appended first.
// Recomputed from telemetry.jsonl in its order, a window edge after the pair was then
// interpolated from the wrong neighbour (off by the reading's own deviation: 1-2 us of a
// 250 W counter). Now a running source is read only by its own thread, which keeps each
// reading before taking the next, so the file is in the order of the stamps.
TEST(TelemetrySampler, WhileItRunsASourceIsReadOnlyByItsOwnThreadInTheOrderOfItsStamps) {
    scratch_folder dir("pacer-sampler-order");
    auto owned = std::make_unique<manual_source>();
    const auto* source = owned.get();
    std::vector<std::unique_ptr<sample_source>> sources;
    sources.push_back(std::move(owned));
    const auto jsonl = dir.path / "telemetry.jsonl";
    // An hour's interval: the thread's only tick is its first, at once.
    sampler smp(std::move(sources), std::chrono::hours(1), jsonl);
    smp.read_now(); // before start: this thread reads
    smp.start();
    smp.read_now(); // while the thread runs: the thread reads, at once, and keeps it first
    smp.read_now();
    smp.stop(); // the thread has ended: this thread reads once more
    const auto me = std::this_thread::get_id();
    const auto readers = source->readers();
    // The direct reading, the thread's first tick (which may serve the first request too), the
    // two requests, the last reading.
    ASSERT_GE(readers.size(), 4u);
    ASSERT_LE(readers.size(), 5u);
    EXPECT_EQ(readers.front(), me);
    EXPECT_EQ(readers.back(), me);
    for (std::size_t i = 1; i + 1 < readers.size(); ++i)
        EXPECT_NE(readers[i], me) << "reading " << i + 1 << " was taken on the caller's thread";
    // The file has every reading, in the order of its stamps, and a window recomputed from it
    // in its order (the last line at or before each edge and the next one) is the summary's.
    const auto lines = counter_lines(jsonl);
    const auto kept = smp.samples();
    ASSERT_EQ(lines.size(), readers.size());
    ASSERT_EQ(kept.size(), readers.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
        EXPECT_EQ(lines[i].first, static_cast<double>(i + 1));
        EXPECT_EQ(lines[i].first, kept[i].monotonic_s);
    }
    const auto at = [&](double t) {
        for (std::size_t i = 1; i < lines.size(); ++i)
            if (lines[i].first >= t) {
                const auto [ta, ea] = lines[i - 1];
                const auto [tb, eb] = lines[i];
                return ea + (eb - ea) * (t - ta) / (tb - ta);
            }
        return lines.back().second;
    };
    const double t0 = 1.25, t1 = 3.5;
    EXPECT_DOUBLE_EQ(*summarize_window(kept, t0, t1).energy_j, (at(t1) - at(t0)) / 1e3);
}

// A serve level's window is cut while the sampler runs, and ends between two ticks: the
// recorder reads every source once more first, so the window's end is interpolated between
// two samples of telemetry.jsonl (as a reader of the file does), not held at the last one.
TEST(TelemetryRecorder, AWindowCutWhileSamplingHasASampleAfterItsEnd) {
    fake_nvml_script script("devices 1\nenergy_mj 0 linear 5000 250000\n");
    scratch_folder dir("pacer-recorder-window");
    options o;
    o.gpu = "nvml";
    o.nvml_library = lib();
    o.interval = std::chrono::hours(1); // the thread's only tick is its first, at once
    o.idle_baseline = std::chrono::nanoseconds(0);
    auto rec = recorder::open(o, {});
    ASSERT_TRUE(rec);
    rec->start(dir.path / "telemetry.jsonl");
    // The reading `start` takes and the thread's first tick.
    ASSERT_TRUE(poll_until([&] { return rec->sampling()->samples().size() >= 2; }));
    const auto before = rec->sampling()->samples();
    const double t0 = before.front().monotonic_s;
    const double t1 = to_seconds(clock::now()); // after every sample so far
    ASSERT_LT(before.back().monotonic_s, t1);
    const auto w = rec->window(t0, t1, {});
    const auto after = rec->sampling()->samples();
    ASSERT_EQ(after.size(), before.size() + 1);
    EXPECT_GE(after.back().monotonic_s, t1);
    // The counter's difference interpolated at t1 between the last two samples: what a reader
    // of the file computes, now that the file has a sample after t1.
    const auto& a = after[after.size() - 2];
    const auto& b = after.back();
    const double ea = static_cast<double>(*a.energy_mj), eb = static_cast<double>(*b.energy_mj);
    const double at_t1 = ea + (eb - ea) * (t1 - a.monotonic_s) / (b.monotonic_s - a.monotonic_s);
    const double expected = (at_t1 - static_cast<double>(*before.front().energy_mj)) / 1e3;
    EXPECT_NEAR(w.at("energy_j").to_number<double>(), expected, 1e-6);
    rec->stop();
}

// One HTTP GET over loopback with a raw socket: the status line and the body.
std::pair<std::string, std::string> http_get(const std::string& url, const std::string& path) {
    const auto colon = url.rfind(':');
    const auto port = static_cast<unsigned short>(std::stoi(url.substr(colon + 1)));
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return {};
    }
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
    (void)!::write(fd, req.data(), req.size());
    std::string all;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
        all.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    const auto head_end = all.find("\r\n\r\n");
    if (head_end == std::string::npos)
        return {all, ""};
    return {all.substr(0, all.find("\r\n")), all.substr(head_end + 4)};
}

TEST(TelemetryListener, ServesWhatRenderGivesAndNothingElse) {
    std::atomic<int> calls{0};
    metrics_listener l("127.0.0.1:0", [&] {
        ++calls;
        return format_exposition({{"pacer_up", "", metric_type::gauge, {{{}, 1}}}});
    });
    EXPECT_TRUE(l.url().starts_with("http://127.0.0.1:")) << l.url();
    EXPECT_TRUE(l.url().ends_with("/metrics")) << l.url();
    const auto base = l.url().substr(0, l.url().size() - 8);
    const auto [status, body] = http_get(base, "/metrics");
    EXPECT_EQ(status, "HTTP/1.1 200 OK");
    const auto e = parse_exposition(body);
    EXPECT_TRUE(e.warnings.empty());
    ASSERT_EQ(e.samples.size(), 1u);
    EXPECT_EQ(e.samples[0].name, "pacer_up");
    EXPECT_EQ(http_get(base, "/other").first, "HTTP/1.1 404 Not Found");
    EXPECT_EQ(calls.load(), 1);
    EXPECT_EQ(l.scrapes(), 1u);
    // A bad address is one line, before anything binds.
    EXPECT_THROW(check_listen_address("localhost"), telemetry_error);
    EXPECT_THROW(check_listen_address("127.0.0.1:99999"), telemetry_error);
    EXPECT_THROW(check_listen_address("my-host:9464"), telemetry_error);
    EXPECT_NO_THROW(check_listen_address("[::1]:0"));
}

// Issue 39: the address is bound when the listener is made (the command makes it before any
// folder or header), so a busy port is one line there; without `render` it serves an empty page.
TEST(TelemetryListener, ABusyPortIsOneLineWhenItIsBound) {
    metrics_listener first("127.0.0.1:0");
    const auto base = first.url().substr(0, first.url().size() - 8);
    EXPECT_EQ(http_get(base, "/metrics"),
              std::make_pair(std::string("HTTP/1.1 200 OK"), std::string()));
    const auto port = base.substr(base.rfind(':') + 1);
    try {
        metrics_listener second("127.0.0.1:" + port);
        ADD_FAILURE() << "bound a port already listened on";
    } catch (const telemetry_error& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.find("--metrics-listen 127.0.0.1:" + port + ": cannot listen: "), 0u)
            << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
}

// Issue 39: at the end the final totals are served, and a command whose endpoint someone
// scraped waits (at most the linger) until they are scraped once; no one watching, no wait.
TEST(TelemetryListener, TheFinalTotalsStayUntilAWatcherScrapesThem) {
    const auto live = [] { return std::string("pacer_live 1\n"); };
    {
        metrics_listener unwatched("127.0.0.1:0", live, std::chrono::hours(1));
        unwatched.serve_final("pacer_final 1\n");
        EXPECT_FALSE(unwatched.watched());
        EXPECT_FALSE(unwatched.linger()); // returns at once: no one ever scraped
    }
    {
        metrics_listener no_linger("127.0.0.1:0", live, std::chrono::nanoseconds(0));
        const auto base = no_linger.url().substr(0, no_linger.url().size() - 8);
        EXPECT_EQ(http_get(base, "/metrics").second, "pacer_live 1\n");
        no_linger.serve_final("pacer_final 1\n");
        EXPECT_FALSE(no_linger.watched()); // --metrics-linger 0
        EXPECT_FALSE(no_linger.linger());
    }
    metrics_listener l("127.0.0.1:0", live, std::chrono::hours(1));
    const auto base = l.url().substr(0, l.url().size() - 8);
    EXPECT_EQ(http_get(base, "/metrics").second, "pacer_live 1\n");
    EXPECT_FALSE(l.watched()); // no final totals yet
    l.serve_final("pacer_final 1\n");
    EXPECT_TRUE(l.watched());
    // Whether the scrape lands before or during the wait, linger() returns once it is in (a
    // missed wake-up would hang here until the test's timeout).
    bool scraped = false;
    std::thread waiter([&] { scraped = l.linger(); });
    EXPECT_EQ(http_get(base, "/metrics").second, "pacer_final 1\n");
    waiter.join();
    EXPECT_TRUE(scraped);
    EXPECT_FALSE(l.watched());
    EXPECT_EQ(l.scrapes(), 2u);
}

TEST(TelemetryScraper, ReadsTheEndpointAndWarnsOnceForEachMalformedLine) {
    const std::string page = "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
                             "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 7000\n"
                             "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
                             "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 123.5\n"
                             "this line is malformed\n"
                             "# TYPE sglang:num_running_reqs gauge\n"
                             "sglang:num_running_reqs NaN\n";
    metrics_listener l("127.0.0.1:0", [&] { return page; });
    std::vector<std::string> warnings;
    server_metrics_source source(l.url(), std::chrono::seconds(10),
                                 [&](const std::string& w) { warnings.push_back(w); });
    std::vector<sample> s;
    source.read(s);
    source.read(s);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_TRUE(s[1].error.empty()) << s[1].error;
    EXPECT_EQ(s[1].energy_mj, 7000u);
    EXPECT_EQ(s[1].power_w, 123.5);
    ASSERT_EQ(warnings.size(), 1u); // the same line in both scrapes: one warning
    EXPECT_NE(warnings[0].find("line 5: "), std::string::npos) << warnings[0];
    EXPECT_EQ(source.scrapes(), 2u);
    EXPECT_EQ(source.failed(), 0u);
    // A closed endpoint: the sample says why, and the warning comes once.
    {
        server_metrics_source gone("http://127.0.0.1:1/metrics", std::chrono::seconds(10),
                                   [&](const std::string& w) { warnings.push_back(w); });
        std::vector<sample> f;
        gone.read(f);
        gone.read(f);
        ASSERT_EQ(f.size(), 2u);
        EXPECT_FALSE(f[0].error.empty());
        EXPECT_EQ(gone.failed(), 2u);
        EXPECT_EQ(warnings.size(), 2u);
    }
    EXPECT_THROW(server_metrics_source("ftp://x/metrics", std::chrono::seconds(1), {}),
                 telemetry_error);
}

} // namespace
} // namespace pacer::telemetry

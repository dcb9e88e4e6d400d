// `pacer run` with telemetry, as a user runs it: GPUs read through the fake NVML the tests
// build (--nvml-library), a Prometheus endpoint served by its own process, and the live
// counters scraped from --metrics-listen during a run. No pacing outcome is asserted: a run
// that finished (exit 0 or 3) is all that is required of the load.

#include <pacer/telemetry/exposition.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fakes.hpp"
#include "integration/cli_process.hpp"
#include "integration/process.hpp"
#include <algorithm>
#include <arpa/inet.h>
#include <fstream>
#include <map>
#include <netinet/in.h>
#include <set>
#include <sys/socket.h>
#include <thread>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

std::size_t count_lines(const fs::path& p) {
    std::ifstream in(p);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
        ++n;
    return n;
}

// A GPU's energy counter as telemetry.jsonl holds it, and its energy over [t0, t1] recomputed
// as a user would: its lines in the file's order, the counter interpolated at each edge between
// the line before it and the first at or after it (flat beyond the last).
class file_counter {
public:
    file_counter(const fs::path& jsonl, const std::string& source) {
        for (const auto& l : read_jsonl(jsonl))
            if (l.at("source").as_string() == source)
                lines_.emplace_back(l.at("monotonic_s").to_number<double>(),
                                    l.at("energy_mj").to_number<double>());
    }
    double mj_at(double x) const {
        for (std::size_t i = 1; i < lines_.size(); ++i)
            if (lines_[i].first >= x) {
                const auto [ta, ea] = lines_[i - 1];
                const auto [tb, eb] = lines_[i];
                return tb == ta ? eb : ea + (eb - ea) * (x - ta) / (tb - ta);
            }
        return lines_.empty() ? 0 : lines_.back().second;
    }
    double energy_j(double t0, double t1) const { return (mj_at(t1) - mj_at(t0)) / 1e3; }
    const std::vector<std::pair<double, double>>& lines() const { return lines_; }

private:
    std::vector<std::pair<double, double>> lines_; // (monotonic_s, mJ)
};

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

// A scratch folder and the fake NVML (tests/fakes) scripted by `script` in it: `env` points
// pacer at the script.
struct fake_gpus {
    explicit fake_gpus(const std::string& script) {
        const auto file = dir.path() / "nvml-script";
        std::ofstream(file) << script;
        env.env["PACER_FAKE_NVML_SCRIPT"] = file.string();
    }
    scratch_dir dir;
    cli_options env;
};

// `args` with the options that read the fake GPUs every `interval` after an idle baseline of
// `baseline`, before its `-o`.
std::vector<std::string> reading_gpus(std::vector<std::string> args, const std::string& interval,
                                      const std::string& baseline) {
    const std::vector<std::string> flags{
        "--gpu-telemetry",      "nvml",   "--nvml-library",  fake_nvml_library().string(),
        "--telemetry-interval", interval, "--idle-baseline", baseline};
    args.insert(std::find(args.begin(), args.end(), "-o"), flags.begin(), flags.end());
    return args;
}

TEST(TelemetryE2E, RunWithNvmlRecordsTheEnergyOfItsWindow) {
    // GPU 0: a counter growing at exactly 250 W; GPU 1: no counter, 100 W (integrated).
    const fake_gpus gpus("devices 2\n"
                         "energy_mj 0 linear 5000 250000\npower_mw 0 const 250000\n"
                         "util_gpu 0 const 40\nmem_used 0 const 2000000000\n"
                         "power_mw 1 const 100000\n");
    const auto out = gpus.dir.path() / "run";
    const auto r = run_cli(reading_gpus({"run", "-c", "2", "-d", "1s", "--progress", "never",
                                         "--no-report", "-o", out.string()},
                                        "20ms", "200ms"),
                           gpus.env);
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto summary = read_json(out / "summary.json");
    const auto& t = summary.at("telemetry").as_object();
    const double span = t.at("window").at("duration_s").to_number<double>();
    ASSERT_GT(span, 0);
    EXPECT_EQ(t.at("energy_from").as_string(), "nvml");
    EXPECT_EQ(t.at("gpus").to_number<std::uint64_t>(), 2u);
    const auto& sources = t.at("sources").as_array();
    ASSERT_EQ(sources.size(), 2u);
    const double t0 = t.at("window").at("start_s").to_number<double>();
    const double t1 = t.at("window").at("end_s").to_number<double>();
    // GPU 0's counter: the difference of its raw readings in telemetry.jsonl, interpolated at
    // the window's edges, recomputed here from the file.
    const file_counter gpu0(out / "telemetry.jsonl", "nvml:0");
    const auto& counter = gpu0.lines();
    ASSERT_GE(counter.size(), 2u);
    ASSERT_LE(counter.front().first, t0); // samples before and after the window
    ASSERT_GE(counter.back().first, t1);
    const auto counter_at = [&](double x) { return gpu0.mj_at(x); };
    const double gpu0_j = gpu0.energy_j(t0, t1);
    EXPECT_EQ(sources[0].at("energy_method").as_string(), "counter");
    // Exact but for the rounding of the sums (the file's lines of a source are in the order of
    // their stamps; a reading taken out of order once made this 1.5-4.4e-4 J in a run of three
    // on a loaded host: TelemetrySampler.WhileItRunsASourceIsReadOnlyByItsOwnThread...).
    const double exact = 1e-6;
    EXPECT_NEAR(sources[0].at("energy_j").to_number<double>(), gpu0_j, exact);
    // The fake's counter grows at 250 W of its own clock: a loose sanity bound only (a stall
    // between a sample's stamp and its read shifts it on a loaded host).
    EXPECT_GT(gpu0_j, 0);
    EXPECT_LT(gpu0_j / span, 1000);
    // GPU 1 has no counter: a constant 100 W integrated, exact.
    EXPECT_EQ(sources[1].at("energy_method").as_string(), "power_integration");
    EXPECT_NEAR(sources[1].at("energy_j").to_number<double>(), 100 * span, 1e-9);
    const double energy = t.at("energy_j").to_number<double>();
    EXPECT_NEAR(energy, gpu0_j + 100 * span, 2 * exact);
    EXPECT_NEAR(t.at("mean_power_w").to_number<double>(), energy / span, 1e-9);
    EXPECT_DOUBLE_EQ(t.at("peak_power_w").to_number<double>(), 350);
    EXPECT_DOUBLE_EQ(t.at("utilization_pct").at("max").to_number<double>(), 40);
    EXPECT_DOUBLE_EQ(t.at("memory_used_bytes").at("p50").to_number<double>(), 2e9);
    // The idle baseline, before the sessions: GPU 0's counter over it (recomputed from the file
    // as above) plus GPU 1's constant 100 W; what is above it is the rest.
    const double b0 = t.at("idle_baseline").at("start_s").to_number<double>();
    const double b1 = t.at("idle_baseline").at("end_s").to_number<double>();
    ASSERT_GT(b1, b0);
    EXPECT_LE(b1, t0);
    EXPECT_LE(counter.front().first, b0);
    const double idle_w = t.at("idle_baseline").at("power_w").to_number<double>();
    EXPECT_NEAR(idle_w, (counter_at(b1) - counter_at(b0)) / 1e3 / (b1 - b0) + 100, 1e-6);
    EXPECT_NEAR(t.at("energy_above_idle_j").to_number<double>(), energy - idle_w * span, 1e-6);
    // Joules per session-second of input: the packets sent, 80 ms each.
    const double input_s = summary.at("pacing").at("packets").at("sent").to_number<double>() * 0.08;
    EXPECT_DOUBLE_EQ(t.at("input_audio_s").to_number<double>(), input_s);
    ASSERT_GT(input_s, 0);
    EXPECT_DOUBLE_EQ(t.at("j_per_input_audio_s").to_number<double>(),
                     t.at("energy_j").to_number<double>() / input_s);
    EXPECT_TRUE(t.at("j_per_output_audio_s").is_null());
    // Every sample is a line of telemetry.jsonl.
    EXPECT_EQ(count_lines(out / "telemetry.jsonl"), t.at("samples").to_number<std::uint64_t>());
    EXPECT_NE(r.out.find("  telemetry  "), std::string::npos) << r.out;
}

// `pacer serve`: every run of a level gets its own window (its common start to its last
// session's end), the sweep its whole one, and a capacity search the energy per session-second
// of input at the capacity level. One GPU without a counter at a constant 100 W: the energy of
// any window is exactly 100 W x its length.
TEST(TelemetryE2E, ServeGivesEachRunItsWindowAndTheCapacityItsEnergy) {
    // GPU 1 has a counter (250 W): each window's energy is recomputed from telemetry.jsonl.
    const fake_gpus gpus("devices 2\npower_mw 0 const 100000\nenergy_mj 1 linear 5000 250000\n");
    // 100 ms a unit per extra open session: one session meets the SLO, two miss it.
    mock_process mock({"--per-session-cost-ms", "100"}, "native-mock");
    const auto out = gpus.dir.path() / "serve";
    const auto r = run_cli(reading_gpus({"serve",
                                         "--url",
                                         mock.url(),
                                         "-d",
                                         "1s",
                                         "--find-capacity",
                                         "--slo",
                                         "unit-miss-rate=0.1",
                                         "--max-level",
                                         "2",
                                         "--settle",
                                         "0s",
                                         "--verify-repeats",
                                         "1",
                                         "--loop-lag-limit-ms",
                                         "1000",
                                         "--send-lateness-limit-ms",
                                         "1000",
                                         "--progress",
                                         "never",
                                         "--no-report",
                                         "-o",
                                         out.string()},
                                        "20ms", "200ms"),
                           gpus.env);
    ASSERT_TRUE(fs::exists(out / "summary.json")) << r.out << r.err;
    const auto summary = read_json(out / "summary.json");
    double sum = 0;
    std::size_t met_at_capacity = 0;
    const auto capacity = summary.at("capacity").at("sessions").to_number<std::uint64_t>();
    ASSERT_EQ(capacity, 1u) << r.out;
    const file_counter gpu1(out / "telemetry.jsonl", "nvml:1");
    for (const auto& run : summary.at("runs").as_array()) {
        const auto& t = run.at("telemetry").as_object();
        EXPECT_DOUBLE_EQ(t.at("window").at("start_s").to_number<double>(),
                         run.at("common_start_s").to_number<double>());
        const double span = t.at("window").at("duration_s").to_number<double>();
        ASSERT_GT(span, 0);
        const auto& sources = t.at("sources").as_array();
        ASSERT_EQ(sources.size(), 2u);
        EXPECT_NEAR(sources[0].at("energy_j").to_number<double>(), 100 * span, 1e-9);
        // The window was cut while sampling went on: the file has a sample of GPU 1 after its
        // end, and the recomputation from the file is the summary's figure.
        const double t0 = t.at("window").at("start_s").to_number<double>();
        const double t1 = t.at("window").at("end_s").to_number<double>();
        EXPECT_NEAR(sources[1].at("energy_j").to_number<double>(), gpu1.energy_j(t0, t1), 1e-6);
        EXPECT_NEAR(t.at("energy_j").to_number<double>(),
                    100 * span + sources[1].at("energy_j").to_number<double>(), 1e-9);
        const auto c = run.at("concurrency").to_number<std::uint64_t>();
        EXPECT_DOUBLE_EQ(t.at("input_audio_s").to_number<double>(), static_cast<double>(c));
        // J per second of output audio: the seconds of audio the admitted sessions received.
        const double output_s = t.at("output_audio_s").to_number<double>();
        EXPECT_GT(output_s, 0);
        EXPECT_DOUBLE_EQ(t.at("j_per_output_audio_s").to_number<double>(),
                         t.at("energy_j").to_number<double>() / output_s);
        if (c == capacity && run.at("slo").at("met").as_bool()) {
            sum += t.at("j_per_input_audio_s").to_number<double>();
            ++met_at_capacity;
        }
    }
    ASSERT_GT(met_at_capacity, 0u);
    EXPECT_NEAR(summary.at("capacity").at("energy_j_per_session_second").to_number<double>(),
                sum / static_cast<double>(met_at_capacity), 1e-12);
    const auto& whole = summary.at("telemetry").as_object();
    EXPECT_NEAR(whole.at("sources").as_array().at(0).at("energy_j").to_number<double>(),
                100 * whole.at("window").at("duration_s").to_number<double>(), 1e-9);
    EXPECT_GT(count_lines(out / "telemetry.jsonl"), 0u);
    EXPECT_NE(r.out.find("J per session-second of input at the capacity level"), std::string::npos)
        << r.out;
}

// `pacer http`: the window runs from the schedule's origin to the last request's end, and the
// energy is divided by the requests that completed without error. One GPU without a counter
// at a constant 100 W: the energy is exactly 100 W x the window.
// `pacer http --find-capacity` with telemetry: one telemetry.jsonl for the search, and each
// probe's summary.json the energy of its own window (100 W constant: 100 J a second), the
// windows one after another.
TEST(TelemetryE2E, HttpCapacitySearchGivesEachProbeTheEnergyOfItsWindow) {
    const fake_gpus gpus("devices 1\npower_mw 0 const 100000\n");
    // One slot and a 30 ms first token: a rate far above 30/s gets 503s, so the search stops.
    mock_process mock({"--ttft-ms", "30", "--itl-ms", "1", "--max-concurrency", "1"}, "llm-mock");
    const auto out = gpus.dir.path() / "search";
    const auto r = run_cli(reading_gpus({"http",
                                         "--base-url",
                                         mock.http_url(),
                                         "--model",
                                         "m",
                                         "--rate",
                                         "10",
                                         "--duration",
                                         "0.5s",
                                         "--output-len",
                                         "2",
                                         "--goodput",
                                         "e2el:5000",
                                         "--find-capacity",
                                         "--capacity-steps",
                                         "1",
                                         "--progress",
                                         "never",
                                         "--no-report",
                                         "-o",
                                         out.string()},
                                        "20ms", "100ms"),
                           gpus.env);
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    EXPECT_TRUE(fs::exists(out / "telemetry.jsonl"));
    const auto doc = read_json(out / "capacity.json");
    const auto& probes = doc.at("probes").as_array();
    ASSERT_GE(probes.size(), 2u) << r.out;
    double previous_end = 0;
    for (const auto& p : probes) {
        const auto folder = out / std::string(p.at("folder").as_string());
        const auto summary = read_json(folder / "summary.json");
        const auto& t = summary.at("telemetry").as_object();
        const auto& w = t.at("window").as_object();
        const double start = w.at("start_s").to_number<double>();
        const double span = w.at("duration_s").to_number<double>();
        ASSERT_GT(span, 0) << folder;
        EXPECT_NEAR(t.at("energy_j").to_number<double>(), 100 * span, 1e-6) << folder;
        EXPECT_GE(start, previous_end) << folder << ": its window starts before the last ended";
        previous_end = w.at("end_s").to_number<double>();
    }
}

TEST(TelemetryE2E, HttpGivesTheJoulesPerSuccessfulRequest) {
    const fake_gpus gpus("devices 1\npower_mw 0 const 100000\nutil_gpu 0 const 55\n");
    mock_process mock({"--ttft-ms", "2", "--itl-ms", "1"}, "llm-mock");
    const std::string base = mock.http_url();
    const auto out = gpus.dir.path() / "http";
    const auto r = run_cli(reading_gpus({"http", "--base-url", base, "--model", "m", "--rate", "50",
                                         "--requests", "8", "--output-len", "2", "--progress",
                                         "never", "--export", "csv", "-o", out.string()},
                                        "20ms", "100ms"),
                           gpus.env);
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto summary = read_json(out / "summary.json");
    const auto& t = summary.at("telemetry").as_object();
    const double span = t.at("window").at("duration_s").to_number<double>();
    ASSERT_GT(span, 0);
    EXPECT_NEAR(t.at("energy_j").to_number<double>(), 100 * span, 1e-9);
    const double completed = summary.at("completed").to_number<double>();
    ASSERT_GT(completed, 0);
    EXPECT_DOUBLE_EQ(t.at("requests").to_number<double>(), completed);
    EXPECT_DOUBLE_EQ(t.at("j_per_request").to_number<double>(),
                     t.at("energy_j").to_number<double>() / completed);
    EXPECT_TRUE(t.at("j_per_input_audio_s").is_null());
    EXPECT_NEAR(t.at("idle_baseline").at("power_w").to_number<double>(), 100, 1e-9);
    EXPECT_NE(r.out.find(fmt::format("  energy   {:.4g} J per successful request",
                                     t.at("j_per_request").to_number<double>())),
              std::string::npos)
        << r.out;
    EXPECT_EQ(count_lines(out / "telemetry.jsonl"), t.at("samples").to_number<std::uint64_t>());
    // The page plots the power; the tables have a row per sample.
    std::ifstream page(out / "report.html");
    const std::string html((std::istreambuf_iterator<char>(page)), {});
    EXPECT_NE(html.find("GPU power over time"), std::string::npos);
    EXPECT_EQ(count_lines(out / "tables-csv" / "telemetry.csv"),
              1 + t.at("samples").to_number<std::uint64_t>());
}

TEST(TelemetryE2E, AMissingNvmlLibraryIsOneLineAndExitTwoWithNothingWritten) {
    scratch_dir dir;
    const auto out = dir.path() / "run";
    const auto r =
        run_cli({"run", "-c", "1", "-d", "1s", "--gpu-telemetry", "nvml", "--nvml-library",
                 "/nonexistent/libnvidia-ml.so.1", "-o", out.string()});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_NE(r.err.find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    // A GPU index NVML does not have is refused the same way.
    cli_options o;
    const auto script = dir.path() / "script";
    std::ofstream(script) << "devices 1\n";
    o.env["PACER_FAKE_NVML_SCRIPT"] = script.string();
    const auto bad = run_cli({"run", "-c", "1", "-d", "1s", "--gpu-telemetry", "nvml:3",
                              "--nvml-library", fake_nvml_library().string(), "-o", out.string()},
                             o);
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_NE(bad.err.find("there is no GPU 3"), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(out));
    // Issue 39: a dry run checks what the run checks: the library loads and has the GPUs
    // (it was exit 0 with the missing library, where the run is exit 2).
    const auto dry_missing =
        run_cli({"run", "-c", "1", "-d", "1s", "--gpu-telemetry", "nvml", "--nvml-library",
                 "/nonexistent/libnvidia-ml.so.1", "--dry-run", "-o", out.string()});
    EXPECT_EQ(dry_missing.exit_code, 2) << dry_missing.out << dry_missing.err;
    ASSERT_EQ(dry_missing.err_lines().size(), 1u) << dry_missing.err;
    EXPECT_EQ(dry_missing.err_lines()[0], r.err_lines()[0]); // the run's own line
    EXPECT_EQ(dry_missing.out, "");
    const auto dry_gpu =
        run_cli({"run", "-c", "1", "-d", "1s", "--gpu-telemetry", "nvml:3", "--nvml-library",
                 fake_nvml_library().string(), "--dry-run", "-o", out.string()},
                o);
    EXPECT_EQ(dry_gpu.exit_code, 2) << dry_gpu.err;
    EXPECT_EQ(dry_gpu.err, bad.err);
    std::ofstream(script) << "devices 2\n";
    const auto dry = run_cli({"run", "-c", "1", "-d", "1s", "--gpu-telemetry", "nvml:0,1",
                              "--nvml-library", fake_nvml_library().string(), "--metrics-listen",
                              "127.0.0.1:0", "--dry-run", "-o", out.string()},
                             o);
    EXPECT_EQ(dry.exit_code, 0) << dry.err;
    EXPECT_NE(dry.out.find("telemetry  nvml from " + fake_nvml_library().string() + ": GPU 0"),
              std::string::npos)
        << dry.out;
    EXPECT_NE(dry.out.find("telemetry  live counters served at http://127.0.0.1:0/metrics"),
              std::string::npos)
        << dry.out;
    for (const std::vector<std::string>& wrong :
         {std::vector<std::string>{"--gpu-telemetry", "dcgm"},
          {"--gpu-telemetry", "nvml", "--telemetry-interval", "0s"},
          {"--idle-baseline", "5s"},
          {"--server-metrics", "ws://127.0.0.1:9/metrics"},
          {"--metrics-listen", "localhost"},
          {"--metrics-listen", "127.0.0.1:0", "--processes", "2"},
          {"--metrics-linger", "5s"},
          {"--metrics-listen", "127.0.0.1:0", "--metrics-linger", "soon"}}) {
        std::vector<std::string> args{"run", "-c",        "1",  "-d",
                                      "1s",  "--dry-run", "-o", out.string()};
        args.insert(args.end(), wrong.begin(), wrong.end());
        const auto w = run_cli(args);
        EXPECT_EQ(w.exit_code, 2) << wrong[0] << ": " << w.err;
        EXPECT_EQ(w.err_lines().size(), 1u) << w.err;
    }
    EXPECT_FALSE(fs::exists(out));
}

TEST(TelemetryE2E, TheParentOfProcessesMeasuresTheWorkersWindow) {
    const fake_gpus gpus("power_mw 0 const 100000\n"); // 100 W, no energy counter
    const auto out = gpus.dir.path() / "run";
    const auto r = run_cli(reading_gpus({"run", "-c", "1", "--processes", "2", "-d", "1s",
                                         "--progress", "never", "--no-report", "-o", out.string()},
                                        "50ms", "0"),
                           gpus.env);
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    const auto summary = read_json(out / "summary.json");
    const auto& t = summary.at("telemetry").as_object();
    const double span = t.at("window").at("duration_s").to_number<double>();
    ASSERT_GT(span, 0);
    EXPECT_EQ(t.at("sources").as_array()[0].at("energy_method").as_string(), "power_integration");
    EXPECT_NEAR(t.at("energy_j").to_number<double>(), 100 * span, 1e-9);
    // The input is the pooled packets of both workers.
    EXPECT_DOUBLE_EQ(t.at("input_audio_s").to_number<double>(),
                     summary.at("pacing").at("packets").at("sent").to_number<double>() * 0.08);
    // One sampler, in the parent: the workers record none.
    EXPECT_EQ(count_lines(out / "telemetry.jsonl"), t.at("samples").to_number<std::uint64_t>());
    EXPECT_FALSE(fs::exists(out / "worker-0" / "telemetry.jsonl"));
    EXPECT_FALSE(read_json(out / "worker-0" / "summary.json").as_object().contains("telemetry"));
}

TEST(TelemetryE2E, ServerMetricsAreScrapedAndEachMalformedLineWarnsOnce) {
    scratch_dir dir;
    const auto page = dir.path() / "metrics.txt";
    std::ofstream(page)
        << "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption (in mJ).\n"
           "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
           "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-1\"} 900000\n"
           "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
           "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\"} 212.5\n"
           "# a comment\n"
           "# TYPE vllm:num_requests_running gauge\n"
           "vllm:num_requests_running{model_name=\"m\"} 3\n"
           "# TYPE vllm:gpu_cache_usage_perc gauge\n"
           "vllm:gpu_cache_usage_perc{model_name=\"m\"} NaN\n"
           "malformed line here\n"
           "also{broken=\"1\" 2\n"
           "# TYPE vllm:request_success_total counter\n"
           "vllm:request_success_total{finished_reason=\"stop\"} +Inf\n";
    child fixture({metrics_fixture_program().string(), page.string()});
    const auto line = fixture.read_line();
    ASSERT_EQ(line.rfind("listening on 127.0.0.1:", 0), 0u) << line;
    const std::string url = "http://127.0.0.1:" + line.substr(line.rfind(':') + 1) + "/metrics";
    const auto out = dir.path() / "run";
    const auto r = run_cli({"run", "-c", "2", "-d", "1s", "--progress", "never", "--no-report",
                            "--server-metrics", url, "--telemetry-interval", "50ms",
                            "--idle-baseline", "0", "-o", out.string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out << r.err;
    // One warning per malformed line, however many scrapes saw it.
    EXPECT_EQ(count(r.err, "pacer: warning: --server-metrics"), 2u) << r.err;
    EXPECT_EQ(count(r.err, "line 11: "), 1u) << r.err;
    EXPECT_EQ(count(r.err, "line 12: "), 1u) << r.err;
    const auto summary = read_json(out / "summary.json");
    const auto& t = summary.at("telemetry").as_object();
    EXPECT_EQ(t.at("energy_from").as_string(), "server_metrics");
    const auto scrapes = t.at("server_metrics").at("scrapes").to_number<std::uint64_t>();
    EXPECT_GE(scrapes, 2u); // at least the first and the last
    EXPECT_EQ(t.at("server_metrics").at("failed").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(t.at("server_metrics").at("distinct_warnings").to_number<std::uint64_t>(), 2u);
    // A counter that does not move: no energy; the power is the gauge's.
    EXPECT_DOUBLE_EQ(t.at("energy_j").to_number<double>(), 0);
    EXPECT_DOUBLE_EQ(t.at("peak_power_w").to_number<double>(), 212.5);
    EXPECT_TRUE(t.at("idle_baseline").is_null());
    // The gauges are in every line of telemetry.jsonl; NaN is written as null.
    const auto lines = read_jsonl(out / "telemetry.jsonl");
    ASSERT_EQ(lines.size(), scrapes);
    const auto& g = lines.front().at("gauges").as_object();
    EXPECT_DOUBLE_EQ(g.at("vllm:num_requests_running{model_name=\"m\"}").to_number<double>(), 3);
    EXPECT_TRUE(g.at("vllm:gpu_cache_usage_perc{model_name=\"m\"}").is_null());
    EXPECT_FALSE(g.contains("vllm:request_success_total{finished_reason=\"stop\"}"));
}

// GET `path` from 127.0.0.1:`port`: the body of a 200 answer, "" otherwise.
std::string scrape(const std::string& port, const std::string& path) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<unsigned short>(std::stoi(port)));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return {};
    }
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    (void)!::write(fd, req.data(), req.size());
    std::string all;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
        all.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    if (all.rfind("HTTP/1.1 200", 0) != 0)
        return {};
    return all.substr(all.find("\r\n\r\n") + 4);
}

TEST(TelemetryE2E, MetricsListenServesTheLiveCountersDuringTheRun) {
    temp_dir t;
    child run({PACER_BINARY, "run", "-c", "2", "-d", "3s", "--progress", "never", "--no-report",
               "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "100s", "-o",
               (t / "run").string()});
    std::string port;
    for (std::string line; port.empty() && !(line = run.read_line()).empty();) {
        const auto at = line.find("serving the live counters at http://127.0.0.1:");
        if (at != std::string::npos) {
            const auto colon = line.find(':', line.find("127.0.0.1"));
            port = line.substr(colon + 1, line.find('/', colon) - colon - 1);
        }
    }
    ASSERT_FALSE(port.empty()) << "no --metrics-listen line";
    const std::string body = scrape(port, "/metrics");
    const auto e = telemetry::parse_exposition(body);
    EXPECT_TRUE(e.warnings.empty()) << body;
    std::set<std::string> names;
    for (const auto& s : e.samples)
        names.insert(s.name);
    for (const char* name :
         {"pacer_sessions_started_total", "pacer_sessions_active", "pacer_sessions_done_total",
          "pacer_sessions_failed_total", "pacer_packets_sent_total", "pacer_packets_late_total",
          "pacer_errors_total", "pacer_loop_lag_max_seconds"})
        EXPECT_TRUE(names.count(name)) << name << " missing from:\n" << body;
    EXPECT_EQ(e.type_of("pacer_packets_sent_total"), telemetry::metric_type::counter);
    // Issue 39: it was scraped, so the final totals stay served until scraped once more (the
    // line says so); the run then ends. A scrape that came after the end saw them already.
    std::string final_body = body;
    for (std::string line; !(line = run.read_line()).empty();)
        if (line.find("pacer: the final totals stay at http://127.0.0.1:" + port) == 0)
            final_body = scrape(port, "/metrics");
    std::map<std::string, double> total;
    for (const auto& x : telemetry::parse_exposition(final_body).samples)
        total[x.name] = x.value;
    EXPECT_EQ(total["pacer_sessions_done_total"] + total["pacer_sessions_failed_total"], 2)
        << final_body;
    EXPECT_EQ(total["pacer_sessions_active"], 0) << final_body;
    EXPECT_TRUE(finished(run.wait()));
}

// `pacer serve --warm-until-stable`: a GPU at a constant 100 W and 50 °C is steady over a
// 200 ms window after the first warm-up run of 1 s; the level follows, and summary.json says
// how long the wait took.
TEST(TelemetryE2E, ServeWarmsUntilTheGpuIsSteady) {
    const fake_gpus gpus("devices 1\npower_mw 0 const 100000\ntemperature 0 const 50\n");
    const auto out = gpus.dir.path() / "serve";
    const auto r = run_cli(reading_gpus({"serve", "-c", "1", "-d", "1s", "--progress", "never",
                                         "--no-report", "--warm-until-stable", "--stable-window",
                                         "200ms", "--stable-max-wait", "10s", "-o", out.string()},
                                        "20ms", "0"),
                           gpus.env);
    ASSERT_TRUE(fs::exists(out / "summary.json")) << r.out << r.err;
    const auto summary = read_json(out / "summary.json");
    const auto& w = summary.at("warm_until_stable").as_object();
    EXPECT_TRUE(w.at("stable").as_bool()) << r.out;
    EXPECT_EQ(w.at("warmup_runs").to_number<std::uint64_t>(), 1u);
    EXPECT_GE(w.at("waited_s").to_number<double>(), 0.2); // at least the window
    EXPECT_DOUBLE_EQ(w.at("rule").at("window_s").to_number<double>(), 0.2);
    EXPECT_DOUBLE_EQ(w.at("rule").at("power_fraction").to_number<double>(), 0.03);
    ASSERT_EQ(w.at("sources").as_array().size(), 1u);
    EXPECT_DOUBLE_EQ(w.at("sources").as_array()[0].at("power_spread_fraction").to_number<double>(),
                     0);
    EXPECT_TRUE(fs::exists(out / "warmup-1" / "summary.json"));
    EXPECT_EQ(summary.at("levels").as_array().size(), 1u);
    EXPECT_NE(r.out.find("warm       steady after"), std::string::npos) << r.out;
    // A dry run says the rule (defaults but the window).
    const auto dry =
        run_cli({"serve", "-c", "2", "-d", "1s", "--gpu-telemetry", "nvml", "--nvml-library",
                 fake_nvml_library().string(), "--warm-until-stable", "--stable-window", "45s",
                 "--dry-run", "-o", (gpus.dir.path() / "dry").string()},
                gpus.env);
    EXPECT_EQ(dry.exit_code, 0) << dry.err;
    EXPECT_NE(dry.out.find("warm       back-to-back warm-ups of 2 session(s) until every GPU's "
                           "power is within 3 % and its temperature within 1 °C over 45 s (at "
                           "most 600 s)"),
              std::string::npos)
        << dry.out;
    // Without --gpu-telemetry, or a rule without the flag: one line, exit 2.
    for (const std::vector<std::string>& wrong :
         {std::vector<std::string>{"--warm-until-stable"}, {"--stable-window", "10s"}}) {
        std::vector<std::string> args{"serve", "-c",        "1",  "-d",
                                      "1s",    "--dry-run", "-o", (gpus.dir.path() / "x").string()};
        args.insert(args.end(), wrong.begin(), wrong.end());
        const auto bad = run_cli(args);
        EXPECT_EQ(bad.exit_code, 2) << wrong[0] << ": " << bad.err;
        EXPECT_EQ(bad.err_lines().size(), 1u) << bad.err;
    }
}

// The port of the "serving the live counters at http://127.0.0.1:PORT/metrics" line among the
// child's first lines; "" when it never says one.
std::string listened_port(child& c) {
    for (std::string line; !(line = c.read_line()).empty();) {
        const auto at = line.find("serving the live counters at http://127.0.0.1:");
        if (at != std::string::npos) {
            const auto colon = line.find(':', line.find("127.0.0.1"));
            return line.substr(colon + 1, line.find('/', colon) - colon - 1);
        }
    }
    return "";
}

// `pacer serve --metrics-listen`: the running level's counters and its concurrency, scraped
// while the sweep runs (one level of two sessions against the built-in mock, 2 s of input).
TEST(TelemetryE2E, ServeMetricsListenServesTheRunningLevel) {
    temp_dir t;
    child serve({PACER_BINARY, "serve", "--concurrencies", "2", "-d", "2s", "--settle", "0s",
                 "--progress", "never", "--no-report", "--metrics-listen", "127.0.0.1:0",
                 "--metrics-linger", "0", "-o", (t / "serve").string()});
    const std::string port = listened_port(serve);
    ASSERT_FALSE(port.empty()) << "no --metrics-listen line";
    // The level gauge appears once the level starts: poll, bounded by the sweep's end (the
    // listener closes then and a scrape answers nothing).
    std::string body;
    for (auto s = scrape(port, "/metrics"); !s.empty(); s = scrape(port, "/metrics")) {
        body = s;
        if (body.find("pacer_level_concurrency") != std::string::npos)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20)); // poll interval, not a sync
    }
    const auto e = telemetry::parse_exposition(body);
    EXPECT_TRUE(e.warnings.empty()) << body;
    std::map<std::string, double> value;
    for (const auto& x : e.samples)
        value[x.name] = x.value;
    ASSERT_TRUE(value.count("pacer_level_concurrency")) << body;
    EXPECT_EQ(value["pacer_level_concurrency"], 2);
    for (const char* name : {"pacer_sessions_started_total", "pacer_sessions_active",
                             "pacer_packets_sent_total", "pacer_loop_lag_max_seconds"})
        EXPECT_TRUE(value.count(name)) << name << " missing from:\n" << body;
    EXPECT_LE(value["pacer_sessions_started_total"], 2);
    EXPECT_TRUE(finished(serve.wait()));
}

// `pacer http --metrics-listen`: the requests' totals, scraped while 20 requests at 20/s go to
// the LLM mock (1 s), polled until a request has been sent.
TEST(TelemetryE2E, HttpMetricsListenServesTheRequestsCounters) {
    temp_dir t;
    mock_process mock({"--ttft-ms", "2", "--itl-ms", "1"}, "llm-mock");
    const std::string base = mock.http_url();
    child http({PACER_BINARY,
                "http",
                "--base-url",
                base,
                "--model",
                "m",
                "--rate",
                "20",
                "--requests",
                "20",
                "--output-len",
                "2",
                "--progress",
                "never",
                "--no-report",
                "--metrics-listen",
                "127.0.0.1:0",
                "--metrics-linger",
                "0",
                "-o",
                (t / "http").string()});
    const std::string port = listened_port(http);
    ASSERT_FALSE(port.empty()) << "no --metrics-listen line";
    std::string body;
    for (auto s = scrape(port, "/metrics"); !s.empty(); s = scrape(port, "/metrics")) {
        body = s;
        const auto e = telemetry::parse_exposition(body);
        const bool sent = std::any_of(e.samples.begin(), e.samples.end(), [](const auto& x) {
            return x.name == "pacer_http_requests_dispatched_total" && x.value > 0;
        });
        if (sent)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20)); // poll interval, not a sync
    }
    const auto e = telemetry::parse_exposition(body);
    EXPECT_TRUE(e.warnings.empty()) << body;
    std::map<std::string, double> value;
    for (const auto& x : e.samples)
        value[x.name] = x.value;
    for (const char* name : {"pacer_http_requests_scheduled", "pacer_http_requests_due",
                             "pacer_http_requests_dispatched_total",
                             "pacer_http_requests_done_total", "pacer_http_requests_failed_total",
                             "pacer_http_requests_in_flight", "pacer_http_offered_rate"})
        EXPECT_TRUE(value.count(name)) << name << " missing from:\n" << body;
    EXPECT_EQ(value["pacer_http_requests_scheduled"], 20);
    EXPECT_EQ(value["pacer_http_offered_rate"], 20);
    EXPECT_TRUE(finished(http.wait()));
}

} // namespace
} // namespace pacer::test

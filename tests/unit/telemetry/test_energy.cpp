// The energy of a window from samples (docs/telemetry.md's formulas), on synthetic samples with
// known times: counter differences, interpolation at the edges, a wrap, a reset, and power
// integration for a GPU without the counter.

#include <pacer/telemetry/energy.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace pacer::telemetry {
namespace {

sample at(double t, std::optional<std::uint64_t> mj, std::optional<double> w,
          std::string source = "nvml:0") {
    sample s;
    s.monotonic_s = t;
    s.realtime_s = 1e9 + t;
    s.source = std::move(source);
    s.energy_mj = mj;
    s.power_w = w;
    return s;
}

TEST(TelemetryEnergy, CounterDifferenceIsExactAtSamplesAndInterpolatedBetween) {
    const std::vector<sample> s{at(10, 1000, 250), at(11, 1300, 300), at(12, 1700, 400),
                                at(13, 2000, 300)};
    auto w = summarize_window(s, 11, 13);
    EXPECT_EQ(w.energy_method, "counter");
    EXPECT_DOUBLE_EQ(*w.energy_j, 0.7);
    EXPECT_DOUBLE_EQ(*w.mean_power_w, 0.35);
    EXPECT_EQ(w.samples, 3u);
    EXPECT_DOUBLE_EQ(*w.peak_power_w, 400);
    EXPECT_DOUBLE_EQ(w.covered_s, 2);
    // Edges between samples: C(10.5) = 1150, C(12.5) = 1850.
    w = summarize_window(s, 10.5, 12.5);
    EXPECT_DOUBLE_EQ(*w.energy_j, 0.7);
    // Beyond the samples the counter is flat: only the covered part counts.
    w = summarize_window(s, 12, 20);
    EXPECT_DOUBLE_EQ(*w.energy_j, 0.3);
    EXPECT_DOUBLE_EQ(w.covered_s, 1);
}

TEST(TelemetryEnergy, AWrapOfTheCounterIsAddedBack) {
    const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
    const std::vector<sample> s{at(0, top - 999, std::nullopt), at(1, 500, std::nullopt),
                                at(2, 1500, std::nullopt)};
    const auto w = summarize_window(s, 0, 2);
    EXPECT_EQ(w.counter_wraps, 1u);
    EXPECT_EQ(w.counter_resets, 0u);
    EXPECT_DOUBLE_EQ(*w.energy_j, 2.5); // 1000 + 500 to the wrap and past it, then 1000
}

TEST(TelemetryEnergy, AResetCountsTheIntervalsPowerInstead) {
    // The driver restarted between t=1 and t=2: the counter went from 1e9 mJ back to 100.
    const std::vector<sample> s{at(0, 999'999'000, 200), at(1, 1'000'000'000, 200), at(2, 100, 200),
                                at(3, 300, 200)};
    const auto w = summarize_window(s, 0, 3);
    EXPECT_EQ(w.counter_resets, 1u);
    EXPECT_EQ(w.counter_wraps, 0u);
    EXPECT_DOUBLE_EQ(*w.energy_j, 1.0 + 200.0 + 0.2);
}

TEST(TelemetryEnergy, WithoutTheCounterPowerIsIntegratedByTrapezoids) {
    const std::vector<sample> s{at(0, std::nullopt, 100), at(1, std::nullopt, 200),
                                at(3, std::nullopt, 300)};
    auto w = summarize_window(s, 0, 3);
    EXPECT_EQ(w.energy_method, "power_integration");
    EXPECT_DOUBLE_EQ(*w.energy_j, 150 + 500);
    // Edges interpolated: P(0.5) = 150, P(2) = 250.
    w = summarize_window(s, 0.5, 2);
    EXPECT_DOUBLE_EQ(*w.energy_j, (150 + 200) / 2.0 * 0.5 + (200 + 250) / 2.0 * 1);
    EXPECT_DOUBLE_EQ(*w.mean_power_w, *w.energy_j / 1.5);
}

TEST(TelemetryEnergy, FailedReadsAreSkippedAndNothingGivesNoEnergy) {
    auto bad = at(1, 99999, 999);
    bad.error = "nvmlDeviceGetHandleByIndex: Unknown Error";
    const std::vector<sample> s{at(0, 0, 100), bad, at(2, 2000, 100)};
    EXPECT_DOUBLE_EQ(*summarize_window(s, 0, 2).energy_j, 2.0);
    const std::vector<sample> none{at(0, std::nullopt, std::nullopt)};
    const auto w = summarize_window(none, 0, 1);
    EXPECT_FALSE(w.energy_j);
    EXPECT_EQ(w.energy_method, "");
}

TEST(TelemetryEnergy, UtilisationAndMemoryArePercentilesOfTheSamplesInside) {
    std::vector<sample> s;
    for (int i = 0; i < 5; ++i) {
        auto x = at(i, 1000 * i, 100);
        x.utilization_pct = 10.0 * i;
        x.memory_used_bytes = 1e9 + i;
        x.temperature_c = 50 + i;
        s.push_back(x);
    }
    const auto w = summarize_window(s, 1, 3); // samples 1, 2, 3
    EXPECT_EQ(w.samples, 3u);
    EXPECT_DOUBLE_EQ(*w.utilization_p50, 20);
    EXPECT_DOUBLE_EQ(*w.utilization_max, 30);
    EXPECT_DOUBLE_EQ(*w.memory_used_p50, 1e9 + 2);
    EXPECT_DOUBLE_EQ(*w.temperature_max_c, 53);
}

TEST(TelemetryEnergy, TheSummaryTotalsTheGpusSubtractsTheIdleAndDividesByTheAudio) {
    std::vector<sample> s;
    for (int i = 0; i <= 10; ++i) {
        s.push_back(at(i, 100'000 * i, 100, "nvml:0")); // 100 W
        s.push_back(at(i, 300'000 * i, 300, "nvml:1")); // 300 W
        s.push_back(at(i, 999'000 * i, 999, "server")); // the same GPUs seen by DCGM
    }
    const auto idle = measure_idle(s, 0, 2);
    ASSERT_EQ(idle.power_w.size(), 3u);
    EXPECT_DOUBLE_EQ(idle.power_w[0].second, 100);
    window_denominators d;
    d.input_audio_s = 80;
    d.output_audio_s = 40;
    d.requests = 16;
    const auto o = window_json(s, 2, 10, d, &idle);
    EXPECT_EQ(o.at("energy_from").as_string(), "nvml");
    EXPECT_EQ(o.at("gpus").as_uint64(), 2u);
    EXPECT_DOUBLE_EQ(o.at("energy_j").as_double(), 8 * 400.0);
    EXPECT_DOUBLE_EQ(o.at("mean_power_w").as_double(), 400);
    EXPECT_DOUBLE_EQ(o.at("peak_power_w").as_double(), 400);
    EXPECT_DOUBLE_EQ(o.at("j_per_input_audio_s").as_double(), 8 * 400.0 / 80);
    EXPECT_DOUBLE_EQ(o.at("j_per_output_audio_s").as_double(), 8 * 400.0 / 40);
    EXPECT_DOUBLE_EQ(o.at("j_per_request").as_double(), 8 * 400.0 / 16);
    EXPECT_DOUBLE_EQ(o.at("output_audio_s").as_double(), 40);
    EXPECT_DOUBLE_EQ(o.at("requests").as_double(), 16);
    EXPECT_DOUBLE_EQ(o.at("idle_baseline").at("power_w").as_double(), 400);
    EXPECT_DOUBLE_EQ(o.at("energy_above_idle_j").as_double(), 0);
    EXPECT_EQ(o.at("sources").as_array().size(), 3u);
    // Without NVML the server's figures are the total.
    std::vector<sample> server_only;
    for (const auto& x : s)
        if (x.source == "server")
            server_only.push_back(x);
    const auto so = window_json(server_only, 0, 10, {}, nullptr);
    EXPECT_EQ(so.at("energy_from").as_string(), "server_metrics");
    EXPECT_DOUBLE_EQ(so.at("energy_j").as_double(), 9990);
    EXPECT_TRUE(so.at("idle_baseline").is_null());
    EXPECT_TRUE(so.at("j_per_input_audio_s").is_null());
    EXPECT_TRUE(so.at("j_per_output_audio_s").is_null());
    EXPECT_TRUE(so.at("j_per_request").is_null());
}

// Issue 39: an exporter reading two GPUs is two GPUs of the total, as NVML's two sources are.
TEST(TelemetryEnergy, TheServersTotalCountsTheExportersGpus) {
    std::vector<sample> s;
    for (int i = 0; i <= 4; ++i) {
        auto x = at(i, 400'000 * i, 400, "server");
        x.gpus = 2;
        s.push_back(x);
    }
    const auto o = window_json(s, 0, 4, {}, nullptr);
    EXPECT_EQ(o.at("energy_from").as_string(), "server_metrics");
    EXPECT_EQ(o.at("gpus").as_uint64(), 2u);
    EXPECT_EQ(o.at("sources").as_array()[0].as_object().at("gpus").as_uint64(), 2u);
    EXPECT_TRUE(o.at("error").is_null());
    // An exporter that labels no GPU is one.
    for (auto& x : s)
        x.gpus = 0;
    EXPECT_EQ(window_json(s, 0, 4, {}, nullptr).at("gpus").as_uint64(), 1u);
}

// Issue 39: a server whose every scrape failed gives no figure, and the summary says why.
TEST(TelemetryEnergy, ASourceNeverReadSaysWhyInTheSummary) {
    std::vector<sample> s;
    for (int i = 0; i <= 3; ++i) {
        auto x = at(i, std::nullopt, std::nullopt, "server");
        x.error = "cannot connect to 127.0.0.1:1: Connection refused";
        s.push_back(x);
    }
    const auto o = window_json(s, 0, 3, {}, nullptr);
    EXPECT_TRUE(o.at("energy_j").is_null());
    EXPECT_EQ(o.at("gpus").as_uint64(), 0u); // none was read
    EXPECT_TRUE(o.at("energy_from").is_null());
    EXPECT_EQ(o.at("error").as_string(),
              "no sample could be read (cannot connect to 127.0.0.1:1: Connection refused)");
    const auto& src = o.at("sources").as_array()[0].as_object();
    EXPECT_EQ(src.at("failed_reads").as_uint64(), 4u);
    EXPECT_EQ(src.at("last_error").as_string(), s[0].error);
    // One good read among the failures: figures, no error.
    s.push_back(at(1.5, std::nullopt, 100, "server"));
    const auto some = window_json(s, 0, 3, {}, nullptr);
    EXPECT_TRUE(some.at("error").is_null());
    EXPECT_EQ(some.at("sources").as_array()[0].as_object().at("failed_reads").as_uint64(), 4u);
}

} // namespace
} // namespace pacer::telemetry

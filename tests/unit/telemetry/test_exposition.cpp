// The Prometheus text format: what a scrape of DCGM exporter, vLLM or SGLang holds is read
// sample by sample; a malformed line costs one warning and nothing else.

#include <pacer/run/live_metrics.hpp>
#include <pacer/telemetry/exposition.hpp>
#include <pacer/telemetry/server_metrics.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

namespace pacer::telemetry {
namespace {

const metric_sample* find(const exposition& e, std::string_view name, std::string_view label = "",
                          std::string_view value = "") {
    for (const auto& s : e.samples) {
        if (s.name != name)
            continue;
        if (label.empty())
            return &s;
        for (const auto& [k, v] : s.labels)
            if (k == label && v == value)
                return &s;
    }
    return nullptr;
}

TEST(Exposition, ReadsCountersGaugesLabelsCommentsAndSpecialValues) {
    const auto e = parse_exposition(
        "# A comment that is neither HELP nor TYPE\n"
        "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy (in mJ).\n"
        "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-abc\"} 123456789\n"
        "# TYPE vllm:num_requests_running gauge\n"
        "vllm:num_requests_running{model_name=\"m\"} 7\n"
        "\n"
        "  # indented comment\n"
        "# TYPE g gauge\n"
        "g{path=\"a\\\\b\",quote=\"say \\\"hi\\\"\",nl=\"x\\ny\",} NaN 1700000000000\n"
        "g{path=\"up\"} +Inf\n"
        "g{path=\"down\"}\t-Inf\n"
        "untyped_one 1.5e3\r\n");
    EXPECT_TRUE(e.warnings.empty()) << e.warnings.front();
    ASSERT_EQ(e.samples.size(), 6u);
    const auto* energy = find(e, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "gpu", "0");
    ASSERT_NE(energy, nullptr);
    EXPECT_EQ(energy->value, 123456789.0);
    EXPECT_EQ(energy->labels.size(), 2u);
    EXPECT_EQ(e.type_of("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), metric_type::counter);
    EXPECT_EQ(e.help.at("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), "Total energy (in mJ).");
    EXPECT_EQ(e.type_of("vllm:num_requests_running"), metric_type::gauge);
    const auto* nan = find(e, "g", "path", "a\\b");
    ASSERT_NE(nan, nullptr);
    EXPECT_TRUE(std::isnan(nan->value));
    EXPECT_EQ(nan->timestamp_ms, 1700000000000);
    EXPECT_EQ(nan->labels[1].second, "say \"hi\"");
    EXPECT_EQ(nan->labels[2].second, "x\ny");
    EXPECT_EQ(find(e, "g", "path", "up")->value, INFINITY);
    EXPECT_EQ(find(e, "g", "path", "down")->value, -INFINITY);
    EXPECT_EQ(find(e, "untyped_one")->value, 1500.0);
    EXPECT_EQ(e.type_of("untyped_one"), metric_type::untyped);
}

TEST(Exposition, EachMalformedLineIsOneWarningAndTheRestIsUsed) {
    const auto e = parse_exposition("ok_before 1\n"
                                    "bad-name 2\n"              // 2: a '-' in the name
                                    "no_value{a=\"1\"}\n"       // 3
                                    "not_a_number abc\n"        // 4
                                    "unclosed{a=\"1\" 3\n"      // 5
                                    "# TYPE ok_after strange\n" // 6: unknown type
                                    "ts_bad 1 12x\n"            // 7
                                    "dup{a=\"1\",a=\"2\"} 1\n"  // 8
                                    "hex 0x10\n"                // 9
                                    "ok_after{le=\"+Inf\"} 2\n");
    ASSERT_EQ(e.samples.size(), 2u);
    EXPECT_EQ(e.samples[0].name, "ok_before");
    EXPECT_EQ(e.samples[1].name, "ok_after");
    ASSERT_EQ(e.warnings.size(), 8u);
    for (std::size_t i = 0; i < e.warnings.size(); ++i)
        EXPECT_EQ(e.warnings[i].rfind(fmt::format("line {}: ", i + 2), 0), 0u) << e.warnings[i];
    EXPECT_NE(e.warnings[0].find("'bad-name 2'"), std::string::npos) << e.warnings[0];
}

TEST(Exposition, HistogramAndSummarySeriesTakeTheirFamilysType) {
    const auto e = parse_exposition("# TYPE lat histogram\n"
                                    "lat_bucket{le=\"0.1\"} 3\nlat_sum 1.5\nlat_count 3\n"
                                    "# TYPE q summary\nq_count 2\n");
    EXPECT_EQ(e.type_of("lat_bucket"), metric_type::histogram);
    EXPECT_EQ(e.type_of("lat_count"), metric_type::histogram);
    EXPECT_EQ(e.type_of("q_count"), metric_type::summary);
    EXPECT_EQ(e.type_of("other_count"), metric_type::untyped);
}

TEST(Exposition, WhatIsWrittenReadsBackTheSame) {
    const metric_sample s{"pacer_x", {{"a", "q\"uo\\te\nnl"}, {"b", ""}}, 0.1, 42};
    const auto text = format_sample(s);
    const auto e = parse_exposition(text + "\n");
    ASSERT_TRUE(e.warnings.empty()) << text;
    ASSERT_EQ(e.samples.size(), 1u);
    EXPECT_EQ(e.samples[0].labels, s.labels);
    EXPECT_EQ(e.samples[0].value, 0.1);
    EXPECT_EQ(e.samples[0].timestamp_ms, 42);
    EXPECT_EQ(format_sample({"n", {}, NAN, {}}), "n NaN");
    EXPECT_EQ(format_sample({"n", {}, -INFINITY, {}}), "n -Inf");

    const auto page = format_exposition(
        {{"pacer_sessions_active", "Sessions\nactive", metric_type::gauge, {{{}, 3}}},
         {"pacer_packets_sent_total", "", metric_type::counter, {{{{"level", "8"}}, 1e6}}}});
    EXPECT_EQ(page, "# HELP pacer_sessions_active Sessions\\nactive\n"
                    "# TYPE pacer_sessions_active gauge\n"
                    "pacer_sessions_active 3\n"
                    "# TYPE pacer_packets_sent_total counter\n"
                    "pacer_packets_sent_total{level=\"8\"} 1000000\n");
    const auto back = parse_exposition(page);
    EXPECT_TRUE(back.warnings.empty());
    EXPECT_EQ(back.help.at("pacer_sessions_active"), "Sessions\nactive");
    EXPECT_EQ(back.type_of("pacer_packets_sent_total"), metric_type::counter);
}

TEST(ServerSample, SumsDcgmEnergyAndPowerOverGpusAndKeepsTheGauges) {
    const auto e = parse_exposition(
        "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 1000\n"
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"1\"} 2500\n"
        "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
        "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 100.5\n"
        "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 200\n"
        "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 40\nDCGM_FI_DEV_GPU_UTIL{gpu=\"1\"} 60\n"
        "# TYPE DCGM_FI_DEV_FB_USED gauge\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 1024\n"
        "# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc 0.25\n"
        "# TYPE vllm:request_success_total counter\nvllm:request_success_total 9\n");
    const auto s = server_sample(e, 12.5, 1700000000.5);
    EXPECT_EQ(s.source, "server");
    EXPECT_EQ(s.monotonic_s, 12.5);
    EXPECT_EQ(s.energy_mj, 3500u);
    EXPECT_EQ(s.power_w, 300.5);
    EXPECT_EQ(s.utilization_pct, 50.0);
    EXPECT_EQ(s.memory_used_bytes, 1024.0 * 1024 * 1024);
    // Every gauge, by series; counters (other than the energy) are not gauges.
    bool cache = false, counter = false;
    for (const auto& [name, v] : s.gauges) {
        cache = cache || (name == "vllm:gpu_cache_usage_perc" && v == 0.25);
        counter = counter || name.starts_with("vllm:request_success_total");
    }
    EXPECT_TRUE(cache);
    EXPECT_FALSE(counter);
    EXPECT_EQ(s.gauges.size(), 6u); // 2 power, 2 util, 1 memory, 1 cache
    EXPECT_EQ(s.gpus, 2u);          // gpu="0" and gpu="1" (issue 39: it said 1)
    // Without DCGM's fields the sample has no energy and no power.
    const auto none = server_sample(parse_exposition("x 1\n"), 1, 2);
    EXPECT_FALSE(none.energy_mj);
    EXPECT_FALSE(none.power_w);
    EXPECT_EQ(none.gpus, 0u);
    // dcgm-exporter labels each series with the GPU's UUID as well as its index: UUIDs count.
    const auto uuids = server_sample(
        parse_exposition("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"} 100\n"
                         "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-b\",Hostname=\"h2\"} 100\n"
                         "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\"} 5\n"),
        1, 2);
    EXPECT_EQ(uuids.gpus, 2u);
    EXPECT_NE(to_jsonl(uuids).find("\"gpus\":2"), std::string::npos) << to_jsonl(uuids);
    // Past long long's range the sum still converts; at 2^64 mJ and above it is no counter.
    const auto energy_of = [](const char* text) {
        return server_sample(parse_exposition(text), 1, 2).energy_mj;
    };
    EXPECT_EQ(energy_of("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION 1e19\n"), 10000000000000000000u);
    EXPECT_FALSE(energy_of("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION 2e19\n"));
    EXPECT_FALSE(energy_of("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION -5\n"));
}

TEST(LiveMetrics, TheProgressCountersReadBackFromTheirText) {
    session::live_counters c;
    c.started = 10;
    c.done = 4;
    c.failed = 1;
    c.packets_sent = 12345;
    c.late_packets = 2;
    c.errors = 3;
    c.loop_lag_max_ns = 1'500'000;
    const auto read = [](const std::string& text) {
        const auto e = parse_exposition(text);
        EXPECT_TRUE(e.warnings.empty()) << text;
        std::unordered_map<std::string, double> v;
        for (const auto& s : e.samples)
            v[s.name] = s.value;
        return std::pair(e, v);
    };
    const auto [e, v] = read(run::live_metrics_text(c));
    EXPECT_EQ(v.at("pacer_sessions_started_total"), 10);
    EXPECT_EQ(v.at("pacer_sessions_active"), 5);
    EXPECT_EQ(v.at("pacer_sessions_done_total"), 4);
    EXPECT_EQ(v.at("pacer_sessions_failed_total"), 1);
    EXPECT_EQ(v.at("pacer_packets_sent_total"), 12345);
    EXPECT_EQ(v.at("pacer_packets_late_total"), 2);
    EXPECT_EQ(v.at("pacer_errors_total"), 3);
    EXPECT_EQ(v.at("pacer_loop_lag_max_seconds"), 0.0015);
    EXPECT_EQ(e.type_of("pacer_packets_sent_total"), metric_type::counter);
    EXPECT_EQ(e.type_of("pacer_sessions_active"), metric_type::gauge);
    EXPECT_FALSE(v.contains("pacer_level_concurrency"));
    EXPECT_EQ(read(run::live_metrics_text(c, 64)).second.at("pacer_level_concurrency"), 64);
}

} // namespace
} // namespace pacer::telemetry

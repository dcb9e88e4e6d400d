// `pacer run --processes` pools its workers folded (read_run_part_folded): samples.json is
// streamed one session at a time into a histogram, so the parent's memory does not grow with
// the packets; the pooled figures equal `pacer merge`'s exact ones, the deviation quantiles
// within the histogram's stated precision.

#include <pacer/core/histogram.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/metrics/merge.hpp>
#include <pacer/metrics/samples_file.hpp>
#include <pacer/metrics/samples_stream.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace pacer::metrics;

struct folder : pacer::test::scratch_folder {
    folder() : scratch_folder("pacer-merge-folded") {}
};

void write(const fs::path& file, const std::string& text) {
    std::ofstream out(file);
    out << text;
}

// A worker's folder: `sessions` sessions of `packets` deviations each, one of them late.
void make_part(const fs::path& dir, std::uint64_t seed, int sessions, int packets) {
    fs::create_directories(dir);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> dev(0.0005, 0.004);
    std::string samples = R"({"schema_version":1,"unit":"seconds","sessions":[)";
    for (int i = 0; i < sessions; ++i) {
        samples += fmt::format(R"({}{{"index":{},"session_start_s":{:.9f},"deviation_s":[)",
                               i ? "," : "", i, 100.0 + 0.003 * i);
        for (int k = 0; k < packets; ++k)
            samples += fmt::format("{}{:.6f}", k ? "," : "",
                                   i == 1 && k == 5 ? 0.2 : dev(rng)); // one late packet
        samples += fmt::format(R"(],"handshake_s":{{"connect":{:.6f},"tls":0.000000,)"
                               R"("upgrade":0.001000,"session_update_ack":{}}}}})",
                               0.0001 * (i + 1), i % 2 ? "null" : "0.002000");
    }
    samples += "]}\n";
    write(dir / "samples.json", samples);
    const auto sent = std::to_string(sessions * packets);
    write(dir / "summary.json",
          R"({"pacing":{"sessions":{"requested":)" + std::to_string(sessions) + R"(,"admitted":)" +
              std::to_string(sessions) + R"(,"rejected":0,"complete":)" + std::to_string(sessions) +
              R"(},"packets":{"expected":)" + sent + R"(,"sent":)" + sent +
              R"(},"loop_lag_s":{"p99":0.001,"max":0.002,"over_80ms":0}},)"
              R"("clock":{"monotonic_s":100,"realtime_s":5000},"run_id":")" +
              dir.filename().string() + "\"}\n");
}

TEST(MergeFolded, StreamedReaderReadsWhatReadSamplesReads) {
    folder dir;
    make_part(dir.path, 1, 5, 40);
    write(dir.path / "ol.json",
          R"({"sessions":[{"deviation_s":[0.5,-1e-3],"extra":{"a":[1,"x"]},"handshake_s":null},)"
          R"({"index":7,"session_start_s":null,"deviation_s":[]}],"open_loop":{"start_s":1.5,)"
          R"("arrivals":[{"index":3,"offset_ns":-25,"dispatched_s":0.25,"completed_s":null,)"
          R"("cap_delay_s":0.0,"dropped":false,"failed":true}]}})");
    for (const char* name : {"samples.json", "ol.json"}) {
        const auto expected = read_samples(dir.path / name, samples_rules::strict);
        std::vector<samples_session> got;
        const auto arrivals = stream_samples(dir.path / name, samples_rules::strict,
                                             [&](samples_session&& s) { got.push_back(s); });
        ASSERT_EQ(got.size(), expected.sessions.size()) << name;
        for (std::size_t i = 0; i < got.size(); ++i) {
            const auto& a = got[i];
            const auto& b = expected.sessions[i];
            EXPECT_EQ(a.index, b.index);
            EXPECT_EQ(a.samples.session_start_s, b.samples.session_start_s);
            EXPECT_EQ(a.samples.deviation_s, b.samples.deviation_s);
            ASSERT_EQ(a.handshake.has_value(), b.handshake.has_value());
            if (a.handshake) {
                EXPECT_EQ(a.handshake->connect_s, b.handshake->connect_s);
                EXPECT_EQ(a.handshake->update_ack_s, b.handshake->update_ack_s);
            }
        }
        ASSERT_EQ(arrivals.has_value(), expected.arrivals.has_value()) << name;
        if (arrivals) {
            ASSERT_EQ(arrivals->size(), 1u);
            const auto& a = arrivals->front();
            const auto& b = expected.arrivals->front();
            EXPECT_EQ(a.index, b.index);
            EXPECT_EQ(a.offset_ns, b.offset_ns);
            EXPECT_EQ(a.dispatched_s, b.dispatched_s);
            EXPECT_EQ(a.completed_s, b.completed_s);
            EXPECT_EQ(a.failed, b.failed);
            EXPECT_EQ(a.dropped, b.dropped);
        }
    }
}

TEST(MergeFolded, StreamedReaderRefusesWhatStrictRulesRefuse) {
    folder dir;
    const std::pair<const char*, const char*> cases[] = {
        {"{\"sessions\":[{\"deviation_s\":[1,", "is not valid JSON"},
        {"{\"runs\":[]}", "has no sessions array"},
        {"[1,2]", "has no sessions array"},
        {"{\"sessions\":[{\"index\":0}]}", "is malformed"},
        {"{\"sessions\":[{\"deviation_s\":[1,\"x\"]}]}", "is malformed"},
        {"{\"sessions\":[{\"deviation_s\":[],\"handshake_s\":{\"connect\":1}}]}", "is malformed"},
        {"{\"sessions\":[3]}", "is malformed"},
    };
    for (const auto& [text, why] : cases) {
        write(dir.path / "samples.json", text);
        EXPECT_THROW(read_samples(dir.path / "samples.json", samples_rules::strict),
                     std::runtime_error)
            << text;
        try {
            stream_samples(dir.path / "samples.json", samples_rules::strict,
                           [](samples_session&&) {});
            ADD_FAILURE() << "accepted " << text;
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(
        stream_samples(dir.path / "missing.json", samples_rules::strict, [](samples_session&&) {}),
        std::runtime_error);
}

TEST(MergeFolded, PooledSummaryIsTheExactMergeWithinTheHistogramsBound) {
    folder dir;
    make_part(dir.path / "worker-0", 11, 8, 700);
    make_part(dir.path / "worker-1", 12, 8, 650);
    const std::vector<run_part> exact{read_run_part(dir.path / "worker-0"),
                                      read_run_part(dir.path / "worker-1")};
    const std::vector<run_part> folded{read_run_part_folded(dir.path / "worker-0"),
                                       read_run_part_folded(dir.path / "worker-1")};
    for (const auto& p : folded) {
        EXPECT_TRUE(p.sessions.empty()) << "no per-packet container";
        ASSERT_TRUE(p.folded);
        EXPECT_EQ(p.handshakes.size(), 8u);
    }
    const auto a = merge_parts(exact);
    const auto b = merge_parts(folded);
    const auto& pa = a.at("pacing").as_object();
    const auto& pb = b.at("pacing").as_object();
    EXPECT_FALSE(pa.contains("quantile_precision")) << "pacer merge stays exact";
    ASSERT_TRUE(pb.contains("quantile_precision"));
    for (const char* key : {"sessions", "packets", "peak_overlapping_input_streams"})
        EXPECT_EQ(pa.at(key), pb.at(key)) << key;
    EXPECT_EQ(pb.at("packets").at("late").as_uint64(), 2u);
    EXPECT_EQ(pb.at("sessions").at("with_late_packet").as_uint64(), 2u);
    EXPECT_EQ(a.at("handshake_s"), b.at("handshake_s"));
    EXPECT_EQ(a.at("pacing_qualified"), b.at("pacing_qualified"));
    for (const char* key : {"pacing_deviation_s", "pacing_abs_deviation_s"}) {
        const auto& x = pa.at(key).as_object();
        const auto& y = pb.at(key).as_object();
        EXPECT_EQ(x.at("n"), y.at("n")) << key;
        EXPECT_DOUBLE_EQ(x.at("max").as_double(), y.at("max").as_double()) << key;
        EXPECT_NEAR(x.at("mean").as_double(), y.at("mean").as_double(), 1e-12) << key;
        for (const char* q : {"p50", "p90", "p99", "p99.9"}) {
            const double e = x.at(q).as_double();
            // Within 1/2,048 of the exact value, plus the histogram's 1 ns rounding (the
            // bound is on the larger of the two order statistics interpolated; these are
            // close, so twice the relative bound covers it).
            EXPECT_NEAR(y.at(q).as_double(), e,
                        2 * std::abs(e) * pacer::log_histogram::relative_precision + 2e-9)
                << key << " " << q;
        }
    }
    EXPECT_EQ(part_window(exact[0])->begin_s, part_window(folded[0])->begin_s);
}

} // namespace

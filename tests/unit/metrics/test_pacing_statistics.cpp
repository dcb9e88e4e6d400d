// A run keeps no receipt: it folds each into its session's counters and its context's
// histograms as it is sent (trace::fold_receipt), and summarize_pacing works from those. The
// summary must equal the exact one (every receipt read back, sorted) within the histograms'
// stated precision; samples.json is streamed one session at a time from the receipts files.

#include <pacer/core/stats.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/trace/receipt_stats.hpp>
#include <pacer/trace/writer.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>
#include <vector>

namespace {

using namespace pacer;
namespace fs = std::filesystem;

std::vector<trace::session_result> fixed_run() {
    std::mt19937_64 rng(42);
    std::normal_distribution<double> off(0.001, 0.01);
    std::lognormal_distribution<double> send(std::log(40e-6), 1.5);
    std::vector<trace::session_result> sessions;
    for (std::uint32_t i = 0; i < 16; ++i) {
        trace::session_result r;
        r.index = i;
        r.admitted = true;
        r.session_start_s = 100.0 + i * 0.005;
        r.expected_appends = 500;
        for (std::size_t k = 0; k < 500; ++k) {
            trace::append_receipt a;
            a.seq = k;
            const auto id = fmt::format("{:032x}", i * 1000 + k);
            std::copy(id.begin(), id.end(), a.event_id.begin());
            a.scheduled_s = *r.session_start_s + 0.080 * static_cast<double>(k);
            a.start_s = a.scheduled_s + off(rng) + (i == 3 && k == 7 ? 0.2 : 0.0); // one late
            a.completed_s = a.start_s + send(rng);
            r.appends.push_back(a);
        }
        sessions.push_back(std::move(r));
    }
    return sessions;
}

// As the runner has them: counters and histograms folded as sent, no appends kept.
std::pair<std::vector<trace::session_result>, trace::receipt_statistics>
folded(std::vector<trace::session_result> sessions) {
    trace::receipt_statistics stats[2]; // two session contexts
    for (auto& s : sessions) {
        for (const auto& a : s.appends)
            trace::fold_receipt(s, a, &stats[s.index % 2], schedule::late_threshold_s);
        s.appends_sent = s.appends.size();
        s.appends.clear();
    }
    stats[0].merge(stats[1]);
    return {std::move(sessions), stats[0]};
}

void expect_distribution_near(const boost::json::value& approx, std::vector<double> exact_values) {
    const auto exact = to_json(summarize(exact_values, pacing_fractions));
    EXPECT_EQ(approx.at("n").as_uint64(), exact.at("n").to_number<std::uint64_t>());
    EXPECT_EQ(approx.at("max").as_double(), exact.at("max").as_double());
    EXPECT_NEAR(approx.at("mean").as_double(), exact.at("mean").as_double(), 1e-12);
    for (const char* key : {"p50", "p90", "p99", "p99.9"}) {
        const double e = exact.at(key).as_double();
        EXPECT_NEAR(approx.at(key).as_double(), e,
                    std::abs(e) * 2 * log_histogram::relative_precision + 1e-9)
            << key;
    }
}

TEST(pacing_statistics, summary_from_folded_receipts_matches_the_exact_one_within_precision) {
    const auto run = fixed_run();
    const auto [sessions, stats] = folded(run);
    const auto f = metrics::summarize_pacing(sessions, stats, {});
    std::vector<double> dev, abs_dev, send;
    for (const auto& s : run)
        for (const auto& a : s.appends) {
            dev.push_back(a.start_s - a.scheduled_s);
            abs_dev.push_back(std::abs(dev.back()));
            send.push_back(a.completed_s - a.start_s);
        }
    EXPECT_EQ(f.packets_sent, 16u * 500u);
    EXPECT_EQ(f.late_packets, 1u);
    EXPECT_EQ(f.sessions_with_late_packet, 1u);
    expect_distribution_near(f.json.at("pacing_deviation_s"), dev);
    expect_distribution_near(f.json.at("pacing_abs_deviation_s"), abs_dev);
    expect_distribution_near(f.json.at("ws_send_time_s"), send);
    // What needs no histogram is exactly the old path's.
    const auto old = metrics::summarize_pacing(run, {});
    for (const char* key :
         {"sessions", "packets", "append_span_s", "peak_overlapping_input_streams", "errors"})
        EXPECT_EQ(f.json.at(key), old.json.at(key)) << key;
    EXPECT_EQ(f.json.at("peak_overlapping_input_streams").as_uint64(), 16u);
}

TEST(pacing_statistics, samples_are_streamed_one_session_at_a_time_from_the_receipts_files) {
    const fs::path root =
        fs::temp_directory_path() / ("pacer-samples-stream-" + std::to_string(::getpid()));
    fs::remove_all(root);
    auto run = fixed_run();
    run.resize(3);
    for (auto& s : run) { // each session's receipts file, as the writer leaves it
        const auto dir = root / trace::session_folder_name(s.index);
        fs::create_directories(dir);
        std::ofstream out(dir / "input-send-receipts.json");
        out << trace::receipts_head(s);
        for (std::size_t k = 0; k < s.appends.size(); ++k)
            out << (k ? "," : "") << trace::receipt_json(s.appends[k]);
        out << "]}\n";
    }
    // The old way: every session's receipts read back into memory, then samples_json.
    auto reread = run;
    for (auto& s : reread)
        ASSERT_EQ(trace::read_receipts(s, root / trace::session_folder_name(s.index) /
                                              "input-send-receipts.json"),
                  "");
    const auto expected = metrics::samples_json(reread);
    auto [sessions, stats] = folded(run);
    std::string text;
    std::size_t pieces = 0;
    const auto errors = metrics::write_samples(
        [&](std::string_view p) {
            text += p;
            ++pieces;
        },
        sessions, metrics::run_receipts(root));
    EXPECT_TRUE(errors.empty());
    EXPECT_EQ(text, expected);
    EXPECT_EQ(pieces, sessions.size() + 1); // one piece a session, then the tail

    // A missing file is an error of that session, whose deviations are then empty.
    fs::remove(root / trace::session_folder_name(1) / "input-send-receipts.json");
    text.clear();
    const auto missing = metrics::write_samples([&](std::string_view p) { text += p; }, sessions,
                                                metrics::run_receipts(root));
    ASSERT_EQ(missing.size(), 1u);
    EXPECT_NE(missing[0].find("session-001"), std::string::npos) << missing[0];
    EXPECT_NE(text.find(R"("index":1,"session_start_s":100.005000000,"deviation_s":[])"),
              std::string::npos);
    fs::remove_all(root);
}

TEST(pacing_statistics, trace_none_takes_each_sessions_kept_receipts_once) {
    auto run = fixed_run();
    run.resize(2);
    std::map<std::uint32_t, std::string> kept;
    for (const auto& s : run) {
        std::string t = trace::receipts_head(s);
        for (std::size_t k = 0; k < s.appends.size(); ++k)
            t += (k ? "," : "") + trace::receipt_json(s.appends[k]);
        kept[s.index] = t + "]}\n";
    }
    auto reread = run;
    for (auto& s : reread)
        ASSERT_EQ(trace::read_receipts_text(s, kept[s.index], "kept"), "");
    const auto expected = metrics::samples_json(reread);
    auto [sessions, stats] = folded(run);
    std::string text;
    const auto errors = metrics::write_samples([&](std::string_view p) { text += p; }, sessions,
                                               metrics::run_receipts("/nonexistent", &kept));
    EXPECT_TRUE(errors.empty());
    EXPECT_EQ(text, expected);
    EXPECT_TRUE(kept.empty()) << "each session's receipts are dropped once written";
}

TEST(pacing_statistics, trace_none_samples_from_the_spool_equal_those_from_receipts_files) {
    // The same receipts, once as --trace receipts leaves them (a file a session) and once as
    // --trace none spools them: samples.json is the same, byte for byte.
    const fs::path root =
        fs::temp_directory_path() / ("pacer-samples-spool-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    auto run = fixed_run();
    run.resize(4);
    trace::receipt_spool spool(root, 64); // small chunks: every session spans many
    for (const auto& s : run) {
        const auto dir = root / trace::session_folder_name(s.index);
        fs::create_directories(dir);
        std::ofstream out(dir / "input-send-receipts.json");
        const auto head = trace::receipts_head(s);
        out << head;
        spool.append(s.index, head);
        for (std::size_t k = 0; k < s.appends.size(); ++k) {
            const auto piece = (k ? "," : "") + trace::receipt_json(s.appends[k]);
            out << piece;
            spool.append(s.index, piece);
        }
        out << "]}\n";
        spool.append(s.index, "]}\n");
    }
    auto [sessions, stats] = folded(run);
    std::string from_files, from_spool;
    EXPECT_TRUE(metrics::write_samples([&](std::string_view p) { from_files += p; }, sessions,
                                       metrics::run_receipts(root))
                    .empty());
    EXPECT_TRUE(metrics::write_samples([&](std::string_view p) { from_spool += p; }, sessions,
                                       metrics::run_receipts("/nonexistent", &spool))
                    .empty());
    EXPECT_EQ(from_spool, from_files);
    EXPECT_EQ(from_files.find("\"deviation_s\":[]"), std::string::npos) << "has deviations";
    EXPECT_EQ(spool.take(0), "") << "each session taken once";
    fs::remove_all(root);
}

// Issue 33 item 5: a late packet a send stall caused is the server's, one the client started
// late is the client's; the summary keeps them apart. Times from the receipts alone.
TEST(pacing_statistics, late_packets_after_a_send_stall_are_the_servers) {
    // Deadlines every 80 ms; `start` and `send` in ms from each deadline.
    const auto session = [](std::vector<std::pair<double, double>> start_send) {
        trace::session_result r;
        r.admitted = true;
        r.session_start_s = 10.0;
        for (std::size_t k = 0; k < start_send.size(); ++k) {
            trace::append_receipt a;
            a.seq = k;
            a.scheduled_s = 10.0 + 0.080 * static_cast<double>(k);
            a.start_s = a.scheduled_s + start_send[k].first / 1e3;
            a.completed_s = a.start_s + start_send[k].second / 1e3;
            r.appends.push_back(a);
        }
        r.expected_appends = r.appends.size();
        return r;
    };
    // Packet 1's write blocks 420 ms (the window is full); 2, 3 and 4 go out at once after it,
    // late by 340, 260 and 180 ms; 5 is back on time.
    const auto stalled =
        session({{0, 0.1}, {0, 420}, {340, 0.1}, {260, 0.1}, {180, 0.1}, {0.2, 0.1}});
    // The client's own loop stalls 300 ms before packet 1; its writes are quick, and 1, 2 and 3
    // are late (300, 220, 140 ms). Then packet 5's write blocks 200 ms: 6 is late (120 ms).
    const auto client =
        session({{0, 0.1}, {300, 0.1}, {220, 0.1}, {140, 0.1}, {60, 0.1}, {0.5, 200}, {120, 0.1}});
    const auto f = metrics::summarize_pacing({stalled, client}, {});
    EXPECT_EQ(f.late_packets, 3u + 4u);
    EXPECT_EQ(f.late_after_send_stall, 3u + 1u);
    const auto& packets = f.json.at("packets").as_object();
    EXPECT_EQ(packets.at("late_after_send_stall").to_number<int>(), 4);
    EXPECT_EQ(packets.at("late_from_client").to_number<int>(), 3);
}

} // namespace

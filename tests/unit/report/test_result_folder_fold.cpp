// report.html's memory does not grow with the packets: `pacer report` reads a folder one
// session at a time (read_folded_result_folder) and keeps per-session figures and histograms;
// the figures equal the exact ones (counts, maxima, late packets) or are within the
// histogram's stated bound (quantiles), and the page is the same whichever way it was read.

#include <pacer/core/stats.hpp>
#include <pacer/report/html_report.hpp>
#include <pacer/report/result_folder.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace pacer::report;

struct temp_folder {
    temp_folder() {
        static int counter = 0;
        path = fs::temp_directory_path() /
               fmt::format("pacer-report-fold-{}-{}", ::getpid(), counter++);
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~temp_folder() { fs::remove_all(path); }
    fs::path path;
};

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

// A closed-loop run of `sessions` x `per_session` appends: log-normal |deviations| (a few over
// 80 ms), signs alternating, send times log-normal. With `receipts` false only samples.json
// (µs deviations, no send times). Returns every deviation and send time written.
struct written {
    std::vector<double> abs_deviations, send_times;
    std::size_t late = 0;
};

written make_folded_run(const fs::path& dir, std::size_t sessions, std::size_t per_session,
                        bool receipts = true) {
    std::mt19937_64 rng(42);
    std::lognormal_distribution<double> dev(std::log(0.0005), 1.6), send(std::log(0.0003), 1.0);
    written w;
    json::array samples;
    for (std::size_t i = 0; i < sessions; ++i) {
        const double start = 1000 + 0.013 * static_cast<double>(i);
        json::array appends, devs;
        for (std::size_t k = 0; k < per_session; ++k) {
            // µs resolution, as samples.json records it, so both sources agree exactly.
            const double d = std::round(dev(rng) * 1e6) / 1e6 * (k % 2 ? -1 : 1);
            const double t = std::round(send(rng) * 1e9) / 1e9;
            const double scheduled = start + 0.080 * static_cast<double>(k);
            appends.push_back(json::object{{"event_id", fmt::format("e{}", k)},
                                           {"seq", k},
                                           {"scheduled_s", scheduled},
                                           {"start_s", scheduled + d},
                                           {"completed_s", scheduled + d + t}});
            devs.push_back(d);
            // What the reader computes from the receipts: start - scheduled.
            const double a = receipts ? std::abs((scheduled + d) - scheduled) : std::abs(d);
            w.abs_deviations.push_back(a);
            w.late += a > 0.080 ? 1 : 0;
            // What the reader computes (completed - start), not the rounded value written.
            w.send_times.push_back(std::max(0.0, (scheduled + d + t) - (scheduled + d)));
        }
        if (receipts)
            write(dir / fmt::format("session-{:03}", i) / "input-send-receipts.json",
                  json::serialize(json::object{
                      {"session_start_s", start}, {"admitted", true}, {"appends", appends}}));
        samples.push_back(
            json::object{{"index", i}, {"session_start_s", start}, {"deviation_s", devs}});
    }
    write(dir / "samples.json", json::serialize(json::object{{"sessions", samples}}));
    write(dir / "summary.json",
          json::serialize(json::object{
              {"command", "run"},
              {"clock", json::object{{"monotonic_s", 999.5}, {"realtime_s", 1796000000.25}}},
              {"pacing", json::object{{"packets", json::object{{"sent", 1}}}}}}));
    return w;
}

void expect_within_bound(double estimate, double exact_lo, double exact_hi) {
    const double bound = std::max(std::abs(exact_lo), std::abs(exact_hi)) *
                             pacer::log_histogram::relative_precision +
                         2e-9;
    EXPECT_GE(estimate, std::min(exact_lo, exact_hi) - bound);
    EXPECT_LE(estimate, std::max(exact_lo, exact_hi) + bound);
}

TEST(report_fold, folded_figures_equal_the_exact_ones_within_the_stated_bound) {
    temp_folder t;
    auto w = make_folded_run(t.path, 20, 500);
    const auto f = read_folded_result_folder(t.path);
    ASSERT_EQ(f.sessions.size(), 20u);
    EXPECT_EQ(f.packet_count(), 10000u);
    EXPECT_FALSE(f.packets_kept);
    // Exact: counts, late packets, maxima (per session and pooled).
    std::size_t late = 0;
    for (const auto& s : f.sessions) {
        EXPECT_TRUE(s.packets.empty());
        EXPECT_EQ(s.packets.capacity(), 0u);
        EXPECT_EQ(s.stats.count, 500u);
        late += s.stats.late;
    }
    EXPECT_EQ(late, w.late);
    EXPECT_GT(w.late, 0u);
    // The exact figures: every packet, as the folder read whole gives it.
    const auto kept = read_result_folder(t.path);
    w.abs_deviations.clear();
    w.send_times.clear();
    for (const auto& s : kept.sessions)
        for (const auto& p : s.packets) {
            w.abs_deviations.push_back(std::abs(p.deviation_s));
            if (const auto send = p.send_time_s())
                w.send_times.push_back(std::max(0.0, *send));
        }
    ASSERT_EQ(w.abs_deviations.size(), 10000u);
    for (std::size_t k = 0; k < kept.sessions.size(); ++k) {
        double m = 0;
        std::size_t l = 0;
        for (const auto& p : kept.sessions[k].packets) {
            m = std::max(m, std::abs(p.deviation_s));
            l += std::abs(p.deviation_s) > 0.080 ? 1 : 0;
        }
        EXPECT_EQ(f.sessions[k].stats.max_abs_deviation_s, m);
        EXPECT_EQ(f.sessions[k].stats.late, l);
        EXPECT_EQ(f.sessions[k].stats.first_start_s, kept.sessions[k].stats.first_start_s);
        EXPECT_EQ(f.sessions[k].stats.last_start_s, kept.sessions[k].stats.last_start_s);
    }
    ASSERT_EQ(f.abs_deviation_by_level.size(), 1u);
    const auto& h = f.abs_deviation_by_level.at(0);
    std::sort(w.abs_deviations.begin(), w.abs_deviations.end());
    std::sort(w.send_times.begin(), w.send_times.end());
    EXPECT_EQ(h.count(), w.abs_deviations.size());
    EXPECT_EQ(*h.max(), w.abs_deviations.back());
    EXPECT_EQ(f.send_time.count(), w.send_times.size());
    EXPECT_EQ(*f.send_time.max(), w.send_times.back());
    // Quantiles (the CDF plots' points, the send-time table): within 1/2,048 of the exact
    // order statistics they interpolate.
    for (const double q : {0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0})
        for (const auto* v : {&w.abs_deviations, &w.send_times}) {
            const auto& hist = v == &w.abs_deviations ? h : f.send_time;
            const double rank = q * static_cast<double>(v->size() - 1);
            const auto lo = static_cast<std::size_t>(std::floor(rank));
            const auto hi = static_cast<std::size_t>(std::ceil(rank));
            expect_within_bound(*hist.quantile(q), (*v)[lo], (*v)[hi]);
        }
}

TEST(report_fold, the_page_is_the_same_read_whole_or_one_session_at_a_time) {
    temp_folder t;
    make_folded_run(t.path, 12, 300);
    const auto kept = read_result_folder(t.path);
    EXPECT_TRUE(kept.packets_kept);
    EXPECT_EQ(kept.sessions[0].packets.size(), 300u);
    const auto folded = read_folded_result_folder(t.path);
    const auto a = render_report(kept), b = render_report(folded);
    EXPECT_EQ(a, b);
    for (const char* id : {"plot-deviation-cdf", "plot-deviation-over-time", "plot-late-over-time",
                           "plot-heat-strip", "plot-send-time"})
        EXPECT_NE(b.find(fmt::format("<svg id=\"{}\"", id)), std::string::npos) << id;

    // samples.json alone (no receipts): the deviations come from the streamed samples.
    temp_folder s;
    make_folded_run(s.path, 12, 300, false);
    const auto only_samples = read_folded_result_folder(s.path);
    EXPECT_EQ(only_samples.packet_count(), 3600u);
    EXPECT_EQ(render_report(read_result_folder(s.path)), render_report(only_samples));
}

// The folded model is per session and per histogram bucket: 20 times the packets (sessions
// 20 times as long, 100 s against 2,000 s) leave its size and the plots' point counts where
// they were (both spans fill the 100 intervals the time plots have at most).
TEST(report_fold, the_model_does_not_grow_with_the_packets) {
    temp_folder small, large;
    make_folded_run(small.path, 4, 1250);
    make_folded_run(large.path, 4, 25000);
    const auto a = read_folded_result_folder(small.path);
    const auto b = read_folded_result_folder(large.path);
    EXPECT_EQ(a.packet_count(), 5000u);
    EXPECT_EQ(b.packet_count(), 100000u);
    EXPECT_EQ(a.sessions.size(), b.sessions.size());
    for (const auto* f : {&a, &b})
        for (const auto& s : f->sessions)
            EXPECT_EQ(s.packets.capacity(), 0u);
    const auto pa = render_report(a), pb = render_report(b);
    auto points = [](const std::string& html, const std::string& id) {
        const auto start = html.find("<svg id=\"" + id + "\"");
        const auto end = html.find("</svg>", start);
        const auto svg = html.substr(start, end - start);
        std::size_t n = 0;
        for (auto p = svg.find("<title>"); p != std::string::npos; p = svg.find("<title>", p + 1))
            ++n;
        return n;
    };
    EXPECT_EQ(points(pa, "plot-deviation-cdf"), points(pb, "plot-deviation-cdf"));
    EXPECT_EQ(points(pa, "plot-send-time"), points(pb, "plot-send-time"));
    EXPECT_EQ(points(pa, "plot-heat-strip"), points(pb, "plot-heat-strip"));
    // At most 101 time intervals (a point and a late marker each, + the plot's title).
    EXPECT_LE(points(pb, "plot-deviation-over-time"), 2u * 101 + 1);
}

} // namespace

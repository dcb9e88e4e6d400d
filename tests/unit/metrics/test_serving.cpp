// Serving metrics of docs/protocol.md §4, with the worked checks of the spec.

#include <pacer/metrics/serving.hpp>
#include <pacer/protocol/events.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "unit/serving_trace_builders.hpp"
#include <algorithm>
#include <string>
#include <vector>

namespace pacer::metrics {
namespace {

namespace json = boost::json;
using namespace test;

// --- distribution ------------------------------------------------------------------------

TEST(Distribution, P75OfZeroToThreeIs225) {
    const auto d = distribution_json({3.0, 0.0, 2.0, 1.0});
    EXPECT_EQ(d.at("n").as_uint64(), 4u);
    EXPECT_DOUBLE_EQ(d.at("p50").as_double(), 1.5);
    EXPECT_DOUBLE_EQ(d.at("p75").as_double(), 2.25);
    EXPECT_DOUBLE_EQ(d.at("p95").as_double(), 2.85);
    EXPECT_DOUBLE_EQ(d.at("p99").as_double(), 2.97);
    EXPECT_DOUBLE_EQ(d.at("max").as_double(), 3.0);
    EXPECT_EQ(d.size(), 6u) << json::serialize(d); // exactly {n, p50, p75, p95, p99, max}
}

TEST(Distribution, EmptyHasNullsAndZeroN) {
    const auto d = distribution_json({});
    EXPECT_EQ(json::serialize(d),
              R"({"n":0,"p50":null,"p75":null,"p95":null,"p99":null,"max":null})");
}

// --- playback underruns (4.2 worked checks) -----------------------------------------------

TEST(PlaybackUnderruns, OneUnderrunOfFortyMilliseconds) {
    const std::vector<audio_packet> packets{
        {10.0, 0.08}, {10.08, 0.08}, {10.28, 0.08}, {10.36, 0.08}};
    const double D = 0.32, start = 10.0, reserve = 0.08;
    const auto u = playback_underruns(packets, start + D + reserve, reserve);
    EXPECT_EQ(u.count, 1u);
    EXPECT_NEAR(u.total_s, 0.04, 1e-9);
    EXPECT_NEAR(u.worst_s, 0.04, 1e-9);
    EXPECT_NEAR(u.total_s / D, 0.125, 1e-9);
}

TEST(PlaybackUnderruns, TwoPacketsOnlyLeaveHalfTheInputUnplayed) {
    const std::vector<audio_packet> packets{{10.0, 0.08}, {10.08, 0.08}};
    const auto u = playback_underruns(packets, 10.0 + 0.32 + 0.08, 0.08);
    EXPECT_EQ(u.count, 1u);
    EXPECT_NEAR(u.total_s, 0.16, 1e-9);
    EXPECT_NEAR(u.total_s / 0.32, 0.5, 1e-9);
}

TEST(PlaybackUnderruns, StopsAtFirstArrivalAfterEnd) {
    // The third packet arrives after the end: it is not walked, and neither is the sentinel.
    const std::vector<audio_packet> packets{{0.0, 0.08}, {0.08, 0.08}, {5.0, 0.08}};
    const auto u = playback_underruns(packets, 0.24, 0.0);
    EXPECT_EQ(u.count, 0u);
    EXPECT_DOUBLE_EQ(u.total_s, 0.0);
}

TEST(PlaybackUnderruns, SteadyStreamNeverUnderruns) {
    std::vector<audio_packet> packets;
    for (int i = 0; i < 50; ++i)
        packets.push_back({1.0 + 0.08 * i, 0.08});
    EXPECT_EQ(playback_underruns(packets, 1.0 + 4.0 + 0.08, 0.08).count, 0u);
}

// --- session metrics (4.2) ----------------------------------------------------------------

// The 4.2 worked check through the whole session computation: D = 4 packets = 0.32 s.
std::vector<trace_line> worked_session(std::vector<double> audio_times) {
    std::vector<trace_line> t;
    t.push_back(event("receive", 9.0, "session.created", 0));
    for (int i = 0; i < 4; ++i)
        t.push_back(append(10.0 + 0.08 * i, i));
    int n = 0;
    for (double a : audio_times)
        t.push_back(audio(a, 1764, n++)); // 80 ms at 22050 Hz
    t.push_back(line(
        "receive", 10.5,
        R"({"type":"response.done","event_id":"d","response":{"id":"r","status":"completed"}})"));
    t.push_back(event("receive", 10.6, "sglang.input_audio.drained", 1));
    t.push_back(line("receive", 10.7,
                     R"({"type":"session.closed","event_id":"x","reason":"client_closed"})"));
    std::sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.time_s < b.time_s; });
    return t;
}

TEST(SessionMetrics, WorkedUnderrunCheckThroughTheSession) {
    const auto t = worked_session({10.0, 10.08, 10.28, 10.36});
    const auto m = compute_session_metrics(t, receipts_for(10.0, 4), voicechat(), {});
    EXPECT_TRUE(m.success()) << fmt::format("{}", fmt::join(m.errors, "; "));
    EXPECT_DOUBLE_EQ(m.input_duration_s, 0.32);
    ASSERT_TRUE(m.underrun);
    EXPECT_EQ(m.underrun->count, 1u);
    EXPECT_NEAR(m.underrun->total_s, 0.04, 1e-9);
    EXPECT_NEAR(*m.underrun_ratio, 0.125, 1e-9);
    EXPECT_NEAR(*m.ttfa_s, 0.0, 1e-12);
    ASSERT_EQ(m.gaps_s.size(), 3u);
    EXPECT_NEAR(m.gaps_s[1], 0.20, 1e-9);
    EXPECT_NEAR(m.gap_excess_s[0], 0.0, 1e-9);
    EXPECT_NEAR(m.gap_excess_s[1], 0.12, 1e-9);
    ASSERT_EQ(m.drift_s.size(), 4u);
    EXPECT_DOUBLE_EQ(m.drift_s[0], 0.0);
    EXPECT_NEAR(m.drift_s[2], 0.12, 1e-9);
    EXPECT_NEAR(*m.final_drift_s, 0.12, 1e-9);
    EXPECT_NEAR(*m.required_playout_buffer_s, 0.12, 1e-9);
    EXPECT_NEAR(*m.coverage, 1.0, 1e-12);
    EXPECT_EQ(m.output_samples, 4u * 1764u);
}

TEST(SessionMetrics, TwoPacketsGiveRatioOneHalf) {
    const auto t = worked_session({10.0, 10.08});
    const auto m = compute_session_metrics(t, receipts_for(10.0, 4), voicechat(), {});
    EXPECT_NEAR(m.underrun->total_s, 0.16, 1e-9);
    EXPECT_NEAR(*m.underrun_ratio, 0.5, 1e-9);
    EXPECT_NEAR(*m.coverage, 0.5, 1e-12);
}

TEST(SessionMetrics, SilentSessionGetsTheAssignedUnderrunAndErrors) {
    std::vector<trace_line> t;
    for (int i = 0; i < 4; ++i)
        t.push_back(append(10.0 + 0.08 * i, i));
    auto r = receipts_for(10.0, 3); // one append short
    r.session_start_s.reset();
    const auto m = compute_session_metrics(t, r, voicechat(), {});
    const std::vector<std::string> expected{"sent 3/4 input frames", "input did not drain",
                                            "session did not close", "no output audio",
                                            "session did not start"};
    EXPECT_EQ(m.errors, expected);
    EXPECT_FALSE(m.ttfa_s);
    EXPECT_EQ(m.underrun->count, 1u);
    EXPECT_DOUBLE_EQ(m.underrun->total_s, 0.32);
    EXPECT_DOUBLE_EQ(m.underrun->worst_s, 0.32);
    EXPECT_DOUBLE_EQ(*m.underrun_ratio, 1.0);
    EXPECT_DOUBLE_EQ(*m.coverage, 0.0);
    EXPECT_EQ(m.to_json().at("final_output_drift_s"), nullptr);
}

TEST(SessionMetrics, AudioOnlyAfterTheInputCountsAsFullUnderrun) {
    // t0 >= start + D: the simulation does not apply.
    const auto t = worked_session({10.32, 10.40});
    const auto m = compute_session_metrics(t, receipts_for(10.0, 4), voicechat(), {});
    EXPECT_EQ(m.underrun->count, 1u);
    EXPECT_DOUBLE_EQ(m.underrun->total_s, 0.32);
}

TEST(SessionMetrics, ErrorRules) {
    auto t = worked_session({10.0, 10.08, 10.16, 10.24});
    t.push_back(line("error", 11.0, R"({"message":"Session timeout after 90s"})"));
    t.push_back(line("receive", 11.0, R"({"type":"error","event_id":"z","error":{"code":"x"}})"));
    t.push_back(line(
        "receive", 11.0,
        R"({"type":"response.done","event_id":"d2","response":{"id":"r2","status":"cancelled"}})"));
    t.push_back(line("receive", 11.0,
                     R"({"type":"session.closed","event_id":"y","reason":"server_error"})"));
    t.push_back(line("receive", 11.0,
                     R"({"type":"response.output_audio.delta","event_id":"q","delta":"AAA"})"));
    const auto m = compute_session_metrics(t, receipts_for(10.0, 4), voicechat(), {});
    ASSERT_EQ(m.errors.size(), 5u);
    EXPECT_EQ(m.errors[0], "Session timeout after 90s");
    EXPECT_EQ(m.errors[1], R"(server error: {"code":"x"})");
    EXPECT_EQ(m.errors[2], R"(response did not complete: {"id":"r2","status":"cancelled"})");
    EXPECT_EQ(m.errors[3], R"(unexpected session close: "server_error")");
    EXPECT_EQ(m.errors[4].rfind("invalid output audio", 0), 0u);
}

TEST(SessionMetrics, AudioWithoutResponseDoneIsAnError) {
    auto t = worked_session({10.0, 10.08, 10.16, 10.24});
    std::erase_if(t, [](const trace_line& l) { return l.event.at("type") == "response.done"; });
    const auto m = compute_session_metrics(t, receipts_for(10.0, 4), voicechat(), {});
    EXPECT_EQ(m.errors, std::vector<std::string>{"output response did not complete"});
}

TEST(SessionMetrics, GivenInputDurationDrivesExpectedAppends) {
    const auto t = worked_session({10.0, 10.08, 10.16, 10.24});
    session_params c;
    c.input_duration_s = 0.5; // ceil(16000 / 2560) = 7 packets
    const auto m = compute_session_metrics(t, receipts_for(10.0, 4), voicechat(), c);
    EXPECT_EQ(m.expected_appends, 7u);
    EXPECT_EQ(m.errors, std::vector<std::string>{"sent 4/7 input frames"});
}

TEST(SessionMetrics, NonContinuousProfileNullsContinuousFields) {
    const auto t = worked_session({});
    const auto m =
        compute_session_metrics(t, receipts_for(10.0, 4), *protocol::find_profile("minicpmo"), {});
    EXPECT_TRUE(m.success()) << fmt::format("{}", fmt::join(m.errors, "; "));
    EXPECT_FALSE(m.coverage);
    EXPECT_FALSE(m.underrun);
    const auto j = m.to_json();
    EXPECT_EQ(j.at("output_coverage"), nullptr);
    EXPECT_EQ(j.at("underrun_ratio"), nullptr);
    EXPECT_EQ(j.at("output_gap_s"), nullptr);
}

// --- input timing (4.1) -------------------------------------------------------------------

TEST(SendLateness, ClampsAndCountsLateSends) {
    send_receipts r;
    r.appends.push_back(receipt("a", 0, 1.0, 0.99, 1.0));         // early -> 0
    r.appends.push_back(receipt("b", 1, 1.08, 1.09, 1.1));        // 10 ms
    r.appends.push_back(receipt("c", 2, 1.16, 1.19, 1.2));        // 30 ms: late
    r.appends.push_back(receipt("d", 3, std::nullopt, 1.3, 1.3)); // no schedule: no sample
    const auto s = send_lateness(r);
    ASSERT_EQ(s.lateness_s.size(), 3u);
    EXPECT_DOUBLE_EQ(s.lateness_s[0], 0.0);
    EXPECT_NEAR(s.lateness_s[1], 0.01, 1e-12);
    EXPECT_EQ(s.late, 1u);
    EXPECT_NEAR(*s.late_send_rate, 1.0 / 3.0, 1e-12);
    EXPECT_FALSE(send_lateness(send_receipts{}).late_send_rate);
}

TEST(SendLateness, ExactlyTwentyMillisecondsIsNotLate) {
    send_receipts r;
    r.appends.push_back(receipt("a", 0, 0.0, 0.020, 0.021));
    EXPECT_EQ(send_lateness(r).late, 0u);
}

TEST(PacingDeviation, WithinAndBeyondTolerance) {
    std::vector<trace_line> t{append(5.0, 0), append(5.08, 1), append(5.16, 2)};
    auto d = pacing_deviation(t);
    EXPECT_TRUE(d.within_tolerance);
    EXPECT_NEAR(d.max_abs_deviation_s, 0.0, 1e-9);
    EXPECT_FALSE(d.error);

    t.push_back(append(5.33, 3)); // 0.09 s behind its media offset 0.24
    t.back().line = 7;
    d = pacing_deviation(t);
    EXPECT_FALSE(d.within_tolerance);
    EXPECT_NEAR(d.max_abs_deviation_s, 0.09, 1e-9);
    EXPECT_EQ(*d.worst, 3u);
    ASSERT_TRUE(d.error);
    EXPECT_EQ(d.error->rfind("input pacing deviation 0.09", 0), 0u) << *d.error;
    EXPECT_NE(d.error->find("at append 3 (trace line 7) exceeds 0.08s"), std::string::npos)
        << *d.error;

    EXPECT_FALSE(pacing_deviation({}).within_tolerance);
}

// --- per-unit metrics (4.3) ---------------------------------------------------------------

TEST(UnitMetrics, LagsMissesAndReplyLag) {
    const auto& minicpm = *protocol::find_profile("minicpmo");
    // D = 2 s = 25 appends; units of 1 s are ready at appends 12 and 24.
    std::vector<trace_line> t;
    for (int i = 0; i < 25; ++i)
        t.push_back(append(10.0 + 0.08 * i, i, i == 24 ? 1280 : 2560));
    auto r = receipts_for(10.0, 25);
    t.push_back(event("receive", 11.1, "sglang.unit.done", 1)); // unit 0: listen
    t.push_back(line("receive", 11.2,
                     R"({"type":"response.created","event_id":"rc","response":{"id":"r"}})"));
    t.push_back(audio(12.0, 2400, 1)); // 0.1 s at 24 kHz
    t.push_back(audio(12.05, 2400, 2));
    t.push_back(event("receive", 13.0, "sglang.unit.done", 2)); // unit 1: speak, lag > 1 s
    t.push_back(line(
        "receive", 13.1,
        R"({"type":"response.done","event_id":"rd","response":{"id":"r","status":"completed"}})"));
    t.push_back(event("receive", 13.2, "sglang.input_audio.drained", 3));
    t.push_back(event("receive", 13.3, "session.closed", 4));
    const auto m = compute_unit_metrics(t, r, minicpm, {});
    EXPECT_EQ(m.expected_units, 2u);
    EXPECT_EQ(m.completed_units, 2u);
    ASSERT_EQ(m.listen_lag_s.size(), 1u);
    ASSERT_EQ(m.speak_lag_s.size(), 1u);
    EXPECT_NEAR(m.listen_lag_s[0], 11.1 - r.appends[12].completed_s, 1e-9);
    EXPECT_NEAR(m.speak_lag_s[0], 13.0 - r.appends[24].completed_s, 1e-9);
    EXPECT_EQ(m.missed_units, 1u); // unit 1 finished 1.08 s after its last sample was sent
    EXPECT_NEAR(*m.unit_miss_rate, 0.5, 1e-12);
    ASSERT_EQ(m.reply_lag_s.size(), 1u);
    // The response started after one unit.done: it belongs to unit 1, ready at append 24.
    EXPECT_NEAR(m.reply_lag_s[0], 12.0 - r.appends[24].completed_s, 1e-9);
    EXPECT_NEAR(m.output_duration_s, 0.2, 1e-12);
    EXPECT_TRUE(m.errors.empty()) << fmt::format("{}", fmt::join(m.errors, "; "));
    EXPECT_NEAR(*m.units_per_s, 2.0 / (13.0 - 10.0), 1e-9);
}

// Found by fuzz_replay_session: a server that reports more units than the input holds. The
// reference's formula (missed = late + max(0, expected - completed), over expected) then
// exceeds 1; pacer keeps it, and the count mismatch is the session's error.
TEST(UnitMetrics, MoreUnitsThanExpectedKeepTheReferenceMissRate) {
    const auto& minicpm = *protocol::find_profile("minicpmo");
    std::vector<trace_line> t{append(10.0, 0)}; // 80 ms of input: one 1 s unit expected
    const auto r = receipts_for(10.0, 1);
    t.push_back(event("receive", 12.0, "sglang.unit.done", 1)); // lag ~2 s > 1 s: missed
    t.push_back(event("receive", 12.5, "sglang.unit.done", 2)); // a second, late, extra unit
    const auto m = compute_unit_metrics(t, r, minicpm, {});
    EXPECT_EQ(m.expected_units, 1u);
    EXPECT_EQ(m.completed_units, 2u);
    EXPECT_EQ(m.missed_units, 2u);
    EXPECT_DOUBLE_EQ(*m.unit_miss_rate, 2.0);
    EXPECT_NE(std::find(m.errors.begin(), m.errors.end(), "completed 2/1 units"), m.errors.end())
        << fmt::format("{}", fmt::join(m.errors, "; "));
}

// The tail unit (docs/serving.md, "The tail unit"). 0.8 s of input, ten 80 ms units; appends on
// the grid from 10.0; the end of input goes one packet after the last append, at 10.8 s, as the
// client sends it (docs/protocol.md §2.4). Units 0-8 finish 5 ms after their last sample left;
// the tail unit finishes `tail_after_end` after the end of input (negative: before it).
struct tail_session {
    std::vector<trace_line> trace;
    send_receipts receipts = receipts_for(10.0, 10);
};

tail_session with_tail(double tail_after_end, std::optional<double> unit8_at = std::nullopt) {
    tail_session s;
    for (int i = 0; i < 10; ++i)
        s.trace.push_back(append(10.0 + 0.08 * i, i));
    for (int k = 0; k < 9; ++k)
        s.trace.push_back(
            event("receive",
                  k == 8 && unit8_at
                      ? *unit8_at
                      : s.receipts.appends[static_cast<std::size_t>(k)].completed_s + 0.005,
                  "sglang.unit.done", k));
    s.trace.push_back(event("send", 10.8, "sglang.input_audio.end", 100));
    s.trace.push_back(event("receive", 10.8 + tail_after_end, "sglang.unit.done", 9));
    std::stable_sort(s.trace.begin(), s.trace.end(),
                     [](const trace_line& a, const trace_line& b) { return a.time_s < b.time_s; });
    return s;
}

TEST(UnitMetrics, ATailUnitAnsweredAfterTheEndOfInputIsTimedFromIt) {
    // The field report's floor: timed from the grid, this prompt tail unit lagged 95 ms > 80 ms,
    // one missed unit in every session at any load.
    const auto s = with_tail(0.015);
    const auto m = compute_unit_metrics(s.trace, s.receipts, voicechat(), {});
    EXPECT_EQ(m.expected_units, 10u);
    EXPECT_EQ(m.completed_units, 10u);
    EXPECT_EQ(m.missed_units, 0u);
    EXPECT_EQ(*m.unit_miss_rate, 0.0);
    ASSERT_TRUE(m.tail_unit_lag_s);
    EXPECT_NEAR(*m.tail_unit_lag_s, 0.015, 1e-9);
    EXPECT_EQ(m.tail_unit_reference, "end_of_input");
    const double max_lag = *std::max_element(m.listen_lag_s.begin(), m.listen_lag_s.end());
    EXPECT_NEAR(max_lag, 0.015, 1e-9); // the tail's own latency, not a packet more
    const auto j = m.to_json();
    EXPECT_NEAR(j.at("tail_unit_lag_s").as_double(), 0.015, 1e-9);
    EXPECT_EQ(j.at("tail_unit_reference").as_string(), "end_of_input");
}

TEST(UnitMetrics, ATailUnitAnsweredBeforeTheEndOfInputKeepsTheGrid) {
    const auto s = with_tail(-0.07); // 10.73: 10 ms after its last sample left, before the end
    const auto m = compute_unit_metrics(s.trace, s.receipts, voicechat(), {});
    EXPECT_EQ(m.missed_units, 0u);
    ASSERT_TRUE(m.tail_unit_lag_s);
    EXPECT_NEAR(*m.tail_unit_lag_s, 10.73 - s.receipts.appends[9].completed_s, 1e-9);
    EXPECT_EQ(m.tail_unit_reference, "grid");
}

TEST(UnitMetrics, ASlowTailAndALateUnitBeforeItStillMiss) {
    // The end of input is the tail's reference, not a pardon: 200 ms after it is a miss. And a
    // unit before the tail that comes after the end of input is timed from the grid.
    const auto s = with_tail(0.2, 10.85);
    const auto m = compute_unit_metrics(s.trace, s.receipts, voicechat(), {});
    EXPECT_EQ(m.missed_units, 2u);
    EXPECT_NEAR(*m.tail_unit_lag_s, 0.2, 1e-9);
    EXPECT_NEAR(*m.unit_miss_rate, 0.2, 1e-12);
}

// --- parsing ------------------------------------------------------------------------------

TEST(Aggregate, PoolsSessionsAndKeepsFailuresInTheDenominator) {
    const auto good = compute_session_metrics(worked_session({10.0, 10.08, 10.28, 10.36}),
                                              receipts_for(10.0, 4), voicechat(), {});
    std::vector<trace_line> silent;
    for (int i = 0; i < 4; ++i)
        silent.push_back(append(10.0 + 0.08 * i, i));
    const auto bad = compute_session_metrics(silent, receipts_for(10.0, 4), voicechat(), {});
    const std::vector<session_metrics> all{good, bad};
    const auto a = aggregate_sessions(all);
    EXPECT_EQ(a.at("attempted_sessions").as_uint64(), 2u);
    EXPECT_EQ(a.at("successful_sessions").as_uint64(), 1u);
    EXPECT_EQ(a.at("underrun_sessions").as_uint64(), 2u);
    EXPECT_NEAR(a.at("underrun_total_s").as_double(), 0.36, 1e-9);
    EXPECT_NEAR(a.at("underrun_ratio").as_double(), 0.36 / 0.64, 1e-9);
    EXPECT_EQ(a.at("output_coverage").at("n").as_uint64(), 2u);
    EXPECT_EQ(a.at("ttfa_s").at("n").as_uint64(), 1u);
    EXPECT_NEAR(a.at("late_send_rate").as_double(), 0.0, 1e-12);
}

TEST(Pcm16Bytes, ValidatesPayloads) {
    EXPECT_EQ(pcm16_bytes("AAAA"), std::nullopt); // 3 bytes: not whole samples
    EXPECT_EQ(pcm16_bytes("AAA="), 2u);
    EXPECT_EQ(pcm16_bytes(""), std::nullopt);
    EXPECT_EQ(pcm16_bytes("A!A="), std::nullopt);
}

} // namespace
} // namespace pacer::metrics

// The serving evaluation of one level (docs/protocol.md §4.2-4.4): admission, per-response and
// timeline metrics, one session from its files' text, and the level's aggregate. Every
// expected number is worked out by hand in a comment next to it.

#include <pacer/metrics/level.hpp>
#include <pacer/protocol/events.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "unit/serving_trace_builders.hpp"
#include <string>
#include <vector>

namespace pacer::metrics {
namespace {

namespace json = boost::json;
using namespace test;

// 1764 samples at 22050 Hz (VoiceChat): one 80 ms unit of output.
constexpr std::size_t unit_samples = 1764;

trace_line admission_record(int attempt, bool exhausted = false, int status = 503) {
    return line("admission", 0.1 * attempt,
                fmt::format(R"({{"type":"connection_denied","http_status":{},"attempt":{}{}}})",
                            status, attempt, exhausted ? R"(,"exhausted":true)" : ""));
}

trace_line unit_done(double t, std::string_view id_json) {
    return line(
        "receive", t,
        fmt::format(R"({{"type":"sglang.unit.done","event_id":"u","unit_id":{}}})", id_json));
}

trace_line response_created(double t, std::string_view id) {
    return line("receive", t,
                fmt::format(R"({{"type":"response.created","event_id":"rc{}","response":)"
                            R"({{"id":"{}","status":"in_progress","output":[]}}}})",
                            id, id));
}

trace_line response_done(double t, std::string_view id, std::string_view status) {
    return line("receive", t,
                fmt::format(R"({{"type":"response.done","event_id":"rd{}","response":)"
                            R"({{"id":"{}","status":"{}"}}}})",
                            id, id, status));
}

// A VoiceChat session of D = 0.32 s (4 appends on the grid from 10.0) shaped like the mock
// server: `packets` units answered, unit k's audio (media time k*80 ms) at 10.05 + 0.08 k and
// its unit.done 1 ms later; the EOS tail unit `unit_4` (empty, input unit-aligned) at 10.30.
std::vector<trace_line> voicechat_trace(int packets, std::string_view response_status) {
    std::vector<trace_line> t;
    t.push_back(event("receive", 9.90, "session.created", 0));
    t.push_back(event("send", 9.91, "session.update", 1));
    t.push_back(event("receive", 9.92, "session.updated", 2));
    for (int i = 0; i < 4; ++i)
        t.push_back(append(10.0 + 0.08 * i, i));
    t.push_back(response_created(10.04, "r"));
    for (int k = 0; k < packets; ++k) {
        const double at = 10.05 + 0.08 * k;
        t.push_back(audio(at, unit_samples, k, "r", 80.0 * k));
        t.push_back(unit_done(at + 0.001, fmt::format(R"("unit_{}")", k)));
    }
    t.push_back(event("send", 10.30, "sglang.input_audio.end", 3));
    t.push_back(response_done(10.30, "r", response_status));
    if (packets == 4)
        t.push_back(unit_done(10.30, R"("unit_4")"));
    t.push_back(event("receive", 10.31, "sglang.input_audio.drained", 4));
    t.push_back(event("send", 10.32, "session.close", 5));
    t.push_back(line("receive", 10.33,
                     R"({"type":"session.closed","event_id":"x","reason":"client_closed"})"));
    return t;
}

session_params d_032() {
    session_params c;
    c.input_duration_s = 0.32;
    return c;
}

level_session evaluate(std::uint32_t index, const std::vector<trace_line>& trace,
                       const send_receipts& receipts, std::span<const std::string> extra = {}) {
    return evaluate_session(index, trace_text(trace), receipts_text(receipts), voicechat(), d_032(),
                            extra);
}

// The rejected C4 session: three numbered denials, then the exhausted fourth one.
std::vector<trace_line> rejected_trace() {
    return {admission_record(1), admission_record(2), admission_record(3),
            admission_record(4, true)};
}

send_receipts rejected_receipts() {
    send_receipts r;
    r.admitted = false;
    return r;
}

std::string joined(const std::vector<std::string>& v) {
    return fmt::format("{}", fmt::join(v, "; "));
}

// --- admission (4.4) ----------------------------------------------------------------------

TEST(ClassifyAdmission, ReceiptsFlagAdmits) {
    send_receipts r;
    r.admitted = true;
    const auto a = classify_admission({}, r);
    EXPECT_TRUE(a.admitted);
    EXPECT_FALSE(a.rejected);
}

TEST(ClassifyAdmission, AnyReceiveLineAdmits) {
    // C1-C3 receipts carry no flag; even the exhausted record cannot reject a session that
    // received something.
    auto t = rejected_trace();
    t.push_back(event("receive", 1.0, "session.created", 0));
    const auto a = classify_admission(t, send_receipts{});
    EXPECT_TRUE(a.admitted);
    EXPECT_FALSE(a.rejected);
    EXPECT_EQ(a.denials, 4u);
}

TEST(ClassifyAdmission, ConnectionAdmittedRecordAdmits) {
    const std::vector<trace_line> t{admission_record(1),
                                    line("admission", 0.5, R"({"type":"connection_admitted"})")};
    const auto a = classify_admission(t, rejected_receipts());
    EXPECT_TRUE(a.admitted);
    EXPECT_FALSE(a.rejected);
    EXPECT_EQ(a.denials, 1u);
}

TEST(ClassifyAdmission, RejectedNeeds503AndExhausted) {
    const auto a = classify_admission(rejected_trace(), rejected_receipts());
    EXPECT_FALSE(a.admitted);
    EXPECT_TRUE(a.rejected);
    EXPECT_EQ(a.denials, 4u);

    // 503 denials without `exhausted` (C1-C3: the fourth denial writes an error line instead).
    const std::vector<trace_line> not_exhausted{admission_record(1), admission_record(2),
                                                admission_record(3)};
    EXPECT_FALSE(classify_admission(not_exhausted, send_receipts{}).rejected);
    // `exhausted` with another status is no capacity rejection.
    const std::vector<trace_line> other_status{admission_record(4, true, 500)};
    EXPECT_FALSE(classify_admission(other_status, send_receipts{}).rejected);
    // Nothing at all: neither admitted nor rejected (a hard failure).
    const auto none = classify_admission({}, send_receipts{});
    EXPECT_FALSE(none.admitted);
    EXPECT_FALSE(none.rejected);
}

// --- per-response metrics (4.4) -----------------------------------------------------------

TEST(ResponseMetrics, InterleavedResponsesAreMeasuredApart) {
    // Packets of 80 ms. A: created 1.00, audio 1.10, 1.30, 1.38. B: created 1.05, audio 1.12,
    // 1.23. C: audio 1.50 only, never created. An invalid delta of A at 1.40 is no packet.
    const std::vector<trace_line> t{
        response_created(1.00, "A"),
        response_created(1.05, "B"),
        audio(1.10, unit_samples, 0, "A"),
        audio(1.12, unit_samples, 1, "B"),
        audio(1.23, unit_samples, 2, "B"),
        audio(1.30, unit_samples, 3, "A"),
        audio(1.38, unit_samples, 4, "A"),
        line("receive", 1.40,
             R"({"type":"response.output_audio.delta","response_id":"A","delta":"AAA"})"),
        response_done(1.45, "A", "completed"),
        response_done(1.46, "B", "cancelled"),
        audio(1.50, unit_samples, 5, "C"),
    };
    const auto rs = compute_response_metrics(t, voicechat());
    ASSERT_EQ(rs.size(), 3u);
    const auto &a = rs[0], &b = rs[1], &c = rs[2];
    EXPECT_EQ(a.id, "A");
    EXPECT_EQ(b.id, "B");
    EXPECT_EQ(c.id, "C");

    // A: TTFA 1.10 - 1.00 = 0.10. Gaps 0.20 and 0.08 -> excess 0.20 - 0.08 = 0.12 and 0.
    // Drift: 0, 1.30 - (1.10 + 0.08) = 0.12, 1.38 - (1.10 + 0.16) = 0.12 -> max 0.12.
    EXPECT_NEAR(*a.ttfa_s, 0.10, 1e-9);
    ASSERT_EQ(a.gap_excess_s.size(), 2u);
    EXPECT_NEAR(a.gap_excess_s[0], 0.12, 1e-9);
    EXPECT_NEAR(a.gap_excess_s[1], 0.0, 1e-9);
    EXPECT_NEAR(*a.max_drift_s, 0.12, 1e-9);
    EXPECT_NEAR(*a.required_playout_buffer_s, 0.12, 1e-9);
    EXPECT_EQ(a.audio_packets, 3u);
    EXPECT_NEAR(a.output_duration_s, 0.24, 1e-12);
    EXPECT_EQ(a.status, "completed");

    // B: TTFA 1.12 - 1.05 = 0.07. One gap 0.11 -> excess 0.03; drift 1.23 - 1.20 = 0.03.
    // Pooled over both responses the gaps would be 1.10->1.12->1.23->1.30->1.38, with excess
    // 0, 0.03, 0, 0: four values and no 0.12. Per response there are three: 0.12, 0, 0.03.
    EXPECT_NEAR(*b.ttfa_s, 0.07, 1e-9);
    ASSERT_EQ(b.gap_excess_s.size(), 1u);
    EXPECT_NEAR(b.gap_excess_s[0], 0.03, 1e-9);
    EXPECT_NEAR(*b.max_drift_s, 0.03, 1e-9);
    EXPECT_NEAR(*b.required_playout_buffer_s, 0.03, 1e-9);
    EXPECT_EQ(b.status, "cancelled");

    // C: no response.created, so no TTFA; one packet: drift 0, no gap.
    EXPECT_FALSE(c.created_s);
    EXPECT_FALSE(c.ttfa_s);
    EXPECT_TRUE(c.gap_excess_s.empty());
    EXPECT_DOUBLE_EQ(*c.max_drift_s, 0.0);
    EXPECT_FALSE(c.status);
}

TEST(ResponseMetrics, ResponseWithoutAudioHasNoTimings) {
    const std::vector<trace_line> t{response_created(1.0, "T"),
                                    response_done(2.0, "T", "completed")};
    const auto rs = compute_response_metrics(t, minicpmo());
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_DOUBLE_EQ(*rs[0].created_s, 1.0);
    EXPECT_FALSE(rs[0].ttfa_s);
    EXPECT_FALSE(rs[0].max_drift_s);
    EXPECT_EQ(rs[0].audio_packets, 0u);
}

// --- timeline (4.4) -----------------------------------------------------------------------

TEST(TimelineMetrics, UnitLagExcludesTerminalUnitsAndReportsBadIds) {
    // D = 29 packets = 2.32 s, u = 0.08: 2.32 / 0.08 = 28.999999999999996 in doubles, so
    // floor((D + 1e-9) / u) = 29 full units: unit_28 is timed, unit_29 is terminal.
    session_params c;
    c.input_duration_s = 29 * 2560 / 32000.0;
    send_receipts r;
    r.session_start_s = 10.0;
    const std::vector<trace_line> t{
        unit_done(10.10, R"("unit_0")"),  // 10.10 - (10.0 + 1 * 0.08) = 0.02
        unit_done(10.50, R"("unit_0")"),  // a repeat: only the first receipt counts
        unit_done(12.35, R"("unit_28")"), // 12.35 - (10.0 + 29 * 0.08 = 12.32) = 0.03
        unit_done(12.40, R"("unit_29")"), // terminal: excluded
        unit_done(12.41, R"("unit_x")"),  // bad id
        unit_done(12.42, "7"),            // not a string
        line("receive", 12.43, R"({"type":"sglang.unit.done","event_id":"v"})"), // no id
    };
    const auto m = compute_timeline_metrics(t, r, voicechat(), c);
    ASSERT_EQ(m.unit_lag_s.size(), 2u);
    EXPECT_NEAR(m.unit_lag_s[0], 0.02, 1e-9);
    EXPECT_NEAR(m.unit_lag_s[1], 0.03, 1e-9);
    EXPECT_EQ(m.excluded_terminal_units, std::vector<std::size_t>{29});
    const std::vector<std::string> errors{"invalid completed unit id: unit_x",
                                          "invalid completed unit id: 7",
                                          "invalid completed unit id: null"};
    EXPECT_EQ(m.errors, errors);
    EXPECT_EQ(json::serialize(m.to_json().at("excluded_terminal_units")), R"(["unit_29"])");

    // Without a session start nothing is timed, but the terminal unit is still excluded.
    r.session_start_s.reset();
    const auto unstarted = compute_timeline_metrics(t, r, voicechat(), c);
    EXPECT_TRUE(unstarted.unit_lag_s.empty());
    EXPECT_EQ(unstarted.excluded_terminal_units, std::vector<std::size_t>{29});
}

TEST(TimelineMetrics, MediaLagTakesTheFirstPacketOfEachMediaTime) {
    // Appends scheduled at 10.00, 10.08, 10.16 and sent 1, 2 and 3 ms late.
    send_receipts r;
    r.session_start_s = 10.0;
    for (int i = 0; i < 3; ++i)
        r.appends.push_back(receipt(fmt::format("c{}", i), static_cast<std::uint64_t>(i),
                                    10.0 + 0.08 * i, 10.0 + 0.08 * i + 0.001 * (i + 1),
                                    10.0 + 0.08 * i + 0.01));
    const std::vector<trace_line> t{
        audio(10.12, unit_samples, 0, "r", 0.0),      // media 0: first
        audio(10.13, unit_samples, 1, "r", 0.0),      // media 0 again: ignored
        audio(10.21, unit_samples, 2, "r", 80.0),     // media 80: first
        audio(10.22, unit_samples, 3, "r", 80.00001), // rounds to 80.000: ignored
        audio(10.30, unit_samples, 4, "r", 1000.0),   // no append at 1000 ms
        audio(10.31, unit_samples, 5, "r"),           // no media time
        line("receive", 10.32,                        // invalid audio: no packet
             R"({"type":"response.output_audio.delta","response_id":"r","delta":"AAA",)"
             R"("sglang":{"media_time":{"t_start_ms":160}}})"),
        audio(10.40, unit_samples, 6, "r", 160.0004), // rounds to 160.000: first of 160
    };
    const auto m = compute_timeline_metrics(t, r, voicechat(), d_032());
    // Schedule lag: 10.12 - 10.00 = 0.12, 10.21 - 10.08 = 0.13, 10.40 - 10.16 = 0.24.
    // Send lag:     10.12 - 10.001 = 0.119, 10.21 - 10.082 = 0.128, 10.40 - 10.163 = 0.237.
    ASSERT_EQ(m.media_schedule_lag_s.size(), 3u);
    EXPECT_NEAR(m.media_schedule_lag_s[0], 0.12, 1e-9);
    EXPECT_NEAR(m.media_schedule_lag_s[1], 0.13, 1e-9);
    EXPECT_NEAR(m.media_schedule_lag_s[2], 0.24, 1e-9);
    ASSERT_EQ(m.media_send_lag_s.size(), 3u);
    EXPECT_NEAR(m.media_send_lag_s[0], 0.119, 1e-9);
    EXPECT_NEAR(m.media_send_lag_s[1], 0.128, 1e-9);
    EXPECT_NEAR(m.media_send_lag_s[2], 0.237, 1e-9);
}

// --- one session --------------------------------------------------------------------------

TEST(EvaluateSession, ConformingVoiceChatSessionSucceeds) {
    const auto s = evaluate(0, voicechat_trace(4, "completed"), receipts_for(10.0, 4));
    EXPECT_EQ(s.status, session_status::succeeded) << joined(s.errors);
    EXPECT_TRUE(s.success());
    EXPECT_TRUE(s.errors.empty()) << joined(s.errors);
    EXPECT_TRUE(s.artifact_errors.empty()) << joined(s.artifact_errors);
    EXPECT_TRUE(s.admitted.admitted);
    EXPECT_FALSE(s.admitted.rejected);

    // 4.2: TTFA 10.05 - 10.00; 4 x 1764 samples over D = 0.32 s -> coverage 1. Playback
    // starts at 10.05 + 0.08 = 10.13 and every packet is there before it is due: no underrun.
    EXPECT_NEAR(*s.session.ttfa_s, 0.05, 1e-9);
    EXPECT_NEAR(*s.session.coverage, 1.0, 1e-12);
    EXPECT_EQ(s.session.underrun->count, 0u);
    EXPECT_DOUBLE_EQ(*s.send_lateness_p99_s, 0.0); // every append on its schedule

    // The tail unit.done makes 5 completed of 4 expected units: a 4.3 error, which does not
    // decide a continuous profile's status.
    EXPECT_EQ(s.units.errors, std::vector<std::string>{"completed 5/4 units"});

    // Response r: TTFA 10.05 - 10.04 = 0.01.
    ASSERT_EQ(s.responses.size(), 1u);
    EXPECT_NEAR(*s.responses[0].ttfa_s, 0.01, 1e-9);

    // Timeline: unit k done at 10.051 + 0.08 k, due at 10.0 + 0.08 (k + 1): lag -0.029.
    // D / u = 4 full units; unit_4 is the terminal one. Media send lag 10.05 - 10.00 = 0.05.
    ASSERT_EQ(s.timeline.unit_lag_s.size(), 4u);
    for (double lag : s.timeline.unit_lag_s)
        EXPECT_NEAR(lag, -0.029, 1e-9);
    EXPECT_EQ(s.timeline.excluded_terminal_units, std::vector<std::size_t>{4});
    ASSERT_EQ(s.timeline.media_send_lag_s.size(), 4u);
    EXPECT_NEAR(s.timeline.media_send_lag_s[3], 0.05, 1e-9);

    const auto j = s.to_json();
    EXPECT_EQ(j.at("index").as_uint64(), 0u);
    EXPECT_EQ(j.at("status").as_string(), "succeeded");
    EXPECT_EQ(j.at("success").as_bool(), true);
    EXPECT_EQ(j.at("admitted").as_bool(), true);
    EXPECT_EQ(j.at("errors").as_array().size(), 0u);
    EXPECT_DOUBLE_EQ(j.at("output_coverage").as_double(), 1.0);
    EXPECT_EQ(j.at("units").at("success").as_bool(), false);
    EXPECT_EQ(j.at("responses").as_array().size(), 1u);
    EXPECT_EQ(j.at("timeline").at("unit_lag_s").at("n").as_uint64(), 4u);
    EXPECT_EQ(j.at("response_ttfa_s").at("n").as_uint64(), 1u);
}

TEST(EvaluateSession, ClientTaskErrorFailsTheSession) {
    const std::vector<std::string> extra{"client task: RuntimeError: boom"};
    const auto s = evaluate(0, voicechat_trace(4, "completed"), receipts_for(10.0, 4), extra);
    EXPECT_EQ(s.status, session_status::failed);
    EXPECT_EQ(s.errors, extra);
    EXPECT_EQ(s.session.errors, extra);
}

TEST(EvaluateSession, NonContinuousProfileFailsOnUnitErrors) {
    // MiniCPM-o, D = 0.32 s: ceil(0.32 / 1) = 1 expected unit, but the trace holds 5.
    const auto t = voicechat_trace(4, "completed");
    const auto s = evaluate_session(0, trace_text(t), receipts_text(receipts_for(10.0, 4)),
                                    minicpmo(), d_032());
    EXPECT_TRUE(s.session.errors.empty()) << joined(s.session.errors);
    EXPECT_EQ(s.status, session_status::failed);
    EXPECT_EQ(s.errors, std::vector<std::string>{"completed 5/1 units"});
    EXPECT_FALSE(s.session.coverage); // 4.4: continuous fields are null

    // One append short: 4.2 and 4.3 both report it, the session names it once.
    const auto short_by_one = evaluate_session(
        0, trace_text(t), receipts_text(receipts_for(10.0, 3)), minicpmo(), d_032());
    const std::vector<std::string> errors{"sent 3/4 input frames", "completed 5/1 units"};
    EXPECT_EQ(short_by_one.errors, errors);
}

TEST(EvaluateSession, MissingTraceGetsTheUnreadableTreatment) {
    const auto s = evaluate_session(3, std::nullopt, receipts_text(receipts_for(10.0, 4)),
                                    voicechat(), d_032());
    EXPECT_EQ(s.artifact_errors, std::vector<std::string>{"missing trace.jsonl"});
    EXPECT_EQ(s.errors,
              std::vector<std::string>{"unreadable session artifacts: missing trace.jsonl"});
    EXPECT_EQ(s.status, session_status::failed);
    EXPECT_TRUE(s.admitted.admitted); // the receipts say so
    // 4.2: coverage 0, underrun count 1, total = worst = D = 0.32, ratio 1.
    EXPECT_DOUBLE_EQ(*s.session.coverage, 0.0);
    EXPECT_EQ(s.session.underrun->count, 1u);
    EXPECT_DOUBLE_EQ(s.session.underrun->total_s, 0.32);
    EXPECT_DOUBLE_EQ(s.session.underrun->worst_s, 0.32);
    EXPECT_DOUBLE_EQ(*s.session.underrun_ratio, 1.0);
    EXPECT_FALSE(s.session.ttfa_s);
    EXPECT_TRUE(s.session.gaps_s.empty());
    EXPECT_TRUE(s.session.sends.lateness_s.empty());
    EXPECT_FALSE(s.send_lateness_p99_s);
    // 4.3: ceil(0.32 / 0.08) = 4 expected units, all missed.
    EXPECT_EQ(s.units.expected_units, 4u);
    EXPECT_EQ(s.units.missed_units, 4u);
    EXPECT_DOUBLE_EQ(*s.units.unit_miss_rate, 1.0);
    EXPECT_TRUE(s.responses.empty());
    EXPECT_TRUE(s.timeline.unit_lag_s.empty());
    EXPECT_EQ(s.to_json().at("artifact_errors").as_array().size(), 1u);
}

TEST(EvaluateSession, UnreadableFilesGetTheUnreadableTreatment) {
    // One unreadable trace line spoils the whole trace; the receipts are cut short.
    auto text = trace_text(voicechat_trace(4, "completed"));
    text.insert(0, "not json\n");
    const auto s =
        evaluate_session(1, text, std::string_view("{\"appends\":"), voicechat(), d_032());
    ASSERT_EQ(s.artifact_errors.size(), 2u) << joined(s.artifact_errors);
    EXPECT_EQ(s.artifact_errors[0].rfind("trace line 1: unreadable JSON", 0), 0u);
    EXPECT_EQ(s.artifact_errors[1].rfind("input-send-receipts.json: unreadable JSON", 0), 0u);
    EXPECT_EQ(s.status, session_status::failed);
    EXPECT_TRUE(s.admitted.admitted); // its readable lines received events
    EXPECT_DOUBLE_EQ(*s.session.coverage, 0.0);
    EXPECT_DOUBLE_EQ(*s.session.underrun_ratio, 1.0);
    EXPECT_EQ(s.units.missed_units, 4u);
    EXPECT_TRUE(s.responses.empty()); // empty distributions, though audio was readable
    EXPECT_TRUE(s.timeline.media_send_lag_s.empty());

    // Both files missing: not admitted, not rejected, failed.
    const auto none = evaluate_session(2, std::nullopt, std::nullopt, voicechat(), d_032());
    EXPECT_EQ(none.artifact_errors.size(), 2u);
    EXPECT_EQ(none.status, session_status::failed);
    EXPECT_FALSE(none.admitted.admitted);
    EXPECT_DOUBLE_EQ(none.session.underrun->total_s, 0.32);
}

TEST(EvaluateSession, RejectedSessionHasEmptyMetrics) {
    const auto s = evaluate(2, rejected_trace(), rejected_receipts());
    EXPECT_EQ(s.status, session_status::rejected);
    EXPECT_FALSE(s.success());
    EXPECT_FALSE(s.admitted.admitted);
    EXPECT_TRUE(s.admitted.rejected);
    EXPECT_EQ(s.admitted.denials, 4u);
    EXPECT_TRUE(s.artifact_errors.empty());
    EXPECT_EQ(s.errors,
              std::vector<std::string>{"admission rejected: HTTP 503, retries exhausted"});
    EXPECT_DOUBLE_EQ(*s.session.coverage, 0.0);
    EXPECT_DOUBLE_EQ(s.session.underrun->total_s, 0.32);
    EXPECT_EQ(s.units.missed_units, 4u);
    EXPECT_FALSE(s.send_lateness_p99_s);
    const auto j = s.to_json();
    EXPECT_EQ(j.at("status").as_string(), "rejected");
    EXPECT_EQ(j.at("rejected").as_bool(), true);
    EXPECT_EQ(j.at("admission_denials").as_uint64(), 4u);
}

// --- the level ----------------------------------------------------------------------------

TEST(AggregateLevel, MixOfSucceededFailedAndRejected) {
    // 0 succeeds: 4 packets, coverage 1, no underrun, 5 units done (0 missed).
    // 1 fails: 2 packets (coverage 0.5), its response cancelled, 2 of 4 units done.
    //   Playback starts at 10.05 + 0.08 = 10.13 with 0.16 s buffered; the sentinel at
    //   10.0 + 0.32 + 0.08 = 10.40 finds 0.27 s elapsed: one underrun of 0.27 - 0.16 = 0.11.
    // 2 is rejected: coverage 0, underrun 1 x 0.32, all 4 units missed.
    const std::vector<level_session> sessions{
        evaluate(0, voicechat_trace(4, "completed"), receipts_for(10.0, 4)),
        evaluate(1, voicechat_trace(2, "cancelled"), receipts_for(10.0, 4)),
        evaluate(2, rejected_trace(), rejected_receipts()),
    };
    ASSERT_EQ(sessions[0].status, session_status::succeeded) << joined(sessions[0].errors);
    ASSERT_EQ(sessions[1].status, session_status::failed);
    ASSERT_EQ(sessions[2].status, session_status::rejected);
    const auto a = aggregate_level(sessions, voicechat());
    auto num = [&](std::string_view key) { return a.at(key).to_number<double>(); };

    // Counts.
    EXPECT_EQ(a.at("attempted_sessions").as_uint64(), 3u);
    EXPECT_EQ(a.at("admitted_sessions").as_uint64(), 2u);
    EXPECT_EQ(a.at("rejected_sessions").as_uint64(), 1u);
    EXPECT_EQ(a.at("successful_sessions").as_uint64(), 1u);
    EXPECT_EQ(a.at("successful_admitted_sessions").as_uint64(), 1u);
    EXPECT_EQ(a.at("playout_sessions").as_uint64(), 2u);

    // 4.2 coverage over all 3 attempted: {1, 0.5, 0} -> p50 0.5.
    EXPECT_EQ(a.at("output_coverage").at("n").as_uint64(), 3u);
    EXPECT_NEAR(a.at("output_coverage").at("p50").as_double(), 0.5, 1e-12);
    // S-W coverage over the 2 admitted: {1, 0.5} -> p50 (1 + 0.5) / 2 = 0.75.
    EXPECT_EQ(a.at("admitted_output_coverage").at("n").as_uint64(), 2u);
    EXPECT_NEAR(a.at("admitted_output_coverage").at("p50").as_double(), 0.75, 1e-12);

    // 4.2 underrun over all attempted: sessions 1 and 2; total 0 + 0.11 + 0.32 = 0.43 over
    // 3 x 0.32 = 0.96 s of input; worst 0.32.
    EXPECT_EQ(a.at("underrun_sessions").as_uint64(), 2u);
    EXPECT_EQ(a.at("underrun_count").as_uint64(), 2u);
    EXPECT_NEAR(num("underrun_total_s"), 0.43, 1e-9);
    EXPECT_NEAR(num("underrun_worst_s"), 0.32, 1e-12);
    EXPECT_NEAR(num("underrun_ratio"), 0.43 / 0.96, 1e-9);
    // S-W underrun over the 2 admitted continuous sessions: 0.11 over 2 x 0.32 = 0.64 s.
    EXPECT_EQ(a.at("playout_underrun_sessions").as_uint64(), 1u);
    EXPECT_EQ(a.at("playout_underrun_count").as_uint64(), 1u);
    EXPECT_NEAR(num("playout_underrun_total_s"), 0.11, 1e-9);
    EXPECT_NEAR(num("playout_underrun_worst_s"), 0.11, 1e-9);
    EXPECT_NEAR(num("playout_underrun_ratio"), 0.11 / 0.64, 1e-9);

    // 4.3 units over all attempted: expected 4 + 4 + 4 = 12, completed 5 + 2 + 0 = 7,
    // missed 0 + (4 - 2) + 4 = 6 -> unit_miss_rate 6 / 12 = 0.5.
    const auto& u = a.at("units").as_object();
    EXPECT_EQ(u.at("expected_units").as_uint64(), 12u);
    EXPECT_EQ(u.at("completed_units").as_uint64(), 7u);
    EXPECT_EQ(u.at("missed_units").as_uint64(), 6u);
    EXPECT_NEAR(u.at("unit_miss_rate").as_double(), 0.5, 1e-12);
    EXPECT_EQ(u.at("responses").as_uint64(), 2u);

    // Distributions: TTFA of the 2 sessions with audio; send lateness of 4 + 4 appends;
    // response TTFA of the 2 admitted responses; timeline lags of units 0-3 and 0-1 (unit_4
    // is terminal) and the first packet of media times 0-3 and 0-80 ms: 4 + 2 each.
    EXPECT_EQ(a.at("ttfa_s").at("n").as_uint64(), 2u);
    EXPECT_EQ(a.at("session_ttfa_s"), a.at("ttfa_s"));
    EXPECT_EQ(a.at("send_lateness_s").at("n").as_uint64(), 8u);
    EXPECT_EQ(a.at("response_ttfa_s").at("n").as_uint64(), 2u);
    EXPECT_EQ(a.at("unit_lag_s").at("n").as_uint64(), 6u);
    EXPECT_EQ(a.at("media_send_lag_s").at("n").as_uint64(), 6u);
    EXPECT_EQ(a.at("media_schedule_lag_s").at("n").as_uint64(), 6u);
}

TEST(AggregateLevel, NoPlayoutForANonContinuousProfile) {
    const std::vector<level_session> sessions{
        evaluate_session(0, trace_text(voicechat_trace(4, "completed")),
                         receipts_text(receipts_for(10.0, 4)), minicpmo(), d_032())};
    const auto a = aggregate_level(sessions, minicpmo());
    EXPECT_EQ(a.at("playout_sessions").as_uint64(), 0u);
    EXPECT_EQ(a.at("playout_underrun_ratio"), nullptr);
    EXPECT_EQ(a.at("playout_underrun_count"), nullptr);
    EXPECT_EQ(a.at("admitted_output_coverage").at("n").as_uint64(), 0u);
    EXPECT_DOUBLE_EQ(a.at("units").at("unit_s").as_double(), 1.0);
}

} // namespace
} // namespace pacer::metrics

// The lateness detector of `pacer run`'s summary: a packet is late when its send started more
// than one packet period (80 ms) off its deadline on the session's grid, either way; a run
// qualifies only with no late packet; loop lags over a period are counted.

#include <pacer/metrics/pacing.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/transport/error.hpp>

#include <boost/asio/error.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

using namespace pacer;

// A session whose grid starts at 100 s and whose packet k started `off[k]` seconds off it.
session::session_result sent_off_grid(std::uint32_t index, const std::vector<double>& off) {
    session::session_result r;
    r.index = index;
    r.admitted = true;
    r.session_start_s = 100.0;
    r.expected_appends = off.size();
    for (std::size_t k = 0; k < off.size(); ++k) {
        session::append_receipt a;
        a.seq = k;
        a.scheduled_s = 100.0 + 0.080 * static_cast<double>(k);
        a.start_s = a.scheduled_s + off[k];
        a.completed_s = a.start_s + 0.0001;
        r.appends.push_back(a);
    }
    return r;
}

TEST(pacing, late_means_more_than_one_period_off_the_grid) {
    std::vector<session::session_result> sessions{
        sent_off_grid(0, {0.0, 0.079, 0.001}),   // within a period: on time
        sent_off_grid(1, {0.0, 0.081, 0.140}),   // two late packets, one session
        sent_off_grid(2, {0.0, 0.0, -0.081}),    // early by more than a period is off too
        sent_off_grid(3, {0.0, -0.079, 0.0795}), // on time
    };
    const auto f = metrics::summarize_pacing(sessions, {{0.0, 0.079, 0.2}, {0.081}});
    EXPECT_EQ(f.late_packets, 3u);
    EXPECT_EQ(f.sessions_with_late_packet, 2u);
    EXPECT_FALSE(f.pacing_qualified);
    EXPECT_EQ(f.json.at("packets").at("late").as_uint64(), 3u);
    EXPECT_EQ(f.json.at("sessions").at("with_late_packet").as_uint64(), 2u);
    EXPECT_EQ(f.json.at("loop_lag_s").at("over_80ms").as_uint64(), 2u);
    EXPECT_EQ(f.json.at("loop_lag_s").at("contexts").as_uint64(), 2u);
    EXPECT_DOUBLE_EQ(f.json.at("loop_lag_s").at("max").as_double(), 0.2);
}

TEST(pacing, a_run_within_the_period_qualifies_and_one_that_sent_nothing_does_not) {
    const auto on_time = metrics::summarize_pacing(
        {sent_off_grid(0, {0.0, 0.079, -0.079}), sent_off_grid(1, {0.05})}, {{0.079}});
    EXPECT_EQ(on_time.late_packets, 0u);
    EXPECT_EQ(on_time.sessions_with_late_packet, 0u);
    EXPECT_TRUE(on_time.pacing_qualified);

    session::session_result never_admitted;
    const auto nothing = metrics::summarize_pacing({never_admitted}, {});
    EXPECT_EQ(nothing.late_packets, 0u);
    EXPECT_FALSE(nothing.pacing_qualified);
}

TEST(pacing, an_error_counts_once_per_session_that_had_it) {
    const failure canceled{transport::transport_errc::io_failed, "",
                           boost::asio::error::operation_aborted};
    auto twice = sent_off_grid(0, {0.0});
    twice.failures = {canceled, canceled};
    auto once = sent_off_grid(1, {0.0});
    once.failures = {canceled};
    const auto f = metrics::summarize_pacing({twice, once}, {});
    const auto& errors = f.json.at("errors").as_array();
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].at("message").as_string(), "OSError: Operation canceled");
    EXPECT_EQ(errors[0].at("sessions").as_uint64(), 2u);
}

// Metrics read each packet's deadline as the session recorded it (`scheduled_s`), never
// recompute it from the grid's origin: lockstep packets are scheduled at their own sends, far
// off `session_start_s + seq * 80 ms`, and are not late.
TEST(pacing, deviations_are_measured_from_the_recorded_scheduled_s) {
    session::session_result r;
    r.admitted = true;
    r.session_start_s = 100.0;
    r.expected_appends = 3;
    for (std::size_t k = 0; k < 3; ++k) {
        session::append_receipt a;
        a.seq = k;
        a.scheduled_s = 100.0 + 0.5 * static_cast<double>(k); // waited for each unit
        a.start_s = a.scheduled_s + 0.002;
        a.completed_s = a.start_s + 0.0001;
        r.appends.push_back(a);
    }
    const auto d = metrics::packet_deviations(r);
    ASSERT_EQ(d.size(), 3u);
    for (double x : d)
        EXPECT_NEAR(x, 0.002, 1e-9);
    const auto f = metrics::summarize_pacing({r}, {});
    EXPECT_EQ(f.late_packets, 0u);
    EXPECT_TRUE(f.pacing_qualified);
}

} // namespace

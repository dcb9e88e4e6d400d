// Send stalls in the summary: writes over one packet period are counted per session, the
// pending write a deadline cut short is reported, and N sessions stuck the same way make one
// error line, not N.

#include <pacer/metrics/merge.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/session/error.hpp>

#include <gtest/gtest.h>

namespace {

using namespace pacer;

session::session_result stalled(std::uint32_t index, std::uint64_t stalls, double longest,
                                std::optional<double> pending, failure error) {
    session::session_result r;
    r.index = index;
    r.admitted = true;
    r.stalled_sends = stalls;
    r.longest_write_s = longest;
    r.pending_write_s = pending;
    r.failures.push_back(std::move(error));
    return r;
}

TEST(send_stalls, counted_per_session_with_the_longest_write_and_pending_send) {
    std::vector<session::session_result> sessions{
        stalled(0, 3, 2.5, 2.5, {session::session_errc::timeout_send_pending, "4", {}, 2.5}),
        stalled(1, 2, 1.75, 1.75, {session::session_errc::timeout_send_pending, "4", {}, 1.75}),
        stalled(2, 0, 0.001, 0.001, {session::session_errc::timeout, "4"}), // not stalled
    };
    const auto f = metrics::summarize_pacing(sessions, {});
    const auto& st = f.json.at("send_stalls").as_object();
    EXPECT_DOUBLE_EQ(st.at("threshold_s").as_double(), 0.080);
    EXPECT_EQ(st.at("sessions").as_uint64(), 2u);
    EXPECT_EQ(st.at("stalled_sends").as_uint64(), 5u);
    EXPECT_DOUBLE_EQ(st.at("longest_write_s").as_double(), 2.5);
    EXPECT_EQ(st.at("sessions_ended_with_send_pending").as_uint64(), 2u);
    EXPECT_DOUBLE_EQ(st.at("longest_pending_s").as_double(), 2.5);
    // The two stalled timeouts are one message (their figures are above), the plain one another.
    const auto& errors = f.json.at("errors").as_array();
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_EQ(errors[0].at("message").as_string(), "Session timeout after 4s");
    EXPECT_EQ(errors[0].at("sessions").as_uint64(), 1u);
    EXPECT_EQ(errors[1].at("message").as_string(),
              "Session timeout after 4s (a send was pending: the server stopped reading)");
    EXPECT_EQ(errors[1].at("sessions").as_uint64(), 2u);
}

TEST(send_stalls, missing_figures_are_null_not_zero) {
    session::session_result r; // never wrote anything
    const auto f = metrics::summarize_pacing({r}, {});
    const auto& st = f.json.at("send_stalls").as_object();
    EXPECT_EQ(st.at("sessions").as_uint64(), 0u);
    EXPECT_TRUE(st.at("longest_write_s").is_null());
    EXPECT_TRUE(st.at("longest_pending_s").is_null());
}

TEST(send_stalls, merged_parts_add_counts_and_keep_the_longest) {
    auto part = [](double longest) {
        std::vector<session::session_result> s{
            stalled(0, 1, longest, longest, {session::session_errc::timeout, "4"})};
        metrics::run_part p;
        p.summary["pacing"] = metrics::summarize_pacing(s, {}).json;
        return p;
    };
    const auto m = metrics::merge_parts({part(1.5), part(3.0)});
    const auto& st = m.at("pacing").at("send_stalls").as_object();
    EXPECT_EQ(st.at("sessions").to_number<int>(), 2);
    EXPECT_EQ(st.at("stalled_sends").to_number<int>(), 2);
    EXPECT_EQ(st.at("sessions_ended_with_send_pending").to_number<int>(), 2);
    EXPECT_DOUBLE_EQ(st.at("longest_write_s").as_double(), 3.0);
    EXPECT_DOUBLE_EQ(st.at("longest_pending_s").as_double(), 3.0);
}

} // namespace

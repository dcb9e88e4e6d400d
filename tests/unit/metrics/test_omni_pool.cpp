// `server.omni` pooled over worker processes (`pacer run --processes N`).

#include <pacer/metrics/omni.hpp>
#include <pacer/metrics/realtime.hpp>

#include <gtest/gtest.h>

namespace {

using namespace pacer;

trace::session_result omni_session(std::uint64_t responses, std::vector<double> rtt,
                                   std::string stall = {}) {
    trace::session_result r;
    trace::omni_figures f;
    f.responses = responses;
    f.completed = responses;
    f.commits = responses + (stall.empty() ? 0 : 1);
    f.playback_acks = rtt.size();
    f.acknowledged = rtt.size();
    f.audio_received_ms = 1500;
    f.ack_round_trip_s = std::move(rtt);
    f.stall = std::move(stall);
    r.omni = std::move(f);
    return r;
}

boost::json::object part_with(const boost::json::object& omni) {
    return {{"server", boost::json::object{{"omni", omni}}}};
}

TEST(omni_pool, counts_add_up_and_percentiles_are_the_worst_parts) {
    const auto a = part_with(metrics::omni_json({omni_session(2, {0.001, 0.002})}));
    const auto b = part_with(metrics::omni_json(
        {omni_session(3, {0.004, 0.010, 0.020}), omni_session(1, {}, "response_create_deferred")}));
    const boost::json::object no_omni{{"pacing", boost::json::object{}}};
    const auto p = metrics::pool_omni_json({&a, &no_omni, &b});
    EXPECT_EQ(p.at("sessions").as_uint64(), 3u);
    EXPECT_EQ(p.at("responses").as_uint64(), 6u);
    EXPECT_EQ(p.at("commits").as_uint64(), 7u);
    EXPECT_EQ(p.at("stalled_sessions").as_uint64(), 1u);
    EXPECT_EQ(p.at("stall_reasons").at("response_create_deferred").as_uint64(), 1u);
    EXPECT_DOUBLE_EQ(p.at("audio_received_s").as_double(), 4.5);
    const auto& rtt = p.at("ack_round_trip_s").as_object();
    EXPECT_EQ(rtt.at("count").as_uint64(), 5u);
    EXPECT_DOUBLE_EQ(rtt.at("max").as_double(), 0.020);
    EXPECT_TRUE(rtt.at("p50").is_null());
    EXPECT_DOUBLE_EQ(rtt.at("worst_part_p99").as_double(),
                     b.at("server").at("omni").at("ack_round_trip_s").at("p99").as_double());
    EXPECT_NE(metrics::omni_line(p).find("(worst process)"), std::string::npos);
}

TEST(omni_pool, parts_without_omni_pool_to_nothing) {
    const boost::json::object a{{"server", boost::json::object{{"realtime", 1}}}};
    EXPECT_TRUE(metrics::pool_omni_json({&a}).empty());
    EXPECT_TRUE(metrics::pool_omni_json({}).empty());
}

// An interrupted vllm-omni reply: its audio stopped for the listener at the clear's answer,
// after its last delta (which came before the barge-in).
TEST(omni_pool, the_interruption_latency_runs_to_the_clear) {
    trace::turn_result t;
    t.first_audio_s = 10.0;
    t.last_audio_s = 10.0;
    t.interrupted_s = 10.6;
    EXPECT_DOUBLE_EQ(*metrics::figures_of(t).interrupt_latency_s, 0.0);
    t.output_stopped_s = 10.63;
    EXPECT_NEAR(*metrics::figures_of(t).interrupt_latency_s, 0.03, 1e-9);
}

} // namespace

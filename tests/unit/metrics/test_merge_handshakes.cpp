// Per-session handshake times in samples.json (TCP connect, TLS, WebSocket upgrade and the
// session.update's acknowledgement), pooled by merge_parts with the parts' protocol; parts of
// different protocols are not pooled.

#include <pacer/core/bad_input.hpp>
#include <pacer/metrics/merge.hpp>
#include <pacer/metrics/pacing.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace pacer::metrics;

run_part part_from_disk(const std::vector<pacer::trace::session_result>& sessions,
                        std::string_view protocol) {
    const auto root =
        fs::temp_directory_path() / ("pacer-test-handshakes-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(std::random_device{}()));
    fs::create_directories(root);
    std::ofstream(root / "samples.json") << samples_json(sessions);
    std::ofstream(root / "summary.json")
        << R"({"pacing":{},"config":{"protocol":")" << protocol << R"("}})";
    auto part = read_run_part(root);
    fs::remove_all(root);
    return part;
}

pacer::trace::session_result admitted(double connect, double tls, double upgrade,
                                      std::optional<double> ack) {
    pacer::trace::session_result r;
    r.handshake = pacer::trace::handshake_times{connect, tls, upgrade};
    if (ack) {
        r.update_sent_s = 100.0;
        r.updated_s = 100.0 + *ack;
    }
    return r;
}

TEST(MergeHandshakes, SamplesCarryEachSessionsHandshakeAndMergePoolsThem) {
    std::vector<pacer::trace::session_result> a{admitted(0.001, 0.0, 0.002, 0.010),
                                                pacer::trace::session_result{}};
    std::vector<pacer::trace::session_result> b{admitted(0.003, 0.0, 0.004, std::nullopt)};
    const auto pa = part_from_disk(a, "openai-realtime");
    const auto pb = part_from_disk(b, "openai-realtime");
    ASSERT_EQ(pa.handshakes.size(), 1u); // the session never admitted has none
    EXPECT_DOUBLE_EQ(pa.handshakes[0].connect_s, 0.001);
    ASSERT_TRUE(pa.handshakes[0].update_ack_s);
    EXPECT_NEAR(*pa.handshakes[0].update_ack_s, 0.010, 1e-6);
    EXPECT_FALSE(pb.handshakes[0].update_ack_s); // vllm-like: no ack

    check_compatible({pa, pb});
    const auto m = merge_parts({pa, pb});
    EXPECT_EQ(m.at("protocol").as_string(), "openai-realtime");
    const auto& h = m.at("handshake_s").as_object();
    EXPECT_EQ(h.at("connections").to_number<int>(), 2);
    EXPECT_NEAR(h.at("connect").at("max").as_double(), 0.003, 1e-9);
    EXPECT_NEAR(h.at("upgrade").at("p50").as_double(), 0.003, 1e-9);
    EXPECT_EQ(h.at("session_update_ack").at("n").to_number<int>(), 1);
    EXPECT_FALSE(h.contains("tls")); // ws:// only
}

TEST(MergeHandshakes, PartsOfDifferentProtocolsAreNotPooled) {
    const auto a = part_from_disk({}, "native");
    const auto b = part_from_disk({}, "vllm-realtime");
    try {
        check_compatible({a, b});
        ADD_FAILURE() << "pooled native with vllm-realtime";
    } catch (const pacer::bad_input& e) {
        EXPECT_NE(std::string(e.what()).find("only parts of one protocol"), std::string::npos);
    }
}

} // namespace

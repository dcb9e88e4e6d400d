// vllm-omni's video on the append (docs/protocols.md, "vllm-omni"): `video_frames` on the
// append that closes one of the model's units, and the synthetic frame.

#include <pacer/protocol/omni_events.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace pacer::protocol;

TEST(omni_video, an_append_carries_its_frames_in_order) {
    std::string out;
    const std::vector<std::string> frames{"AAAA", std::string(omni_synthetic_frame())};
    omni_append(out, "e1", "UExN", 200, frames);
    const auto v = boost::json::parse(out).as_object();
    EXPECT_EQ(v.at("type").as_string(), "input_audio_buffer.append");
    EXPECT_EQ(v.at("duration_ms").as_int64(), 200);
    const auto& f = v.at("video_frames").as_array();
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].as_string(), "AAAA");
    EXPECT_EQ(f[1].as_string(), omni_synthetic_frame());
    // Without frames the append is as before: no video_frames member.
    omni_append(out, "e2", "UExN", 200);
    EXPECT_FALSE(boost::json::parse(out).as_object().contains("video_frames"));
}

TEST(omni_video, the_appends_that_close_a_unit_are_at_1030_ms_then_every_second) {
    std::vector<std::int64_t> closing;
    for (std::int64_t sent = 0; sent < 4000; sent += 200)
        if (omni_closes_unit(sent, 200))
            closing.push_back(sent);
    // 200 ms chunks: [1000, 1200) holds 1030, [2000, 2200) holds 2030, [3000, 3200) 3030.
    EXPECT_EQ(closing, (std::vector<std::int64_t>{1000, 2000, 3000}));
    EXPECT_FALSE(omni_closes_unit(0, 1000)); // ends at 1000, before the first unit closes
    EXPECT_TRUE(omni_closes_unit(1000, 30)); // ends exactly at 1030
    EXPECT_FALSE(omni_closes_unit(1030, 30));
    EXPECT_FALSE(omni_closes_unit(0, 0));
}

TEST(omni_video, the_synthetic_frame_is_a_png) {
    const auto f = omni_synthetic_frame();
    EXPECT_TRUE(f.starts_with("iVBORw0KGgo")); // base64 of the PNG signature
    EXPECT_EQ(f.size() % 4, 0u);
}

} // namespace

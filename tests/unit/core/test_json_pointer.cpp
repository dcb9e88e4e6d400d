// core/json_pointer.hpp: a JSON Pointer under a summary object, as merge and the reports read it.

#include <pacer/core/json_pointer.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

namespace pacer {
namespace {

namespace json = boost::json;

const json::object summary = json::parse(R"({"pacing": {"loop_lag_s": {"p99": 0.25}},
    "levels": [{"slo": {"met": true}}, {"slo": {"met": false}}], "a/b": {"c~d": 7}})")
                                 .as_object();

TEST(JsonPointer, FindsNestedKeysAndArrayItems) {
    const auto* p99 = find_pointer(summary, "/pacing/loop_lag_s/p99");
    ASSERT_NE(p99, nullptr);
    EXPECT_EQ(p99->as_double(), 0.25);
    const auto* met = find_pointer(summary, "/levels/1/slo/met");
    ASSERT_NE(met, nullptr);
    EXPECT_FALSE(met->as_bool());
    ASSERT_NE(find_pointer(summary, "/levels"), nullptr);
    EXPECT_TRUE(find_pointer(summary, "/levels")->is_array());
}

TEST(JsonPointer, MissingStepsGiveNothing) {
    EXPECT_EQ(find_pointer(summary, "/pacing/missing"), nullptr);
    EXPECT_EQ(find_pointer(summary, "/missing/p99"), nullptr);
    EXPECT_EQ(find_pointer(summary, "/levels/2/slo"), nullptr);
    EXPECT_EQ(find_pointer(summary, "/levels/slo"), nullptr);
    EXPECT_EQ(find_pointer(summary, "/pacing/loop_lag_s/p99/deeper"), nullptr);
    EXPECT_EQ(find_pointer(summary, ""), nullptr);
    EXPECT_EQ(find_pointer(summary, "pacing"), nullptr);
}

TEST(JsonPointer, KeysWithSlashOrTildeAreEscaped) {
    const auto pointer = "/" + pointer_token("a/b") + "/" + pointer_token("c~d");
    EXPECT_EQ(pointer, "/a~1b/c~0d");
    const auto* v = find_pointer(summary, pointer);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->as_int64(), 7);
    EXPECT_EQ(find_pointer(summary, "/a~2b"), nullptr);
}

} // namespace
} // namespace pacer

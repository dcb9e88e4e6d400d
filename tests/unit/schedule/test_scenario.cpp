// Conversation scenarios (schedule/scenario.hpp): the schema, one error line per mistake, the
// built-ins and the seeded pauses.

#include <pacer/core/bad_input.hpp>
#include <pacer/schedule/scenario.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace {

using namespace std::chrono_literals;
using pacer::bad_input;
using pacer::duration;
using pacer::schedule::builtin_scenario;
using pacer::schedule::draw_pauses;
using pacer::schedule::parse_scenario;
using source = pacer::schedule::turn_spec::source;

// The one line a bad scenario gives.
std::string error_of(std::string_view text) {
    try {
        parse_scenario(text, "s.json", "/base");
    } catch (const bad_input& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(Scenario, ParsesEveryField) {
    const auto s = parse_scenario(
        R"({"pause_audio":"none","seed":7,"turns":[
              {"audio":"input","pause":"300ms","interrupt_after":"0.4s"},
              {"audio":"a.wav","pause":{"min":"0.2s","max":"0.6s"}},
              {"audio":"/abs/b.wav"},
              {"audio":"silence:0.5s"}]})",
        "s.json", "/base");
    EXPECT_FALSE(s.pause_packets);
    EXPECT_EQ(s.seed, 7u);
    ASSERT_EQ(s.turns.size(), 4u);
    EXPECT_EQ(s.turns[0].what, source::input);
    EXPECT_EQ(s.turns[0].pause.min, duration(300ms));
    EXPECT_TRUE(s.turns[0].pause.fixed());
    EXPECT_EQ(s.turns[0].interrupt_after, duration(400ms));
    EXPECT_EQ(s.turns[1].what, source::file);
    EXPECT_EQ(s.turns[1].file, "/base/a.wav"); // relative to the scenario's folder
    EXPECT_EQ(s.turns[1].pause.max, duration(600ms));
    EXPECT_EQ(s.turns[2].file, "/abs/b.wav");
    EXPECT_EQ(s.turns[3].what, source::silence);
    EXPECT_EQ(s.turns[3].silence, duration(500ms));
    EXPECT_TRUE(s.barge_in());
    EXPECT_FALSE(s.single());
}

TEST(Scenario, EachMistakeIsOneLineNamingTheField) {
    const std::pair<const char*, const char*> cases[] = {
        {"[", "scenario s.json: not JSON"},
        {"[]", "scenario s.json: must be a JSON object with \"turns\""},
        {R"({"turn":[]})", "scenario s.json: unknown field 'turn' (turns, pause_audio, seed)"},
        {R"({"turns":[]})", "scenario s.json: turns: must be a non-empty list of turns"},
        {R"({"turns":[{}]})", "scenario s.json: turns[0]: needs \"audio\""},
        {R"({"turns":[{"audio":1}]})", "scenario s.json: turns[0].audio: must be"},
        {R"({"turns":[{"audio":"silence:3q"}]})",
         "scenario s.json: turns[0].audio: '3q' is not a duration such as 0.3s"},
        {R"({"turns":[{"audio":"silence:0s"}]})",
         "scenario s.json: turns[0].audio: must be longer than 0"},
        {R"({"turns":[{"audio":"input","pause":"1s"},{"audio":"input","pause":"1s"}]})",
         "scenario s.json: turns[1].pause: the last turn has no pause"},
        {R"({"turns":[{"audio":"input","interrupt_after":"1s"}]})",
         "scenario s.json: turns[0].interrupt_after: the last turn has no next turn"},
        {R"({"turns":[{"audio":"input","pause":{"min":"2s","max":"1s"}},{"audio":"input"}]})",
         "scenario s.json: turns[0].pause: max is shorter than min"},
        {R"({"turns":[{"audio":"input","pause":{"min":"1s"}},{"audio":"input"}]})",
         "scenario s.json: turns[0].pause: needs both min and max"},
        {R"({"turns":[{"audio":"input","pause":5},{"audio":"input"}]})",
         "scenario s.json: turns[0].pause: must be a duration"},
        {R"({"turns":[{"audio":"input","pause":"2h"},{"audio":"input"}]})",
         "scenario s.json: turns[0].pause: '2h' is longer than 1 h"},
        {R"({"turns":[{"audio":"input","wait":"1s"}]})",
         "scenario s.json: turns[0]: unknown field 'wait'"},
        {R"({"pause_audio":"quiet","turns":[{"audio":"input"}]})",
         "scenario s.json: pause_audio: must be \"silence\" or \"none\""},
        {R"({"seed":-1,"turns":[{"audio":"input"}]})", "scenario s.json: seed: must be a whole"},
    };
    for (const auto& [text, prefix] : cases) {
        const auto e = error_of(text);
        EXPECT_TRUE(e.starts_with(prefix)) << text << " gave: " << e;
        EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
}

TEST(Scenario, BuiltIns) {
    const auto single = builtin_scenario("single");
    ASSERT_TRUE(single);
    EXPECT_TRUE(single->single());
    EXPECT_TRUE(single->pause_packets);

    const auto multi = builtin_scenario("multi-turn");
    ASSERT_TRUE(multi);
    EXPECT_EQ(multi->turns.size(), 3u);
    EXPECT_FALSE(multi->single());
    EXPECT_FALSE(multi->barge_in());
    EXPECT_TRUE(multi->pause_packets); // server VAD needs the silence

    const auto barge = builtin_scenario("barge-in");
    ASSERT_TRUE(barge);
    EXPECT_EQ(barge->turns.size(), 2u);
    EXPECT_EQ(barge->turns[0].interrupt_after, duration(500ms));
    EXPECT_TRUE(barge->barge_in());

    EXPECT_FALSE(builtin_scenario("multi"));
}

TEST(Scenario, PausesAreSeededPerSessionAndWithinTheirRange) {
    const auto s = parse_scenario(
        R"({"seed":3,"turns":[{"audio":"input","pause":{"min":"0.2s","max":"0.6s"}},
                              {"audio":"input","pause":"0.3s"},
                              {"audio":"input","pause":{"min":"1s","max":"2s"}},
                              {"audio":"input"}]})",
        "s.json");
    const auto a = draw_pauses(s, 1);
    ASSERT_EQ(a.size(), 4u);
    EXPECT_EQ(a, draw_pauses(s, 1)); // the same seed, the same pauses
    EXPECT_GE(a[0], duration(200ms));
    EXPECT_LT(a[0], duration(600ms));
    EXPECT_EQ(a[1], duration(300ms)); // fixed
    EXPECT_GE(a[2], duration(1s));
    EXPECT_LT(a[2], duration(2s));
    EXPECT_EQ(a[3], duration{}); // nothing after the last turn
    // Another session draws other pauses (the chance of a tie is 2^-53 per draw).
    const auto b = draw_pauses(s, 2);
    EXPECT_NE(a[0], b[0]);
    EXPECT_EQ(a[1], b[1]);
}

} // namespace

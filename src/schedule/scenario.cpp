#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/schedule/rng.hpp>
#include <pacer/schedule/scenario.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <filesystem>

namespace pacer::schedule {

namespace json = boost::json;

namespace {

// Every mistake is one line naming the source and the field.
[[noreturn]] void fail(std::string_view source, std::string_view where, std::string_view what) {
    throw bad_input(where.empty() ? fmt::format("scenario {}: {}", source, what)
                                  : fmt::format("scenario {}: {}: {}", source, where, what));
}

duration parse_span(const json::value& v, std::string_view source, const std::string& where,
                    bool zero_ok) {
    if (!v.is_string())
        fail(source, where, "must be a duration text such as \"0.3s\"");
    const std::string_view text = v.get_string();
    const auto d = parse_duration(text);
    if (!d)
        fail(source, where, fmt::format("'{}' is not a duration such as 0.3s", text));
    if (!zero_ok && d->count() == 0)
        fail(source, where, "must be longer than 0");
    if (*d > max_scenario_duration)
        fail(source, where, fmt::format("'{}' is longer than 1 h", text));
    return std::chrono::duration_cast<duration>(*d);
}

pause_spec parse_pause(const json::value& v, std::string_view source, const std::string& where) {
    if (v.is_string()) {
        const auto d = parse_span(v, source, where, true);
        return {d, d};
    }
    if (!v.is_object())
        fail(source, where, "must be a duration (\"0.3s\") or {\"min\": D, \"max\": D}");
    const auto& o = v.get_object();
    for (const auto& [key, value] : o)
        if (key != "min" && key != "max")
            fail(source, where, fmt::format("unknown field '{}' (min, max)", std::string(key)));
    if (!o.contains("min") || !o.contains("max"))
        fail(source, where, "needs both min and max");
    pause_spec p{parse_span(o.at("min"), source, where + ".min", true),
                 parse_span(o.at("max"), source, where + ".max", true)};
    if (p.max < p.min)
        fail(source, where, "max is shorter than min");
    return p;
}

turn_spec parse_turn(const json::value& v, std::string_view source, std::size_t i, bool last,
                     std::string_view base_dir) {
    const std::string where = fmt::format("turns[{}]", i);
    if (!v.is_object())
        fail(source, where, "must be an object with \"audio\"");
    const auto& o = v.get_object();
    for (const auto& [key, value] : o)
        if (key != "audio" && key != "pause" && key != "interrupt_after")
            fail(source, where,
                 fmt::format("unknown field '{}' (audio, pause, interrupt_after)",
                             std::string(key)));
    turn_spec t;
    const auto* audio = o.if_contains("audio");
    if (!audio)
        fail(source, where, "needs \"audio\": \"input\", a WAV file or \"silence:DURATION\"");
    if (!audio->is_string() || audio->get_string().empty())
        fail(source, where + ".audio",
             "must be \"input\", a WAV file or \"silence:DURATION\" (a non-empty string)");
    const std::string_view text = audio->get_string();
    if (text == "input") {
        t.what = turn_spec::source::input;
    } else if (text.starts_with("silence:")) {
        t.what = turn_spec::source::silence;
        t.silence = parse_span(json::value(text.substr(8)), source, where + ".audio", false);
    } else {
        t.what = turn_spec::source::file;
        std::filesystem::path p(std::string{text});
        if (p.is_relative() && !base_dir.empty())
            p = std::filesystem::path(std::string{base_dir}) / p;
        t.file = p.string();
    }
    if (const auto* p = o.if_contains("pause")) {
        if (last)
            fail(source, where + ".pause", "the last turn has no pause (the session ends)");
        t.pause = parse_pause(*p, source, where + ".pause");
    }
    if (const auto* ia = o.if_contains("interrupt_after")) {
        if (last)
            fail(source, where + ".interrupt_after",
                 "the last turn has no next turn to barge in with");
        t.interrupt_after = parse_span(*ia, source, where + ".interrupt_after", true);
    }
    return t;
}

} // namespace

bool scenario::barge_in() const {
    for (const auto& t : turns)
        if (t.interrupt_after)
            return true;
    return false;
}

scenario parse_scenario(std::string_view text, std::string_view source, std::string_view base_dir) {
    boost::system::error_code ec;
    const json::value doc = json::parse(text, ec);
    if (ec)
        fail(source, "", fmt::format("not JSON ({})", ec.message()));
    if (!doc.is_object())
        fail(source, "", "must be a JSON object with \"turns\"");
    const auto& o = doc.get_object();
    for (const auto& [key, value] : o)
        if (key != "turns" && key != "pause_audio" && key != "seed")
            fail(source, "",
                 fmt::format("unknown field '{}' (turns, pause_audio, seed)", std::string(key)));
    scenario s;
    s.name = std::string(source);
    if (const auto* pa = o.if_contains("pause_audio")) {
        if (!pa->is_string() || (pa->get_string() != "silence" && pa->get_string() != "none"))
            fail(source, "pause_audio", "must be \"silence\" or \"none\"");
        s.pause_packets = pa->get_string() == "silence";
    }
    if (const auto* seed = o.if_contains("seed")) {
        if (seed->is_uint64())
            s.seed = seed->get_uint64();
        else if (seed->is_int64() && seed->get_int64() >= 0)
            s.seed = static_cast<std::uint64_t>(seed->get_int64());
        else
            fail(source, "seed", "must be a whole number from 0 to 2^64-1");
    }
    const auto* turns = o.if_contains("turns");
    if (!turns || !turns->is_array() || turns->get_array().empty())
        fail(source, "turns", "must be a non-empty list of turns");
    const auto& list = turns->get_array();
    if (list.size() > max_turns)
        fail(source, "turns", fmt::format("{} turns: at most {}", list.size(), max_turns));
    for (std::size_t i = 0; i < list.size(); ++i)
        s.turns.push_back(parse_turn(list[i], source, i, i + 1 == list.size(), base_dir));
    return s;
}

std::optional<scenario> builtin_scenario(std::string_view name) {
    using namespace std::chrono_literals;
    scenario s;
    s.name = std::string(name);
    turn_spec input;
    if (name == "single") {
        s.turns = {input};
        return s;
    }
    if (name == "multi-turn") {
        // Three turns of the input with think time between them, long enough for a server's
        // voice-activity detection (OpenAI's default silence is 500 ms) to end each turn.
        turn_spec t = input;
        t.pause = {600ms, 1000ms};
        s.turns = {t, t, input};
        return s;
    }
    if (name == "barge-in") {
        // The user speaks again 0.5 s into the assistant's answer to the first turn.
        turn_spec t = input;
        t.pause = {1000ms, 1000ms};
        t.interrupt_after = 500ms;
        s.turns = {t, input};
        return s;
    }
    return std::nullopt;
}

std::vector<duration> draw_pauses(const scenario& s, std::uint64_t session_seed) {
    std::vector<duration> out;
    out.reserve(s.turns.size());
    xoshiro256ss rng(s.seed ^ session_seed);
    for (std::size_t i = 0; i < s.turns.size(); ++i) {
        const auto& p = s.turns[i].pause;
        if (i + 1 == s.turns.size()) {
            out.push_back(duration{});
        } else if (p.fixed()) {
            out.push_back(p.min);
        } else {
            // u in [0, 1) times the span, in whole ticks: exact up to 2^53 ticks (104 days).
            const auto span = static_cast<double>((p.max - p.min).count());
            out.push_back(p.min + duration(static_cast<duration::rep>(rng.uniform01() * span)));
        }
    }
    return out;
}

} // namespace pacer::schedule

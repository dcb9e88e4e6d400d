#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/slo.hpp>

#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <stdexcept>

namespace pacer::metrics {

namespace json = boost::json;

namespace {

enum class kind { rate, time };

// What an SLO's figure needs the sessions to have (slo_scope).
enum class needs { nothing, turns, interruptions };

// The known SLOs: where their figure lives in a level aggregate.
struct slo_definition {
    std::string_view name;
    kind unit;
    bool at_least;
    std::initializer_list<std::string_view> path; // empty: computed (success-rate)
    std::string_view meaning;
    needs scope = needs::nothing;
};

const slo_definition definitions[] = {
    {"success-rate", kind::rate, true, {}, "successful / attempted sessions (at least)"},
    {"unit-miss-rate", kind::rate, false, {"units", "unit_miss_rate"}, "missed / expected units"},
    {"underrun-ratio", kind::rate, false, {"underrun_ratio"}, "playback underrun / input time"},
    {"ttfa-p50", kind::time, false, {"ttfa_s", "p50"}, "time to first audio, p50"},
    {"ttfa-p95", kind::time, false, {"ttfa_s", "p95"}, "time to first audio, p95"},
    {"ttfa-p99", kind::time, false, {"ttfa_s", "p99"}, "time to first audio, p99"},
    {"gap-excess-p99",
     kind::time,
     false,
     {"output_gap_excess_s", "p99"},
     "output gap beyond the previous packet's duration, p99"},
    {"reply-lag-p95",
     kind::time,
     false,
     {"units", "response_audio_lag_s", "p95"},
     "per-unit profiles: first reply audio after the question's unit, p95"},
    {"first-audio-p95",
     kind::time,
     false,
     {"realtime", "first_audio_from_utterance_end_s", "p95"},
     "realtime protocols: first audio delta after the utterance's end, p95"},
    {"first-transcript-p95",
     kind::time,
     false,
     {"realtime", "first_transcript_from_utterance_end_s", "p95"},
     "realtime protocols: first transcript delta after the utterance's end, p95"},
    {"final-transcript-p95",
     kind::time,
     false,
     {"realtime", "final_transcript_from_utterance_end_s", "p95"},
     "vllm-realtime: transcription.done after the utterance's end, p95"},
    {"rtf-p95",
     kind::time,
     false,
     {"realtime", "real_time_factor", "p95"},
     "realtime protocols: (last output event - schedule anchor) / input length, p95"},
    {"turn-ttfa-p95",
     kind::time,
     false,
     {"turns", "all", "ttfa_from_speech_end_s", "p95"},
     "--scenario with several turns: first reply audio after the end of the user's turn, p95 "
     "over the level's turns",
     needs::turns},
    {"turn-v2v-p95",
     kind::time,
     false,
     {"turns", "all", "ttfa_from_voice_end_s", "p95"},
     "--scenario with several turns: voice-to-voice, first reply audio after the end of the "
     "user's voice (the turn's last voiced frame), p95 over the level's turns",
     needs::turns},
    {"interrupt-latency-p95",
     kind::time,
     false,
     {"turns", "all", "interrupt_latency_s", "p95"},
     "--scenario with a barge-in: the interrupted reply's last audio after the barge-in's first "
     "packet, p95 over the level's interrupted turns",
     needs::interruptions},
};

const slo_definition* find(std::string_view name) {
    for (const auto& d : definitions)
        if (d.name == name)
            return &d;
    return nullptr;
}

std::string known_names() {
    std::string names;
    for (const auto& d : definitions)
        names += (names.empty() ? "" : ", ") + std::string(d.name);
    return names;
}

std::optional<double> number(const json::value* v) {
    return v && v->is_number() ? std::optional(v->to_number<double>()) : std::nullopt;
}

} // namespace

std::vector<slo_check> parse_slos(std::string_view text, slo_scope scope) {
    std::vector<slo_check> out;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const auto item = text.substr(0, comma);
        text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
        const auto eq = item.find('=');
        const auto* def = eq == std::string_view::npos ? nullptr : find(item.substr(0, eq));
        if (!def)
            throw bad_input(fmt::format("--slo '{}': expected name=value with a name among {}",
                                        item, known_names()));
        const auto value = item.substr(eq + 1);
        std::optional<double> bound;
        if (def->unit == kind::time) {
            if (const auto d = parse_duration(value))
                bound = std::chrono::duration<double>(*d).count();
        } else {
            double v = 0;
            const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
            if (ec == std::errc() && p == value.data() + value.size() && std::isfinite(v) &&
                v >= 0 && v <= 1)
                bound = v;
        }
        if (!bound)
            throw bad_input(fmt::format("--slo '{}': {} takes {}", item, def->name,
                                        def->unit == kind::time
                                            ? "a duration such as 1.5s or 200ms"
                                            : "a fraction between 0 and 1 such as 0.01"));
        if (def->scope == needs::turns && !scope.turns)
            throw bad_input(
                fmt::format("--slo '{}': {} judges per-turn figures: it needs --scenario with "
                            "several turns (multi-turn, barge-in or a file)",
                            item, def->name));
        if (def->scope == needs::interruptions && !scope.interruptions)
            throw bad_input(
                fmt::format("--slo '{}': {} judges barge-ins: it needs a --scenario with one "
                            "(barge-in, or a file with interrupt_after)",
                            item, def->name));
        for (const auto& c : out)
            if (c.name == def->name)
                throw bad_input(fmt::format("--slo: {} given twice", def->name));
        out.push_back({std::string(def->name), *bound, def->at_least});
    }
    return out;
}

slo_check default_success_slo() {
    return {"success-rate", 1.0, true};
}

std::optional<double> slo_figure(const slo_check& slo, const json::object& aggregate) {
    const auto* def = find(slo.name);
    if (!def)
        return std::nullopt;
    if (def->path.size() == 0) {
        const auto ok = number(aggregate.if_contains("successful_sessions"));
        const auto all = number(aggregate.if_contains("attempted_sessions"));
        if (!ok || !all || *all == 0)
            return std::nullopt;
        return *ok / *all;
    }
    const json::object* cur = &aggregate;
    const json::value* v = nullptr;
    for (auto key : def->path) {
        if (!cur)
            return std::nullopt;
        v = cur->if_contains(key);
        cur = v && v->is_object() ? &v->get_object() : nullptr;
    }
    return number(v);
}

json::object evaluate_slos(const std::vector<slo_check>& slos, const json::object& aggregate) {
    bool all = true;
    json::array checks;
    for (const auto& c : slos) {
        const auto v = slo_figure(c, aggregate);
        const bool met = v && (c.at_least ? *v >= c.bound : *v <= c.bound);
        all = all && met;
        checks.push_back(json::object{{"name", c.name},
                                      {"bound", c.bound},
                                      {"at_least", c.at_least},
                                      {"value", v ? json::value(*v) : json::value(nullptr)},
                                      {"met", met}});
    }
    return {{"met", all}, {"checks", std::move(checks)}};
}

std::string slo_help() {
    std::string h = "Service-level objectives a level must meet, name=value,... e.g. "
                    "unit-miss-rate=0.01,underrun-ratio=0.02,ttfa-p95=1.5s. Names: ";
    for (const auto& d : definitions)
        h += fmt::format("{}{} ({})", d.name == definitions[0].name ? "" : "; ", d.name, d.meaning);
    h += ". A figure a level does not have (e.g. no audio) misses its SLO. With "
         "--find-capacity, success-rate=1 applies unless given.";
    return h;
}

} // namespace pacer::metrics

#include <pacer/core/json_text.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/metrics/realtime.hpp>
#include <pacer/runtime/files.hpp>

#include <boost/json/array.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace pacer::metrics {

namespace {

// Per-turn times and durations to the microsecond (turns.jsonl and summary.json's `turns`):
// plain decimals (`0.8`, not `0.7999999999999999`), far finer than anything measured.
double micro(double v) {
    return std::round(v * 1e6) / 1e6;
}

boost::json::value figure(std::vector<double> v) {
    if (v.empty())
        return nullptr;
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) {
        const auto i = static_cast<std::size_t>(std::ceil(q * double(v.size()))) - 1;
        return v[std::min(i, v.size() - 1)];
    };
    return boost::json::object{
        {"count", v.size()}, {"p50", at(0.5)}, {"p95", at(0.95)}, {"max", v.back()}};
}

} // namespace

boost::json::object realtime_latency_json(const std::vector<trace::session_result>& sessions) {
    std::vector<double> audio_eou, audio_anchor, text_eou, text_anchor, final_eou;
    const auto add = [](std::vector<double>& to, std::optional<double> t,
                        std::optional<double> from) {
        if (t && from)
            to.push_back(*t - *from);
    };
    for (const auto& s : sessions) {
        add(audio_eou, s.first_audio_s, s.utterance_end_s);
        add(audio_anchor, s.first_audio_s, s.session_start_s);
        add(text_eou, s.first_transcript_s, s.utterance_end_s);
        add(text_anchor, s.first_transcript_s, s.session_start_s);
        add(final_eou, s.final_transcript_s, s.utterance_end_s);
    }
    return {{"first_audio_from_utterance_end_s", figure(std::move(audio_eou))},
            {"first_audio_from_anchor_s", figure(std::move(audio_anchor))},
            {"first_transcript_from_utterance_end_s", figure(std::move(text_eou))},
            {"first_transcript_from_anchor_s", figure(std::move(text_anchor))},
            {"final_transcript_from_utterance_end_s", figure(std::move(final_eou))}};
}

turn_figures figures_of(const trace::turn_result& t) {
    // Differences of the instants as turns.jsonl writes them (to the microsecond), so that a
    // row's figure is exactly the difference of its row's instants.
    const auto diff = [](std::optional<double> a, std::optional<double> b) {
        return a && b ? std::optional<double>(micro(micro(*a) - micro(*b))) : std::nullopt;
    };
    turn_figures f;
    f.ttfa_from_voice_end_s = diff(t.first_audio_s, t.voice_end_s);
    f.ttfa_from_speech_end_s = diff(t.first_audio_s, t.speech_end_s);
    f.ttfa_from_speech_stopped_s = diff(t.first_audio_s, t.speech_stopped_s);
    f.ttfa_from_commit_s = diff(t.first_audio_s, t.commit_s);
    f.response_duration_s = diff(t.last_audio_s, t.first_audio_s);
    if (t.first_audio_s) {
        f.player_gap_s = micro(t.gap_s);
        f.underrun_s = micro(t.underrun_s);
    }
    if (t.interrupted_s) {
        // The audio's end for the listener: vllm-omni's clear, or the reply's last delta.
        const auto end = t.output_stopped_s ? t.output_stopped_s : t.last_audio_s;
        f.interrupt_latency_s = end && *end > *t.interrupted_s ? *diff(end, t.interrupted_s) : 0.0;
        f.audio_after_interrupt_s = micro(t.audio_after_interrupt_s);
        f.played_at_interrupt_s = micro(t.played_s.value_or(0));
    }
    return f;
}

boost::json::object turn_metrics_json(std::span<const std::vector<trace::turn_result>> sessions) {
    struct figures {
        std::vector<double> voice_end, speech_end, speech_stopped, commit, duration, latency, after,
            played, gap, underrun;
        std::size_t turns = 0, answered = 0, interrupted = 0;
        std::uint64_t underruns = 0, unsolicited = 0;

        void add(const trace::turn_result& t) {
            const auto f = figures_of(t);
            const auto put = [](std::vector<double>& to, std::optional<double> v) {
                if (v)
                    to.push_back(*v);
            };
            ++turns;
            answered += t.first_audio_s.has_value();
            interrupted += t.interrupted_s.has_value();
            if (t.first_audio_s)
                underruns += t.underruns;
            unsolicited += t.unsolicited;
            put(voice_end, f.ttfa_from_voice_end_s);
            put(speech_end, f.ttfa_from_speech_end_s);
            put(speech_stopped, f.ttfa_from_speech_stopped_s);
            put(commit, f.ttfa_from_commit_s);
            put(duration, f.response_duration_s);
            put(gap, f.player_gap_s);
            put(underrun, f.underrun_s);
            put(latency, f.interrupt_latency_s);
            put(after, f.audio_after_interrupt_s);
            put(played, f.played_at_interrupt_s);
        }
        boost::json::object json() const {
            return {{"turns", turns},
                    {"answered", answered},
                    {"interrupted", interrupted},
                    {"underruns", underruns},
                    {"unsolicited_responses", unsolicited},
                    {"ttfa_from_voice_end_s", figure(voice_end)},
                    {"ttfa_from_speech_end_s", figure(speech_end)},
                    {"ttfa_from_speech_stopped_s", figure(speech_stopped)},
                    {"ttfa_from_commit_s", figure(commit)},
                    {"response_duration_s", figure(duration)},
                    {"interrupt_latency_s", figure(latency)},
                    {"audio_after_interrupt_s", figure(after)},
                    {"played_at_interrupt_s", figure(played)},
                    {"player_gap_s", figure(gap)},
                    {"underrun_s", figure(underrun)}};
        }
    };
    std::vector<figures> by_turn;
    figures all;
    for (const auto& s : sessions)
        for (std::size_t j = 0; j < s.size(); ++j) {
            if (by_turn.size() <= j)
                by_turn.resize(j + 1);
            by_turn[j].add(s[j]);
            all.add(s[j]);
        }
    boost::json::array turns;
    for (const auto& f : by_turn)
        turns.push_back(f.json());
    return {{"by_turn", std::move(turns)}, {"all", all.json()}};
}

boost::json::object turn_metrics_json(const std::vector<trace::session_result>& sessions) {
    std::vector<std::vector<trace::turn_result>> turns;
    turns.reserve(sessions.size());
    for (const auto& s : sessions)
        turns.push_back(s.turns);
    return turn_metrics_json(turns);
}

void append_turn_rows(std::string& out, std::uint32_t session,
                      std::span<const trace::turn_result> turns) {
    const auto value = [](std::optional<double> v) {
        return v ? boost::json::value(micro(*v)) : boost::json::value(nullptr);
    };
    for (std::size_t j = 0; j < turns.size(); ++j) {
        const auto& t = turns[j];
        const auto f = figures_of(t);
        const boost::json::object row{
            {"session", session},
            {"turn", j},
            {"barge_in", t.barge_in},
            {"start_s", value(t.start_s)},
            {"voice_end_s", value(t.voice_end_s)},
            {"speech_end_s", value(t.speech_end_s)},
            {"commit_s", value(t.commit_s)},
            {"speech_stopped_s", value(t.speech_stopped_s)},
            {"first_audio_s", value(t.first_audio_s)},
            {"last_audio_s", value(t.last_audio_s)},
            {"response_id",
             t.response_id ? boost::json::value(*t.response_id) : boost::json::value(nullptr)},
            {"audio_s", micro(t.audio_s)},
            {"underruns", t.underruns},
            {"underrun_s", value(f.underrun_s)},
            {"unsolicited_responses", t.unsolicited},
            {"interrupted_s", value(t.interrupted_s)},
            {"output_stopped_s", value(t.output_stopped_s)},
            {"ttfa_from_voice_end_s", value(f.ttfa_from_voice_end_s)},
            {"ttfa_from_speech_end_s", value(f.ttfa_from_speech_end_s)},
            {"ttfa_from_speech_stopped_s", value(f.ttfa_from_speech_stopped_s)},
            {"ttfa_from_commit_s", value(f.ttfa_from_commit_s)},
            {"response_duration_s", value(f.response_duration_s)},
            {"interrupt_latency_s", value(f.interrupt_latency_s)},
            {"audio_after_interrupt_s", value(f.audio_after_interrupt_s)},
            {"played_at_interrupt_s", value(f.played_at_interrupt_s)},
            {"player_gap_s", value(f.player_gap_s)}};
        append_json_text(out, row); // plain decimals, as summary.json's
        out += '\n';
    }
}

void write_turn_rows(const std::filesystem::path& file,
                     const std::vector<trace::session_result>& sessions) {
    runtime::new_file rows(file);
    std::string text;
    for (const auto& s : sessions) {
        text.clear();
        append_turn_rows(text, s.index, s.turns);
        rows.write(text);
    }
    rows.close();
}

boost::json::object update_ack_json(const std::vector<trace::session_result>& sessions) {
    std::vector<double> ack;
    for (const auto& s : sessions)
        if (s.updated_s && s.update_sent_s)
            ack.push_back(*s.updated_s - *s.update_sent_s);
    return to_json(summarize(ack, protocol_fractions));
}

} // namespace pacer::metrics

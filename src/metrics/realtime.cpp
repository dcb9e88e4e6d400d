#include <pacer/core/stats.hpp>
#include <pacer/metrics/realtime.hpp>

#include <boost/json/array.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace pacer::metrics {

namespace {

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

boost::json::object turn_metrics_json(const std::vector<trace::session_result>& sessions) {
    struct figures {
        std::vector<double> speech_end, speech_stopped, commit, duration, latency, after, played,
            gap;
        std::size_t turns = 0, answered = 0, interrupted = 0;
        std::uint64_t underruns = 0;

        void add(const trace::turn_result& t) {
            const auto diff = [](std::vector<double>& to, std::optional<double> a,
                                 std::optional<double> b) {
                if (a && b)
                    to.push_back(*a - *b);
            };
            ++turns;
            answered += t.first_audio_s.has_value();
            diff(speech_end, t.first_audio_s, t.speech_end_s);
            diff(speech_stopped, t.first_audio_s, t.speech_stopped_s);
            diff(commit, t.first_audio_s, t.commit_s);
            diff(duration, t.last_audio_s, t.first_audio_s);
            if (t.first_audio_s) {
                gap.push_back(t.gap_s);
                underruns += t.underruns;
            }
            if (t.interrupted_s) {
                ++interrupted;
                latency.push_back(t.last_audio_s && *t.last_audio_s > *t.interrupted_s
                                      ? *t.last_audio_s - *t.interrupted_s
                                      : 0.0);
                after.push_back(t.audio_after_interrupt_s);
                played.push_back(t.played_s.value_or(0));
            }
        }
        boost::json::object json() const {
            return {{"turns", turns},
                    {"answered", answered},
                    {"interrupted", interrupted},
                    {"underruns", underruns},
                    {"ttfa_from_speech_end_s", figure(speech_end)},
                    {"ttfa_from_speech_stopped_s", figure(speech_stopped)},
                    {"ttfa_from_commit_s", figure(commit)},
                    {"response_duration_s", figure(duration)},
                    {"interrupt_latency_s", figure(latency)},
                    {"audio_after_interrupt_s", figure(after)},
                    {"played_at_interrupt_s", figure(played)},
                    {"player_gap_s", figure(gap)}};
        }
    };
    std::vector<figures> by_turn;
    figures all;
    for (const auto& s : sessions)
        for (std::size_t j = 0; j < s.turns.size(); ++j) {
            if (by_turn.size() <= j)
                by_turn.resize(j + 1);
            by_turn[j].add(s.turns[j]);
            all.add(s.turns[j]);
        }
    boost::json::array turns;
    for (const auto& f : by_turn)
        turns.push_back(f.json());
    return {{"by_turn", std::move(turns)}, {"all", all.json()}};
}

boost::json::object update_ack_json(const std::vector<trace::session_result>& sessions) {
    std::vector<double> ack;
    for (const auto& s : sessions)
        if (s.updated_s && s.update_sent_s)
            ack.push_back(*s.updated_s - *s.update_sent_s);
    return to_json(summarize(ack, protocol_fractions));
}

} // namespace pacer::metrics

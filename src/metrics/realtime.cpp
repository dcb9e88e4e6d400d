#include <pacer/core/stats.hpp>
#include <pacer/metrics/realtime.hpp>

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

boost::json::object update_ack_json(const std::vector<trace::session_result>& sessions) {
    std::vector<double> ack;
    for (const auto& s : sessions)
        if (s.updated_s && s.update_sent_s)
            ack.push_back(*s.updated_s - *s.update_sent_s);
    return to_json(summarize(ack, protocol_fractions));
}

} // namespace pacer::metrics

#include <pacer/core/stats.hpp>
#include <pacer/metrics/omni.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

namespace pacer::metrics {

namespace json = boost::json;

namespace {

// The figures pooled over the sessions (raw round trips, not per-session percentiles).
struct pooled {
    std::size_t sessions = 0;
    trace::omni_figures sum;
    std::map<std::string, std::size_t> stalls; // reason → sessions
};

pooled pool(const std::vector<trace::session_result>& sessions) {
    pooled p;
    for (const auto& s : sessions) {
        if (!s.omni)
            continue;
        const auto& f = *s.omni;
        ++p.sessions;
        auto& t = p.sum;
        t.responses += f.responses;
        t.completed += f.completed;
        t.cancelled += f.cancelled;
        t.listens += f.listens;
        t.commits += f.commits;
        t.deferred += f.deferred;
        t.unanswered += f.unanswered;
        t.playback_acks += f.playback_acks;
        t.acknowledged += f.acknowledged;
        t.ack_errors += f.ack_errors;
        t.event_acks += f.event_acks;
        t.heartbeats += f.heartbeats;
        t.cleared += f.cleared;
        t.audio_received_ms += f.audio_received_ms;
        t.server_audio_ms += f.server_audio_ms;
        t.dropped_ms += f.dropped_ms;
        t.ack_round_trip_s.insert(t.ack_round_trip_s.end(), f.ack_round_trip_s.begin(),
                                  f.ack_round_trip_s.end());
        if (!f.stall.empty())
            ++p.stalls[f.stall];
    }
    std::sort(p.sum.ack_round_trip_s.begin(), p.sum.ack_round_trip_s.end());
    return p;
}

json::value maybe(std::optional<double> v) {
    return v ? json::value(*v) : json::value(nullptr);
}

} // namespace

json::object omni_json(const std::vector<trace::session_result>& sessions) {
    const auto p = pool(sessions);
    const auto& t = p.sum;
    json::object stalls;
    std::size_t stalled = 0;
    for (const auto& [reason, n] : p.stalls) {
        stalls[reason] = n;
        stalled += n;
    }
    const auto& rtt = t.ack_round_trip_s;
    return {
        {"sessions", p.sessions},
        {"responses", t.responses},
        {"completed", t.completed},
        {"cancelled", t.cancelled},
        {"listens", t.listens},
        {"commits", t.commits},
        {"deferred", t.deferred},
        {"unanswered", t.unanswered},
        {"stalled_sessions", stalled},
        {"stall_reasons", std::move(stalls)},
        {"playback_acks", t.playback_acks},
        {"acknowledged", t.acknowledged},
        {"ack_errors", t.ack_errors},
        {"event_acks", t.event_acks},
        {"heartbeats", t.heartbeats},
        {"cleared", t.cleared},
        {"ack_round_trip_s",
         {{"count", rtt.size()},
          {"p50", maybe(percentile_sorted(rtt, 0.50))},
          {"p99", maybe(percentile_sorted(rtt, 0.99))},
          {"max", maybe(rtt.empty() ? std::nullopt : std::optional<double>(rtt.back()))}}},
        {"audio_received_s", t.audio_received_ms / 1000},
        {"server_audio_s", t.server_audio_ms / 1000},
        {"dropped_s", t.dropped_ms / 1000},
    };
}

namespace {

// The worst (largest) of the parts' `ack_round_trip_s[key]`, null when none has it.
json::value worst_of(const std::vector<const json::object*>& parts, std::string_view key) {
    std::optional<double> worst;
    for (const auto* o : parts) {
        const auto& v = o->at("ack_round_trip_s").at(key);
        if (v.is_number())
            worst = std::max(worst.value_or(0.0), v.to_number<double>());
    }
    return maybe(worst);
}

} // namespace

json::object pool_omni_json(const std::vector<const json::object*>& parts) {
    std::vector<const json::object*> omni;
    for (const auto* s : parts)
        if (const auto* server = s->if_contains("server"); server && server->is_object())
            if (const auto* o = server->as_object().if_contains("omni"); o && o->is_object())
                omni.push_back(&o->as_object());
    if (omni.empty())
        return {};
    json::object out;
    for (const char* key : {"sessions", "responses", "completed", "cancelled", "listens", "commits",
                            "deferred", "unanswered", "stalled_sessions", "playback_acks",
                            "acknowledged", "ack_errors", "event_acks", "heartbeats", "cleared"}) {
        std::uint64_t n = 0;
        for (const auto* o : omni)
            n += o->at(key).to_number<std::uint64_t>();
        out[key] = n;
    }
    json::object stalls;
    std::uint64_t rtt_count = 0;
    std::optional<double> rtt_max;
    for (const auto* o : omni) {
        for (const auto& [reason, n] : o->at("stall_reasons").as_object()) {
            auto& slot = stalls[reason];
            slot = (slot.is_null() ? 0 : slot.to_number<std::uint64_t>()) +
                   n.to_number<std::uint64_t>();
        }
        const auto& rtt = o->at("ack_round_trip_s").as_object();
        rtt_count += rtt.at("count").to_number<std::uint64_t>();
        if (rtt.at("max").is_number())
            rtt_max = std::max(rtt_max.value_or(0.0), rtt.at("max").to_number<double>());
    }
    out["stall_reasons"] = std::move(stalls);
    out["ack_round_trip_s"] = {{"count", rtt_count},
                               {"p50", nullptr},
                               {"p99", nullptr},
                               {"max", maybe(rtt_max)},
                               {"worst_part_p50", worst_of(omni, "p50")},
                               {"worst_part_p99", worst_of(omni, "p99")}};
    for (const char* key : {"audio_received_s", "server_audio_s", "dropped_s"}) {
        double sum = 0;
        for (const auto* o : omni)
            sum += o->at(key).to_number<double>();
        out[key] = sum;
    }
    out["pooling"] = "counts summed over the worker processes; ack round trip p50/p99 are the "
                     "worst part's";
    return out;
}

std::string omni_line(const json::object& o) {
    const auto n = [&](const char* key) { return o.at(key).to_number<std::uint64_t>(); };
    std::string line = fmt::format(
        "  vllm-omni  {} replies ({} completed, {} cancelled), {} listen, {} of {} commits "
        "deferred, {} unanswered; playback acks {} ({} acknowledged, {} errors)",
        n("responses"), n("completed"), n("cancelled"), n("listens"), n("deferred"), n("commits"),
        n("unanswered"), n("playback_acks"), n("acknowledged"), n("ack_errors"));
    const auto& rtt = o.at("ack_round_trip_s").as_object();
    if (!rtt.at("p50").is_null())
        line += fmt::format(", ack round trip p50 {:.2f} ms p99 {:.2f} ms",
                            rtt.at("p50").to_number<double>() * 1e3,
                            rtt.at("p99").to_number<double>() * 1e3);
    else if (const auto* w = rtt.if_contains("worst_part_p99"); w && w->is_number())
        line += fmt::format(", ack round trip p99 {:.2f} ms (worst process)",
                            w->to_number<double>() * 1e3);
    line += fmt::format("; audio {:.1f} s received, the server's audio_duration_ms {:.1f} s",
                        o.at("audio_received_s").to_number<double>(),
                        o.at("server_audio_s").to_number<double>());
    for (const auto& [reason, sessions] : o.at("stall_reasons").as_object())
        line += fmt::format("\n  SERVER STALL: {} session(s) with commits the server never "
                            "answered ({})",
                            sessions.to_number<std::uint64_t>(), std::string_view(reason));
    return line;
}

} // namespace pacer::metrics

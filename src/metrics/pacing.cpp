#include <pacer/core/float_repr.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/trace/writer.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>

namespace pacer::metrics {

std::vector<double> packet_deviations(const trace::session_result& s) {
    std::vector<double> out;
    if (!s.session_start_s)
        return out;
    out.reserve(s.appends.size());
    // The deadline as the session recorded it (`scheduled_s`), never recomputed here.
    for (const auto& a : s.appends)
        out.push_back(a.start_s - a.scheduled_s);
    return out;
}

std::size_t peak_overlapping_streams(const std::vector<trace::session_result>& sessions) {
    std::vector<std::pair<double, int>> edges;
    for (const auto& s : sessions) {
        if (!s.first_append_start_s || !s.last_append_completed_s)
            continue;
        edges.emplace_back(*s.first_append_start_s, +1);
        edges.emplace_back(*s.last_append_completed_s, -1);
    }
    // At equal times an end sorts before a start: touching streams do not overlap.
    std::sort(edges.begin(), edges.end());
    std::size_t open = 0, peak = 0;
    for (const auto& [t, d] : edges) {
        open = d > 0 ? open + 1 : open - 1;
        peak = std::max(peak, open);
    }
    return peak;
}

trace::receipt_statistics fold_appends(std::vector<trace::session_result>& sessions) {
    trace::receipt_statistics stats;
    for (auto& s : sessions) {
        s.late_appends = s.late_appends_after_send_stall = 0;
        s.late_run_from_send_stall = false;
        s.first_append_start_s = s.last_append_start_s = s.last_append_completed_s = {};
        s.appends_sent = s.appends.size();
        for (const auto& a : s.appends)
            trace::fold_receipt(s, a, &stats, late_threshold_s);
    }
    return stats;
}

trace_channel_waits sum_trace_waits(const std::vector<trace::session_result>& sessions) {
    trace_channel_waits t;
    for (const auto& s : sessions) {
        t.waits += s.trace_waits;
        t.wait_s += s.trace_wait_s;
    }
    return t;
}

pacing_figures summarize_pacing(const std::vector<trace::session_result>& sessions,
                                const std::vector<std::vector<double>>& loop_lag_s) {
    auto copy = sessions;
    const auto stats = fold_appends(copy);
    return summarize_pacing(copy, stats, loop_lag_s);
}

pacing_figures summarize_pacing(const std::vector<trace::session_result>& sessions,
                                const trace::receipt_statistics& receipts,
                                const std::vector<std::vector<double>>& loop_lag_s) {
    pacing_figures f;
    std::vector<double> span, updated, first_audio;
    std::vector<double> updated_from_scheduled, audio_from_scheduled;
    std::map<std::string, std::size_t> errors;
    std::size_t sessions_stalled = 0, sessions_ended_pending = 0;
    std::uint64_t stalled_sends = 0;
    std::optional<double> longest_write, longest_pending;
    const double stall_s = to_seconds(schedule::send_stall_threshold);
    for (const auto& s : sessions) {
        ++f.sessions;
        f.admitted += s.admitted;
        f.rejected += s.rejected;
        f.complete += s.complete;
        f.packets_expected += s.expected_appends;
        f.packets_sent += s.appends_sent;
        sessions_stalled += s.stalled_sends > 0;
        stalled_sends += s.stalled_sends;
        if (s.longest_write_s)
            longest_write = std::max(longest_write.value_or(0), *s.longest_write_s);
        if (s.pending_write_s && *s.pending_write_s > stall_s) {
            ++sessions_ended_pending;
            longest_pending = std::max(longest_pending.value_or(0), *s.pending_write_s);
        }
        f.late_packets += s.late_appends;
        f.late_after_send_stall += s.late_appends_after_send_stall;
        f.sessions_with_late_packet += s.late_appends > 0;
        if (s.appends_sent > 1 && s.first_append_start_s && s.last_append_start_s)
            span.push_back(*s.last_append_start_s - *s.first_append_start_s);
        if (s.updated_s && s.connect_start_s)
            updated.push_back(*s.updated_s - *s.connect_start_s);
        if (s.first_audio_s && s.session_start_s)
            first_audio.push_back(*s.first_audio_s - *s.session_start_s);
        if (s.scheduled_s && s.updated_s)
            updated_from_scheduled.push_back(*s.updated_s - *s.scheduled_s);
        if (s.scheduled_s && s.first_audio_s)
            audio_from_scheduled.push_back(*s.first_audio_s - *s.scheduled_s);
        // Each distinct message once per session: the count is of sessions, not of lines. A
        // timeout that names its stalled send is counted without the session's own figure: N
        // sessions stuck on one server make one line, not N (the figures are in `send_stalls`).
        std::set<std::string> mine;
        for (const auto& f : s.failures)
            mine.insert(reference_text(without_figure(f)));
        if (!s.trace_error.empty())
            mine.insert(s.trace_error);
        for (const auto& e : mine)
            ++errors[e];
    }
    std::vector<double> lags;
    for (const auto& l : loop_lag_s)
        lags.insert(lags.end(), l.begin(), l.end());
    const auto lags_over = static_cast<std::size_t>(
        std::count_if(lags.begin(), lags.end(), [](double l) { return l > late_threshold_s; }));
    f.pacing_qualified = f.late_packets == 0 && f.packets_sent > 0;

    auto& j = f.json;
    j["sessions"] = {{"requested", f.sessions},
                     {"admitted", f.admitted},
                     {"rejected", f.rejected},
                     {"complete", f.complete},
                     {"incomplete", f.sessions - f.complete},
                     {"with_late_packet", f.sessions_with_late_packet}};
    j["packets"] = {{"expected", f.packets_expected},
                    {"sent", f.packets_sent},
                    {"late", f.late_packets},
                    {"late_after_send_stall", f.late_after_send_stall},
                    {"late_from_client", f.late_packets - f.late_after_send_stall},
                    {"late_threshold_s", late_threshold_s}};
    j["pacing_qualified"] = f.pacing_qualified;
    // From the histograms the sessions folded their appends into: the quantiles are within
    // 1/2,048 of the exact values, n, max and mean are exact.
    j["pacing_deviation_s"] = to_json(receipts.deviation_s.summarize(pacing_fractions));
    j["pacing_abs_deviation_s"] =
        to_json(receipts.deviation_s.absolute().summarize(pacing_fractions));
    j["ws_send_time_s"] = to_json(receipts.send_time_s.summarize(pacing_fractions));
    j["quantile_precision"] = {
        {"keys",
         boost::json::array{"pacing_deviation_s", "pacing_abs_deviation_s", "ws_send_time_s"}},
        {"relative", log_histogram::relative_precision},
        {"note", "quantiles from log-linear histograms (1,024 buckets per power of two, 1 ns "
                 "below 2,048 ns); n, max and mean are exact"}};
    j["append_span_s"] = to_json(summarize(span, pacing_fractions));
    j["time_to_session_updated_s"] = to_json(summarize(updated, protocol_fractions));
    j["time_to_first_audio_s"] = to_json(summarize(first_audio, protocol_fractions));
    if (!updated_from_scheduled.empty() || !audio_from_scheduled.empty()) {
        // Open loop: anchored to the scheduled start, so queueing anywhere is counted.
        j["latency_to_session_updated_s"] =
            to_json(summarize(updated_from_scheduled, protocol_fractions));
        j["latency_to_first_audio_s"] =
            to_json(summarize(audio_from_scheduled, protocol_fractions));
    }
    auto lag = to_json(summarize(lags, pacing_fractions));
    lag["over_80ms"] = lags_over;
    lag["contexts"] = loop_lag_s.size();
    j["loop_lag_s"] = std::move(lag);
    const auto waits = sum_trace_waits(sessions);
    j["trace_channel"] = {{"waits", waits.waits}, {"wait_s", waits.wait_s}};
    auto opt = [](const std::optional<double>& v) -> boost::json::value {
        return v ? boost::json::value(*v) : boost::json::value(nullptr);
    };
    // Writes the server's full TCP window held up (docs/protocol.md: missing figures are null).
    j["send_stalls"] = {{"threshold_s", stall_s},
                        {"sessions", sessions_stalled},
                        {"stalled_sends", stalled_sends},
                        {"longest_write_s", opt(longest_write)},
                        {"sessions_ended_with_send_pending", sessions_ended_pending},
                        {"longest_pending_s", opt(longest_pending)}};
    j["peak_overlapping_input_streams"] = peak_overlapping_streams(sessions);
    boost::json::array errs;
    for (const auto& [message, count] : errors)
        errs.push_back({{"message", message}, {"sessions", count}});
    j["errors"] = std::move(errs);
    return f;
}

deviations_source run_receipts(std::filesystem::path root,
                               std::map<std::uint32_t, std::string>* kept) {
    return [root = std::move(root), kept](const trace::session_result& s,
                                          std::vector<double>& out) -> std::string {
        if (s.appends_sent == 0 || !s.trace_error.empty())
            return {};
        if (!kept)
            return trace::read_receipt_deviations(
                root / trace::session_folder_name(s.index) / "input-send-receipts.json", out);
        auto node = kept->extract(s.index); // dropped once read
        return trace::read_receipt_deviations(node ? std::string_view(node.mapped()) : "",
                                              fmt::format("the receipts of session {}", s.index),
                                              out);
    };
}

deviations_source run_receipts(std::filesystem::path root, trace::receipt_spool* kept) {
    if (!kept)
        return run_receipts(std::move(root));
    return [kept](const trace::session_result& s, std::vector<double>& out) -> std::string {
        if (s.appends_sent == 0 || !s.trace_error.empty())
            return {};
        return trace::read_receipt_deviations(
            kept->take(s.index), fmt::format("the receipts of session {}", s.index), out);
    };
}

std::string samples_json(const std::vector<trace::session_result>& sessions,
                         const open_loop_arrivals& open_loop) {
    std::string text;
    write_samples([&](std::string_view piece) { text += piece; }, sessions,
                  [](const trace::session_result& s, std::vector<double>& out) {
                      out = packet_deviations(s);
                      return std::string();
                  },
                  open_loop);
    return text;
}

std::vector<std::string> write_samples(const std::function<void(std::string_view)>& sink,
                                       const std::vector<trace::session_result>& sessions,
                                       const deviations_source& source,
                                       const open_loop_arrivals& open_loop) {
    std::vector<std::string> errors;
    std::string out = R"({"schema_version":1,"unit":"seconds","sessions":[)";
    bool first = true;
    std::vector<double> deviations;
    for (const auto& s : sessions) {
        fmt::format_to(std::back_inserter(out),
                       R"({}{{"index":{},"session_start_s":{},"deviation_s":[)", first ? "" : ",",
                       s.index,
                       s.session_start_s ? fmt::format("{:.9f}", *s.session_start_s) : "null");
        first = false;
        deviations.clear();
        if (auto error = source(s, deviations); !error.empty()) {
            deviations.clear();
            errors.push_back(std::move(error));
        }
        for (std::size_t i = 0; i < deviations.size(); ++i) {
            if (i > 0)
                out += ',';
            append_fixed6(out, deviations[i]); // fmt's {:.6f}, without its general algorithm
        }
        // One session's deviations at a time, never all of them: the capacity of the longest
        // session so far is kept (8 bytes a packet: 60 kB for 10 minutes).
        out += "]";
        // The session's handshake phases and how long its session.update took to be
        // acknowledged (null when it was not), so that parts can pool them.
        if (s.handshake) {
            const auto ack = s.updated_s && s.update_sent_s
                                 ? fmt::format("{:.6f}", *s.updated_s - *s.update_sent_s)
                                 : std::string("null");
            fmt::format_to(std::back_inserter(out),
                           R"(,"handshake_s":{{"connect":{:.6f},"tls":{:.6f},"upgrade":{:.6f},)"
                           R"("session_update_ack":{}}})",
                           s.handshake->connect_s, s.handshake->tls_s, s.handshake->upgrade_s, ack);
        } else {
            out += R"(,"handshake_s":null)";
        }
        out += "}";
        sink(out);
        out.clear();
    }
    out += "]";
    if (const auto* ol = open_loop.result) {
        // Raw per-arrival times, so that shards of one schedule can be pooled later.
        auto since_start = [&](const std::optional<time_point>& t) {
            return t ? fmt::format("{:.9f}", to_seconds(*t - ol->start)) : std::string("null");
        };
        fmt::format_to(std::back_inserter(out), R"(,"open_loop":{{"start_s":{:.9f},"arrivals":[)",
                       to_seconds(ol->start));
        for (std::size_t i = 0; i < ol->records.size(); ++i) {
            const auto& r = ol->records[i];
            fmt::format_to(
                std::back_inserter(out),
                R"({}{{"index":{},"offset_ns":{},"dispatched_s":{},"completed_s":{},)"
                R"("cap_delay_s":{:.9f},"dropped":{},"failed":{}}})",
                i == 0 ? "" : ",", open_loop.first_index + i * open_loop.index_stride,
                std::chrono::duration_cast<std::chrono::nanoseconds>(r.scheduled - ol->start)
                    .count(),
                since_start(r.dispatched), since_start(r.completed), to_seconds(r.cap_delay),
                r.dropped, r.failed);
        }
        out += "]}";
    }
    out += "}\n";
    sink(out);
    return errors;
}

} // namespace pacer::metrics

#include <pacer/core/stats.hpp>
#include <pacer/metrics/merge.hpp>
#include <pacer/metrics/pacing.hpp>

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace pacer::metrics {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

json::value read_json_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(fmt::format("cannot read {}", path.string()));
    std::ostringstream ss;
    ss << in.rdbuf();
    boost::system::error_code ec;
    auto v = json::parse(ss.str(), ec);
    if (ec)
        throw std::runtime_error(
            fmt::format("{} is not valid JSON: {}", path.string(), ec.message()));
    return v;
}

double number_at(const json::object& o, std::initializer_list<const char*> path,
                 double fallback = 0) {
    const json::value* cur = nullptr;
    const json::object* obj = &o;
    for (const char* k : path) {
        if (!obj)
            return fallback;
        cur = obj->if_contains(k);
        if (!cur)
            return fallback;
        obj = cur->if_object();
    }
    return cur && cur->is_number() ? cur->to_number<double>() : fallback;
}

} // namespace

run_part read_run_part(const fs::path& dir) {
    run_part part;
    part.dir = dir;
    const auto summary = read_json_file(dir / "summary.json");
    if (!summary.is_object() || !summary.as_object().contains("pacing"))
        throw std::runtime_error(
            fmt::format("{} is not a pacer run summary", (dir / "summary.json").string()));
    part.summary = summary.as_object();
    const auto samples = read_json_file(dir / "samples.json");
    const auto* sessions =
        samples.is_object() ? samples.as_object().if_contains("sessions") : nullptr;
    if (!sessions || !sessions->is_array())
        throw std::runtime_error(
            fmt::format("{} has no sessions array", (dir / "samples.json").string()));
    for (const auto& s : sessions->as_array()) {
        session_samples ss;
        const auto& o = s.as_object();
        if (const auto* start = o.if_contains("session_start_s"); start && start->is_number())
            ss.session_start_s = start->to_number<double>();
        for (const auto& d : o.at("deviation_s").as_array())
            ss.deviation_s.push_back(d.to_number<double>());
        part.sessions.push_back(std::move(ss));
    }
    return part;
}

void check_clocks(const std::vector<run_part>& parts, double max_error_s, bool allow_skew) {
    std::vector<std::string> hosts;
    for (const auto& p : parts) {
        const auto* h = p.summary.if_contains("host");
        const std::string host = h && h->is_string() ? std::string(h->get_string()) : std::string();
        if (std::find(hosts.begin(), hosts.end(), host) == hosts.end())
            hosts.push_back(host);
    }
    if (hosts.size() < 2 || allow_skew)
        return;
    for (const auto& p : parts) {
        const json::object* sync = nullptr;
        if (const auto* c = p.summary.if_contains("clock"); c && c->is_object())
            if (const auto* sy = c->as_object().if_contains("sync"); sy && sy->is_object())
                sync = &sy->as_object();
        const bool synced = sync && sync->contains("synchronized") &&
                            sync->at("synchronized").is_bool() &&
                            sync->at("synchronized").as_bool();
        const double max_error = sync ? number_at(*sync, {"max_error_s"}, 1e9) : 1e9;
        if (!synced || max_error > max_error_s)
            throw std::runtime_error(fmt::format(
                "{}: its realtime clock was {} (max error {:.3f} s, bound {:.3f} s), so parts from "
                "{} hosts cannot be aligned; synchronise the clocks (NTP) or pass "
                "--allow-clock-skew",
                p.dir.string(), synced ? "too uncertain" : "not synchronised", max_error,
                max_error_s, hosts.size()));
    }
}

json::object merge_parts(const std::vector<run_part>& parts) {
    std::vector<double> deviation, abs_deviation;
    std::vector<std::pair<double, int>> edges; // wall-clock stream intervals
    std::size_t late = 0, sessions_late = 0;
    double requested = 0, admitted = 0, rejected = 0, complete = 0, expected = 0, sent = 0;
    double lag_p99_worst = 0, lag_max = 0, lag_over = 0, waits = 0;
    double stalled_sessions = 0, stalled_sends = 0, ended_pending = 0;
    std::optional<double> longest_write, longest_pending;
    json::array part_list;
    for (const auto& p : parts) {
        const auto& s = p.summary;
        requested += number_at(s, {"pacing", "sessions", "requested"});
        admitted += number_at(s, {"pacing", "sessions", "admitted"});
        rejected += number_at(s, {"pacing", "sessions", "rejected"});
        complete += number_at(s, {"pacing", "sessions", "complete"});
        expected += number_at(s, {"pacing", "packets", "expected"});
        sent += number_at(s, {"pacing", "packets", "sent"});
        lag_p99_worst = std::max(lag_p99_worst, number_at(s, {"pacing", "loop_lag_s", "p99"}));
        lag_max = std::max(lag_max, number_at(s, {"pacing", "loop_lag_s", "max"}));
        lag_over += number_at(s, {"pacing", "loop_lag_s", "over_80ms"});
        waits += number_at(s, {"pacing", "trace_channel", "waits"});
        stalled_sessions += number_at(s, {"pacing", "send_stalls", "sessions"});
        stalled_sends += number_at(s, {"pacing", "send_stalls", "stalled_sends"});
        ended_pending +=
            number_at(s, {"pacing", "send_stalls", "sessions_ended_with_send_pending"});
        if (const double w = number_at(s, {"pacing", "send_stalls", "longest_write_s"}, -1); w >= 0)
            longest_write = std::max(longest_write.value_or(0), w);
        if (const double w = number_at(s, {"pacing", "send_stalls", "longest_pending_s"}, -1);
            w >= 0)
            longest_pending = std::max(longest_pending.value_or(0), w);
        // Monotonic seconds of this part -> wall-clock seconds.
        const double to_wall =
            number_at(s, {"clock", "realtime_s"}) - number_at(s, {"clock", "monotonic_s"});
        std::size_t part_late = 0;
        for (const auto& ss : p.sessions) {
            bool session_late = false;
            for (double d : ss.deviation_s) {
                deviation.push_back(d);
                abs_deviation.push_back(std::abs(d));
                if (std::abs(d) > late_threshold_s) {
                    ++part_late;
                    session_late = true;
                }
            }
            sessions_late += session_late;
            if (ss.session_start_s && !ss.deviation_s.empty()) {
                const std::size_t n = ss.deviation_s.size();
                const double first = *ss.session_start_s + ss.deviation_s.front();
                const double last = *ss.session_start_s + 0.080 * static_cast<double>(n - 1) +
                                    ss.deviation_s.back();
                edges.emplace_back(first + to_wall, +1);
                edges.emplace_back(last + to_wall, -1);
            }
        }
        late += part_late;
        json::object entry{{"dir", p.dir.string()},
                           {"sessions", number_at(s, {"pacing", "sessions", "requested"})},
                           {"late_packets", part_late},
                           {"client_cpu_cores", number_at(s, {"resources", "client_cpu_cores"})},
                           {"peak_rss_bytes", number_at(s, {"resources", "peak_rss_bytes"})},
                           {"loop_lag_p99_s", number_at(s, {"pacing", "loop_lag_s", "p99"})}};
        if (const auto* c = s.if_contains("clock"))
            entry["clock"] = *c;
        if (const auto* h = s.if_contains("host"))
            entry["host"] = *h;
        part_list.push_back(std::move(entry));
    }
    std::sort(edges.begin(), edges.end());
    std::size_t open = 0, peak = 0;
    for (const auto& [t, d] : edges) {
        open = d > 0 ? open + 1 : open - 1;
        peak = std::max(peak, open);
    }
    const bool qualified = late == 0 && sent > 0;
    json::object pacing;
    pacing["sessions"] = json::object{{"requested", requested},
                                      {"admitted", admitted},
                                      {"rejected", rejected},
                                      {"complete", complete},
                                      {"incomplete", requested - complete},
                                      {"with_late_packet", sessions_late}};
    pacing["packets"] = json::object{{"expected", expected},
                                     {"sent", sent},
                                     {"late", late},
                                     {"late_threshold_s", late_threshold_s}};
    pacing["pacing_qualified"] = qualified;
    pacing["pacing_deviation_s"] = to_json(summarize(deviation, pacing_fractions));
    pacing["pacing_abs_deviation_s"] = to_json(summarize(abs_deviation, pacing_fractions));
    pacing["loop_lag_s"] =
        json::object{{"worst_part_p99", lag_p99_worst}, {"max", lag_max}, {"over_80ms", lag_over}};
    pacing["trace_channel"] = json::object{{"waits", waits}};
    auto opt = [](const std::optional<double>& v) {
        return v ? json::value(*v) : json::value(nullptr);
    };
    pacing["send_stalls"] = json::object{{"threshold_s", to_seconds(session::send_stall_threshold)},
                                         {"sessions", stalled_sessions},
                                         {"stalled_sends", stalled_sends},
                                         {"longest_write_s", opt(longest_write)},
                                         {"sessions_ended_with_send_pending", ended_pending},
                                         {"longest_pending_s", opt(longest_pending)}};
    pacing["peak_overlapping_input_streams"] = peak;
    json::object out;
    out["schema_version"] = 1;
    out["command"] = "merge";
    out["pooling"] = "percentiles over every packet of every part (not averages of percentiles)";
    out["pacing"] = std::move(pacing);
    out["pacing_qualified"] = qualified;
    out["parts"] = std::move(part_list);
    return out;
}

} // namespace pacer::metrics

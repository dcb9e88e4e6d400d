#include <pacer/core/bad_input.hpp>
#include <pacer/core/json_pointer.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/metrics/merge.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/metrics/samples_stream.hpp>
#include <pacer/metrics/summary_file.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/constants.hpp>
#include <pacer/schedule/open_loop.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <system_error>

namespace pacer::metrics {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// `pointer` is a JSON Pointer ("/pacing/loop_lag_s/p99", core/json_pointer.hpp).
double number_at(const json::object& o, std::string_view pointer, double fallback = 0) {
    const json::value* v = find_pointer(o, pointer);
    return v && v->is_number() ? v->to_number<double>() : fallback;
}

// A count as an integer: runs write integers; a double (a summary written by an older merge)
// is rounded, a negative or missing value is 0.
std::uint64_t count_at(const json::object& o, std::string_view pointer) {
    const json::value* v = find_pointer(o, pointer);
    if (!v)
        return 0;
    if (v->is_uint64())
        return v->as_uint64();
    if (v->is_int64())
        return v->as_int64() > 0 ? static_cast<std::uint64_t>(v->as_int64()) : 0;
    if (v->is_double() && v->as_double() > 0)
        return static_cast<std::uint64_t>(std::llround(v->as_double()));
    return 0;
}

bool flag_at(const json::object& o, std::string_view pointer) {
    const json::value* v = find_pointer(o, pointer);
    return v && v->is_bool() && v->as_bool();
}

std::string string_at(const json::object& o, std::string_view pointer) {
    const json::value* v = find_pointer(o, pointer);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

bool is_open_loop(const run_part& p) {
    const auto* ol = p.summary.if_contains("open_loop");
    return ol && ol->is_object();
}

std::string schedule_sha(const run_part& p) {
    return string_at(p.summary, "/open_loop/schedule/sha256");
}

} // namespace

namespace {
// The summary of a part's folder; throws as read_run_part documents.
json::object read_part_summary(const fs::path& dir) {
    const auto summary = read_summary(dir);
    if (!summary.json)
        throw std::runtime_error(summary.missing
                                     ? fmt::format("cannot read {}", summary.path.string())
                                     : fmt::format("{} {}", summary.path.string(), summary.why));
    if (!summary.object() || !summary.object()->contains("pacing"))
        throw std::runtime_error(
            fmt::format("{} is not a pacer run summary", summary.path.string()));
    return *summary.object();
}

} // namespace

double append_period_s(const json::object& summary) {
    const double ms = number_at(summary, "/config/packet_ms", 0);
    return ms > 0 ? ms / 1000 : schedule::packet_period_s;
}

namespace {

// A session's first and last packet send, from its grid origin, deviations and the grid's
// period (`append_period_s`).
std::optional<std::pair<double, double>> stream_of(const session_samples& ss, double period_s) {
    if (!ss.session_start_s || ss.deviation_s.empty())
        return std::nullopt;
    const std::size_t n = ss.deviation_s.size();
    return std::pair{*ss.session_start_s + ss.deviation_s.front(),
                     *ss.session_start_s + period_s * static_cast<double>(n - 1) +
                         ss.deviation_s.back()};
}
} // namespace

run_part read_run_part_folded(const fs::path& dir) {
    run_part part;
    part.dir = dir;
    part.summary = read_part_summary(dir);
    const double period_s = append_period_s(part.summary);
    folded_samples f;
    part.arrivals =
        stream_samples(dir / "samples.json", samples_rules::strict, [&](samples_session&& e) {
            if (e.handshake)
                part.handshakes.push_back(*e.handshake);
            bool session_late = false;
            for (double d : e.samples.deviation_s) {
                f.deviation_s.record(d);
                if (std::abs(d) > late_threshold_s) {
                    ++f.late;
                    session_late = true;
                }
            }
            f.sessions_late += session_late;
            if (const auto s = stream_of(e.samples, period_s))
                f.streams.push_back(*s);
        });
    part.folded = std::move(f);
    return part;
}

run_part read_run_part(const fs::path& dir) {
    run_part part;
    part.dir = dir;
    part.summary = read_part_summary(dir);
    auto samples = read_samples(dir / "samples.json", samples_rules::strict);
    for (auto& e : samples.sessions) {
        if (e.handshake)
            part.handshakes.push_back(*e.handshake);
        part.sessions.push_back(std::move(e.samples));
    }
    part.arrivals = std::move(samples.arrivals);
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
        const double max_error = sync ? number_at(*sync, "/max_error_s", 1e9) : 1e9;
        if (!synced || max_error > max_error_s)
            throw bad_input(fmt::format(
                "{}: its realtime clock was {} (max error {:.3f} s, bound {:.3f} s), so parts from "
                "{} hosts cannot be aligned; synchronise the clocks (NTP) or pass "
                "--allow-clock-skew",
                p.dir.string(), synced ? "too uncertain" : "not synchronised", max_error,
                max_error_s, hosts.size()));
    }
}

std::string part_identity(const run_part& part) {
    const auto& s = part.summary;
    if (auto id = string_at(s, "/run_id"); !id.empty())
        return "run id " + id;
    const auto* mono = find_pointer(s, "/clock/monotonic_s");
    const auto* real = find_pointer(s, "/clock/realtime_s");
    if (!mono || !real || !mono->is_number() || !real->is_number())
        return {};
    // Written before pacer recorded a run id: the clock pair read at its start is unique.
    return fmt::format("host '{}' started at monotonic {} / realtime {}", string_at(s, "/host"),
                       mono->to_number<double>(), real->to_number<double>());
}

void check_distinct(const std::vector<run_part>& parts) {
    auto canonical = [](const fs::path& p) {
        std::error_code ec;
        auto c = fs::weakly_canonical(p, ec);
        return ec ? fs::absolute(p).lexically_normal() : c;
    };
    for (std::size_t i = 0; i < parts.size(); ++i)
        for (std::size_t j = i + 1; j < parts.size(); ++j) {
            const auto& a = parts[i];
            const auto& b = parts[j];
            const auto both = fmt::format("{} and {}", a.dir.string(), b.dir.string());
            if (canonical(a.dir) == canonical(b.dir))
                throw bad_input(fmt::format("{} are the same folder: give each part once", both));
            if (const auto id = part_identity(a); !id.empty() && id == part_identity(b))
                throw bad_input(fmt::format(
                    "{} are the same run ({}), e.g. a copy: give each part once", both, id));
            const auto* sa = a.summary.if_contains("shard");
            const auto* sb = b.summary.if_contains("shard");
            if (sa && sb && sa->is_object() && sb->is_object()) {
                const auto& x = sa->as_object();
                const auto& y = sb->as_object();
                const bool same_share =
                    count_at(x, "/index") == count_at(y, "/index") &&
                    count_at(x, "/count") == count_at(y, "/count") &&
                    count_at(x, "/sessions_total") == count_at(y, "/sessions_total") &&
                    schedule_sha(a) == schedule_sha(b);
                if (same_share)
                    throw bad_input(fmt::format(
                        "{} are both shard {}/{} of the same run: pooling them would count its "
                        "sessions twice; give each shard once",
                        both, count_at(x, "/index"), count_at(x, "/count")));
            }
        }
}

// A part's wire protocol (`config.protocol`; parts written before it was recorded: native).
std::string part_protocol(const run_part& p) {
    const auto name = string_at(p.summary, "/config/protocol");
    return name.empty() ? "native" : name;
}

void check_compatible(const std::vector<run_part>& parts) {
    for (std::size_t i = 1; i < parts.size(); ++i) {
        const auto& a = parts[0];
        const auto& b = parts[i];
        if (part_protocol(a) != part_protocol(b))
            throw bad_input(
                fmt::format("{} spoke {} and {} spoke {}: only parts of one protocol can be pooled",
                            a.dir.string(), part_protocol(a), b.dir.string(), part_protocol(b)));
        if (is_open_loop(a) != is_open_loop(b))
            throw bad_input(fmt::format(
                "{} is an open-loop run and {} is not: only shards of one run can be pooled",
                (is_open_loop(a) ? a : b).dir.string(), (is_open_loop(a) ? b : a).dir.string()));
        if (is_open_loop(a) && schedule_sha(a) != schedule_sha(b))
            throw bad_input(
                fmt::format("{} and {} ran different schedules (sha256 {} and {}): only shards "
                            "of one schedule can be pooled",
                            a.dir.string(), b.dir.string(), schedule_sha(a).substr(0, 12),
                            schedule_sha(b).substr(0, 12)));
    }
}

std::optional<run_window> part_window(const run_part& part) {
    const auto& s = part.summary;
    const auto* mono = find_pointer(s, "/clock/monotonic_s");
    const auto* real = find_pointer(s, "/clock/realtime_s");
    if (!mono || !real || !mono->is_number() || !real->is_number())
        return std::nullopt;
    const double realtime = real->to_number<double>();
    if (const auto* wall = find_pointer(s, "/resources/wall_s"); wall && wall->is_number())
        return run_window{realtime, realtime + wall->to_number<double>()};
    // No wall time: the span of its packets, moved onto the wall clock.
    const double to_wall = realtime - mono->to_number<double>();
    std::optional<run_window> w;
    std::vector<std::pair<double, double>> streams;
    if (part.folded)
        streams = part.folded->streams;
    for (const auto& ss : part.sessions)
        if (const auto st = stream_of(ss, append_period_s(part.summary)))
            streams.push_back(*st);
    for (const auto& [begin, end] : streams) {
        const double first = begin + to_wall;
        const double last = end + to_wall;
        if (!w)
            w = run_window{first, last};
        w->begin_s = std::min(w->begin_s, first);
        w->end_s = std::max(w->end_s, last);
    }
    return w;
}

std::optional<std::string> check_overlap(const std::vector<run_part>& parts, bool allow_disjoint) {
    if (parts.size() < 2)
        return std::nullopt;
    std::optional<std::string> problem;
    std::size_t latest_begin = 0, earliest_end = 0;
    std::vector<run_window> windows;
    for (std::size_t i = 0; i < parts.size() && !problem; ++i) {
        const auto w = part_window(parts[i]);
        if (!w) {
            problem = fmt::format("cannot tell when {} streamed: its summary.json records no "
                                  "clock pair",
                                  parts[i].dir.string());
            break;
        }
        windows.push_back(*w);
        if (w->begin_s > windows[latest_begin].begin_s)
            latest_begin = i;
        if (w->end_s < windows[earliest_end].end_s)
            earliest_end = i;
    }
    // Intervals that overlap pairwise share one instant: the latest start must come before
    // the earliest end.
    if (!problem && windows[latest_begin].begin_s >= windows[earliest_end].end_s)
        problem = fmt::format("{} and {} did not stream at the same time: {} ended {:.1f} s "
                              "before {} began",
                              parts[earliest_end].dir.string(), parts[latest_begin].dir.string(),
                              parts[earliest_end].dir.string(),
                              windows[latest_begin].begin_s - windows[earliest_end].end_s,
                              parts[latest_begin].dir.string());
    if (!problem)
        return std::nullopt;
    if (!allow_disjoint)
        throw bad_input(*problem + "; pass --allow-disjoint to merge them anyway");
    return problem;
}

std::optional<json::object> pool_open_loop(const std::vector<run_part>& parts) {
    if (parts.empty())
        return std::nullopt;
    schedule::open_loop_result pooled;
    std::vector<std::pair<std::size_t, schedule::request_record>> records;
    std::uint64_t max_concurrency = 0, peak = 0;
    bool unlimited = false;
    const auto& first = parts.front().summary;
    for (const auto& p : parts) {
        if (!is_open_loop(p) || !p.arrivals)
            return std::nullopt;
        const auto& s = p.summary;
        const auto cap = count_at(s, "/open_loop/cap/max_concurrency");
        unlimited = unlimited || cap == 0;
        max_concurrency += cap;
        peak += count_at(s, "/open_loop/cap/peak_in_flight");
        pooled.interrupted = pooled.interrupted || flag_at(s, "/open_loop/interrupted");
        if (const auto* errors = find_pointer(s, "/open_loop/errors"); errors && errors->is_array())
            for (const auto& e : errors->as_array()) {
                if (!e.is_object())
                    continue;
                const auto message = string_at(e.as_object(), "/message");
                for (std::uint64_t k = count_at(e.as_object(), "/count"); k > 0; --k)
                    pooled.failures.push_back({0, nullptr, message});
            }
        // Every part's times are relative to its own origin: lags and latencies are
        // differences within one part, so the parts need no common clock here.
        for (const auto& a : *p.arrivals) {
            schedule::request_record r;
            r.scheduled = time_point{} + std::chrono::duration_cast<duration>(
                                             std::chrono::nanoseconds(a.offset_ns));
            if (a.dispatched_s)
                r.dispatched = time_point{} + from_seconds(*a.dispatched_s);
            if (a.completed_s)
                r.completed = time_point{} + from_seconds(*a.completed_s);
            r.cap_delay = from_seconds(a.cap_delay_s);
            r.dropped = a.dropped;
            r.failed = a.failed;
            records.emplace_back(a.index, r);
        }
    }
    std::stable_sort(records.begin(), records.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    const auto arrivals = count_at(first, "/open_loop/schedule/arrivals");
    bool covered = records.size() == arrivals;
    for (std::size_t i = 0; i < records.size() && covered; ++i)
        covered = records[i].first == i;
    for (auto& [index, r] : records)
        pooled.records.push_back(r);
    pooled.max_concurrency = unlimited ? 0 : max_concurrency;
    pooled.policy = schedule::parse_cap_policy(string_at(first, "/open_loop/cap/policy"))
                        .value_or(schedule::cap_policy::queue);
    pooled.peak_in_flight = peak;
    // The parts' own tolerance (`pacer run`: p99 <= 5 ms, max <= 80 ms).
    schedule::schedule_thresholds thresholds = schedule::client_schedule_thresholds;
    const auto* t = find_pointer(first, "/open_loop/schedule_kept_thresholds_s");
    if (t && t->is_object()) {
        thresholds.dispatch_lag_p99 =
            from_seconds(number_at(t->as_object(), "/dispatch_lag_p99", 0.005));
        thresholds.dispatch_lag_max =
            from_seconds(number_at(t->as_object(), "/dispatch_lag_max", 0.080));
    }
    auto out = schedule::open_loop_summary(pooled, thresholds);
    out["cap"].as_object()["pooled"] = "max_concurrency and peak_in_flight summed over the parts";
    // A staged schedule's rows, as `pacer run --stages` writes them, over every part's arrivals
    // (every part's offsets are the one schedule's, so its stages place them).
    if (const auto stages = string_at(first, "/open_loop/schedule/stages"); !stages.empty())
        out["stages"] = schedule::stage_rows(pooled, schedule::parse_stages(stages));
    json::object schedule;
    if (const auto* sch = find_pointer(first, "/open_loop/schedule"); sch && sch->is_object())
        schedule = sch->as_object();
    schedule.erase("file");
    schedule["covered"] = covered;
    out["schedule"] = std::move(schedule);
    out["pooling"] = "distributions over every arrival of every part";
    return out;
}

namespace {

// What merge_parts pools as it reads the parts in turn.
struct pooled_parts {
    std::vector<double> deviation, abs_deviation;
    log_histogram folded; // parts read folded (read_run_part_folded)
    bool any_folded = false;
    std::vector<std::pair<double, int>> edges; // wall-clock stream intervals
    std::uint64_t late = 0, sessions_late = 0;
    std::uint64_t requested = 0, admitted = 0, rejected = 0, complete = 0, expected = 0, sent = 0;
    double lag_p99_worst = 0, lag_max = 0;
    std::uint64_t lag_over = 0, waits = 0;
    std::uint64_t stalled_sessions = 0, stalled_sends = 0, ended_pending = 0;
    std::uint64_t late_after_send_stall = 0; // as each part counted them (its receipts)
    std::optional<double> longest_write, longest_pending;
    bool interrupted = false;
    json::array part_list, incomplete_parts;
    std::vector<double> connect, tls, upgrade, update_ack; // every admitted session's
    bool any_tls = false;
};

// The counts a part's summary.json gives: summed, or the worst of the parts.
void pool_counts(pooled_parts& r, const json::object& s) {
    r.requested += count_at(s, "/pacing/sessions/requested");
    r.admitted += count_at(s, "/pacing/sessions/admitted");
    r.rejected += count_at(s, "/pacing/sessions/rejected");
    r.complete += count_at(s, "/pacing/sessions/complete");
    r.expected += count_at(s, "/pacing/packets/expected");
    r.sent += count_at(s, "/pacing/packets/sent");
    r.late_after_send_stall += count_at(s, "/pacing/packets/late_after_send_stall");
    r.lag_p99_worst = std::max(r.lag_p99_worst, number_at(s, "/pacing/loop_lag_s/p99"));
    r.lag_max = std::max(r.lag_max, number_at(s, "/pacing/loop_lag_s/max"));
    r.lag_over += count_at(s, "/pacing/loop_lag_s/over_80ms");
    r.waits += count_at(s, "/pacing/trace_channel/waits");
    r.stalled_sessions += count_at(s, "/pacing/send_stalls/sessions");
    r.stalled_sends += count_at(s, "/pacing/send_stalls/stalled_sends");
    r.ended_pending += count_at(s, "/pacing/send_stalls/sessions_ended_with_send_pending");
    if (const double w = number_at(s, "/pacing/send_stalls/longest_write_s", -1); w >= 0)
        r.longest_write = std::max(r.longest_write.value_or(0), w);
    if (const double w = number_at(s, "/pacing/send_stalls/longest_pending_s", -1); w >= 0)
        r.longest_pending = std::max(r.longest_pending.value_or(0), w);
}

// A part's packets (folded or per session) and input streams; returns its late packets.
std::uint64_t pool_packets(pooled_parts& r, const run_part& p) {
    const auto& s = p.summary;
    // Monotonic seconds of this part -> wall-clock seconds.
    const double to_wall = number_at(s, "/clock/realtime_s") - number_at(s, "/clock/monotonic_s");
    std::uint64_t part_late = 0;
    if (p.folded) {
        r.folded.merge(p.folded->deviation_s);
        r.any_folded = true;
        part_late += p.folded->late;
        r.sessions_late += p.folded->sessions_late;
        for (const auto& [first, last] : p.folded->streams) {
            r.edges.emplace_back(first + to_wall, +1);
            r.edges.emplace_back(last + to_wall, -1);
        }
    }
    for (const auto& ss : p.sessions) {
        bool session_late = false;
        for (double d : ss.deviation_s) {
            r.deviation.push_back(d);
            r.abs_deviation.push_back(std::abs(d));
            if (std::abs(d) > late_threshold_s) {
                ++part_late;
                session_late = true;
            }
        }
        r.sessions_late += session_late;
        if (const auto st = stream_of(ss, append_period_s(p.summary))) {
            r.edges.emplace_back(st->first + to_wall, +1);
            r.edges.emplace_back(st->second + to_wall, -1);
        }
    }
    r.late += part_late;
    return part_late;
}

void pool_handshakes(pooled_parts& r, const run_part& p) {
    for (const auto& h : p.handshakes) {
        r.connect.push_back(h.connect_s);
        r.tls.push_back(h.tls_s);
        r.upgrade.push_back(h.upgrade_s);
        r.any_tls = r.any_tls || h.tls_s > 0;
        if (h.update_ack_s)
            r.update_ack.push_back(*h.update_ack_s);
    }
}

// The part's entry in `parts`, and in `incomplete_parts` when it was interrupted or left
// sessions incomplete (which makes the whole incomplete).
void list_part(pooled_parts& r, const run_part& p, std::uint64_t part_late) {
    const auto& s = p.summary;
    const auto part_requested = count_at(s, "/pacing/sessions/requested");
    const auto part_complete = count_at(s, "/pacing/sessions/complete");
    const bool part_interrupted =
        flag_at(s, "/interrupted") || flag_at(s, "/open_loop/interrupted");
    const std::uint64_t part_incomplete =
        part_complete < part_requested ? part_requested - part_complete : 0;
    r.interrupted = r.interrupted || part_interrupted;
    json::object entry{{"dir", p.dir.string()},
                       {"sessions", part_requested},
                       {"late_packets", part_late},
                       {"client_cpu_cores", number_at(s, "/resources/client_cpu_cores")},
                       {"peak_rss_bytes", count_at(s, "/resources/peak_rss_bytes")},
                       {"loop_lag_p99_s", number_at(s, "/pacing/loop_lag_s/p99")},
                       {"interrupted", part_interrupted},
                       {"sessions_incomplete", part_incomplete}};
    if (const auto* id = s.if_contains("run_id"))
        entry["run_id"] = *id;
    if (const auto* c = s.if_contains("clock"))
        entry["clock"] = *c;
    if (const auto* h = s.if_contains("host"))
        entry["host"] = *h;
    if (const auto* sh = s.if_contains("shard"))
        entry["shard"] = *sh;
    if (part_interrupted || part_incomplete > 0)
        r.incomplete_parts.push_back(json::object{{"dir", p.dir.string()},
                                                  {"interrupted", part_interrupted},
                                                  {"sessions_incomplete", part_incomplete},
                                                  {"sessions", part_requested}});
    r.part_list.push_back(std::move(entry));
}

// The most input streams open at one wall-clock instant.
std::uint64_t peak_overlap(std::vector<std::pair<double, int>> edges) {
    std::sort(edges.begin(), edges.end());
    std::uint64_t open = 0, peak = 0;
    for (const auto& [t, d] : edges) {
        open = d > 0 ? open + 1 : open - 1;
        peak = std::max(peak, open);
    }
    return peak;
}

// The pooled deviations into `pacing`: exact percentiles, or one histogram when a part came
// folded.
void pool_deviation(pooled_parts& r, json::object& pacing) {
    if (r.any_folded) {
        // Some part came folded: every packet goes into the one histogram, whose quantiles are
        // within its stated precision of the exact ones (n, max and mean stay exact).
        for (double d : r.deviation)
            r.folded.record(d);
        pacing["pacing_deviation_s"] = to_json(r.folded.summarize(pacing_fractions));
        pacing["pacing_abs_deviation_s"] = to_json(r.folded.absolute().summarize(pacing_fractions));
        pacing["quantile_precision"] = json::object{
            {"keys", json::array{"pacing_deviation_s", "pacing_abs_deviation_s"}},
            {"relative", log_histogram::relative_precision},
            {"note", "quantiles from log-linear histograms (1,024 buckets per power of two, 1 ns "
                     "below 2,048 ns); n, max and mean are exact"}};
    } else {
        pacing["pacing_deviation_s"] = to_json(summarize(r.deviation, pacing_fractions));
        pacing["pacing_abs_deviation_s"] = to_json(summarize(r.abs_deviation, pacing_fractions));
    }
}

// The merged summary's `pacing`.
json::object pacing_section(pooled_parts& r, bool qualified) {
    json::object pacing;
    pacing["sessions"] =
        json::object{{"requested", r.requested},
                     {"admitted", r.admitted},
                     {"rejected", r.rejected},
                     {"complete", r.complete},
                     {"incomplete", r.requested - std::min(r.requested, r.complete)},
                     {"with_late_packet", r.sessions_late}};
    pacing["packets"] = json::object{
        {"expected", r.expected},
        {"sent", r.sent},
        {"late", r.late},
        {"late_after_send_stall", r.late_after_send_stall},
        {"late_from_client", r.late - std::min<std::uint64_t>(r.late, r.late_after_send_stall)},
        {"late_threshold_s", late_threshold_s}};
    pacing["pacing_qualified"] = qualified;
    pool_deviation(r, pacing);
    pacing["loop_lag_s"] = json::object{
        {"worst_part_p99", r.lag_p99_worst}, {"max", r.lag_max}, {"over_80ms", r.lag_over}};
    pacing["trace_channel"] = json::object{{"waits", r.waits}};
    auto opt = [](const std::optional<double>& v) {
        return v ? json::value(*v) : json::value(nullptr);
    };
    pacing["send_stalls"] =
        json::object{{"threshold_s", to_seconds(schedule::send_stall_threshold)},
                     {"sessions", r.stalled_sessions},
                     {"stalled_sends", r.stalled_sends},
                     {"longest_write_s", opt(r.longest_write)},
                     {"sessions_ended_with_send_pending", r.ended_pending},
                     {"longest_pending_s", opt(r.longest_pending)}};
    pacing["peak_overlapping_input_streams"] = peak_overlap(std::move(r.edges));
    return pacing;
}

// Handshake phases pooled over every admitted session of every part (parts written before
// pacer recorded them per session add none).
json::object handshake_section(pooled_parts& r) {
    json::object handshake;
    handshake["connections"] = r.connect.size();
    handshake["connect"] = to_json(summarize(r.connect, protocol_fractions));
    if (r.any_tls)
        handshake["tls"] = to_json(summarize(r.tls, protocol_fractions));
    handshake["upgrade"] = to_json(summarize(r.upgrade, protocol_fractions));
    handshake["session_update_ack"] = to_json(summarize(r.update_ack, protocol_fractions));
    return handshake;
}

} // namespace

json::object merge_parts(const std::vector<run_part>& parts) {
    pooled_parts r;
    for (const auto& p : parts) {
        pool_counts(r, p.summary);
        const std::uint64_t part_late = pool_packets(r, p);
        pool_handshakes(r, p);
        list_part(r, p, part_late);
    }
    const bool qualified = r.late == 0 && r.sent > 0;
    json::object out;
    out["schema_version"] = 1;
    out["command"] = "merge";
    out["protocol"] = parts.empty() ? std::string("native") : part_protocol(parts.front());
    out["pooling"] = "percentiles over every packet of every part (not averages of percentiles)";
    out["pacing"] = pacing_section(r, qualified);
    out["pacing_qualified"] = qualified;
    out["complete"] = r.incomplete_parts.empty();
    out["interrupted"] = r.interrupted;
    out["incomplete_parts"] = std::move(r.incomplete_parts);
    json::array warnings;
    const bool open_loop_parts =
        !parts.empty() && std::all_of(parts.begin(), parts.end(), is_open_loop);
    if (open_loop_parts) {
        if (auto ol = pool_open_loop(parts))
            out["open_loop"] = std::move(*ol);
        else
            warnings.push_back("open_loop not pooled: a part's samples.json has no per-arrival "
                               "records (written by an older pacer)");
    }
    out["handshake_s"] = handshake_section(r);
    out["warnings"] = std::move(warnings);
    out["parts"] = std::move(r.part_list);
    return out;
}

std::string merge_report_text(const json::object& merged, std::size_t parts,
                              const std::string& summary) {
    const auto& p = merged.at("pacing").as_object();
    const auto& dev = p.at("pacing_abs_deviation_s").as_object();
    auto ms = [](const json::value& v) {
        return v.is_null() ? std::string("-")
                           : fmt::format("{:.2f} ms", v.to_number<double>() * 1e3);
    };
    std::string out = fmt::format("pacer merge: {} part{}\n", parts, parts == 1 ? "" : "s");
    out +=
        fmt::format("  sessions   {} complete of {}\n", p.at("sessions").at("complete").as_uint64(),
                    p.at("sessions").at("requested").as_uint64());
    out += fmt::format(
        "  packets    {} sent, {} late (> 80 ms) -> {}\n", p.at("packets").at("sent").as_uint64(),
        p.at("packets").at("late").to_number<std::uint64_t>(),
        merged.at("pacing_qualified").as_bool() ? "PACING QUALIFIED" : "PACING UNQUALIFIED");
    out +=
        fmt::format("  |dev|      p50 {}  p99 {}  p99.9 {}  max {}  (pooled)\n", ms(dev.at("p50")),
                    ms(dev.at("p99")), ms(dev.at("p99.9")), ms(dev.at("max")));
    out += fmt::format("  overlap    {} input streams at once at the peak\n",
                       p.at("peak_overlapping_input_streams").to_number<std::uint64_t>());
    if (const auto* olv = merged.if_contains("open_loop")) {
        const auto& ol = olv->as_object();
        out += fmt::format(
            "  open loop  {} of {} arrivals{}; latency p50 {} p99 {}; dispatch lag p99 {} "
            "max {} -> {} (pooled)\n",
            ol.at("requests").at("scheduled").as_uint64(),
            ol.at("schedule").at("arrivals").to_number<std::uint64_t>(),
            ol.at("schedule").at("covered").as_bool() ? "" : " (not every shard given)",
            ms(ol.at("latency_s").at("p50")), ms(ol.at("latency_s").at("p99")),
            ms(ol.at("dispatch_lag_s").at("p99")), ms(ol.at("dispatch_lag_s").at("max")),
            ol.at("schedule_kept").as_bool() ? "SCHEDULE KEPT" : "SCHEDULE NOT KEPT");
    }
    out += fmt::format("  results    {}\n", summary);
    return out;
}

std::string incomplete_parts_text(const json::object& merged) {
    std::string which;
    for (const auto& part : merged.at("incomplete_parts").as_array())
        which += fmt::format("{}{} ({}{} of {} sessions incomplete)", which.empty() ? "" : ", ",
                             part.at("dir").as_string().c_str(),
                             part.at("interrupted").as_bool() ? "interrupted, " : "",
                             part.at("sessions_incomplete").as_uint64(),
                             part.at("sessions").as_uint64());
    return which;
}

} // namespace pacer::metrics

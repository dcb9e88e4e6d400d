#include <pacer/metrics/serving.hpp>
#include <pacer/report/tables.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include "html_parts.hpp"
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

namespace pacer::report {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace detail {

cell json_cell(const json::object& o, std::initializer_list<const char*> path) {
    const json::object* cur = &o;
    const json::value* v = nullptr;
    for (const char* k : path) {
        if (!cur)
            return {};
        v = cur->if_contains(k);
        if (!v)
            return {};
        cur = v->if_object();
    }
    if (v->is_bool())
        return v->as_bool();
    if (v->is_int64())
        return v->as_int64();
    if (v->is_uint64())
        return static_cast<std::int64_t>(v->as_uint64());
    if (v->is_double())
        return v->as_double();
    if (v->is_string())
        return std::string(v->as_string());
    return {};
}

} // namespace detail

using detail::json_cell;

namespace {

constexpr double late_s = metrics::pacing_tolerance_s; // one packet period

cell opt(std::optional<double> v) {
    return v ? cell(*v) : cell();
}
cell opt(std::optional<bool> v) {
    return v ? cell(*v) : cell();
}

std::string joined(const json::object& o, const char* key) {
    std::string s;
    if (const auto* a = o.if_contains(key); a && a->is_array())
        for (const auto& e : a->as_array())
            if (e.is_string())
                s += (s.empty() ? "" : "; ") + std::string(e.as_string());
    return s;
}

struct session_stats {
    std::int64_t late = 0;
    std::optional<double> max_abs_dev, max_send;
};

// As folded when the folder was read (session_record::stats).
session_stats stats_of(const session_record& s) {
    return {static_cast<std::int64_t>(s.stats.late), s.stats.max_abs_deviation_s,
            s.stats.max_send_time_s};
}

// The columns that say which session a row belongs to: its level and repeat (a sweep), its
// part (a merged run), and its index. `session_key` gives the matching cells.
std::vector<std::string> session_key_columns(const result_folder& f) {
    std::vector<std::string> c;
    if (f.kind == folder_kind::recording)
        return {"sample", "subset", "variant"};
    if (f.kind == folder_kind::serve)
        c = {"level", "repeat"};
    if (f.kind == folder_kind::merged)
        c.push_back("part");
    c.push_back("session");
    return c;
}

std::vector<cell> session_key(const result_folder& f, const session_record& s) {
    std::vector<cell> r;
    if (f.kind == folder_kind::recording)
        return {cell(s.sample), cell(s.subset), cell(s.variant)};
    if (f.kind == folder_kind::serve) {
        r.push_back(static_cast<std::int64_t>(s.level.value_or(0)));
        r.push_back(static_cast<std::int64_t>(s.repeat.value_or(1)));
    }
    if (f.kind == folder_kind::merged)
        r.push_back(static_cast<std::int64_t>(s.part));
    r.push_back(static_cast<std::int64_t>(s.index));
    return r;
}

table packets_table(const result_folder& f) {
    table t;
    t.name = "packets";
    t.columns = session_key_columns(f);
    for (const char* c :
         {"seq", "scheduled_s", "start_s", "completed_s", "deviation_s", "send_time_s", "late"})
        t.columns.push_back(c);
    t.rows.reserve(f.packet_count());
    for (const auto& s : f.sessions)
        for (const auto& p : s.packets) {
            auto r = session_key(f, s);
            r.push_back(p.seq);
            r.push_back(opt(p.scheduled_s));
            r.push_back(p.start_s);
            r.push_back(opt(p.completed_s));
            r.push_back(p.deviation_s);
            r.push_back(opt(p.send_time_s()));
            r.push_back(std::abs(p.deviation_s) > late_s);
            t.rows.push_back(std::move(r));
        }
    return t;
}

table sessions_table(const result_folder& f) {
    const bool serve = f.kind == folder_kind::serve;
    table t;
    t.name = "sessions";
    t.columns = session_key_columns(f);
    for (const char* c : {"session_start_s", "admitted", "packets", "late_packets",
                          "max_abs_deviation_s", "max_send_time_s"})
        t.columns.push_back(c);
    if (serve)
        for (const char* c : {"status", "ttfa_s", "output_duration_s", "output_coverage",
                              "underrun_ratio", "unit_miss_rate", "send_lateness_p99_s", "errors"})
            t.columns.push_back(c);
    const bool recording = f.kind == folder_kind::recording;
    if (recording)
        for (const char* c : {"status", "protocol_verdict", "qualified", "ttfa_s",
                              "output_duration_s", "errors", "violations"})
            t.columns.push_back(c);
    for (const auto& s : f.sessions) {
        const auto st = stats_of(s);
        auto r = session_key(f, s);
        r.push_back(opt(s.session_start_s));
        r.push_back(opt(s.admitted));
        r.push_back(static_cast<std::int64_t>(s.stats.count));
        r.push_back(st.late);
        r.push_back(opt(st.max_abs_dev));
        r.push_back(opt(st.max_send));
        if (serve) {
            const auto& o = s.serving;
            r.push_back(json_cell(o, {"status"}));
            r.push_back(json_cell(o, {"ttfa_s"}));
            r.push_back(json_cell(o, {"output_duration_s"}));
            r.push_back(json_cell(o, {"output_coverage"}));
            r.push_back(json_cell(o, {"underrun_ratio"}));
            r.push_back(json_cell(o, {"units", "unit_miss_rate"}));
            r.push_back(json_cell(o, {"send_lateness_p99_s"}));
            r.push_back(joined(o, "errors"));
        }
        if (recording) {
            const auto& e = s.variant_entry;
            r.push_back(json_cell(e, {"status"}));
            r.push_back(json_cell(e, {"protocol_verdict"}));
            r.push_back(json_cell(e, {"qualified"}));
            r.push_back(json_cell(s.serving, {"ttfa_s"}));
            r.push_back(json_cell(s.serving, {"output_duration_s"}));
            r.push_back(joined(e, "errors"));
            r.push_back(joined(e, "violations"));
        }
        t.rows.push_back(std::move(r));
    }
    return t;
}

table levels_table(const result_folder& f) {
    table t;
    t.name = "levels";
    t.columns = {"concurrency",
                 "second_try",
                 "try",
                 "attempt",
                 "repeats",
                 "client_timing_valid",
                 "slo_met",
                 "attempted_sessions",
                 "admitted_sessions",
                 "successful_sessions",
                 "rejected_sessions",
                 "ttfa_p50_s",
                 "ttfa_p95_s",
                 "ttfa_p99_s",
                 "underrun_ratio",
                 "unit_miss_rate",
                 "output_gap_excess_p99_s",
                 "send_lateness_p99_s",
                 "loop_lag_p99_s"};
    if (const auto* levels = f.summary.if_contains("levels"); levels && levels->is_array())
        for (const auto& lv : levels->as_array()) {
            const auto* l = lv.if_object();
            if (!l)
                continue;
            std::vector<cell> r;
            r.push_back(json_cell(*l, {"concurrency"}));
            r.push_back(json_cell(*l, {"second_try"}));
            r.push_back(json_cell(*l, {"try"}));
            r.push_back(json_cell(*l, {"attempt"}));
            r.push_back(json_cell(*l, {"repeats"}));
            r.push_back(json_cell(*l, {"client_timing_valid"}));
            r.push_back(json_cell(*l, {"slo", "met"}));
            for (const char* k : {"attempted_sessions", "admitted_sessions", "successful_sessions",
                                  "rejected_sessions"})
                r.push_back(json_cell(*l, {"aggregate", k}));
            for (const char* p : {"p50", "p95", "p99"})
                r.push_back(json_cell(*l, {"aggregate", "ttfa_s", p}));
            r.push_back(json_cell(*l, {"aggregate", "underrun_ratio"}));
            r.push_back(json_cell(*l, {"aggregate", "units", "unit_miss_rate"}));
            r.push_back(json_cell(*l, {"aggregate", "output_gap_excess_s", "p99"}));
            r.push_back(json_cell(*l, {"aggregate", "send_lateness_s", "p99"}));
            r.push_back(json_cell(*l, {"loop_lag_p99_s"}));
            t.rows.push_back(std::move(r));
        }
    return t;
}

// One row per arrival of the schedule. The run records no per-request timestamps, so the
// achieved side is the session's first append (its grid origin), on the run's clock.
table requests_table(const result_folder& f) {
    table t;
    t.name = "requests";
    t.columns = {"request",        "scheduled_offset_s", "first_append_offset_s",
                 "first_append_s", "admitted",           "packets",
                 "late_packets"};
    std::optional<double> origin;
    if (!f.parts.empty())
        origin = f.parts.front().clock_monotonic_s;
    std::map<std::uint32_t, const session_record*> by_index;
    for (const auto& x : f.sessions)
        by_index.emplace(x.index, &x);
    const std::size_t n = std::max<std::size_t>(f.schedule_offsets_s.size(), f.sessions.size());
    for (std::size_t i = 0; i < n; ++i) {
        const auto found = by_index.find(static_cast<std::uint32_t>(i));
        const session_record* s = found == by_index.end() ? nullptr : found->second;
        std::vector<cell> r;
        r.push_back(static_cast<std::int64_t>(i));
        r.push_back(i < f.schedule_offsets_s.size() ? cell(f.schedule_offsets_s[i]) : cell());
        const auto start = s ? s->session_start_s : std::nullopt;
        r.push_back(start && origin ? cell(*start - *origin) : cell());
        r.push_back(opt(start));
        r.push_back(s ? opt(s->admitted) : cell());
        r.push_back(s ? cell(static_cast<std::int64_t>(s->stats.count)) : cell());
        r.push_back(s ? cell(stats_of(*s).late) : cell());
        t.rows.push_back(std::move(r));
    }
    return t;
}

// One row per turn of every session (a multi-turn --scenario): the lines of each run's
// turns.jsonl (docs/scenarios.md), under the keys of the run they came from. A field a line
// lacks (written by an older pacer) is empty; a line that is not JSON is skipped.
struct turns_source {
    std::vector<cell> key;
    fs::path file;
};

table turns_table(const result_folder& f) {
    table t;
    t.name = "turns";
    std::vector<turns_source> sources;
    if (f.kind == folder_kind::serve) {
        t.columns = {"level", "repeat", "run"};
        for (const auto& r : f.level_runs)
            sources.push_back({{cell(static_cast<std::int64_t>(r.level)),
                                cell(static_cast<std::int64_t>(r.repeat)), cell(r.name)},
                               r.dir / "turns.jsonl"});
    } else if (f.kind == folder_kind::merged) {
        t.columns = {"part"};
        for (std::size_t i = 0; i < f.parts.size(); ++i)
            sources.push_back(
                {{cell(static_cast<std::int64_t>(i))}, f.parts[i].dir / "turns.jsonl"});
    } else {
        sources.push_back({{}, f.dir / "turns.jsonl"});
    }
    static constexpr const char* fields[] = {"session",
                                             "turn",
                                             "barge_in",
                                             "start_s",
                                             "speech_end_s",
                                             "voice_end_s",
                                             "commit_s",
                                             "speech_stopped_s",
                                             "response_id",
                                             "first_audio_s",
                                             "last_audio_s",
                                             "audio_s",
                                             "underruns",
                                             "underrun_s",
                                             "interrupted_s",
                                             "output_stopped_s",
                                             "ttfa_from_voice_end_s",
                                             "ttfa_from_speech_end_s",
                                             "ttfa_from_speech_stopped_s",
                                             "ttfa_from_commit_s",
                                             "response_duration_s",
                                             "interrupt_latency_s",
                                             "audio_after_interrupt_s",
                                             "played_at_interrupt_s",
                                             "player_gap_s"};
    for (const char* c : fields)
        t.columns.push_back(c);
    for (const auto& src : sources) {
        std::ifstream in(src.file);
        std::string line;
        while (std::getline(in, line)) {
            boost::system::error_code ec;
            const auto v = json::parse(line, ec);
            if (ec || !v.is_object())
                continue;
            auto r = src.key;
            for (const char* c : fields)
                r.push_back(json_cell(v.as_object(), {c}));
            t.rows.push_back(std::move(r));
        }
    }
    return t;
}

std::string csv_field(const cell& c) {
    switch (c.kind) {
    case cell::type::null:
        return "";
    case cell::type::flag:
        return c.flag ? "true" : "false";
    case cell::type::count:
        return fmt::format("{}", c.count);
    case cell::type::number:
        return std::isfinite(c.number) ? fmt::format("{}", c.number) : "";
    case cell::type::text:
        break;
    }
    if (c.text.find_first_of(",\"\r\n") == std::string::npos)
        return c.text;
    std::string q = "\"";
    for (char ch : c.text)
        q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

json::value json_cell_value(const cell& c) {
    switch (c.kind) {
    case cell::type::flag:
        return c.flag;
    case cell::type::count:
        return c.count;
    case cell::type::number:
        return std::isfinite(c.number) ? json::value(c.number) : json::value(nullptr);
    case cell::type::text:
        return json::value(json::string(c.text));
    case cell::type::null:
        break;
    }
    return nullptr;
}

} // namespace

std::vector<table> build_tables(const result_folder& f) {
    std::vector<table> out;
    if (f.kind == folder_kind::http || f.kind == folder_kind::http_capacity) {
        out = detail::build_http_tables(f);
    } else {
        out.push_back(packets_table(f));
        out.push_back(sessions_table(f));
        if (f.kind == folder_kind::serve)
            out.push_back(levels_table(f));
        if (f.kind == folder_kind::open_loop)
            out.push_back(requests_table(f));
        if (auto turns = turns_table(f); !turns.rows.empty())
            out.push_back(std::move(turns));
    }
    for (auto& t : detail::telemetry_tables(f))
        out.push_back(std::move(t));
    return out;
}

std::string to_csv(const table& t) {
    std::string s;
    for (std::size_t i = 0; i < t.columns.size(); ++i)
        s += (i ? "," : "") + csv_field(cell(t.columns[i]));
    s += "\n";
    for (const auto& r : t.rows) {
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (i)
                s += ',';
            s += csv_field(r[i]);
        }
        s += "\n";
    }
    return s;
}

std::string to_jsonl(const table& t) {
    std::string s;
    for (const auto& r : t.rows) {
        json::object o;
        for (std::size_t i = 0; i < t.columns.size() && i < r.size(); ++i)
            o[t.columns[i]] = json_cell_value(r[i]);
        s += json::serialize(o);
        s += '\n';
    }
    return s;
}

} // namespace pacer::report

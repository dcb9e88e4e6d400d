#include <pacer/core/json_pointer.hpp>
#include <pacer/metrics/samples_stream.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/metrics/summary_file.hpp>
#include <pacer/report/result_folder.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/json_file.hpp>
#include <pacer/schedule/constants.hpp>
#include <pacer/trace/receipts.hpp>

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

namespace pacer::report {

namespace fs = std::filesystem;
namespace json = boost::json;

const char* to_string(folder_kind k) {
    switch (k) {
    case folder_kind::run:
        return "run";
    case folder_kind::open_loop:
        return "open-loop run";
    case folder_kind::merged:
        return "merged run";
    case folder_kind::serve:
        return "serve sweep";
    case folder_kind::recording:
        return "recording";
    case folder_kind::http:
        return "http run";
    case folder_kind::http_capacity:
        return "http capacity search";
    }
    return "run";
}

std::size_t result_folder::packet_count() const {
    std::size_t n = 0;
    for (const auto& s : sessions)
        n += s.stats.count;
    return n;
}

double aligned(const result_folder& f, const session_record& s, double t) {
    return t + (s.part < f.parts.size() ? f.parts[s.part].realtime_offset_s : 0.0);
}

namespace {

// Folds a session's packets into its stats and the folder's histograms, hands it to the
// visitor (if any) and then frees its packets.
void finish_session(result_folder& f, session_record& s, const session_visitor* visit) {
    packet_stats st;
    st.count = s.packets.size();
    auto& deviations = f.abs_deviation_by_level[s.level.value_or(0)];
    const bool timed = s.session_start_s || s.from_receipts;
    for (const auto& p : s.packets) {
        const double a = std::abs(p.deviation_s);
        deviations.record(a);
        st.late += a > metrics::pacing_tolerance_s ? 1 : 0;
        st.max_abs_deviation_s = std::max(st.max_abs_deviation_s.value_or(a), a);
        if (const auto t = p.send_time_s()) {
            st.max_send_time_s = std::max(st.max_send_time_s.value_or(*t), *t);
            f.send_time.record(std::max(0.0, *t));
            st.slow_sends += *t > metrics::pacing_tolerance_s ? 1 : 0;
        }
        if (timed) {
            const double t = aligned(f, s, p.start_s);
            st.first_start_s = std::min(st.first_start_s.value_or(t), t);
            st.last_start_s = std::max(st.last_start_s.value_or(t), t);
        }
    }
    s.stats = st;
    if (visit) {
        (*visit)(f, s);
        std::vector<packet>().swap(s.packets);
    }
}

std::optional<double> number(const json::value* v) {
    if (v && v->is_number())
        return v->to_number<double>();
    return std::nullopt;
}

std::string session_dir_name(std::uint32_t index) {
    return fmt::format("session-{:03}", index);
}

// The receipts of one session, as packets; false when the file is missing or unreadable.
bool read_receipts_file(const fs::path& file, session_record& s) {
    const auto text = runtime::read_file_if_readable(file);
    if (!text)
        return false;
    trace::send_receipts r;
    try {
        r = trace::parse_receipts(*text, trace::receipt_rules::any_client);
    } catch (const std::exception&) {
        return false;
    }
    s.from_receipts = true;
    if (r.session_start_s)
        s.session_start_s = r.session_start_s;
    if (r.admitted)
        s.admitted = r.admitted;
    s.packets.clear();
    s.packets.reserve(r.appends.size());
    for (const auto& a : r.appends) {
        packet p;
        p.seq = static_cast<std::int64_t>(a.seq);
        p.scheduled_s = a.scheduled();
        p.start_s = a.start_s;
        p.completed_s = a.completed_s;
        // The deviation from the deadline as recorded (metrics::packet_deviations); receipts
        // without `scheduled_s` (older clients) are measured against the grid.
        if (p.scheduled_s) {
            p.deviation_s = a.start_s - *p.scheduled_s;
        } else {
            p.deviation_s = s.session_start_s
                                ? a.start_s - (*s.session_start_s + static_cast<double>(a.seq) *
                                                                        schedule::packet_period_s)
                                : 0.0;
        }
        s.packets.push_back(p);
    }
    return true;
}

bool read_receipts(const fs::path& dir, session_record& s) {
    return read_receipts_file(dir / session_dir_name(s.index) / "input-send-receipts.json", s);
}

// Sessions of one run folder (a single run or a part): samples.json names them (read with
// metrics::samples_rules::lenient's rules); the receipts give the per-packet detail when they
// are there. One session at a time: samples.json is streamed (metrics::stream_samples)
// and each session's receipts are read, folded and freed before the next.
void read_run_sessions(result_folder& f, std::size_t part, const session_visitor* visit) {
    const fs::path dir = f.parts[part].dir;
    std::size_t without_receipts = 0, total = 0;
    auto add = [&](session_record& s, std::vector<double>* deviations) {
        ++total;
        if (!read_receipts(dir, s)) {
            ++without_receipts;
            if (deviations) {
                s.packets.reserve(deviations->size());
                std::int64_t seq = 0;
                for (const double deviation : *deviations) {
                    packet p;
                    p.seq = seq++;
                    p.deviation_s = deviation;
                    p.start_s = s.session_start_s
                                    ? *s.session_start_s +
                                          static_cast<double>(p.seq) * schedule::packet_period_s +
                                          p.deviation_s
                                    : 0.0;
                    s.packets.push_back(p);
                }
            }
        }
        finish_session(f, s, visit);
        f.sessions.push_back(std::move(s));
    };
    bool samples = false;
    try {
        metrics::stream_samples(dir / "samples.json", metrics::samples_rules::lenient,
                                [&](metrics::samples_session&& e) {
                                    session_record s;
                                    s.part = part;
                                    s.index = e.index;
                                    s.session_start_s = e.samples.session_start_s;
                                    add(s, &e.samples.deviation_s);
                                });
        samples = true;
    } catch (const std::exception& e) {
        f.notes.push_back(e.what());
        samples = total > 0; // the file changed while it was read: keep what was read
    }
    if (!samples) {
        // Without samples, every session folder that is there.
        std::error_code ec;
        std::vector<std::uint32_t> found;
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            const auto name = e.path().filename().string();
            if (name.rfind("session-", 0) == 0 && name.size() > 8 &&
                std::all_of(name.begin() + 8, name.end(),
                            [](char c) { return c >= '0' && c <= '9'; }))
                found.push_back(static_cast<std::uint32_t>(std::stoul(name.substr(8))));
        }
        std::sort(found.begin(), found.end());
        for (auto i : found) {
            session_record s;
            s.part = part;
            s.index = i;
            add(s, nullptr);
        }
    }
    if (without_receipts > 0)
        f.notes.push_back(fmt::format("{}: {} of {} sessions have no readable "
                                      "input-send-receipts.json (send times unknown for them)",
                                      dir.string(), without_receipts, total));
}

part_info make_part(fs::path dir, json::object summary) {
    part_info p;
    p.dir = std::move(dir);
    p.summary = std::move(summary);
    const auto mono = number(find_pointer(p.summary, "/clock/monotonic_s"));
    const auto real = number(find_pointer(p.summary, "/clock/realtime_s"));
    if (mono && real)
        p.realtime_offset_s = *real - *mono;
    p.clock_monotonic_s = mono;
    return p;
}

// A part named in a merged summary: as recorded, else next to the folder (moved or copied).
std::optional<fs::path> locate_part(const fs::path& dir, const fs::path& recorded) {
    std::error_code ec;
    const fs::path candidates[] = {recorded, dir / recorded, dir / recorded.filename(),
                                   dir.parent_path() / recorded.filename()};
    for (const auto& c : candidates)
        if (!c.empty() && fs::is_regular_file(c / "summary.json", ec))
            return c;
    return std::nullopt;
}

void read_merged(result_folder& f, const session_visitor* visit) {
    std::vector<fs::path> recorded;
    if (const auto* workers = f.summary.if_contains("workers"); workers && workers->is_array()) {
        for (const auto& w : workers->as_array())
            if (const auto* o = w.if_object()) {
                const auto* merged = o->if_contains("merged");
                const auto* d = o->if_contains("dir");
                if (d && d->is_string() && (!merged || (merged->is_bool() && merged->as_bool())))
                    recorded.emplace_back(std::string(d->as_string()));
            }
    } else if (const auto* parts = f.summary.if_contains("parts"); parts && parts->is_array()) {
        for (const auto& p : parts->as_array())
            if (const auto* o = p.if_object())
                if (const auto* d = o->if_contains("dir"); d && d->is_string())
                    recorded.emplace_back(std::string(d->as_string()));
    }
    for (const auto& r : recorded) {
        const auto where = locate_part(f.dir, r);
        if (!where) {
            f.notes.push_back(fmt::format(
                "part {} was not found: its packets are missing from the plots", r.string()));
            continue;
        }
        const auto s = metrics::read_summary(*where);
        f.parts.push_back(make_part(*where, s.object() ? *s.object() : json::object{}));
        read_run_sessions(f, f.parts.size() - 1, visit);
    }
}

void read_serve(result_folder& f, const session_visitor* visit) {
    f.parts.push_back(make_part(f.dir, f.summary));
    const auto* runs = f.summary.if_contains("runs");
    if (!runs || !runs->is_array())
        return;
    const auto repeats = number(find_pointer(f.summary, "/config/repeats")).value_or(1);
    // Each run names its folder (c<level>, c<level>-confirm<n>, c<level>-verify<n>); results
    // written before it did kept a level's second run in c<level>-again/.
    std::map<std::pair<std::uint32_t, std::uint32_t>, int> seen;
    std::size_t without = 0, total = 0;
    for (const auto& rv : runs->as_array()) {
        const auto* run = rv.if_object();
        if (!run)
            continue;
        if (const auto* w = run->if_contains("warmup"); w && w->is_bool() && w->as_bool())
            continue;
        const auto c =
            static_cast<std::uint32_t>(number(run->if_contains("concurrency")).value_or(0));
        const auto r = static_cast<std::uint32_t>(number(run->if_contains("repeat")).value_or(1));
        const int nth = seen[{c, r}]++;
        const auto* folder = run->if_contains("folder");
        const std::string name = folder && folder->is_string()
                                     ? std::string(folder->get_string())
                                     : fmt::format("c{}{}", c, nth > 0 ? "-again" : "");
        const fs::path dir =
            repeats > 1 ? f.dir / fmt::format("repeat-{}", r) / name : f.dir / name;
        f.level_runs.push_back({c, r, name, dir});
        const auto* sessions = run->if_contains("sessions");
        if (!sessions || !sessions->is_array())
            continue;
        for (const auto& sv : sessions->as_array()) {
            const auto* so = sv.if_object();
            if (!so)
                continue;
            session_record s;
            s.level = c;
            s.repeat = r;
            s.index = static_cast<std::uint32_t>(number(so->if_contains("index")).value_or(0));
            if (const auto* a = so->if_contains("admitted"); a && a->is_bool())
                s.admitted = a->as_bool();
            s.serving = *so;
            ++total;
            if (!read_receipts(dir, s))
                ++without;
            finish_session(f, s, visit);
            f.sessions.push_back(std::move(s));
        }
    }
    if (without > 0)
        f.notes.push_back(fmt::format("{} of {} sessions have no readable input-send-receipts.json",
                                      without, total));
}

void read_schedule(result_folder& f) {
    const auto doc = runtime::read_json_file(f.dir / "schedule.json");
    if (!doc.object()) {
        f.notes.push_back(fmt::format("{} {}: offered arrivals unknown",
                                      (f.dir / "schedule.json").string(), doc.why));
        return;
    }
    // A shard of an open-loop run saves the whole schedule but runs arrivals I, I+N, ... of it
    // (as runtime::shard_arrivals deals them): its session k is the shard's k-th arrival.
    const auto index = number(find_pointer(f.summary, "/shard/index"));
    const auto count = number(find_pointer(f.summary, "/shard/count"));
    const std::size_t first = index && count && *count >= 1 ? static_cast<std::size_t>(*index) : 0;
    const std::size_t step = index && count && *count >= 1 ? static_cast<std::size_t>(*count) : 1;
    if (const auto* offs = doc.object()->if_contains("offsets_ns"); offs && offs->is_array()) {
        const auto& a = offs->as_array();
        for (std::size_t i = first; i < a.size(); i += step)
            if (a[i].is_number())
                f.schedule_offsets_s.push_back(a[i].to_number<double>() / 1e9);
    }
}

// A `pacer record` folder: run.json names every variant; each variant's folder has its
// receipts and report.json. A variant still pending has neither (no packets, no note).
void read_recording(result_folder& f, const session_visitor* visit) {
    f.parts.push_back(make_part(f.dir, json::object{}));
    const auto* samples = f.summary.if_contains("samples");
    if (!samples || !samples->is_array())
        return;
    std::size_t without = 0, recorded = 0;
    std::uint32_t next = 0;
    for (const auto& sv : samples->as_array()) {
        const auto* so = sv.if_object();
        if (!so)
            continue;
        const auto str = [](const json::object& o, const char* k) {
            const auto* v = o.if_contains(k);
            return v && v->is_string() ? std::string(v->as_string()) : std::string();
        };
        const auto* vars = so->if_contains("variants");
        if (!vars || !vars->is_object())
            continue;
        for (const auto& [name, ev] : vars->as_object()) {
            const auto* eo = ev.if_object();
            if (!eo)
                continue;
            session_record s;
            s.index = next++;
            s.sample = str(*so, "id");
            s.subset = str(*so, "subset");
            s.variant = std::string(name);
            s.variant_entry = *eo;
            if (const auto* a = find_pointer(*eo, "/session/admitted"); a && a->is_bool())
                s.admitted = a->as_bool();
            const std::string status = str(*eo, "status");
            std::string directory = str(*eo, "directory");
            if (directory.empty())
                directory = fmt::format("samples/{}/{}", s.sample, s.variant);
            const fs::path vdir = f.dir / directory;
            if (status != "pending" && status != "invalid") {
                ++recorded;
                if (!read_receipts_file(vdir / "input-send-receipts.json", s))
                    ++without;
            }
            if (const auto report = runtime::read_json_file(vdir / "report.json"); report.object())
                if (const auto* cases = report.object()->if_contains("cases");
                    cases && cases->is_array() && !cases->as_array().empty())
                    if (const auto* c = cases->as_array()[0].if_object())
                        if (const auto* sv2 = c->if_contains("serving"); sv2 && sv2->is_object())
                            s.serving = sv2->as_object();
            finish_session(f, s, visit);
            f.sessions.push_back(std::move(s));
        }
    }
    if (without > 0)
        f.notes.push_back(fmt::format("{} of {} recorded variants have no readable "
                                      "input-send-receipts.json (send times unknown for them)",
                                      without, recorded));
}

std::optional<std::uint64_t> whole(const json::value* v) {
    if (v && v->is_number())
        return static_cast<std::uint64_t>(std::max(0.0, v->to_number<double>()));
    return std::nullopt;
}

// A `pacer http` folder: requests.jsonl, one line per arrival (dropped ones too).
void read_http(result_folder& f) {
    f.parts.push_back(make_part(f.dir, f.summary));
    const auto text = runtime::read_file_if_readable(f.dir / "requests.jsonl");
    if (!text) {
        f.notes.push_back(fmt::format("{} cannot be read: the plots have no requests",
                                      (f.dir / "requests.jsonl").string()));
        return;
    }
    std::size_t bad = 0, line_no = 0;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        if (line.empty())
            continue;
        boost::system::error_code ec;
        const auto v = json::parse(line, ec);
        if (ec || !v.is_object()) {
            ++bad;
            continue;
        }
        const auto& o = v.as_object();
        const auto str = [&](const char* k) {
            const auto* x = o.if_contains(k);
            return x && x->is_string() ? std::string(x->as_string()) : std::string();
        };
        http_request r;
        r.index = whole(o.if_contains("index")).value_or(line_no - 1);
        r.scheduled_s = number(o.if_contains("scheduled_s")).value_or(0);
        r.dispatched_s = number(o.if_contains("dispatched_s"));
        r.first_byte_s = number(o.if_contains("first_byte_s"));
        r.first_token_s = number(o.if_contains("first_token_s"));
        r.completed_s = number(o.if_contains("completed_s"));
        if (const auto* d = o.if_contains("dropped"); d && d->is_bool())
            r.dropped = d->as_bool();
        r.status = whole(o.if_contains("status")).value_or(0);
        r.error = str("error");
        r.error_message = str("error_message");
        r.input_len = whole(o.if_contains("input_len")).value_or(0);
        r.output_len = whole(o.if_contains("output_len")).value_or(0);
        r.output_tokens = whole(o.if_contains("output_tokens")).value_or(0);
        r.chunks = whole(o.if_contains("chunks")).value_or(0);
        r.usage_prompt_tokens = whole(o.if_contains("usage_prompt_tokens"));
        r.usage_completion_tokens = whole(o.if_contains("usage_completion_tokens"));
        r.ttft_ms = number(o.if_contains("ttft_ms"));
        r.ttft_uncorrected_ms = number(o.if_contains("ttft_uncorrected_ms"));
        r.e2el_ms = number(o.if_contains("e2el_ms"));
        r.e2el_uncorrected_ms = number(o.if_contains("e2el_uncorrected_ms"));
        r.tpot_ms = number(o.if_contains("tpot_ms"));
        if (const auto* t = o.if_contains("token_times_s"); t && t->is_array())
            for (const auto& x : t->as_array())
                if (x.is_number())
                    r.token_times_s.push_back(x.to_number<double>());
        f.requests.push_back(std::move(r));
    }
    if (bad > 0)
        f.notes.push_back(fmt::format("{}: {} line(s) are not JSON objects and were skipped",
                                      (f.dir / "requests.jsonl").string(), bad));
}

// A `pacer http --find-capacity` folder: capacity.json names every probe's folder, each a
// whole `pacer http` run whose summary gives the probe's latencies.
void read_http_capacity(result_folder& f) {
    const auto* probes = f.summary.if_contains("probes");
    if (!probes || !probes->is_array())
        return;
    for (const auto& pv : probes->as_array()) {
        const auto* po = pv.if_object();
        const auto* folder = po ? po->if_contains("folder") : nullptr;
        if (!folder || !folder->is_string())
            continue;
        const fs::path dir = f.dir / std::string(folder->as_string());
        const auto s = metrics::read_summary(dir);
        if (!s.object())
            f.notes.push_back(
                fmt::format("{} {}: that probe's latencies are missing", s.path.string(), s.why));
        f.parts.push_back(make_part(dir, s.object() ? *s.object() : json::object{}));
    }
}

// telemetry.jsonl, when the run sampled telemetry (--gpu-telemetry, --server-metrics): one
// reading per line. A line that is not a sample is skipped and counted in a note.
void read_telemetry(result_folder& f) {
    std::error_code ec;
    const auto path = f.dir / "telemetry.jsonl";
    if (!fs::exists(path, ec))
        return;
    const auto text = runtime::read_file_if_readable(path);
    if (!text) {
        f.notes.push_back(fmt::format("{} cannot be read: no telemetry", path.string()));
        return;
    }
    std::size_t bad = 0;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty())
            continue;
        boost::system::error_code jec;
        const auto v = json::parse(line, jec);
        const auto* o = jec ? nullptr : v.if_object();
        const auto mono = o ? number(o->if_contains("monotonic_s")) : std::nullopt;
        const auto* source = o ? o->if_contains("source") : nullptr;
        if (!mono || !source || !source->is_string()) {
            ++bad;
            continue;
        }
        telemetry_reading r;
        r.monotonic_s = *mono;
        r.realtime_s = number(o->if_contains("realtime_s")).value_or(0);
        r.source = std::string(source->as_string());
        r.energy_mj = number(o->if_contains("energy_mj"));
        r.power_w = number(o->if_contains("power_w"));
        r.utilization_pct = number(o->if_contains("utilization_pct"));
        r.memory_utilization_pct = number(o->if_contains("memory_utilization_pct"));
        r.memory_used_bytes = number(o->if_contains("memory_used_bytes"));
        r.memory_total_bytes = number(o->if_contains("memory_total_bytes"));
        r.sm_clock_mhz = number(o->if_contains("sm_clock_mhz"));
        r.temperature_c = number(o->if_contains("temperature_c"));
        if (const auto* e = o->if_contains("error"); e && e->is_string())
            r.error = std::string(e->as_string());
        f.telemetry.push_back(std::move(r));
    }
    if (bad > 0)
        f.notes.push_back(fmt::format("{}: {} line(s) are not telemetry samples and were skipped",
                                      path.string(), bad));
}

// Whether a summary was written by `pacer http` (those written before it said its command
// are recognised by their keys).
bool http_summary(const json::object& s, const std::string& command) {
    return command == "http" ||
           (command.empty() && s.contains("open_loop") && s.contains("request_throughput"));
}

result_folder read_folder(const fs::path& dir, const session_visitor* visit) {
    std::error_code ec;
    if (!fs::exists(dir, ec))
        throw folder_error(fmt::format("{} does not exist", dir.string()));
    if (!fs::is_directory(dir, ec))
        throw folder_error(fmt::format("{} is not a folder", dir.string()));
    if (!fs::exists(dir / "summary.json", ec) && fs::exists(dir / "run.json", ec)) {
        const auto run = runtime::read_json_file(dir / "run.json");
        if (!run.json)
            throw folder_error(fmt::format("{} {}", (dir / "run.json").string(), run.why));
        const auto* kind = run.object() ? run.object()->if_contains("kind") : nullptr;
        if (!kind || !kind->is_string() || kind->as_string() != "pacer-record")
            throw folder_error(fmt::format("{} was not written by pacer record (no kind "
                                           "\"pacer-record\"): pacer report reads those",
                                           (dir / "run.json").string()));
        result_folder f;
        f.packets_kept = visit == nullptr;
        f.dir = dir;
        f.kind = folder_kind::recording;
        f.summary = *run.object();
        read_recording(f, visit);
        return f;
    }
    if (!fs::exists(dir / "summary.json", ec) && fs::exists(dir / "capacity.json", ec)) {
        const auto cap = runtime::read_json_file(dir / "capacity.json");
        if (!cap.json)
            throw folder_error(fmt::format("{} {}", (dir / "capacity.json").string(), cap.why));
        if (!cap.object() || !cap.object()->contains("capacity_rps"))
            throw folder_error(fmt::format("{} was not written by pacer http --find-capacity (no "
                                           "capacity_rps)",
                                           (dir / "capacity.json").string()));
        result_folder f;
        f.packets_kept = visit == nullptr;
        f.dir = dir;
        f.kind = folder_kind::http_capacity;
        f.summary = *cap.object();
        read_http_capacity(f);
        return f;
    }
    if (!fs::exists(dir / "summary.json", ec))
        throw folder_error(fmt::format(
            "{} is not a pacer result folder (no summary.json, run.json nor capacity.json): give "
            "the folder of a pacer run, merge, serve, record or http",
            dir.string()));
    const auto summary = metrics::read_summary(dir);
    if (!summary.json)
        throw folder_error(fmt::format("{} {}", summary.path.string(), summary.why));
    if (!summary.object())
        throw folder_error(
            fmt::format("{} is not a pacer summary (not an object)", summary.path.string()));
    result_folder f;
    f.packets_kept = visit == nullptr;
    f.dir = dir;
    f.summary = *summary.object();
    const auto* cmd = f.summary.if_contains("command");
    const std::string command = cmd && cmd->is_string() ? std::string(cmd->as_string()) : "";
    if (http_summary(f.summary, command)) {
        f.kind = folder_kind::http;
        read_http(f);
    } else if (command == "serve") {
        if (!f.summary.contains("levels"))
            throw folder_error(fmt::format("{} has no levels: not a finished pacer serve",
                                           (dir / "summary.json").string()));
        f.kind = folder_kind::serve;
        read_serve(f, visit);
    } else if ((command == "run" || command == "merge") && f.summary.contains("pacing")) {
        if (command == "merge" || f.summary.contains("workers")) {
            f.kind = folder_kind::merged;
            read_merged(f, visit);
        } else {
            f.kind = f.summary.contains("open_loop") ? folder_kind::open_loop : folder_kind::run;
            f.parts.push_back(make_part(dir, f.summary));
            read_run_sessions(f, 0, visit);
            if (f.kind == folder_kind::open_loop)
                read_schedule(f);
        }
    } else {
        throw folder_error(fmt::format(
            "{} was not written by pacer run, merge, serve or http (command '{}'): pacer report "
            "reads those",
            (dir / "summary.json").string(), command));
    }
    read_telemetry(f);
    return f;
}

} // namespace

result_folder read_result_folder(const fs::path& dir) {
    return read_folder(dir, nullptr);
}

result_folder read_result_folder(const fs::path& dir, const session_visitor& visit) {
    return read_folder(dir, &visit);
}

result_folder read_folded_result_folder(const fs::path& dir) {
    return read_result_folder(dir, [](const result_folder&, const session_record&) {});
}

} // namespace pacer::report

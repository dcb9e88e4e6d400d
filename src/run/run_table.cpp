// The lines `pacer run` prints of one process: the header when its sessions start, the table
// once its summary.json is written (see run_job.hpp).

#include <pacer/core/units.hpp>
#include <pacer/metrics/omni.hpp>
#include <pacer/run/turn_line.hpp>
#include <pacer/schedule/arrival.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include "internal.hpp"
#include <algorithm>
#include <cstdio>

namespace pacer::run::detail {

namespace fs = std::filesystem;

std::string ms(const boost::json::value& v) {
    return v.is_null() ? "-" : fmt::format("{:.2f} ms", v.to_number<double>() * 1e3);
}

// "1 session", "2 sessions".
std::string plural(std::size_t n, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", n,
                       n == 1         ? std::string(one)
                       : many.empty() ? std::string(one) + "s"
                                      : std::string(many));
}

// The table's first line, printed when the run starts (a terminal shows it above the progress
// line, not only once the run is over): the sessions (or the open-loop plan), the input, the URL.
void print_header(const run_options& s, const std::string& url, std::size_t sessions,
                  const schedule::schedule_document* open_loop) {
    const std::string input = s.audio.empty() ? s.duration + " of silence" : s.audio;
    if (open_loop) {
        // Open loop: the plan is the schedule, not a batch of sessions.
        const auto& spec = open_loop->spec;
        const std::string arrival(schedule::to_string(spec.process));
        fmt::print("pacer run: open loop, {} arriving {} at {} (seed {}{}), {} each, "
                   "against {}\n",
                   plural(sessions, "session"), arrival, schedule::rate_text(spec), spec.seed,
                   arrival == "gamma" ? fmt::format(", burstiness {:g}", spec.burstiness)
                                      : std::string(),
                   input, url);
    } else {
        fmt::print("pacer run: {} x {} against {}\n", plural(sessions, "session"), input, url);
    }
    std::fflush(stdout);
}

void print_table(const run_options& s, const metrics::pacing_figures& f,
                 const boost::json::object& summary, const fs::path& out,
                 const std::optional<fs::path>& report) {
    const auto& p = f.json;
    auto dist = [&](const char* key) -> const boost::json::object& {
        return p.at(key).as_object();
    };
    const auto& dev = dist("pacing_deviation_s");
    const auto& send = dist("ws_send_time_s");
    const auto& lag = dist("loop_lag_s");
    const auto& res = summary.at("resources").as_object();
    const auto* unreachable = summary.at("server").as_object().if_contains("unreachable");
    if (unreachable && unreachable->is_string())
        fmt::print("  cannot connect to {}: {} (no session reached the server)\n", s.url,
                   unreachable->as_string().c_str());
    // A rejected session is not also counted incomplete: the three add up to the whole.
    const std::size_t not_complete = f.sessions - f.complete;
    fmt::print("  sessions   {} complete of {} ({} rejected, {} incomplete)\n", f.complete,
               f.sessions, f.rejected, not_complete - std::min(f.rejected, not_complete));
    fmt::print("  packets    {} sent of {}, {} late (> 80 ms) in {}{} -> {}\n", f.packets_sent,
               f.packets_expected, f.late_packets, plural(f.sessions_with_late_packet, "session"),
               f.late_packets == 0
                   ? std::string()
                   : fmt::format(" ({} after a send stall: the server's; {} the "
                                 "client's)",
                                 f.late_after_send_stall, f.late_packets - f.late_after_send_stall),
               f.pacing_qualified    ? "PACING QUALIFIED"
               : f.packets_sent == 0 ? "nothing sent: pacing not measured"
                                     : "PACING UNQUALIFIED");
    fmt::print("  deviation  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n", ms(dev.at("p50")),
               ms(dev.at("p90")), ms(dev.at("p99")), ms(dev.at("p99.9")), ms(dev.at("max")));
    fmt::print("  ws send    p50 {}  p99 {}  max {}\n", ms(send.at("p50")), ms(send.at("p99")),
               ms(send.at("max")));
    fmt::print("  loop lag   p99 {}  max {}  over 80 ms: {}\n", ms(lag.at("p99")),
               ms(lag.at("max")), lag.at("over_80ms").as_uint64());
    if (const auto& st = p.at("send_stalls").as_object(); st.at("stalled_sends").as_uint64() > 0) {
        // The server's TCP window was full: sends blocked (it stopped reading, or is slow).
        const auto pending = st.at("sessions_ended_with_send_pending").as_uint64();
        fmt::print("  send stall {} send(s) took > 80 ms in {} session(s), longest {:.2f} s{}\n",
                   st.at("stalled_sends").as_uint64(), st.at("sessions").as_uint64(),
                   st.at("longest_write_s").to_number<double>(),
                   pending == 0
                       ? std::string()
                       : fmt::format("; {} session(s) ended with a send pending (longest "
                                     "{:.2f} s): the server stopped reading",
                                     pending, st.at("longest_pending_s").to_number<double>()));
    }
    const auto& trace = summary.at("trace").as_object();
    const auto& disk = summary.at("disk").as_object();
    fmt::print("  trace      {:.1f} MB written (estimated {} before the run, {} free), channel "
               "waits {}\n",
               static_cast<double>(trace.at("bytes").as_uint64()) / 1e6,
               format_bytes(disk.at("estimated_bytes").as_uint64()),
               format_bytes(disk.at("free_bytes").as_uint64()),
               p.at("trace_channel").at("waits").as_uint64());
    std::string contexts;
    for (const auto& c : res.at("session_context_cpu_cores").as_array())
        contexts += fmt::format("{}{:.2f}", contexts.empty() ? "" : "/", c.to_number<double>());
    fmt::print(
        "  cpu        client {:.2f} cores (session contexts {}, writer {:.2f}){}, peak RSS {:.0f} "
        "MB\n",
        res.at("client_cpu_cores").to_number<double>(), contexts,
        res.at("writer_cpu_cores").to_number<double>(),
        res.contains("mock_cpu_cores")
            ? fmt::format(", mock {:.2f} cores", res.at("mock_cpu_cores").to_number<double>())
            : std::string(),
        static_cast<double>(res.at("peak_rss_bytes").as_uint64()) / 1e6);
    // What the server did: its time to first audio (a conversation: per turn, from the end of
    // the user's voice; the stream start means nothing there) and the errors by kind.
    const auto& server = summary.at("server").as_object();
    if (const auto turns = turn_line(summary); !turns.empty()) {
        fmt::print("{}\n", turns);
    } else {
        const auto& ttfa = server.at("time_to_first_audio_s").as_object();
        fmt::print("  server     time to first audio (stream start -> first audio delta) p50 {}  "
                   "p95 {}  p99 {}  ({})\n",
                   ms(ttfa.at("p50")), ms(ttfa.at("p95")), ms(ttfa.at("p99")),
                   plural(ttfa.at("n").to_number<std::uint64_t>(), "session"));
    }
    if (const auto* omni = server.if_contains("omni"))
        fmt::print("{}\n", metrics::omni_line(omni->as_object()));
    std::string kinds;
    for (const auto& k : server.at("errors_by_kind").as_array())
        kinds += fmt::format("{}{} {} session(s)", kinds.empty() ? "" : ", ",
                             k.at("kind").as_string().c_str(), k.at("sessions").as_uint64());
    if (!kinds.empty())
        fmt::print("  errors     by kind: {}\n", kinds);
    for (const auto& e : p.at("errors").as_array())
        fmt::print("  error      {} session(s): {}\n", e.at("sessions").as_uint64(),
                   e.at("message").as_string().c_str());
    fmt::print("  results    {}{}\n", (out / "summary.json").string(),
               report ? ", " + report->string() : std::string());
}

void print_open_loop(const metrics::pacing_figures& figures, const boost::json::object& summary) {
    const auto& ol = summary.at("open_loop").as_object();
    const bool schedule_kept = ol.at("schedule_kept").as_bool();
    const auto& lat = ol.at("latency_s").as_object();
    const auto& lag = ol.at("dispatch_lag_s").as_object();
    const auto& cap = ol.at("cap").as_object();
    fmt::print("  open loop  {} arrivals, {} dropped by the cap; dispatch lag p99 {} max {} "
               "-> {}\n",
               ol.at("requests").at("scheduled").to_number<std::uint64_t>(),
               ol.at("requests").at("dropped").to_number<std::uint64_t>(), ms(lag.at("p99")),
               ms(lag.at("max")), schedule_kept ? "SCHEDULE KEPT" : "SCHEDULE NOT KEPT");
    // Latency is anchored to the scheduled start, so a queue anywhere counts in it.
    auto from_schedule = [&](const char* key) -> const boost::json::object* {
        const auto* v = figures.json.if_contains(key);
        return v ? &v->as_object() : nullptr;
    };
    std::string to;
    if (const auto* u = from_schedule("latency_to_session_updated_s"))
        to += fmt::format("session.updated p50 {} p99 {}; ", ms(u->at("p50")), ms(u->at("p99")));
    if (const auto* a = from_schedule("latency_to_first_audio_s"))
        to += fmt::format("first audio p50 {} p99 {}; ", ms(a->at("p50")), ms(a->at("p99")));
    fmt::print("  latency    scheduled start -> {}session end p50 {} p99 {}\n", to,
               ms(lat.at("p50")), ms(lat.at("p99")));
    if (cap.at("binding").as_bool())
        fmt::print("  cap        --max-concurrency {} bound: {} arrivals delayed, {} dropped\n",
                   cap.at("max_concurrency").to_number<std::uint64_t>(),
                   cap.at("delayed").to_number<std::uint64_t>(),
                   cap.at("dropped").to_number<std::uint64_t>());
}

// The table's telemetry line, when the summary has one.
void print_telemetry(const boost::json::object& summary) {
    const auto* t = summary.if_contains("telemetry");
    if (!t)
        return;
    const auto num = [](const boost::json::value& v, const char* unit) {
        return v.is_null() ? std::string("-")
                           : fmt::format("{:.1f} {}", v.to_number<double>(), unit);
    };
    const auto& o = t->as_object();
    if (const auto* e = o.if_contains("error"); e && e->is_string()) {
        fmt::print("  telemetry  {} (telemetry.jsonl: {} samples)\n", e->as_string().c_str(),
                   o.at("samples").as_uint64());
        return;
    }
    fmt::print("  telemetry  {} over {:.2f} s, mean {}, peak {}, {} per session-second of "
               "input (telemetry.jsonl: {} samples)\n",
               num(o.at("energy_j"), "J"), o.at("window").at("duration_s").to_number<double>(),
               num(o.at("mean_power_w"), "W"), num(o.at("peak_power_w"), "W"),
               num(o.at("j_per_input_audio_s"), "J"), o.at("samples").as_uint64());
}

} // namespace pacer::run::detail

namespace pacer::run {

namespace {

// The figure `key` of `all` ({count, p50, p95, max} or null): "p50 12.30 ms  p95 15.00 ms".
std::string p50_p95(const boost::json::object& all, const char* key) {
    const auto* f = all.if_contains(key);
    const auto* o = f ? f->if_object() : nullptr;
    if (!o)
        return "-";
    return fmt::format("p50 {}  p95 {}", detail::ms(o->at("p50")), detail::ms(o->at("p95")));
}

std::uint64_t count_of(const boost::json::object& all, const char* key) {
    const auto* v = all.if_contains(key);
    return v && v->is_number() ? v->to_number<std::uint64_t>() : 0;
}

} // namespace

std::string turn_line(const boost::json::object& summary) {
    const auto* turns = summary.if_contains("turns");
    const auto* all = turns && turns->is_object() ? turns->as_object().if_contains("all") : nullptr;
    if (!all || !all->is_object())
        return {};
    const auto& a = all->as_object();
    const auto interrupted = count_of(a, "interrupted");
    std::string line = fmt::format("  turns      {} of {} answered, {} interrupted",
                                   count_of(a, "answered"), count_of(a, "turns"), interrupted);
    if (a.contains("unsolicited_responses"))
        line += fmt::format(", {} unsolicited {}", count_of(a, "unsolicited_responses"),
                            count_of(a, "unsolicited_responses") == 1 ? "reply" : "replies");
    // Voice-to-voice where the summary has it; an older summary only knew the input's end.
    line += a.contains("ttfa_from_voice_end_s")
                ? "; voice-to-voice " + p50_p95(a, "ttfa_from_voice_end_s")
                : "; first audio after the turn's input ended (not the voice's end) " +
                      p50_p95(a, "ttfa_from_speech_end_s");
    if (interrupted > 0)
        line += "; interruption latency " + p50_p95(a, "interrupt_latency_s");
    if (const auto underruns = count_of(a, "underruns"); underruns > 0) {
        // `underrun_s`: the underrun time, a total or a figure over the turns.
        const auto* s = a.if_contains("underrun_s");
        const auto* p95 = s && s->is_object() ? s->as_object().if_contains("p95") : nullptr;
        line += s && s->is_number()
                    ? fmt::format("; {} underruns ({:.2f} s)", underruns, s->to_number<double>())
                : p95 ? fmt::format("; {} underruns (p95 {} a turn)", underruns, detail::ms(*p95))
                      : fmt::format("; {} underruns", underruns);
    }
    return line;
}

} // namespace pacer::run

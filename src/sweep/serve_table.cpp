// The table of `pacer serve` (serve_table.hpp): a row per run of a level and the lines beneath.

#include <pacer/core/json_pointer.hpp>
#include <pacer/sweep/serve_table.hpp>

#include <boost/json/value.hpp>

#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace pacer::sweep {

namespace {

namespace json = boost::json;

std::string cell_ms(const json::value* v) {
    return v && v->is_number() ? fmt::format("{:.0f}", v->to_number<double>() * 1e3) : "-";
}

std::string cell_ratio(const json::value* v) {
    return v && v->is_number() ? fmt::format("{:.4f}", v->to_number<double>()) : "-";
}

void print_header() {
    fmt::print("{:>6} {:>3} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}  {}\n", "level", "rep",
               "admitted", "ok", "ttfa p50", "ttfa p95", "unit miss", "underrun", "late p99",
               "lag p99", "client timing");
    fmt::print("{:>6} {:>3} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}\n", "", "", "", "",
               "ms", "ms", "rate", "ratio", "send ms", "loop ms");
}

// The row's last column: the client timing's verdict (or why nothing reached the server), the
// SLOs', and why the run was tried when not in the search's first look.
std::string row_verdict(const level_run& r) {
    std::string verdict = r.valid ? "valid" : "NOT VALID";
    if (r.unreachable) {
        verdict = *r.unreachable; // not a client-timing verdict: nothing reached the server
    } else if (!r.valid) {
        std::string why;
        for (const auto& p : r.summary.at("client_timing_problems").as_array())
            why += (why.empty() ? "" : "; ") + std::string(p.as_string());
        verdict += " (" + why + ")";
    }
    if (const auto* slo = r.summary.if_contains("slo"))
        verdict += slo->at("met").as_bool() ? ", SLO met" : ", SLO missed";
    if (const auto* t = r.summary.if_contains("try");
        t && t->is_string() && t->get_string() != "search")
        verdict += fmt::format(" [{} {}]", std::string_view(t->get_string()),
                               r.summary.at("attempt").to_number<std::uint64_t>());
    return verdict;
}

// The lines beneath a row, for the figures its run has.
void print_row_details(const level_run& r, const json::object& a);

void print_row(const level_run& r, bool color) {
    const auto& a = r.summary.at("aggregate").as_object();
    auto count = [&](std::string_view k) {
        const auto* v = a.if_contains(k);
        return v && v->is_number() ? v->to_number<std::uint64_t>() : std::uint64_t{0};
    };
    const std::string verdict = row_verdict(r);
    const std::string line = fmt::format(
        "{:>6} {:>3} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}  ", r.concurrency, r.repeat,
        fmt::format("{}/{}", count("admitted_sessions"), count("attempted_sessions")),
        fmt::format("{}", count("successful_sessions")), cell_ms(find_pointer(a, "/ttfa_s/p50")),
        cell_ms(find_pointer(a, "/ttfa_s/p95")),
        // A level nothing reached measured no miss and no underrun: "-", not 1.0.
        cell_ratio(r.unreachable ? nullptr : find_pointer(a, "/units/unit_miss_rate")),
        cell_ratio(r.unreachable ? nullptr : a.if_contains("underrun_ratio")),
        cell_ms(find_pointer(a, "/send_lateness_s/p99")),
        fmt::format("{:.1f}", r.loop_lag_p99_s * 1e3));
    if (color && !r.valid)
        fmt::print("{}{}\n", line, fmt::format(fg(fmt::terminal_color::red), "{}", verdict));
    else
        fmt::print("{}{}\n", line, verdict);
    print_row_details(r, a);
    std::fflush(stdout);
}

void print_row_details(const level_run& r, const json::object& a) {
    if (const auto* rt = find_pointer(a, "/realtime"); rt && rt->is_object()) {
        const auto& f = rt->get_object();
        auto pair = [&](std::string_view key) {
            return fmt::format("{}/{}", cell_ms(find_pointer(f, fmt::format("/{}/p50", key))),
                               cell_ms(find_pointer(f, fmt::format("/{}/p95", key))));
        };
        fmt::print("{:>10} from utterance end p50/p95 ms: first audio {}, first transcript {}, "
                   "final transcript {}; rtf p95 {}\n",
                   "", pair("first_audio_from_utterance_end_s"),
                   pair("first_transcript_from_utterance_end_s"),
                   pair("final_transcript_from_utterance_end_s"), [&] {
                       const auto* v = find_pointer(f, "/real_time_factor/p95");
                       return v && v->is_number() ? fmt::format("{:.2f}", v->to_number<double>())
                                                  : std::string("-");
                   }());
    }
    if (const auto* t = find_pointer(a, "/turns/all"); t && t->is_object()) {
        const auto& f = t->get_object();
        auto pair = [&](std::string_view key) {
            return fmt::format("{}/{}", cell_ms(find_pointer(f, fmt::format("/{}/p50", key))),
                               cell_ms(find_pointer(f, fmt::format("/{}/p95", key))));
        };
        const auto n = [&](std::string_view key) {
            const auto* v = f.if_contains(key);
            return v && v->is_number() ? v->to_number<std::uint64_t>() : std::uint64_t{0};
        };
        // Voice-to-voice (from the end of the user's voice) where the summary has it.
        const auto* voice = f.if_contains("ttfa_from_voice_end_s");
        fmt::print(
            "{:>10} turns p50/p95 ms: {} {}, interrupt latency {} "
            "({} of {} turns answered, {} interrupted)\n",
            "", voice && voice->is_object() ? "voice-to-voice" : "first audio from turn end",
            pair(voice && voice->is_object() ? "ttfa_from_voice_end_s" : "ttfa_from_speech_end_s"),
            pair("interrupt_latency_s"), n("answered"), n("turns"), n("interrupted"));
    }
    if (const auto* view = r.summary.if_contains("server_view"); view && view->is_object()) {
        const auto& v = view->get_object();
        fmt::print("{:>10} server view: unit latency p50/p95 {}/{} ms (the client's unit lag "
                   "{}/{} ms){}\n",
                   "", cell_ms(v.if_contains("server_unit_latency_p50_s")),
                   cell_ms(v.if_contains("server_unit_latency_p95_s")),
                   cell_ms(v.if_contains("client_unit_lag_p50_s")),
                   cell_ms(v.if_contains("client_unit_lag_p95_s")), [&]() -> std::string {
                       const auto* e = find_pointer(r.summary, "/server_stats/error");
                       return e && e->is_string()
                                  ? fmt::format("; {}", std::string_view(e->get_string()))
                                  : "";
                   }());
    }
    if (const auto* rec = r.summary.if_contains("recovery"); rec && rec->is_object()) {
        const auto& o = rec->get_object();
        const auto* canary = o.if_contains("canary_s");
        const auto* limit = o.if_contains("canary_limit_s");
        const bool back = o.at("recovered").as_bool();
        fmt::print("{:>10} recovery before it: {} after {:.1f} s ({} look{}{}){}\n", "",
                   back ? "back" : "NOT back", o.at("waited_s").to_number<double>(),
                   o.at("looks").to_number<std::uint64_t>(),
                   o.at("looks").to_number<std::uint64_t>() == 1 ? "" : "s",
                   canary && canary->is_number()
                       ? fmt::format("; canary {} ms {} {} ms", cell_ms(canary), back ? "<=" : ">",
                                     cell_ms(limit))
                       : std::string(),
                   back ? "" : ": it ran on a degraded server and decides nothing alone");
    }
    if (r.server_failed && !r.unreachable && !r.errors.empty()) {
        const auto& top = r.errors.front();
        fmt::print("{:>10} {} failed, {} rejected; most frequent error ({} session(s), {} "
                   "distinct): {}\n",
                   "", r.failed, r.rejected, top.sessions, r.errors.size(), top.what);
    }
}

} // namespace

void table_printer::warmup_done(std::size_t index, const level_run& run) {
    const auto ok = std::count_if(run.sessions.begin(), run.sessions.end(),
                                  [](const auto& x) { return x.success(); });
    fmt::print("warmup {} ({} session{}, not part of the levels): {} of {} succeeded -> {}\n",
               index, run.concurrency, run.concurrency == 1 ? "" : "s", ok, run.sessions.size(),
               run.valid ? "client timing valid" : "client timing NOT valid");
}

void table_printer::canary_baseline(std::optional<double> seconds) {
    if (seconds)
        fmt::print("recovery baseline: a canary (1 session, {:g} s) measured {:.1f} ms; a run "
                   "waits until a canary is within {:.1f} ms\n",
                   canary_input_s, *seconds * 1e3, canary_limit_s(*seconds) * 1e3);
    else
        fmt::print("recovery baseline: the canary measured nothing; no canary can be judged, "
                   "so every run waits --recovery-max\n");
}

void table_printer::levels_starting() {
    print_header();
}

void table_printer::run_done(const level_run& run) {
    print_row(run, color_);
}

void table_printer::stopped_unreachable() {
    fmt::print("stopped: the server cannot be reached\n");
}

} // namespace pacer::sweep

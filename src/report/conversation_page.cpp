// The conversation section of a multi-turn run's page (summary.json's `turns`,
// docs/scenarios.md): voice-to-voice latency per turn index as bars and a table, the
// interruption latency, the replies' durations and the replies no turn asked for. Declared in
// html_parts.hpp.
#include <pacer/report/html_report.hpp>
#include <pacer/report/svg.hpp>

#include <fmt/format.h>

#include "html_parts.hpp"
#include <algorithm>

namespace pacer::report::detail {

namespace json = boost::json;

namespace {

// The per-turn figure that leads: voice-to-voice (the end of the user's voice to the reply's
// first audio) when the summary has it; a summary written before pacer measured the voice's end
// (or of turns with no voice: silence) only has the end of the turn's input, and says so.
struct lead_figure {
    const char* key;
    const char* label;
    const char* short_label; ///< for the table's column heads
};

lead_figure lead_of(const json::object& turns) {
    // Null when no turn had a voiced input (silence) that was answered: nothing to lead with.
    if (const auto* v = lookup(turns, {"all", "ttfa_from_voice_end_s"}); v && v->is_object())
        return {"ttfa_from_voice_end_s", "voice-to-voice", "voice-to-voice"};
    return {"ttfa_from_speech_end_s", "first audio after the turn's input ended",
            "after the input's end"};
}

const json::object* turns_of(const result_folder& f) {
    const auto* t = f.summary.if_contains("turns");
    return t && t->is_object() && lookup(t->as_object(), {"all"}) ? &t->as_object() : nullptr;
}

std::size_t turn_count(const json::object& turns) {
    const auto* b = turns.if_contains("by_turn");
    return b && b->is_array() ? b->as_array().size() : 0;
}

// The figures of all turns together, those the summary has.
std::vector<figure> all_turn_figures(const json::object& s, const lead_figure& lead) {
    const std::string l = lead.label;
    const auto ms = [](std::string label, const char* key, const char* q) {
        return figure{std::move(label), {"turns", "all", key, q}, unit::seconds};
    };
    std::vector<figure> f = {{"turns", {"turns", "all", "turns"}, unit::count},
                             {"turns answered", {"turns", "all", "answered"}, unit::count},
                             {"turns interrupted", {"turns", "all", "interrupted"}, unit::count},
                             {"unsolicited replies (no turn asked for them)",
                              {"turns", "all", "unsolicited_responses"},
                              unit::count},
                             ms(l + " p50", lead.key, "p50"),
                             ms(l + " p95", lead.key, "p95"),
                             ms(l + " max", lead.key, "max"),
                             ms("first audio after the server's speech_stopped p50",
                                "ttfa_from_speech_stopped_s", "p50"),
                             ms("first audio after the server's speech_stopped p95",
                                "ttfa_from_speech_stopped_s", "p95"),
                             ms("first audio after the commit p95", "ttfa_from_commit_s", "p95")};
    if (std::string_view(lead.key) != "ttfa_from_speech_end_s") // else it leads already
        f.push_back(
            ms("first audio after the turn's input ended p95", "ttfa_from_speech_end_s", "p95"));
    for (auto&& x : {ms("reply duration p50", "response_duration_s", "p50"),
                     ms("reply duration p95", "response_duration_s", "p95"),
                     ms("interruption latency p50", "interrupt_latency_s", "p50"),
                     ms("interruption latency p95", "interrupt_latency_s", "p95"),
                     ms("reply audio after the barge-in p95", "audio_after_interrupt_s", "p95"),
                     figure{"player underruns", {"turns", "all", "underruns"}, unit::count},
                     ms("underrun time p95 a turn", "underrun_s", "p95"),
                     ms("player gap p95", "player_gap_s", "p95")})
        f.push_back(x);
    // `underrun_s`: a total (a number) or a figure over the turns (its p95 above).
    if (const auto* u = lookup(s, {"turns", "all", "underrun_s"}); u && u->is_number())
        f.push_back({"underrun time", {"turns", "all", "underrun_s"}, unit::seconds});
    return present_in(s, std::move(f));
}

// One row per turn index: what each turn of every session gave.
std::string by_turn_table(const json::object& s, std::size_t n, const lead_figure& lead,
                          const std::string& prefix) {
    std::string h = fmt::format(
        "<table class=\"turns\"><tr><th>turn</th><th>turns</th><th>answered</th>"
        "<th>interrupted</th><th>{0} p50</th><th>{0} p95</th><th>{0} max</th><th>after "
        "speech_stopped p50</th><th>reply duration p50</th><th>interruption latency p50</th>"
        "<th>interruption latency p95</th><th>underruns</th></tr>\n",
        escape(lead.short_label));
    for (std::size_t j = 0; j < n; ++j) {
        const std::vector<std::string> base = {"turns", "by_turn", fmt::format("[{}]", j)};
        const auto at = [&](std::initializer_list<const char*> more) {
            auto p = base;
            for (const char* m : more)
                p.emplace_back(m);
            return p;
        };
        h += fmt::format("<tr><td class=\"num\">{}</td>", j);
        for (const char* k : {"turns", "answered", "interrupted"})
            h += figure_cell(s, at({k}), unit::count, prefix);
        for (const char* q : {"p50", "p95", "max"})
            h += figure_cell(s, at({lead.key, q}), unit::seconds, prefix);
        h += figure_cell(s, at({"ttfa_from_speech_stopped_s", "p50"}), unit::seconds, prefix);
        h += figure_cell(s, at({"response_duration_s", "p50"}), unit::seconds, prefix);
        h += figure_cell(s, at({"interrupt_latency_s", "p50"}), unit::seconds, prefix);
        h += figure_cell(s, at({"interrupt_latency_s", "p95"}), unit::seconds, prefix);
        h += figure_cell(s, at({"underruns"}), unit::count, prefix) + "</tr>\n";
    }
    return h + "</table>\n";
}

} // namespace

std::string conversation_section(const std::vector<const result_folder*>& folders,
                                 const std::vector<std::string>& names) {
    std::size_t n = 0;
    bool any = false, interrupted = false;
    lead_figure lead{"ttfa_from_voice_end_s", "voice-to-voice", "voice-to-voice"};
    for (const auto* f : folders)
        if (const auto* t = turns_of(*f)) {
            if (!any)
                lead = lead_of(*t);
            any = true;
            n = std::max(n, turn_count(*t));
            interrupted = interrupted || number_at(*t, {"all", "interrupted"}).value_or(0) > 0;
        }
    if (!any)
        return {};
    bar_chart c;
    c.id = "plot-turn-v2v";
    c.title = std::string(lead.label) + " latency by turn";
    c.unit = "ms";
    for (std::size_t j = 0; j < n; ++j)
        c.categories.push_back(fmt::format("turn {}", j));
    double hi = 0;
    std::string tables;
    for (std::size_t i = 0; i < folders.size(); ++i) {
        const auto* t = turns_of(*folders[i]);
        if (!t)
            continue;
        const auto add = [&](const char* key, const char* q, const std::string& label) {
            std::vector<std::optional<double>> v;
            for (std::size_t j = 0; j < n; ++j) {
                auto x = number_at(*t, {"by_turn", fmt::format("[{}]", j), key, q});
                if (x)
                    hi = std::max(hi, *x *= 1e3);
                v.push_back(x);
            }
            c.values.emplace_back(names[i] + label, std::move(v));
        };
        add(lead.key, "p50", std::string(lead.label) + " p50");
        add(lead.key, "p95", std::string(lead.label) + " p95");
        if (interrupted)
            add("interrupt_latency_s", "p95", "interruption latency p95");
        if (!names[i].empty())
            tables += "<h3>" + escape(names[i]) + "</h3>\n";
        tables +=
            figure_table(folders[i]->summary, all_turn_figures(folders[i]->summary, lead_of(*t)));
        tables += by_turn_table(folders[i]->summary, turn_count(*t), lead_of(*t),
                                folders.size() > 1 ? names[i].substr(0, 1) + ":" : "");
    }
    c.y = linear_axis("latency (ms)", 0, hi > 0 ? hi : 1);
    const bool voice = std::string_view(lead.key) == "ttfa_from_voice_end_s";
    return section(
        "conversation", "Conversation: latency per turn",
        std::string(voice ? "Voice-to-voice latency of each turn: from the end of the user's "
                            "voice (the last voiced 10 ms of the turn's input, on the packet "
                            "grid) to the first audio of the reply the turn caused"
                          : "First audio of each turn's reply after the end of the turn's input "
                            "(this summary has no voice-to-voice figure: a WAV that ends in "
                            "silence makes it too small)") +
            ", p50 and p95 over every session's turn of that index" +
            (interrupted ? "; the interruption latency is from the barge-in's first packet to "
                           "the interrupted reply's last audio"
                         : "") +
            ". The tables give every per-turn figure: the other reference instants, the replies' "
            "durations, underruns and the replies no turn asked for (docs/scenarios.md).",
        hi > 0 ? render(c) : no_data(c.id, c.title, "no turn was answered"), tables, true);
}

} // namespace pacer::report::detail

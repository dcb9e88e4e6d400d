// End to end: a conversation against `pacer native-mock --protocol openai-realtime` at fixed
// settings, a server whose answers are known (docs/scenarios.md, docs/native-mock.md): the
// per-turn figures pacer reports must be the mock's settings, within what the arithmetic of
// the 80 ms grid allows. Real processes on loopback; a few seconds each.
//
// What a loaded machine can shift: the mock writes each event when its due instant comes, so a
// stalled mock or client delays an event by as long as the stall. The figures below are the
// p50 over the sessions of each turn index, and each bound adds a 30 ms allowance for such a
// delay beyond the grid's own quantum (said where it is used). Never a pacing verdict.

#include <pacer/runtime/audio_codec.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numbers>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

// The mock's settings, and what they make of a turn (docs/native-mock.md).
constexpr double unit_latency = 0.150;  // --unit-latency-ms: response start after its trigger
constexpr double vad_silence = 0.240;   // --vad-silence-ms: 3 windows of 80 ms
constexpr double reply = 0.400;         // --reply-ms: 5 deltas of 80 ms, 80 ms apart
constexpr double cancel_reaction = 0.2; // --cancel-reaction-ms
constexpr double packet = 0.080;        // one packet of the grid (the mock's VAD window too)
constexpr double scheduling = 0.030;    // allowance for a loaded machine (see the top)

// 16 kHz mono PCM16: `tone_s` of a 440 Hz tone at -6 dBFS, then `silence_s` of zeros.
void write_speech_wav(const fs::path& p, double tone_s, double silence_s) {
    const auto tone = static_cast<std::uint32_t>(std::lround(16000 * tone_s));
    const auto frames = tone + static_cast<std::uint32_t>(std::lround(16000 * silence_s));
    std::vector<std::uint8_t> pcm;
    pcm.reserve(2 * frames);
    for (std::uint32_t i = 0; i < frames; ++i) {
        const auto v = static_cast<std::uint16_t>(static_cast<std::int16_t>(
            i < tone ? std::lround(16000 * std::sin(2 * std::numbers::pi * 440.0 * i / 16000.0))
                     : 0));
        pcm.push_back(static_cast<std::uint8_t>(v & 0xff));
        pcm.push_back(static_cast<std::uint8_t>(v >> 8));
    }
    runtime::write_wav_pcm16(p, pcm, 16000);
}

double number(const value& v) {
    return v.to_number<double>();
}

// A figure of summary.json's `turns` is its turns.jsonl rows' figure: p50 and max of them.
void expect_summary_is_rows(const value& by_turn, const std::vector<value>& rows, std::size_t j,
                            const char* name) {
    SCOPED_TRACE(fmt::format("turn {} {}", j, name));
    std::vector<double> v;
    for (const auto& r : rows)
        if (at(r, {"turn"}).to_number<std::size_t>() == j && !at(r, {name}).is_null())
            v.push_back(number(at(r, {name})));
    ASSERT_FALSE(v.empty());
    std::sort(v.begin(), v.end());
    const auto& f = at(by_turn.as_array()[j], {name});
    EXPECT_EQ(at(f, {"count"}).to_number<std::size_t>(), v.size());
    EXPECT_EQ(number(at(f, {"p50"})), v[(v.size() + 1) / 2 - 1]);
    EXPECT_EQ(number(at(f, {"max"})), v.back());
}

// The value of `key` in report.html: the data-value of its cell (as summary.json wrote it) and
// its text in ms as the reader sees it ("412.3 ms"); nullopt when the page has no such cell.
struct page_figure {
    double value, shown_ms;
};
std::optional<page_figure> page_value(const std::string& html, const std::string& key) {
    const auto k = html.find("data-key=\"" + key + "\" data-value=\"");
    if (k == std::string::npos)
        return std::nullopt;
    const auto v = html.find("data-value=\"", k) + 12;
    const auto text = html.find('>', v) + 1;
    const std::string shown = html.substr(text, html.find("</td>", text) - text);
    if (!shown.ends_with(" ms"))
        return std::nullopt;
    return page_figure{std::strtod(html.c_str() + v, nullptr), std::strtod(shown.c_str(), nullptr)};
}

// The table's "<label> p50 X ms  p95 Y ms" on the run's `turns` line, in ms.
std::optional<std::pair<double, double>> table_p50_p95(const std::string& out,
                                                       const std::string& label) {
    const auto line_at = out.find("\n  turns ");
    if (line_at == std::string::npos)
        return std::nullopt;
    const std::string line = out.substr(line_at + 1, out.find('\n', line_at + 1) - line_at - 1);
    std::smatch m;
    if (!std::regex_search(line, m, std::regex(label + " p50 ([0-9.]+) ms  p95 ([0-9.]+) ms")))
        return std::nullopt;
    return std::pair{std::stod(m[1]), std::stod(m[2])};
}

// Nearest rank over every turns.jsonl row's `name`, as summary.json's figures are computed.
double rows_percentile(const std::vector<value>& rows, const char* name, double q) {
    std::vector<double> v;
    for (const auto& r : rows)
        if (!at(r, {name}).is_null())
            v.push_back(number(at(r, {name})));
    EXPECT_FALSE(v.empty()) << name;
    if (v.empty())
        return std::nan("");
    std::sort(v.begin(), v.end());
    return v[std::min(v.size(), static_cast<std::size_t>(std::ceil(q * double(v.size())))) - 1];
}

// One run's figure `name` (voice-to-voice, interruption latency) is the same in each output:
// turns.jsonl's rows give summary.json's p50 and p95 exactly; report.html's cells carry the
// summary's values and show them to their 4 significant digits; the run's table prints them to
// the hundredth of a ms.
void expect_same_figures_everywhere(const fs::path& dir, const std::string& out, const char* name,
                                    const std::string& table_label) {
    SCOPED_TRACE(name);
    const auto summary = read_json(dir / "summary.json");
    const auto rows = read_jsonl(dir / "turns.jsonl");
    const auto html = slurp(dir / "report.html");
    const auto table = table_p50_p95(out, table_label);
    ASSERT_TRUE(table) << out;
    const double p50 = number(at(summary, {"turns", "all", name, "p50"}));
    const double p95 = number(at(summary, {"turns", "all", name, "p95"}));
    std::printf("%s: table p50 %.2f ms p95 %.2f ms; summary.json %.6f s, %.6f s\n", name,
                table->first, table->second, p50, p95);
    EXPECT_EQ(rows_percentile(rows, name, 0.5), p50);
    EXPECT_EQ(rows_percentile(rows, name, 0.95), p95);
    EXPECT_NEAR(table->first, p50 * 1e3, 0.005 + 1e-9);
    EXPECT_NEAR(table->second, p95 * 1e3, 0.005 + 1e-9);
    for (const auto& [q, v] : {std::pair{"p50", p50}, std::pair{"p95", p95}}) {
        const auto cell = page_value(html, fmt::format("turns.all.{}.{}", name, q));
        ASSERT_TRUE(cell) << q;
        EXPECT_EQ(cell->value, v) << q;
        // 4 significant digits: half a unit of the 4th digit either way.
        const double digit = std::pow(10.0, std::floor(std::log10(v * 1e3)) - 3);
        EXPECT_NEAR(cell->shown_ms, v * 1e3, digit / 2 + 1e-9) << q;
    }
}

// Server VAD, three turns of 0.48 s of voice followed in the WAV by 0, 300 and 700 ms of
// silence, 0.8 s of silence between turns. The mock ends each turn 3 silent windows after
// the voice (within the turn's WAV for 300 and 700 ms, in the pause for 0) and answers 150 ms
// later: voice-to-voice is VAD silence + unit latency whatever the WAV's trailing silence, up
// to one packet (the mock decides on whole 80 ms windows of the audio it has received, and a
// turn's short last packet shifts its windows off the grid). The 700 ms turn's reply starts
// before its WAV's end: it is still that turn's reply (issue 39's case).
TEST(ConversationE2E, VoiceToVoiceIsTheServersVadSilencePlusItsLatency) {
    temp_dir out;
    fs::create_directories(out.path());
    const std::vector<int> trailing_ms{0, 300, 700};
    for (const int ms : trailing_ms)
        write_speech_wav(out / fmt::format("speech-{}.wav", ms), 0.48, ms / 1000.0);
    const auto scenario = out / "talk.json";
    std::ofstream(scenario) << R"({"turns":[{"audio":"speech-0.wav","pause":"0.8s"},)"
                               R"({"audio":"speech-300.wav","pause":"0.8s"},)"
                               R"({"audio":"speech-700.wav"}]})";
    mock_process mock({"--protocol", "openai-realtime", "--unit-latency-ms", "150",
                       "--vad-silence-ms", "240", "--reply-ms", "400", "--cancel-reaction-ms",
                       "200"},
                      "native-mock");
    const auto dir = out / "run";
    const auto r = run_pacer({"run", "--protocol", "openai-realtime", "--turns", "server-vad",
                              "--url", mock.url(), "-c", "2", "-d", "0.5s", "--scenario",
                              scenario.string(), "--timeout", "30s", "-o", dir.string()});
    EXPECT_EQ(mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto summary = read_json(dir / "summary.json");
    const auto rows = read_jsonl(dir / "turns.jsonl");
    ASSERT_EQ(rows.size(), 6u);
    const auto& by_turn = at(summary, {"turns", "by_turn"});
    ASSERT_EQ(by_turn.as_array().size(), 3u);
    EXPECT_EQ(at(summary, {"turns", "all", "answered"}).to_number<int>(), 6);
    EXPECT_EQ(at(summary, {"turns", "all", "unsolicited_responses"}).to_number<int>(), 0);
    for (const auto& row : rows) {
        SCOPED_TRACE(boost::json::serialize(row));
        // Each turn's own response (the mock numbers them in order).
        EXPECT_EQ(at(row, {"response_id"}).as_string(),
                  fmt::format("response_{}", at(row, {"turn"}).to_number<int>()));
        // The WAV without trailing silence: its voice ends where its audio ends, exactly.
        if (at(row, {"turn"}).to_number<int>() == 0) {
            EXPECT_EQ(number(at(row, {"voice_end_s"})), number(at(row, {"speech_end_s"})));
        }
        // Each figure beside its reference instant, to the microsecond.
        EXPECT_NEAR(number(at(row, {"ttfa_from_voice_end_s"})),
                    number(at(row, {"first_audio_s"})) - number(at(row, {"voice_end_s"})), 1e-6);
    }
    for (std::size_t j = 0; j < 3; ++j) {
        SCOPED_TRACE(fmt::format("trailing silence {} ms", trailing_ms[j]));
        const auto& t = by_turn.as_array()[j];
        const double v2v = number(at(t, {"ttfa_from_voice_end_s", "p50"}));
        std::printf("voice-to-voice, %d ms of trailing silence: p50 %.1f ms\n", trailing_ms[j],
                    v2v * 1000);
        // VAD silence + unit latency, up to one packet later (the window quantum), plus the
        // scheduling allowance either way.
        EXPECT_GE(v2v, vad_silence + unit_latency - scheduling);
        EXPECT_LE(v2v, vad_silence + unit_latency + packet + scheduling);
        // The mock answers `unit_latency` after its own speech_stopped: only scheduling apart.
        EXPECT_NEAR(number(at(t, {"ttfa_from_speech_stopped_s", "p50"})), unit_latency, scheduling);
        // The reply: 5 deltas 80 ms apart, first to last 320 ms, within a packet of 400 ms.
        EXPECT_NEAR(number(at(t, {"response_duration_s", "p50"})), reply - packet, scheduling);
        for (const char* name : {"ttfa_from_voice_end_s", "ttfa_from_speech_end_s",
                                 "ttfa_from_speech_stopped_s", "response_duration_s"})
            expect_summary_is_rows(by_turn, rows, j, name);
    }
    // The 700 ms turn was answered inside its WAV: before its end of input.
    EXPECT_LT(number(at(by_turn.as_array()[2], {"ttfa_from_speech_end_s", "max"})), 0);
    // The same voice-to-voice in the table, summary.json, turns.jsonl and report.html.
    expect_same_figures_everywhere(dir, r.out, "ttfa_from_voice_end_s", "voice-to-voice");
}

// The decoded bytes of an append line's `audio`.
std::size_t audio_bytes(const value& line) {
    const auto& a = at(line, {"event", "audio"}).as_string();
    const std::size_t pad =
        (a.size() > 0 && a.back() == '=') + (a.size() > 1 && a[a.size() - 2] == '=');
    return a.size() / 4 * 3 - pad;
}

// Manual turns, two turns of a 0.45 s tone (not whole packets), the second barging in 0.1 s
// into the first reply. Each turn sends exactly its audio (its last packet short, nothing
// padded); the voice runs to the WAV's end, so the voice end is the end of input; the mock
// cancels the interrupted reply 200 ms after the cancel, so its last delta comes within a
// packet before that: the interruption latency is the cancel reaction, up to one packet less.
TEST(ConversationE2E, ManualTurnsSendTheirAudioUnpaddedAndTheCancelReactionIsMeasured) {
    temp_dir out;
    fs::create_directories(out.path());
    const auto wav = out / "speech.wav";
    write_speech_wav(wav, 0.45, 0);
    const auto scenario = out / "talk.json";
    std::ofstream(scenario) << R"({"turns":[{"audio":"input","pause":"1s",)"
                               R"("interrupt_after":"0.1s"},{"audio":"input"}]})";
    mock_process mock({"--protocol", "openai-realtime", "--unit-latency-ms", "150", "--reply-ms",
                       "1200", "--cancel-reaction-ms", "200"},
                      "native-mock");
    const auto dir = out / "run";
    const auto r =
        run_pacer({"run", "--protocol", "openai-realtime", "--turns", "manual", "--url", mock.url(),
                   "-c", "2", "--audio", wav.string(), "--scenario", scenario.string(), "--timeout",
                   "30s", "--keep-traces", "-o", dir.string()});
    EXPECT_EQ(mock.stop(), 0);
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    for (int i = 0; i < 2; ++i) {
        SCOPED_TRACE(i);
        // The appends before each commit: turn 0's are all of them before the first commit
        // (the pause's silence comes after it); turn 1's, as many before the second.
        std::vector<std::vector<std::size_t>> turns(1);
        for (const auto& l : read_jsonl(dir / fmt::format("session-{:03}", i) / "trace.jsonl")) {
            if (at(l, {"direction"}).as_string() != "send")
                continue;
            const auto type = at(l, {"event", "type"}).as_string();
            if (type == "input_audio_buffer.append")
                turns.back().push_back(audio_bytes(l));
            else if (type == "input_audio_buffer.commit")
                turns.emplace_back();
        }
        ASSERT_EQ(turns.size(), 3u);
        const auto& first = turns[0];
        const std::size_t n = first.size();
        ASSERT_EQ(n, 6u); // 0.45 s: 5 packets of 80 ms and one of 50 ms
        ASSERT_GE(turns[1].size(), n);
        const std::vector<std::size_t> second(turns[1].end() - static_cast<std::ptrdiff_t>(n),
                                              turns[1].end());
        std::size_t sum0 = 0, sum1 = 0;
        for (std::size_t k = 0; k < n; ++k) {
            sum0 += first[k];
            sum1 += second[k];
        }
        // The last turn always sent its audio exactly (the single utterance's rule): the first
        // sends as much, 0.45 s at 24 kHz, never padded to 6 whole packets.
        EXPECT_EQ(sum0, sum1);
        EXPECT_EQ(sum0, 21600u);
        EXPECT_LT(first.back(), 3840u);
    }
    const auto summary = read_json(dir / "summary.json");
    const auto rows = read_jsonl(dir / "turns.jsonl");
    for (const auto& row : rows) {
        SCOPED_TRACE(boost::json::serialize(row));
        // The voice runs to the WAV's end: its end is the turn's end of input, exactly.
        EXPECT_EQ(number(at(row, {"voice_end_s"})), number(at(row, {"speech_end_s"})));
        EXPECT_EQ(number(at(row, {"ttfa_from_voice_end_s"})),
                  number(at(row, {"ttfa_from_speech_end_s"})));
    }
    const auto& all = at(summary, {"turns", "all"});
    const auto& by_turn = at(summary, {"turns", "by_turn"});
    // The commit is answered after the unit latency.
    EXPECT_NEAR(number(at(all, {"ttfa_from_commit_s", "p50"})), unit_latency, scheduling);
    const int interrupted = at(all, {"interrupted"}).to_number<int>();
    std::printf("interrupted %d of 2; interruption latency p50 %s s\n", interrupted,
                boost::json::serialize(at(all, {"interrupt_latency_s"})).c_str());
    // Every first turn is interrupted (its reply starts 150 ms after the commit, the pause
    // lasts 1 s); the reply's last delta is due within the 200 ms after the cancel arrived, so
    // at most a packet before that; plus the allowance.
    ASSERT_EQ(interrupted, 2);
    const double latency = number(at(all, {"interrupt_latency_s", "p50"}));
    EXPECT_GE(latency, cancel_reaction - packet - scheduling);
    EXPECT_LE(latency, cancel_reaction + scheduling);
    expect_summary_is_rows(by_turn, rows, 0, "interrupt_latency_s");
    // The same voice-to-voice and interruption latency in every output of the run.
    expect_same_figures_everywhere(dir, r.out, "ttfa_from_voice_end_s", "voice-to-voice");
    expect_same_figures_everywhere(dir, r.out, "interrupt_latency_s", "interruption latency");
}

} // namespace
} // namespace pacer::test

// The native protocol oracle (docs/protocol.md §4.5) against a conforming trace built with the
// mock server recipe of docs/protocol.md §6, and against traces that each break one rule.

#include <pacer/core/base64.hpp>
#include <pacer/metrics/oracle.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/server/native_mock.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace pacer::metrics {
namespace {

namespace json = boost::json;

constexpr std::size_t unit_bytes = 2560;
constexpr std::size_t samples_per_unit = 1764; // 80 ms at 22050 Hz
constexpr std::size_t holdback = 256;

std::string pcm_b64(std::size_t samples) {
    return base64_encode(std::string(samples * 2, '\x01'));
}

json::object granted() {
    return json::parse(
               R"({"interaction":"native","native_full_duplex":true,"proactive_output":false,
        "turn_control":[null],"client_commit":false,"input_modalities":["audio"],
        "output_modalities":["audio"],"input_audio_format":{"type":"audio/pcm","rate":16000},
        "output_audio_format":{"type":"audio/pcm","rate":22050},"native_unit_ms":80,
        "first_unit_ms":80,"microturn_ms":null,"tail_policy":"pad",
        "supports_server_interrupt":false,"supports_truncate":false,"supports_resume":false,
        "partial_style":"append_only","pressure_policy":"reject","strict_order":true,
        "rejections":[],"limits":{"max_input_bytes":1920000,"max_input_chunks":128,
        "max_output_bytes":4194304,"max_output_events":256,"max_responses":128,
        "max_segments":256,"max_history_chars":65536,"session_timeout_s":240,
        "cleanup_timeout_s":30}})")
        .as_object();
}

// A client streaming `input_bytes` of PCM in 2560-byte packets against the VoiceChat mock
// recipe (DuplexPeer): every client event and every server reply, in order, with rising times.
class conforming_session {
public:
    explicit conforming_session(std::size_t input_bytes) {
        receive({{"type", "session.created"},
                 {"session",
                  {{"id", "session_fixture"},
                   {"object", "realtime.session"},
                   {"type", "realtime"},
                   {"model", "fixture"},
                   {"sglang", {{"granted", nullptr}}}}}});
        const auto update = send({{"type", "session.update"},
                                  {"session", {{"output_modalities", json::array{"audio"}}}}});
        receive({{"type", "session.updated"},
                 {"client_event_id", update},
                 {"session",
                  {{"id", "session_fixture"},
                   {"object", "realtime.session"},
                   {"type", "realtime"},
                   {"model", "fixture"},
                   {"output_modalities", json::array{"audio"}},
                   {"sglang", {{"granted", granted()}}}}}});
        std::size_t offset = 0;
        for (std::int64_t seq = 0; offset < input_bytes; ++seq) {
            const std::size_t n = std::min(unit_bytes, input_bytes - offset);
            now_ = 10.0 + 0.08 * static_cast<double>(seq); // on the grid
            const auto id = send(
                {{"type", "input_audio_buffer.append"},
                 {"audio", pcm_b64(n / 2)},
                 {"sglang", {{"seq", seq}, {"t_start_ms", static_cast<double>(offset) / 32.0}}}});
            offset += n;
            pcm_ += n;
            receive({{"type", "sglang.input_audio.accepted"},
                     {"seq", seq},
                     {"accepted_end_ms", static_cast<double>(pcm_) / 32.0},
                     {"client_event_id", id}});
            while ((frames_ + 1) * unit_bytes <= pcm_) {
                const std::size_t unit = frames_;
                open_response();
                emit_audio(codec_fresh(unit + 1, false), unit);
                emit_unit_done(unit, 80.0);
            }
        }
        now_ += 0.08;
        const auto eos = send({{"type", "sglang.input_audio.end"}});
        const double accepted_ms = static_cast<double>(pcm_) / 32.0;
        const std::size_t units = (pcm_ + unit_bytes - 1) / unit_bytes;
        receive({{"type", "sglang.input_audio.ended"},
                 {"accepted_end_ms", accepted_ms},
                 {"tail_policy", "pad"},
                 {"client_event_id", eos}});
        open_response();
        const std::size_t tail = units > frames_ ? frames_ : units;
        emit_audio(codec_fresh(units, true), tail);
        receive({{"type", "response.output_audio.done"},
                 {"response_id", "response_0"},
                 {"item_id", "item_0"},
                 {"output_index", 0},
                 {"content_index", 0}});
        receive({{"type", "response.done"},
                 {"response",
                  {{"id", "response_0"},
                   {"object", "realtime.response"},
                   {"status", "completed"},
                   {"status_details", {{"reason", "stop"}}},
                   {"output", json::array{}},
                   {"usage", json::object{}}}}});
        emit_unit_done(tail, accepted_ms - static_cast<double>(tail) * 80.0);
        receive({{"type", "sglang.input_audio.drained"},
                 {"accepted_end_ms", accepted_ms},
                 {"consumed_ms", accepted_ms},
                 {"discarded_ms", 0},
                 {"padding_ms", static_cast<double>(units) * 80.0 - accepted_ms},
                 {"client_event_id", eos}});
        const auto close = send({{"type", "session.close"}});
        receive(
            {{"type", "session.closed"}, {"reason", "client_closed"}, {"client_event_id", close}});
    }

    std::vector<trace_line> lines;

private:
    std::string send(json::object e) {
        const auto id = fmt::format("{:032x}", ++client_ids_);
        e["event_id"] = id;
        add("send", std::move(e));
        return id;
    }
    void receive(json::object e) {
        e["event_id"] = fmt::format("server_{}", server_ids_++);
        add("receive", std::move(e));
    }
    void add(std::string dir, json::object e) {
        now_ += 0.0005;
        trace_line l;
        l.direction = std::move(dir);
        l.time_s = now_;
        l.event = std::move(e);
        l.line = lines.size() + 1;
        lines.push_back(std::move(l));
    }
    std::size_t codec_fresh(std::size_t frames, bool final) {
        const std::size_t available = frames * samples_per_unit - (final ? 0 : holdback);
        const std::size_t fresh = available - emitted_;
        frames_ = frames;
        emitted_ = available;
        return fresh;
    }
    void open_response() {
        if (response_open_)
            return;
        receive({{"type", "response.created"},
                 {"response",
                  {{"id", "response_0"},
                   {"object", "realtime.response"},
                   {"status", "in_progress"},
                   {"output", json::array{}}}}});
        response_open_ = true;
    }
    void emit_audio(std::size_t samples, std::size_t unit) {
        receive({{"type", "response.output_audio.delta"},
                 {"response_id", "response_0"},
                 {"item_id", "item_0"},
                 {"output_index", 0},
                 {"content_index", 0},
                 {"delta", pcm_b64(samples)},
                 {"sglang",
                  {{"unit_id", fmt::format("unit_{}", unit)},
                   {"chunk_seq", chunk_seq_++},
                   {"media_time", {{"t_start_ms", unit * 80}, {"duration_ms", 80}}}}}});
    }
    void emit_unit_done(std::size_t unit, double duration_ms) {
        receive({{"type", "sglang.unit.done"},
                 {"unit_id", fmt::format("unit_{}", unit)},
                 {"sglang",
                  {{"unit_id", fmt::format("unit_{}", unit)},
                   {"media_time", {{"t_start_ms", unit * 80}, {"duration_ms", duration_ms}}}}}});
    }

    double now_ = 9.9;
    std::uint64_t client_ids_ = 0;
    std::size_t server_ids_ = 0;
    std::size_t pcm_ = 0, frames_ = 0, emitted_ = 0, chunk_seq_ = 0;
    bool response_open_ = false;
};

const protocol::profile& voicechat() {
    return *protocol::find_profile("nemotron");
}

std::vector<trace_line> conforming(std::size_t bytes = 8 * unit_bytes) {
    return conforming_session(bytes).lines;
}

std::string type_of(const trace_line& l) {
    return std::string(l.event.at("type").as_string());
}

// The index of the n-th line (0-based) of `type` in `dir`.
std::size_t find(const std::vector<trace_line>& t, std::string_view dir, std::string_view type,
                 std::size_t n = 0) {
    for (std::size_t i = 0; i < t.size(); ++i)
        if (t[i].direction == dir && type_of(t[i]) == type && n-- == 0)
            return i;
    throw std::runtime_error(fmt::format("no {} {}", dir, type));
}

std::string all(const oracle_result& r) {
    return fmt::format("{}", fmt::join(r.violations, " | "));
}

bool has(const oracle_result& r, std::string_view v) {
    return std::find(r.violations.begin(), r.violations.end(), v) != r.violations.end();
}

// --- conforming traces ------------------------------------------------------------------

TEST(Oracle, ConformingTracePasses) {
    const auto t = conforming();
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.verdict, "pass") << all(r);
    EXPECT_TRUE(r.violations.empty()) << all(r);
    EXPECT_TRUE(r.input_output_overlap);
    EXPECT_DOUBLE_EQ(r.input_audio_s, 0.64);
    EXPECT_DOUBLE_EQ(r.output_audio_s, 8.0 * 1764 / 22050);
    EXPECT_EQ(r.admission_denials, 0u);
    ASSERT_TRUE(r.first_audio_packet_s);
    EXPECT_GT(*r.first_audio_packet_s, 0.0);
    EXPECT_TRUE(r.audio_packet_gap_max_s);
    EXPECT_NEAR(*r.drain_after_eos_s, 0.0005 * 6,
                1e-9); // ended, audio, audio.done, done, unit, drained
    EXPECT_NEAR(*r.close_ack_s, 0.0005, 1e-9);
    const auto m = r.metrics_json();
    EXPECT_EQ(m.size(), 8u);
    EXPECT_EQ(m.at("input_output_overlap"), true);
}

TEST(Oracle, UnalignedInputWithShortTailUnitPasses) {
    const auto t = conforming(8 * unit_bytes + 1280); // 8.5 packets: tail unit of 40 ms
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.verdict, "pass") << all(r);
    EXPECT_DOUBLE_EQ(r.output_audio_s, 9.0 * 1764 / 22050);
}

TEST(Oracle, SinglePacketIsNotExercised) {
    // All audio arrives after the only append: no input/output overlap.
    const auto r = evaluate_trace(conforming(unit_bytes), voicechat());
    EXPECT_TRUE(r.violations.empty()) << all(r);
    EXPECT_FALSE(r.input_output_overlap);
    EXPECT_EQ(r.verdict, "not_exercised");
}

TEST(Oracle, AdmissionDenialsBeforeTheSessionAreCounted) {
    auto t = conforming();
    for (int a = 2; a >= 1; --a) {
        trace_line l;
        l.direction = "admission";
        l.time_s = 9.0 + 0.25 * a;
        l.event =
            json::parse(
                fmt::format(R"({{"type":"connection_denied","http_status":503,"attempt":{}}})", a))
                .as_object();
        t.insert(t.begin(), std::move(l));
    }
    std::sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.time_s < b.time_s; });
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.verdict, "pass") << all(r);
    EXPECT_EQ(r.admission_denials, 2u);
}

// --- one broken rule each -----------------------------------------------------------------

TEST(Oracle, CountMissingEndedReceipt) {
    auto t = conforming();
    t.erase(t.begin() + static_cast<long>(find(t, "receive", "sglang.input_audio.ended")));
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.verdict, "fail");
    const std::vector<std::string> expected{
        "input drained before ended receipt",
        "expected exactly one receive sglang.input_audio.ended"};
    EXPECT_EQ(r.violations, expected) << all(r);
}

TEST(Oracle, OrderDrainedBeforeEnded) {
    auto t = conforming();
    const auto ended = find(t, "receive", "sglang.input_audio.ended");
    const auto drained = find(t, "receive", "sglang.input_audio.drained");
    std::swap(t[ended].event, t[drained].event);
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.verdict, "fail");
    EXPECT_TRUE(has(r, "input drained before ended receipt")) << all(r);
}

TEST(Oracle, OrderCloseBeforeDrained) {
    auto t = conforming();
    auto close = t[find(t, "send", "session.close")];
    const auto drained = find(t, "receive", "sglang.input_audio.drained");
    close.time_s = t[drained - 1].time_s;
    t.erase(t.begin() + static_cast<long>(find(t, "send", "session.close")));
    t.insert(t.begin() + static_cast<long>(drained), close);
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.verdict, "fail");
    EXPECT_TRUE(has(r, "session.close before input drained")) << all(r);
}

TEST(Oracle, AnythingAfterClosed) {
    auto t = conforming();
    auto extra = t[find(t, "receive", "sglang.unit.done")];
    extra.event["event_id"] = "late_one";
    extra.time_s = t.back().time_s + 0.01;
    t.push_back(extra);
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_TRUE(has(r, "sglang.unit.done after session.closed")) << all(r);
}

TEST(Oracle, AccountingAcceptedDurationMismatch) {
    auto t = conforming();
    t[find(t, "receive", "sglang.input_audio.accepted", 3)].event["accepted_end_ms"] = 999.0;
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations, std::vector<std::string>{"accepted input duration mismatch"}) << all(r);
    EXPECT_EQ(r.verdict, "fail");
}

TEST(Oracle, AccountingMissingAcceptance) {
    auto t = conforming();
    t.erase(t.begin() + static_cast<long>(find(t, "receive", "sglang.input_audio.accepted", 2)));
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations, std::vector<std::string>{"missing input acceptance receipt"}) << all(r);
}

TEST(Oracle, AccountingDrainedPaddingAndDiscard) {
    auto t = conforming();
    auto& d = t[find(t, "receive", "sglang.input_audio.drained")].event;
    d["padding_ms"] = 40;
    d["discarded_ms"] = 80;
    const auto r = evaluate_trace(t, voicechat());
    const std::vector<std::string> expected{"accepted input was discarded",
                                            "drained padding mismatch"};
    EXPECT_EQ(r.violations, expected) << all(r);
}

TEST(Oracle, UnitsNotContiguous) {
    auto t = conforming();
    t.erase(t.begin() + static_cast<long>(find(t, "receive", "sglang.unit.done", 3)));
    const auto r = evaluate_trace(t, voicechat());
    const std::vector<std::string> expected{
        "native unit receipts are not contiguous from zero",
        "expected 8 nonempty native units, observed 7",
        "native unit durations do not account for the accepted input"};
    EXPECT_EQ(r.violations, expected) << all(r);
}

TEST(Oracle, UnitMediaTimeNotAligned) {
    auto t = conforming();
    t[find(t, "receive", "sglang.unit.done", 2)]
        .event["sglang"]
        .as_object()["media_time"]
        .as_object()["t_start_ms"] = 100;
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations, std::vector<std::string>{"native unit media time is not unit-aligned"})
        << all(r);
}

TEST(Oracle, UnitWithoutMediaTime) {
    auto t = conforming();
    t[find(t, "receive", "sglang.unit.done", 0)].event.erase("sglang");
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_TRUE(has(r, "unit receipt missing media time")) << all(r);
}

TEST(Oracle, ResponseStatusContradictsReason) {
    auto t = conforming();
    t[find(t, "receive", "response.done")].event["response"].as_object()["status"] = "cancelled";
    const auto r = evaluate_trace(t, voicechat());
    const std::vector<std::string> expected{
        "terminal status cancelled contradicts reason stop",
        "response response_0 ended cancelled/stop, expected completed/stop"};
    EXPECT_EQ(r.violations, expected) << all(r);
}

TEST(Oracle, ResponseTerminalAfterDrain) {
    auto t = conforming();
    const auto done = find(t, "receive", "response.done");
    const auto drained = find(t, "receive", "sglang.input_audio.drained");
    auto moved = t[done];
    moved.time_s = t[drained].time_s;
    t.insert(t.begin() + static_cast<long>(drained) + 1, moved);
    t.erase(t.begin() + static_cast<long>(done));
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_TRUE(has(r, "native completed terminal after the drain receipt")) << all(r);
    EXPECT_TRUE(has(r, "response.done after drain")) << all(r);
}

TEST(Oracle, ResponseAudioDoneMissing) {
    auto t = conforming();
    t.erase(t.begin() + static_cast<long>(find(t, "receive", "response.output_audio.done")));
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations, std::vector<std::string>{"missing output_audio.done"}) << all(r);
}

TEST(Oracle, ResponseUnknown) {
    auto t = conforming();
    t.erase(t.begin() + static_cast<long>(find(t, "receive", "response.created")));
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_TRUE(has(r, "response.output_audio.delta: unknown response")) << all(r);
}

TEST(Oracle, OutputNotConserved) {
    auto t = conforming();
    t[find(t, "receive", "response.output_audio.delta", 1)].event["delta"] = pcm_b64(1000);
    const auto r = evaluate_trace(t, voicechat());
    const auto expected = fmt::format("output audio is not conserved: {} of {} bytes for 8 units",
                                      8 * 3528 - 2 * 764, 8 * 3528);
    EXPECT_EQ(r.violations, std::vector<std::string>{expected}) << all(r);
}

TEST(Oracle, OutputConservationIsNotRequiredOfNonContinuousProfiles) {
    // The VoiceChat trace read as MiniCPM-o fails on its 80 ms units and capabilities, but
    // never on output conservation, and its verdict needs no overlap.
    auto t = conforming();
    t[find(t, "receive", "response.output_audio.delta", 1)].event["delta"] = pcm_b64(1000);
    const auto r = evaluate_trace(t, *protocol::find_profile("minicpmo"));
    for (const auto& v : r.violations)
        EXPECT_EQ(v.find("not conserved"), std::string::npos) << v;
}

TEST(Oracle, UnsupportedServerEvent) {
    auto t = conforming();
    auto extra = t[find(t, "receive", "sglang.input_audio.accepted", 4)];
    extra.event = json::parse(R"({"type":"sglang.backlog","event_id":"bk"})").as_object();
    t.insert(t.begin() + static_cast<long>(find(t, "receive", "sglang.input_audio.accepted", 4)) +
                 1,
             extra);
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations, std::vector<std::string>{"unsupported server event: sglang.backlog"})
        << all(r);
}

TEST(Oracle, ServerErrorEvent) {
    auto t = conforming();
    auto extra = t[find(t, "receive", "sglang.input_audio.accepted", 4)];
    extra.event = json::parse(R"({"type":"error","event_id":"err","sglang":{"fatal":false},
        "error":{"type":"invalid_request_error","code":"bad","message":"nope","event_id":null,"param":null}})")
                      .as_object();
    t.insert(t.begin() + static_cast<long>(find(t, "receive", "sglang.input_audio.accepted", 4)) +
                 1,
             extra);
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations, std::vector<std::string>{"server error: code=bad fatal=False: nope"})
        << all(r);
}

TEST(Oracle, UnsupportedClientCommand) {
    auto t = conforming();
    auto extra = t[find(t, "send", "input_audio_buffer.append", 2)];
    extra.event = json::parse(R"({"type":"response.cancel","event_id":"cancel1"})").as_object();
    t.insert(t.begin() + static_cast<long>(find(t, "send", "input_audio_buffer.append", 2)) + 1,
             extra);
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations,
              std::vector<std::string>{"client command outside this scenario: response.cancel"})
        << all(r);
}

TEST(Oracle, ClientMediaTimeNotContiguous) {
    auto t = conforming();
    t[find(t, "send", "input_audio_buffer.append", 3)].event["sglang"].as_object()["t_start_ms"] =
        250.0;
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations, std::vector<std::string>{"input media time is not sample-contiguous"})
        << all(r);
}

TEST(Oracle, ClientSequenceNotContiguous) {
    auto t = conforming();
    t[find(t, "send", "input_audio_buffer.append", 3)].event["sglang"].as_object()["seq"] = 4;
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_TRUE(has(r, "input sequence is not contiguous")) << all(r);
    EXPECT_EQ(r.verdict, "fail");
}

TEST(Oracle, ClientInputAfterEos) {
    auto t = conforming();
    const auto eos = find(t, "send", "sglang.input_audio.end");
    auto extra = t[find(t, "send", "input_audio_buffer.append", 7)];
    extra.event["event_id"] = "after_eos";
    extra.event["sglang"].as_object()["seq"] = 8;
    extra.event["sglang"].as_object()["t_start_ms"] = 640.0;
    extra.time_s = t[eos].time_s;
    t.insert(t.begin() + static_cast<long>(eos) + 1, extra);
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_TRUE(has(r, "input after EOS")) << all(r);
}

TEST(Oracle, ClientErrorLine) {
    auto t = conforming();
    trace_line e;
    e.direction = "error";
    e.time_s = t.back().time_s;
    e.event = json::parse(R"({"message":"driver stalled after the receive loop"})").as_object();
    t.push_back(e);
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations,
              std::vector<std::string>{"client error: driver stalled after the receive loop"})
        << all(r);
}

TEST(Oracle, ClockRegressed) {
    auto t = conforming();
    t[10].time_s = t[9].time_s - 0.001;
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations, std::vector<std::string>{"record 10: clock regressed"}) << all(r);
}

TEST(Oracle, DuplicateEventIdsPerDirection) {
    auto t = conforming();
    const auto a = find(t, "receive", "sglang.unit.done", 1);
    const auto b = find(t, "receive", "sglang.unit.done", 2);
    t[b].event["event_id"] = t[a].event.at("event_id");
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations, std::vector<std::string>{"duplicate receive event_id"}) << all(r);
}

TEST(Oracle, MissingGrantedCapability) {
    auto t = conforming();
    auto& g = t[find(t, "receive", "session.updated")]
                  .event["session"]
                  .as_object()["sglang"]
                  .as_object()["granted"]
                  .as_object();
    g["native_unit_ms"] = 80.0; // a float is not the integer the profile grants
    g.erase("output_modalities");
    const auto r = evaluate_trace(t, voicechat());
    const std::vector<std::string> expected{"unsupported capability: native_unit_ms",
                                            "unsupported capability: output_modalities"};
    EXPECT_EQ(r.violations, expected) << all(r);
}

// --- profile capabilities ---------------------------------------------------------------
//
// The granted `output_modalities` must be the profile's list exactly (the reference rule that
// is strictest): `["audio"]` for VoiceChat, `["audio","text"]` for MiniCPM-o.

// The granted capabilities pacer's native mock sends for `profile` (at its output rate).
json::object mock_grant(const protocol::profile& profile) {
    server::native_mock_options o;
    o.profile = &profile;
    o.output_sample_rate = profile.output_sample_rate;
    return json::parse(server::granted_capabilities(o)).as_object();
}

// A MiniCPM-o session that never speaks, as pacer's client and native mock record it: the
// client's own `session.update`, the mock's grant, 8 appends (640 ms) and one tail unit of
// 640 ms (padded to the 1000 ms unit) at the end of input.
std::vector<trace_line> silent_per_unit_session(const protocol::profile& profile,
                                                const json::object& grant) {
    std::vector<trace_line> t;
    double now = 10.0;
    std::size_t client = 0, server = 0;
    auto add = [&](std::string dir, json::object e) {
        now += 0.0005;
        trace_line l;
        l.direction = std::move(dir);
        l.time_s = now;
        l.event = std::move(e);
        l.line = t.size() + 1;
        t.push_back(std::move(l));
    };
    auto send = [&](json::object e) {
        const auto id = fmt::format("{:032x}", ++client);
        e["event_id"] = id;
        add("send", std::move(e));
        return id;
    };
    auto receive = [&](json::object e) {
        e["event_id"] = fmt::format("server_{}", server++);
        add("receive", std::move(e));
    };
    const json::object session{{"id", "sess_0"},
                               {"object", "realtime.session"},
                               {"type", "realtime"},
                               {"model", "pacer-native-mock"}};
    auto created = session;
    created["sglang"] = {{"granted", nullptr}};
    receive({{"type", "session.created"}, {"session", created}});
    auto update = json::parse(protocol::session_update(fmt::format("{:032x}", ++client), profile))
                      .as_object();
    const std::string update_id(update.at("event_id").as_string());
    add("send", std::move(update));
    auto updated = session;
    updated["output_modalities"] = grant.at("output_modalities");
    updated["sglang"] = {{"granted", grant}};
    receive({{"type", "session.updated"}, {"client_event_id", update_id}, {"session", updated}});
    std::size_t pcm = 0;
    for (std::int64_t seq = 0; seq < 8; ++seq) {
        now = 11.0 + 0.08 * static_cast<double>(seq);
        const auto id =
            send({{"type", "input_audio_buffer.append"},
                  {"audio", pcm_b64(unit_bytes / 2)},
                  {"sglang", {{"seq", seq}, {"t_start_ms", static_cast<double>(pcm) / 32.0}}}});
        pcm += unit_bytes;
        receive({{"type", "sglang.input_audio.accepted"},
                 {"seq", seq},
                 {"accepted_end_ms", static_cast<double>(pcm) / 32.0},
                 {"client_event_id", id}});
    }
    const auto eos = send({{"type", "sglang.input_audio.end"}});
    receive({{"type", "sglang.input_audio.ended"},
             {"accepted_end_ms", 640.0},
             {"tail_policy", "pad"},
             {"client_event_id", eos}});
    receive(
        {{"type", "sglang.unit.done"},
         {"unit_id", "unit_0"},
         {"sglang",
          {{"unit_id", "unit_0"}, {"media_time", {{"t_start_ms", 0}, {"duration_ms", 640.0}}}}}});
    receive({{"type", "sglang.input_audio.drained"},
             {"accepted_end_ms", 640.0},
             {"consumed_ms", 640.0},
             {"discarded_ms", 0},
             {"padding_ms", 360.0},
             {"client_event_id", eos}});
    const auto close = send({{"type", "session.close"}});
    receive({{"type", "session.closed"}, {"reason", "client_closed"}, {"client_event_id", close}});
    return t;
}

const protocol::profile& minicpmo() {
    return *protocol::find_profile("minicpmo");
}

TEST(Oracle, MiniCpmTraceWithTheNativeMocksGrantPasses) {
    const auto grant = mock_grant(minicpmo());
    EXPECT_EQ(json::serialize(grant.at("output_modalities")), R"(["audio","text"])");
    const auto t = silent_per_unit_session(minicpmo(), grant);
    // The client asked for what the profile grants.
    EXPECT_EQ(json::serialize(t[1].event.at("session")),
              R"({"output_modalities":["audio","text"]})");
    const auto r = evaluate_trace(t, minicpmo());
    EXPECT_EQ(r.verdict, "pass") << all(r); // not continuous: no overlap needed
    EXPECT_TRUE(r.violations.empty()) << all(r);
}

TEST(Oracle, MiniCpmGrantWithoutTextFailsOnOutputModalities) {
    // What pacer's mock granted before: audio alone. The reference oracle of the MiniCPM-o
    // profile fails it, and so does pacer's; so does any other list than the profile's.
    for (const char* wrong : {R"(["audio"])", R"(["text","audio"])", R"(["audio","text","x"])",
                              R"(["audio",1])", R"("audio")", R"([])"}) {
        auto grant = mock_grant(minicpmo());
        grant["output_modalities"] = json::parse(wrong);
        const auto r = evaluate_trace(silent_per_unit_session(minicpmo(), grant), minicpmo());
        EXPECT_EQ(r.verdict, "fail") << wrong;
        EXPECT_EQ(r.violations,
                  std::vector<std::string>{"unsupported capability: output_modalities"})
            << wrong << ": " << all(r);
    }
}

TEST(Oracle, VoiceChatGrantMustBeAudioAlone) {
    // The mock's VoiceChat grant passes; one that adds text does not.
    auto t = conforming();
    auto& g = t[find(t, "receive", "session.updated")]
                  .event["session"]
                  .as_object()["sglang"]
                  .as_object()["granted"]
                  .as_object();
    g = mock_grant(voicechat());
    EXPECT_EQ(json::serialize(g.at("output_modalities")), R"(["audio"])");
    EXPECT_EQ(evaluate_trace(t, voicechat()).verdict, "pass")
        << all(evaluate_trace(t, voicechat()));
    g["output_modalities"] = json::array{"audio", "text"};
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_EQ(r.violations, std::vector<std::string>{"unsupported capability: output_modalities"})
        << all(r);
}

TEST(Oracle, AVoiceChatTraceJudgedAsMiniCpmFailsItsCapabilities) {
    // Judged by the wrong profile, a trace fails on the capabilities that differ: this is why
    // `pacer replay` takes the profile the run recorded.
    const auto r = evaluate_trace(conforming(), minicpmo());
    EXPECT_TRUE(has(r, "unsupported capability: native_unit_ms")) << all(r);
    EXPECT_TRUE(has(r, "unsupported capability: output_audio_format")) << all(r);
    EXPECT_TRUE(has(r, "unsupported capability: output_modalities")) << all(r);
    const auto m =
        evaluate_trace(silent_per_unit_session(minicpmo(), mock_grant(minicpmo())), voicechat());
    EXPECT_TRUE(has(m, "unsupported capability: output_modalities")) << all(m);
}

TEST(Oracle, UnreadableAudioIsReportedWithItsRecord) {
    auto t = conforming();
    const auto i = find(t, "send", "input_audio_buffer.append", 0);
    t[i].event["audio"] = "AAAA"; // 3 bytes: not whole samples
    const auto r = evaluate_trace(t, voicechat());
    EXPECT_TRUE(
        has(r, fmt::format("record {}: PCM16 payload must contain whole nonempty samples", i)))
        << all(r);
    EXPECT_EQ(r.verdict, "fail");
}

TEST(Oracle, EmptyTraceFailsEveryCount) {
    const auto r = evaluate_trace({}, voicechat());
    EXPECT_EQ(r.verdict, "fail");
    EXPECT_TRUE(has(r, "expected exactly one receive session.created"));
    EXPECT_TRUE(has(r, "missing audio input"));
}

} // namespace
} // namespace pacer::metrics

// What `pacer replay` and `pacer serve` read back from disk: a session's `trace.jsonl` and
// `input-send-receipts.json`. The input is the trace, a NUL byte, then the receipts (no NUL: a
// trace without receipts). For any bytes, and for both kinds of profile (continuous VoiceChat,
// per-unit MiniCPM-o):
// - `trace::parse_trace` returns (unreadable lines become errors), `trace::parse_receipts`
//   returns or throws std::runtime_error, nothing else, under both rules; what pacer's rules
//   read, any client's rules read the same; `trace::read_receipt_deviations` gives the
//   deviations of what pacer's rules read, or their error and no deviation;
// - the oracle, the 4.2 and 4.3 metrics and `evaluate_session` (the serving level's reader,
//   which never throws) return, and their JSON forms serialize;
// - the unit miss rate is missed / expected, finite, and at most 1 unless the trace has more
//   units than its input.

#include <pacer/metrics/level.hpp>
#include <pacer/metrics/oracle.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/trace/receipts.hpp>

#include <boost/json/serialize.hpp>

#include "fail.hpp"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace {

namespace metrics = pacer::metrics;
namespace trace = pacer::trace;

using pacer::fuzz::fail;

// missed / expected (docs/protocol.md §4.3). Missed = late units + units never completed, so it is
// at most the expected count unless the server reported more units than the input holds: then the
// reference's formula exceeds 1 (the session is an error, "completed X/Y units", anyway). The
// fuzzer found that case (fuzz/corpus/replay_session/more-units-than-expected); pacer keeps
// the reference's figure.
void check_miss_rate(const metrics::unit_metrics& u) {
    if (!u.unit_miss_rate)
        return;
    const double r = *u.unit_miss_rate;
    if (!(std::isfinite(r) && r >= 0))
        fail("unit miss rate not a finite non-negative number", std::to_string(r));
    if (u.completed_units <= u.expected_units && r > 1)
        fail("unit miss rate above 1 without extra units", std::to_string(r));
    if (u.expected_units > 0 &&
        r != static_cast<double>(u.missed_units) / static_cast<double>(u.expected_units))
        fail("unit miss rate is not missed / expected", std::to_string(r));
}

// Pacer's rules are the stricter: what they read, any client's rules read the same. And the
// deviations alone (samples.json's read-back) are those of what pacer's rules read, or an error
// and none when they refuse the text.
void check_pacer_rules(std::string_view text, const trace::send_receipts& lenient) {
    trace::send_receipts strict;
    std::vector<double> deviations{1.0};
    const auto deviations_error = trace::read_receipt_deviations(text, "r", deviations);
    try {
        strict = trace::parse_receipts(text, trace::receipt_rules::pacer);
    } catch (const std::runtime_error& e) {
        if (deviations_error != std::string("r: ") + e.what() || !deviations.empty())
            fail("the deviations alone were read where pacer's rules refuse", std::string(text));
        return;
    }
    if (!deviations_error.empty() || deviations.size() != strict.appends.size())
        fail("the deviations alone differ from pacer's rules", std::string(text));
    for (std::size_t i = 0; i < deviations.size(); ++i)
        if (deviations[i] != strict.appends[i].start_s - strict.appends[i].scheduled_s)
            fail("a deviation differs from its receipt", std::string(text));
    if (strict.session_start_s != lenient.session_start_s || strict.admitted != lenient.admitted ||
        strict.appends.size() != lenient.appends.size())
        fail("pacer's rules read what any client's rules do not", std::string(text));
    for (std::size_t i = 0; i < strict.appends.size(); ++i) {
        const auto& a = strict.appends[i];
        const auto& b = lenient.appends[i];
        if (a.id() != b.id() || a.id().size() != 32 || a.seq != b.seq ||
            a.scheduled_s != b.scheduled_s || !a.scheduled() || a.start_s != b.start_s ||
            a.completed_s != b.completed_s)
            fail("pacer's rules read an append differently", std::string(text));
    }
}

void replay(std::string_view trace_text, std::optional<std::string_view> receipts_text,
            const pacer::protocol::profile& profile) {
    const auto parsed = trace::parse_trace(trace_text);
    trace::send_receipts receipts;
    if (receipts_text) {
        try {
            receipts = trace::parse_receipts(*receipts_text, trace::receipt_rules::any_client);
        } catch (const std::runtime_error&) {
            // The documented failure; replay reports the file as unreadable.
        }
        check_pacer_rules(*receipts_text, receipts);
    }
    const auto oracle = metrics::evaluate_trace(parsed.lines, profile);
    if (oracle.verdict != "pass" && oracle.verdict != "fail" && oracle.verdict != "not_exercised")
        fail("unknown verdict", oracle.verdict);
    (void)boost::json::serialize(oracle.metrics_json());

    metrics::session_params context;
    const auto serving = metrics::compute_session_metrics(parsed.lines, receipts, profile, context);
    (void)boost::json::serialize(serving.to_json());
    const auto units = metrics::compute_unit_metrics(parsed.lines, receipts, profile, context);
    check_miss_rate(units);
    (void)boost::json::serialize(units.to_json());

    const auto session = metrics::evaluate_session(0, trace_text, receipts_text, profile, context);
    (void)boost::json::serialize(session.to_json());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto nul = input.find('\0');
    const std::string_view trace = input.substr(0, nul);
    const std::optional<std::string_view> receipts =
        nul == std::string_view::npos ? std::nullopt
                                      : std::optional<std::string_view>(input.substr(nul + 1));
    try {
        for (const char* name : {"nemotron", "minicpmo"}) {
            const auto* profile = pacer::protocol::find_profile(name);
            if (!profile)
                fail("profile missing", name);
            replay(trace, receipts, *profile);
        }
    } catch (const std::exception& e) {
        fail(typeid(e).name(), e.what());
    }
    return 0;
}

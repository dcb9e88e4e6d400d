// The wait for the server's recovery before a run of a sweep (sweep_run.hpp): the canaries and
// the server's stats, on the real clock.

#include <pacer/core/json_pointer.hpp>

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include "sweep_run.hpp"
#include <algorithm>
#include <chrono>

namespace pacer::sweep::detail {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// The first `bytes` of `in` (silence stays silence).
protocol::pcm_input head(const protocol::pcm_input& in, std::size_t bytes) {
    const auto n = std::min(bytes, in.size());
    if (in.is_silence() || !in.held())
        return protocol::pcm_input::silence(n);
    const auto& held = *in.held();
    return protocol::pcm_input(std::vector<std::uint8_t>(held.begin(), held.begin() + n));
}

// A canary's options: one session of the first input's start, nothing else the levels have.
sweep_options canary_options(const sweep_options& s) {
    sweep_options c = s;
    const auto seconds = [](std::size_t rate) {
        return static_cast<std::size_t>(canary_input_s * static_cast<double>(rate)) * 2;
    };
    c.inputs = {head(s.inputs.front(), seconds(protocol::input_sample_rate))};
    if (!s.wire_inputs.empty())
        c.wire_inputs = {head(s.wire_inputs.front(), seconds(wire_sample_rate(s.realtime)))};
    c.input_duration_s = {static_cast<double>(c.inputs.front().size()) /
                          static_cast<double>(protocol::input_bytes_per_second)};
    c.conversation = {};
    c.slos.clear();
    c.server_stats.reset();
    c.telemetry = nullptr;
    c.drop_traces = true;
    c.canary = true;
    return c;
}

} // namespace

recovery_watch::recovery_watch(const sweep_options& s, const fs::path& out,
                               sweep_observer& observer)
    : s_(s), canary_options_(canary_options(s)), dir_(out / "recovery"), observer_(observer) {}

// A canary's figure: its unit lag p50 (the realtime protocols: its TTFA p50); nullopt when it
// measured none (the session failed).
std::optional<double> recovery_watch::canary(const fs::path& dir) {
    const auto run = run_once(canary_options_, observer_, dir, 1, 0, true);
    const auto* v = find_pointer(run.summary, s_.realtime ? "/aggregate/ttfa_s/p50"
                                                          : "/aggregate/units/unit_lag_s/p50");
    if (run.interrupted || !v || !v->is_number())
        return std::nullopt;
    return v->to_number<double>();
}

std::optional<double> recovery_watch::measure_baseline() {
    if (s_.recovery.canary)
        baseline_ = canary(dir_ / "baseline");
    return baseline_;
}

recovery_look recovery_watch::look() {
    recovery_look l;
    if (s_.recovery.canary)
        l.canary_s = canary(dir_ / fmt::format("canary-{}", ++canaries_));
    if (s_.recovery.stats && s_.server_stats) {
        const auto got = transport::http_get(*s_.server_stats, s_.server_stats->target(),
                                             std::chrono::milliseconds(2000));
        boost::system::error_code ec;
        const auto doc = got.ok() ? json::parse(got.body, ec) : json::value();
        const auto* v = got.ok() && !ec ? doc.find_pointer(s_.stats_pointer, ec) : nullptr;
        if (v && v->is_number())
            l.pending = v->to_number<double>();
        else
            l.error = !got.ok()
                          ? (got.error.empty() ? fmt::format("HTTP {}", got.status) : got.error)
                      : ec || !v ? fmt::format("no number at {}", s_.stats_pointer)
                                 : fmt::format("{} is not a number", s_.stats_pointer);
    }
    return l;
}

recovery_record recovery_watch::wait() {
    return wait_for_recovery(s_.recovery, baseline_, [this] { return look(); },
                             {[] { return clock::now(); }, [](duration d) { return idle(d); }});
}

} // namespace pacer::sweep::detail

#include <pacer/sweep/validity.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

namespace pacer::sweep {

namespace json = boost::json;

// Client timing validity (S-W, docs/protocol.md §5).
std::vector<std::string> validity_problems(const timing_limits& limits,
                                           std::optional<double> loop_lag_p99,
                                           std::span<const metrics::level_session> sessions) {
    std::vector<std::string> problems;
    const double lag_limit = limits.loop_lag_ms / 1e3, late_limit = limits.send_lateness_ms / 1e3;
    if (!loop_lag_p99)
        problems.emplace_back("the loop-lag ticker has no samples");
    else if (*loop_lag_p99 > lag_limit)
        problems.push_back(fmt::format("loop lag p99 {:.1f} ms > {:.0f} ms", *loop_lag_p99 * 1e3,
                                       limits.loop_lag_ms));
    std::size_t admitted = 0, over = 0;
    for (const auto& x : sessions) {
        if (!x.admitted.admitted)
            continue;
        ++admitted;
        over += !x.send_lateness_p99_s || *x.send_lateness_p99_s > late_limit;
    }
    if (over)
        problems.push_back(fmt::format("{} admitted session(s) with send-lateness p99 > {:.0f} ms "
                                       "or no sends",
                                       over, limits.send_lateness_ms));
    if (admitted == 0)
        problems.emplace_back("no session was admitted");
    return problems;
}

// Which checks decide a level's validity and its sessions' status: the client's timing
// always; the native protocol's session checks (docs/protocol.md §4.2), or the realtime
// protocol's own (the native replay oracle does not apply to those).
json::object validity_checks_json(const timing_limits& limits, std::string_view protocol,
                                  const std::optional<metrics::realtime_context>& realtime) {
    json::array client{
        fmt::format("loop-lag p99 of the session contexts <= {:g} ms", limits.loop_lag_ms),
        fmt::format("every admitted session's send-lateness p99 <= {:g} ms",
                    limits.send_lateness_ms),
        "at least one session admitted"};
    json::array session;
    if (realtime) {
        for (auto& c : metrics::realtime_protocol_checks(*realtime))
            session.emplace_back(std::move(c));
    } else {
        session = {"admitted and the session's files readable", "every append sent",
                   "sglang.input_audio.drained and session.closed received",
                   "no server error event, no client error line",
                   "output audio (continuous profiles) and response.done completed"};
    }
    return {{"protocol", protocol},
            {"client", std::move(client)},
            {"session", std::move(session)},
            {"oracle", realtime ? "not applicable: the replay oracle judges the native "
                                  "protocol only"
                                : "not run by serve: `pacer replay` of a level runs it"}};
}

} // namespace pacer::sweep

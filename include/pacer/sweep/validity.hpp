#pragma once
// Whether a level of `pacer serve` measured the server: the client-timing rules (docs/protocol.md
// §5) and the record of every check that decides a level's validity and its sessions' status.
// Pure functions, unit-tested in tests/unit/sweep/test_capacity.cpp.

#include <pacer/metrics/level.hpp>
#include <pacer/metrics/realtime_level.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::sweep {

/// The client-timing limits of a level (`--loop-lag-limit-ms`, `--send-lateness-limit-ms`).
struct timing_limits {
    double loop_lag_ms = 20;
    double send_lateness_ms = 20;
};

/// Client timing validity: the loop-lag ticker has samples (`loop_lag_p99_s`) and its p99 is
/// within the limit, every admitted session's send-lateness p99 is known and within the limit,
/// and at least one session was admitted. Returns the reasons it does not hold, in that order
/// (empty: valid).
std::vector<std::string> validity_problems(const timing_limits& limits,
                                           std::optional<double> loop_lag_p99_s,
                                           std::span<const metrics::level_session> sessions);

/// `validity_checks` of a level's and the sweep's summary: the client's checks (with the
/// limits), the session checks of the native protocol (`protocol` "native", `realtime`
/// nullopt) or of the realtime protocol `realtime` describes, and whether the replay oracle
/// applies.
boost::json::object validity_checks_json(const timing_limits& limits, std::string_view protocol,
                                         const std::optional<metrics::realtime_context>& realtime);

} // namespace pacer::sweep

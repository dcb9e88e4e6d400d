#pragma once
// Service-level objectives of a capacity search (`pacer serve --find-capacity --slo ...`):
// each names one figure of a level's aggregate and its bound. Pure functions.

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::metrics {

struct slo_check {
    std::string name;      ///< e.g. `ttfa-p95`
    double bound = 0;      ///< seconds for times, a fraction for rates and ratios
    bool at_least = false; ///< the figure must be >= bound (success-rate); else <= bound
};

/// What the sessions judged will have (docs/scenarios.md): per-turn figures (a multi-turn
/// `--scenario`) and interruptions (one with a barge-in, `interrupt_after`).
struct slo_scope {
    bool turns = false;
    bool interruptions = false;
};

/// Parses `name=value,...` such as `unit-miss-rate=0.01,underrun-ratio=0.02,ttfa-p95=1.5s`.
/// Times take a unit (`1.5s`, `200ms`; a bare number is seconds). Empty text: no SLO. Throws
/// bad_input with one line naming the bad item and the known names, or an SLO on
/// turns (`turn-ttfa-p95`) or interruptions (`interrupt-latency-p95`) that `scope` lacks.
std::vector<slo_check> parse_slos(std::string_view text, slo_scope scope = {});

/// `success-rate=1`: every attempted session succeeded (rejections count as failures).
slo_check default_success_slo();

/// The figure an SLO bounds in a level aggregate (see level.hpp), or nullopt when the level
/// has none (e.g. no audio at all for a TTFA percentile): an SLO without its figure is missed.
std::optional<double> slo_figure(const slo_check& slo, const boost::json::object& aggregate);

/// `{"met": bool, "checks": [{"name", "bound", "value", "met"}...]}`.
boost::json::object evaluate_slos(const std::vector<slo_check>& slos,
                                  const boost::json::object& aggregate);

/// The `--slo` help text: syntax and every known name.
std::string slo_help();

} // namespace pacer::metrics

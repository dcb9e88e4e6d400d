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

/// Parses `name=value,...` such as `unit-miss-rate=0.01,underrun-ratio=0.02,ttfa-p95=1.5s`.
/// Times take a unit (`1.5s`, `200ms`; a bare number is seconds). Empty text: no SLO. Throws
/// std::invalid_argument with one line naming the bad item and the known names.
std::vector<slo_check> parse_slos(std::string_view text);

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

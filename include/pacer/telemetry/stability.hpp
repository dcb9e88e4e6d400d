#pragma once
// `pacer serve --warm-until-stable` (docs/telemetry.md): the GPU has reached thermal
// equilibrium under load when, over the last `window` of samples, every GPU's power stayed
// within `power_fraction` of its mean and its temperature within `temperature_c`. Sans-io:
// judged from samples and a time the caller gives (pacer's clock), so tests need no clock.

#include <pacer/telemetry/sample.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pacer::telemetry {

/// The equilibrium rule. The defaults: power within 3 % and temperature within 1 °C over
/// 30 s, waiting at most 10 minutes.
struct stability_rule {
    double power_fraction = 0.03; ///< (max − min) / mean power over the window
    double temperature_c = 1.0;   ///< max − min temperature over the window
    std::chrono::nanoseconds window = std::chrono::seconds(30);
    std::chrono::nanoseconds max_wait = std::chrono::minutes(10);
};

/// One source over the rule's window.
struct source_stability {
    std::string source;
    std::size_t samples = 0;
    std::optional<double> power_spread_fraction; ///< (max − min) / mean; nullopt: no power
    std::optional<double> temperature_spread_c;  ///< max − min; nullopt: no temperature
    bool stable = false;
};

struct stability_verdict {
    bool stable = false;  ///< every source is steady over a whole window
    bool gave_up = false; ///< not stable, and `max_wait` has passed since the start
    double waited_s = 0;  ///< now − start
    std::string why;      ///< what is not steady yet (or why none can be judged), for people
    std::vector<source_stability> sources;
};

/// Judges the samples (any order, any sources; failed reads ignored) at `now_s`, waiting since
/// `start_s`. A source is steady when its samples span the whole window [now − window, now]
/// (one at or before its start) and both its power and its temperature, where it has them,
/// stay within the rule; a source with neither is not judged. With no judged source the
/// verdict is never stable (the wait ends at `max_wait`).
stability_verdict judge_stability(std::span<const sample> samples, double start_s, double now_s,
                                  const stability_rule& rule);

/// summary.json's `warm_until_stable`: the rule, the verdict and how long it took.
boost::json::object stability_json(const stability_rule& rule, const stability_verdict& v,
                                   std::size_t runs);

} // namespace pacer::telemetry

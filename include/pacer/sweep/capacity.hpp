#pragma once
// The capacity search of `pacer serve --find-capacity`: which level to probe next given what
// the levels probed so far showed, as a pure function of their outcomes (the probing itself is
// a callback), unit-tested in tests/unit/test_sweep_rules.cpp without a network.

#include <boost/json/object.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::sweep {

/// `--start-level`, `--max-level`, `--resolution`.
struct capacity_settings {
    std::size_t start_level = 1;
    std::size_t max_level = 1024;
    double resolution = 0.05;
};

/// What one probed level showed the search.
struct level_outcome {
    bool interrupted = false; ///< a signal ended it
    bool unreachable = false; ///< no session reached the server
    bool valid = true;        ///< the client kept its schedule
    bool slo_met = true;      ///< its pooled aggregate met every SLO
};

/// The search's answer: `summary.json`'s `capacity` (see capacity_json).
struct capacity_result {
    std::size_t sessions = 0;                       ///< the highest good level (0: none)
    std::optional<std::size_t> first_failing_level; ///< the lowest level that missed the SLOs
    std::string limited_by = "max-level";   ///< slo, client, max-level, unreachable, interrupted
    std::vector<std::size_t> probed_levels; ///< in the order probed, second tries too
};

/// Probes one level: `second_try` is true when the level is run once more because its client
/// timing was not valid the first time.
using level_probe = std::function<level_outcome(std::size_t level, bool second_try)>;

/// Doubling from the start level (capped at the maximum) until a level misses its SLOs, then
/// bisection between the last good level and the first bad one, until first-bad - last-good <=
/// max(1, resolution x last-good). A level whose client timing is not valid is probed once
/// more; not valid twice in a row ends the search (`client`: beyond it the figures would
/// measure the client). An unreachable server or an interruption ends it at once.
capacity_result search_capacity(const capacity_settings& settings, const level_probe& probe);

/// `{sessions, first_failing_level, limited_by, probed_levels, slo}` (`slo`: the text given).
boost::json::object capacity_json(const capacity_result& result, std::string_view slo);

} // namespace pacer::sweep

#pragma once
// Recovery before every run of a capacity search (docs/serving.md, "Overload and recovery"): a
// server overloaded by a level above its capacity stays degraded for a while, and a level run
// on it then fails below its fresh capacity. Before each run the search waits until the server
// is back: a canary (one session of a few seconds) whose unit lag (TTFA for the realtime
// protocols) is within a margin of the baseline measured at the start, and/or the server's own
// stats (a number at a JSON pointer) at 0, up to a maximum wait. The wait is a pure loop over
// callbacks (the look, the clock, the idle pause), unit-tested with a manual clock in
// tests/unit/sweep/test_recovery.cpp; run_sweep supplies the real canary and stats.

#include <pacer/capacity_search/capacity.hpp>
#include <pacer/core/clock.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pacer::sweep {

/// Seconds of input a canary streams (one session, the first input's start).
inline constexpr double canary_input_s = 2.0;
/// The pause between two looks that found the server not recovered.
inline constexpr auto recovery_pause = std::chrono::seconds(1);

/// `--recovery` and `--recovery-max`.
struct recovery_settings {
    bool canary = false; ///< a canary within the margin of the baseline
    bool stats = false;  ///< the server's stats: the number at the pointer is 0
    duration max = std::chrono::seconds(120);

    bool on() const { return canary || stats; }
};

/// The canary's margin: a canary is back to the baseline b when its figure is at most
/// b + max(20 ms, b / 2).
double canary_limit_s(double baseline_s);

/// What one look at the server found.
struct recovery_look {
    std::optional<double> canary_s{}; ///< the canary's figure (nullopt: none run, or no figure)
    std::optional<double> pending{};  ///< the stats' number (nullopt: none read)
    std::string error{};              ///< why the stats gave no number ("": none)
};

/// What the wait before one run found.
struct recovery_record {
    bool recovered = false;
    bool interrupted = false;
    double waited_s = 0;   ///< from the start of the wait to the verdict
    std::size_t looks = 0; ///< canaries run (or stats read)
    recovery_look last;    ///< the last look's figures
};

/// The clock the wait runs on: now, and an idle pause that returns true when a signal ended it.
struct recovery_clock {
    std::function<time_point()> now;
    std::function<bool(duration)> idle;
};

/// Looks at the server until it is recovered (every check asked for passes; a canary needs a
/// baseline), or until one more pause and look would end past `settings.max` (a look takes as
/// long as the last one did), or a signal.
recovery_record wait_for_recovery(const recovery_settings& settings,
                                  std::optional<double> baseline_s,
                                  const std::function<recovery_look()>& look,
                                  const recovery_clock& clock);

/// A run's `recovery` in its summary.json.
boost::json::object recovery_json(const recovery_record& r, std::optional<double> baseline_s);

/// How the server held up: each overload (a run of the search that missed its SLOs) and the
/// recovery that followed it (the wait before the next run, or the closing wait).
struct overload_record {
    std::size_t level = 0;
    std::string folder;
    std::optional<recovery_record> after; ///< nullopt: nothing waited (recovery off)
};

/// "the server recovered within N s after every overload", "the server stayed degraded after
/// level L (canary lag X ms vs baseline Y ms)", or "no level overloaded the server".
std::string recovery_verdict(const std::vector<overload_record>& overloads,
                             std::optional<double> baseline_s);

/// summary.json's `capacity.recovery`: the settings, the baseline, every overload with its
/// recovery, and the verdict.
boost::json::object overloads_json(const recovery_settings& settings,
                                   std::optional<double> baseline_s, const std::string& pointer,
                                   const std::vector<overload_record>& overloads);

} // namespace pacer::sweep

#pragma once
// The capacity search of `pacer serve --find-capacity`: which level to probe next given what
// the levels probed so far showed, as a pure function of their outcomes (the probing itself is
// a callback), unit-tested in tests/unit/sweep/test_capacity.cpp without a network.
//
// A capacity claim rests on more than one run (docs/serving.md, "How pacer finds a capacity you
// can publish"): a level that misses is tried again before the search acts on it (a GPU server's
// first batch of a new size, or the backlog of the level before, fails a level once), and the
// answer is re-run at the end to show that the boundary holds.

#include <boost/json/object.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::sweep {

/// `--start-level`, `--max-level`, `--resolution`, `--confirm`, `--verify-repeats`.
struct capacity_settings {
    std::size_t start_level = 1;
    std::size_t max_level = 1024;
    double resolution = 0.05;
    /// Extra tries of a level that missed its SLOs or whose client timing was not valid; the
    /// level fails only if every try fails. A level whose client was not valid on every try so
    /// far gets at least one more, whatever this is.
    std::size_t confirm = 1;
    /// Closing re-runs of the capacity level and of the first failing level (0: none).
    std::size_t verify_repeats = 2;
};

/// Why a level is run: the search's first look, a confirmation of a miss, or the verification
/// of the answer.
enum class try_kind { search, confirm, verify };

/// "search", "confirm", "verify".
std::string_view to_string(try_kind kind) noexcept;

/// One run the search asks for: `attempt` counts from 1 within the level and the kind.
struct level_try {
    std::size_t level = 0;
    try_kind kind = try_kind::search;
    std::size_t attempt = 1;
};

/// What one run of a level showed the search.
struct level_outcome {
    bool interrupted = false; ///< a signal ended it
    bool unreachable = false; ///< no session reached the server
    bool valid = true;        ///< the client kept its schedule
    bool slo_met = true;      ///< its pooled aggregate met every SLO

    bool met() const { return valid && slo_met; }
};

/// One run and what it showed, in the order run.
struct probe_record {
    level_try run;
    level_outcome outcome;
};

/// How the closing re-runs of one level went.
struct verification {
    std::size_t level = 0;
    std::size_t runs = 0;    ///< runs with valid client timing (the evidence)
    std::size_t met = 0;     ///< of which met every SLO
    std::size_t invalid = 0; ///< runs whose client timing was not valid (run again, not counted)
    /// The capacity level holds when every run met; the first failing level when none did.
    bool held = false;
};

/// The search's answer: `summary.json`'s `capacity` (see capacity_json).
struct capacity_result {
    std::size_t sessions = 0;                       ///< the highest good level (0: none)
    std::optional<std::size_t> first_failing_level; ///< the lowest level that missed the SLOs
    std::string limited_by = "max-level";   ///< slo, client, max-level, unreachable, interrupted
    std::vector<std::size_t> probed_levels; ///< every run's level, in order (all tries)
    std::vector<probe_record> probes;       ///< every run with its kind and outcome
    /// The closing verification of the answer, of its last round (nullopt: not run).
    std::optional<verification> capacity_check, failing_check;
    /// Whether the boundary held: the capacity level met in every verification run and the
    /// first failing level missed in every one (nullopt: no verification was run).
    std::optional<bool> boundary_held;
    /// What the search did beyond doubling and bisection, in plain words, in order: levels
    /// that met on a confirmation try, verification runs that moved the answer.
    std::vector<std::string> notes;
};

/// Runs one level once.
using level_probe = std::function<level_outcome(const level_try&)>;

/// Doubling from the start level (capped at the maximum) until a level misses its SLOs, then
/// bisection between the last good level and the first bad one, until first-bad - last-good <=
/// max(1, resolution x last-good). A level is judged by up to 1 + confirm runs: it is good as
/// soon as one run meets its SLOs with valid client timing, and bad only if every run fails;
/// a level whose every run had invalid client timing ends the search (`client`: beyond it the
/// figures would measure the client). Then the verification: the capacity level and the first
/// failing level are each run until verify_repeats runs had valid client timing (at most
/// 2 x verify_repeats runs: a run whose client fell behind says nothing about the server). A
/// capacity level that misses in any of them
/// becomes the first failing level and the search goes on below it; a first failing level that
/// meets in all of them becomes good and the search goes on above it (each said in `notes`;
/// at most four rounds). An unreachable server or an interruption ends it at once.
capacity_result search_capacity(const capacity_settings& settings, const level_probe& probe);

/// `{sessions, first_failing_level, limited_by, probed_levels, probes, verification,
/// boundary_held, notes, slo}` (`slo`: the text given).
boost::json::object capacity_json(const capacity_result& result, std::string_view slo);

} // namespace pacer::sweep

#pragma once
// Module `capacity_search` (the module table: cmake/PacerModules.cmake, docs/architecture.md)
// owns the capacity search of `pacer serve` and `pacer http`. It may include core; it may not
// include schedule, trace, runtime, protocol, transport, session, console, metrics, server,
// telemetry, report, record, sweep, run, http, cli (the build fails if it does).
//
// The capacity search, one for every command that searches: which value to probe next given
// what the values probed so far showed, as a pure function of their outcomes (the probing itself
// is a callback), unit-tested without a network in tests/unit/sweep/test_capacity*.cpp. The
// search walks a capacity_space: the integer session levels of `pacer serve --find-capacity`
// (level_space, search_capacity(capacity_settings, level_probe)) or the request rates of `pacer
// http --find-capacity` (rate_space); the space says how to go up, down and between, and when
// an interval is narrow enough, the search does the rest.
//
// A capacity claim rests on more than one run (docs/serving.md, "How pacer finds a capacity you
// can publish"): a value that misses is tried again before the search acts on it (a GPU server's
// first batch of a new size, or the backlog of the level before, fails a level once), and the
// answer is re-run at the end to show that the boundary holds.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::capacity_search {

/// `--start-level`, `--max-level`, `--resolution`, `--confirm`, `--verify-repeats`, `--growth`.
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
    /// After the first miss, no level above the last good one by more than this factor (at
    /// least one more session): the search overloads the server it measures as little as it
    /// can (> 1; 2 is the classic doubling and bisection).
    double growth = 1.25;
};

/// Why a search ended where it did, as the result files say it (`limited_by`, to_string):
/// "slo" (a value missed), "client" (the client could not keep its schedule), "max-level" /
/// "max-rate" (the top of the space met), "unreachable", "interrupted", "nothing-to-run" (a rate
/// with no arrival), "not-recovered" (a value missed only on a server that had not recovered).
enum class limit {
    slo,
    client,
    max_level,
    max_rate,
    unreachable,
    interrupted,
    nothing_to_run,
    not_recovered
};

/// "slo", "client", "max-level", "max-rate", "unreachable", "interrupted", "nothing-to-run",
/// "not-recovered".
std::string_view to_string(limit l) noexcept;

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
    /// The value gives nothing to run (a rate with no arrival within --duration): the search
    /// stops there, the value unjudged.
    bool nothing_to_run = false;
    /// The server had recovered when the run started (docs/serving.md, "Overload and
    /// recovery"): a miss on a server that had not never decides the search alone.
    bool recovered = true;

    bool met() const { return valid && slo_met; }
};

/// One run and what it showed, in the order run.
struct probe_record {
    level_try run;
    level_outcome outcome;
};

/// How the closing re-runs of one value went (a level, or a rate).
struct value_verification {
    double value = 0;
    std::size_t runs = 0;    ///< runs with valid client timing (the evidence)
    std::size_t met = 0;     ///< of which met every SLO
    std::size_t invalid = 0; ///< runs whose client timing was not valid (run again, not counted)
    std::size_t unrecovered = 0; ///< runs started on a server not recovered (again, not counted)
    /// The capacity value holds when every run met; the first failing value when none did.
    bool held = false;
};

/// The search's answer: `summary.json`'s `capacity` (see capacity_json).
struct capacity_result {
    std::size_t sessions = 0;                       ///< the highest good level (0: none)
    std::optional<std::size_t> first_failing_level; ///< the lowest level that missed the SLOs
    /// slo, client, max-level, unreachable, interrupted, not-recovered (a level missed only on
    /// a server that had not recovered, twice: the search cannot go on)
    limit limited_by = limit::max_level;
    std::vector<std::size_t> probed_levels; ///< every run's level, in order (all tries)
    std::vector<probe_record> probes;       ///< every run with its kind and outcome
    /// The closing verification of the answer, of its last round (nullopt: not run); its value
    /// is a level.
    std::optional<value_verification> capacity_check, failing_check;
    /// Whether the boundary held: the capacity level met in every verification run and the
    /// first failing level missed in every one (nullopt: no verification was run).
    std::optional<bool> boundary_held;
    /// What the search did beyond doubling and bisection, in plain words, in order: levels
    /// that met on a confirmation try, verification runs that moved the answer.
    std::vector<std::string> notes;
};

// ------------------------------------------------------------------------- the generic search

/// The values a capacity search walks, and how: levels (level_space) or rates (rate_space).
/// Every value is a double (a level is a whole number of them). Each function is given how many
/// values the search chose that way so far, counted again from 0 when a verification moves the
/// answer (see search_capacity below), so that a space can bound its steps by a count.
class capacity_space {
public:
    virtual ~capacity_space() = default;
    /// The value to try after `good` met and no value above it failed (`ups`: values so chosen
    /// before); nullopt when there is none (the top of the space, or the steps are spent).
    virtual std::optional<double> above(double good, std::size_t ups) const = 0;
    /// The value to try after `bad` missed and no value below it met (`downs` as above);
    /// nullopt when there is none.
    virtual std::optional<double> below(double bad, std::size_t downs) const = 0;
    /// The value to try between a good and a failing value (`splits`: values chosen between
    /// since both were known); nullopt when the interval is narrow enough.
    virtual std::optional<double> between(double good, double bad, std::size_t splits) const = 0;
    /// How the notes name a value: "level 12", "rate 2.5 requests/s".
    virtual std::string name(double value) const = 0;
    /// `limited_by` when the search ends because above() has no value: max_level, max_rate.
    virtual limit top() const = 0;
    /// Once some value missed: the value to try instead of `next` (above `good`, the last good
    /// value), so as not to overload the server far beyond what it was seen to keep. The
    /// default tries `next` as it is.
    virtual double gently(double good, double next) const;
};

/// Session levels 1 to max_level: doubling from the start (capped at max_level), bisection to
/// first-bad - last-good <= max(1, resolution x last-good); below a failing level no good level
/// is known, so the search bisects between 0 and it (halving). Once a level missed, no level
/// above the last good one by more than `growth` (gently).
class level_space final : public capacity_space {
public:
    explicit level_space(const capacity_settings& settings) : s_(settings) {}
    std::optional<double> above(double good, std::size_t ups) const override;
    std::optional<double> below(double bad, std::size_t downs) const override;
    std::optional<double> between(double good, double bad, std::size_t splits) const override;
    std::string name(double value) const override;
    limit top() const override { return limit::max_level; }
    /// At most max(good + 1, floor(good x growth)).
    double gently(double good, double next) const override;

private:
    capacity_settings s_;
};

/// Request rates (per second): double while probes pass, halve while they fail, at most
/// `max_moves` times either way and never above `max_rate`; then `steps` bisections of the
/// interval between the highest passing rate and the lowest failing one.
class rate_space final : public capacity_space {
public:
    rate_space(double max_rate, std::size_t max_moves, std::size_t steps)
        : max_rate_(max_rate), max_moves_(max_moves), steps_(steps) {}
    std::optional<double> above(double good, std::size_t ups) const override;
    std::optional<double> below(double bad, std::size_t downs) const override;
    std::optional<double> between(double good, double bad, std::size_t splits) const override;
    std::string name(double value) const override;
    limit top() const override { return limit::max_rate; }

private:
    double max_rate_;
    std::size_t max_moves_, steps_;
};

/// What a run whose client did not keep its timing does to the search.
enum class client_policy {
    /// The value is tried at least twice; if no try was valid the search ends (`client`): beyond
    /// it the figures would measure the client (levels: more sessions only load the client more).
    ends_search,
    /// The run is a miss like any other and the search goes on below it (rates: a lower rate
    /// may be one the client keeps).
    counts_as_miss,
};

/// How much evidence a value needs: `--confirm`, `--verify-repeats` and the client's policy.
struct search_policy {
    std::size_t confirm = 1;
    std::size_t verify_repeats = 2;
    client_policy client = client_policy::ends_search;
};

/// One run the search asks for, of a value of its space.
struct capacity_try {
    double value = 0;
    try_kind kind = try_kind::search;
    std::size_t attempt = 1;
};

/// One run and what it showed, in the order run.
struct capacity_probe {
    capacity_try run;
    level_outcome outcome;
};

/// The search's answer, in the space's values.
struct capacity_search_result {
    std::optional<double> good; ///< the highest good value (nullopt: none met)
    std::optional<double> bad;  ///< the lowest value that missed
    /// slo, client, unreachable, interrupted, nothing_to_run, not_recovered, or the space's top().
    limit limited_by = limit::slo;
    std::vector<capacity_probe> probes;
    std::optional<value_verification> capacity_check, failing_check;
    std::optional<bool> boundary_held;
    std::vector<std::string> notes;
};

/// Runs one value once.
using capacity_probe_fn = std::function<level_outcome(const capacity_try&)>;

/// The search over `space` from `start`: up while values meet, down while they miss, between
/// the last good value and the first bad one until the space says the interval is narrow; each
/// value judged by up to 1 + confirm runs, then the closing verification, as the level search
/// below describes (it is this search over level_space). An unreachable server, an
/// interruption or a value with nothing to run ends it at once, that run unjudged.
capacity_search_result search_capacity(const capacity_space& space, double start,
                                       const search_policy& policy, const capacity_probe_fn& probe);

// ------------------------------------------------------------------ the search over levels

/// Runs one level once.
using level_probe = std::function<level_outcome(const level_try&)>;

/// Doubling from the start level (capped at the maximum) until a level misses its SLOs, then
/// bisection between the last good level and the first bad one, until first-bad - last-good <=
/// max(1, resolution x last-good). A level is judged by up to 1 + confirm runs: it is good as
/// soon as one run meets its SLOs with valid client timing, and bad only if every run fails;
/// a level whose every run had invalid client timing ends the search (`client`: beyond it the
/// figures would measure the client); a level whose every miss came on a server that had not
/// recovered is tried once more than `confirm` asks, and if it still has no miss on a recovered
/// server the search ends (`not-recovered`). Verification runs on an unrecovered server are
/// run again and not counted, as those with invalid client timing. Then the verification: the
/// capacity level and the first failing level are each run until verify_repeats runs had valid
/// client timing (at most 2 x verify_repeats runs: a run whose client fell behind says nothing
/// about the server). A capacity level that misses in any of them becomes the first failing level
/// and the search goes on below it; a first failing level that meets in all of them becomes good
/// and the search goes on above it (each said in `notes`; at most four rounds). An unreachable
/// server or an interruption ends it at once.
capacity_result search_capacity(const capacity_settings& settings, const level_probe& probe);

/// What the search costs a server that meets its SLOs up to `capacity` sessions and misses
/// above, every run alike: its runs, and how many of them are above the capacity (each an
/// overload the server has to recover from).
struct search_cost {
    std::size_t runs = 0;
    std::size_t above = 0;
};
search_cost search_cost_at(const capacity_settings& settings, std::size_t capacity);

/// `{sessions, first_failing_level, limited_by, probed_levels, probes, verification,
/// boundary_held, notes, slo}` (`slo`: the text given).
boost::json::object capacity_json(const capacity_result& result, std::string_view slo);

/// The one writer of a closing verification in the result files (null when not run):
/// `{level, runs, met, client_not_valid, not_recovered, held}` for a level (serve's
/// summary.json), `{rate, runs, met, client_not_valid, held}` for a rate (http's capacity.json).
enum class value_kind { level, rate };
boost::json::value verification_json(const std::optional<value_verification>& v, value_kind kind);

} // namespace pacer::capacity_search

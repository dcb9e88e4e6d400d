#pragma once
// The open-loop arrival options of a command line, read once for every command that takes them.
//
// `pacer run`, `pacer http` and `pacer schedule` declare --arrival, --rate, --burstiness,
// --stages and --seed with one helper (cli::add_arrival_options, src/cli/checks.cpp) into an
// `arrival_options`, and their own count (--sessions, --requests, --count) and, where they have
// one, the schedule's --duration into the same struct. `spec_from` turns it into a
// schedule_spec with one set of rules and one wording (docs/schedule.md), and `open_loop_of`
// adds a saved --schedule FILE as the alternative. Bad input throws bad_input: one
// line naming the flag.

#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pacer::schedule {

/// The options as given; an option not given is empty.
struct arrival_options {
    std::optional<std::string> arrival;  ///< --arrival: poisson (default), gamma or constant
    std::optional<double> rate;          ///< --rate, arrivals per second
    std::optional<double> burstiness;    ///< --burstiness, gamma only (default 1)
    std::optional<std::string> stages;   ///< --stages, as `parse_stages` reads it
    std::uint64_t seed = 0;              ///< --seed
    std::optional<std::int64_t> count;   ///< the command's count (signed: "-3" is named)
    std::optional<std::string> duration; ///< the schedule's --duration (http, schedule)

    /// Whether any option that defines a schedule was given (--seed alone is not).
    bool asked() const noexcept {
        return arrival || rate || burstiness || stages || count || duration;
    }
};

/// How a command names what it takes, for the messages.
struct arrival_command {
    std::string_view name;       ///< who needs what: "pacer schedule", "an open-loop run"
    std::string_view count_flag; ///< "--count", "--sessions", "--requests"
    bool has_duration = false;   ///< --duration limits the schedule (http, schedule)
    bool replays = false;        ///< --schedule FILE is an alternative (run, http)
    bool may_be_closed = false;  ///< no arrival option at all is a closed batch (run)
};

/// The spec of `o`: --arrival a process; --burstiness only with gamma; --stages instead of
/// --rate and --duration; --rate or --stages given; without --stages, the count or (where the
/// command has one) --duration given; the count > 0; --duration readable. The values
/// themselves are `validate`'s to check (called last, so a spec returned is valid). Throws
/// bad_input, one line naming the flag.
schedule_spec spec_from(const arrival_options& o, const arrival_command& command);

/// The open loop's schedule: the saved `schedule_file` (when not empty; no other arrival
/// option may be given then), or the one made from `spec_from(o, command)`, with its sha256;
/// nullopt when neither was asked and the command `may_be_closed` (a closed batch in `run`).
/// Throws bad_input.
std::optional<schedule_document> open_loop_of(const arrival_options& o,
                                              const arrival_command& command,
                                              const std::string& schedule_file);

/// `pacer schedule` as given on the command line, not yet checked.
struct schedule_request {
    arrival_options arrivals;   ///< --arrival, --rate, --burstiness, --stages, --seed, --count...
    std::string format = "csv"; ///< "json", or else csv
    bool dry_run = false;
};

/// `pacer schedule`: the schedule of `spec_from(request.arrivals)` printed on stdout in `format`
/// (`to_csv` or `to_json`), or with `dry_run` its plan (how many arrivals, the last one, the
/// sha256). Returns 0. Bad input throws bad_input (nothing printed); stdout that
/// cannot be written, std::runtime_error.
int print_schedule(const schedule_request& request);

} // namespace pacer::schedule

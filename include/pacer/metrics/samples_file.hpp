#pragma once
// `samples.json` read back: the one reader of what `write_samples` (metrics/pacing.hpp) writes,
// used by `pacer merge` and `pacer run --processes` (read_run_part, strict) and by
// `pacer report`/`export` (lenient). Like the rest of metrics it may include core, schedule,
// trace, runtime and protocol only.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace pacer::metrics {

/// One session's pacing deviations, seconds from its deadlines (the grid's origin
/// `session_start_s` + seq x 80 ms).
struct session_samples {
    std::optional<double> session_start_s;
    std::vector<double> deviation_s;
};

/// One session's handshake phases in seconds, as its part's `samples.json` records them
/// (`update_ack_s` absent when no session.updated came).
struct handshake_sample {
    double connect_s = 0, tls_s = 0, upgrade_s = 0;
    std::optional<double> update_ack_s;
};

/// One arrival of an open-loop part, as its `samples.json` records it. Times are seconds
/// since the part's schedule origin, so a part's lags and latencies never depend on another
/// host's clock.
struct arrival_sample {
    std::size_t index = 0;      ///< in the whole schedule
    std::int64_t offset_ns = 0; ///< scheduled time since the origin
    std::optional<double> dispatched_s;
    std::optional<double> completed_s;
    double cap_delay_s = 0;
    bool dropped = false;
    bool failed = false;
};

/// One entry of `samples.json`'s `sessions`.
struct samples_session {
    /// As recorded; when it records none, the previous entry's index + 1 (the first: 0).
    std::uint32_t index = 0;
    session_samples samples;
    /// Null for a session never admitted (and in files written before pacer recorded it).
    std::optional<handshake_sample> handshake;
};

/// What `samples.json` holds.
struct run_samples {
    std::vector<samples_session> sessions;
    /// Open-loop runs: every arrival. Nullopt when the file has no `open_loop` object (a
    /// closed-loop run, or one written before pacer recorded it).
    std::optional<std::vector<arrival_sample>> arrivals;
};

/// How strictly `samples.json` is read.
enum class samples_rules {
    /// Pooling parts (`pacer merge`, `pacer run --processes`): the file must be a JSON object
    /// with a `sessions` array, every session an object with a `deviation_s` array of numbers,
    /// every handshake and arrival complete; anything else refuses the whole file.
    strict,
    /// Drawing a report: what can be read is read. A file that is not an object or has no
    /// `sessions` array has no sessions; a session that is not an object is skipped; a deviation
    /// that is not a number is 0; a `deviation_s` that is not an array is empty; a malformed
    /// handshake or `open_loop` section is absent. Only text that is not JSON is refused.
    lenient,
};

/// Parses the text of `samples.json`. Throws std::runtime_error whose message follows the
/// file's name: "is not valid JSON: <reason>" (both rules), "has no sessions array" or
/// "is malformed: <reason>" (strict).
run_samples parse_samples(std::string_view text, samples_rules rules);

/// Reads `file` (a folder's `samples.json`). Throws std::runtime_error naming it: strict,
/// "cannot read <file>" when it is missing (or "cannot read <file>: <reason>"); lenient,
/// "<file> cannot be read" when it is missing or unreadable; then "<file> " + parse_samples'
/// message.
run_samples read_samples(const std::filesystem::path& file, samples_rules rules);

} // namespace pacer::metrics

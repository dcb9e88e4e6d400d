#pragma once
// Pooling the results of runs that streamed at the same time (worker processes of one host,
// or shards on several hosts) as if one client had run them: percentiles are computed over
// every packet of every part, never averaged. `pacer merge` executed (execute_merge,
// src/metrics/merge_job.cpp): the parts read and checked, the `--dry-run` plan, the pooled
// summary.json written and its lines printed; its options are declared by
// src/cli/merge_command.cpp.

#include <pacer/core/histogram.hpp>
#include <pacer/metrics/samples_file.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pacer::metrics {

/// A part's packets folded as its `samples.json` was read (`read_run_part_folded`): what
/// `merge_parts` needs of them, in memory that does not grow with the packets.
struct folded_samples {
    log_histogram deviation_s; ///< every packet's signed deviation
    std::uint64_t late = 0;    ///< packets with |deviation| > late_threshold_s
    std::uint64_t sessions_late = 0;
    /// Each session's first and last packet send (the part's monotonic seconds).
    std::vector<std::pair<double, double>> streams;
};

/// One run's folder: its `summary.json` and `samples.json`.
struct run_part {
    std::filesystem::path dir;
    boost::json::object summary;
    std::vector<session_samples> sessions;
    /// Open-loop parts: every arrival of the part. Nullopt when `samples.json` has no
    /// `open_loop` object (a closed-loop run, or one written before pacer recorded it).
    std::optional<std::vector<arrival_sample>> arrivals;
    /// Every admitted session's handshake (none from parts written before pacer recorded it).
    std::vector<handshake_sample> handshakes;
    /// Set by `read_run_part_folded`, and then `sessions` is empty.
    std::optional<folded_samples> folded;
};

/// Reads a run folder: its summary, and its samples (`read_samples`, strict rules). Throws
/// std::runtime_error naming the file that is missing or malformed.
run_part read_run_part(const std::filesystem::path& dir);

/// A part's append grid period in seconds: its `config.packet_ms` (vllm-omni's `--chunk-ms`),
/// 80 ms when absent (parts written before the field).
double append_period_s(const boost::json::object& summary);

/// The same, but `samples.json` is streamed (`stream_samples`) and its packets folded into
/// `folded` one session at a time: memory grows with the part's sessions, never its packets
/// (`pacer run --processes` pools its workers so). `merge_parts` of such parts gives the
/// deviation quantiles within `log_histogram::relative_precision` of the exact ones (and says
/// so in `pacing.quantile_precision`); every other figure is the same as from `read_run_part`.
run_part read_run_part_folded(const std::filesystem::path& dir);

/// The pooled summary of `parts`: sessions and packets summed (JSON integers), deviation
/// percentiles over all packets, late packets, loop lag (worst part), peak overlapping input
/// streams across parts on the wall clock (each part's own monotonic/realtime pair aligns
/// it), one entry per part with its CPU and memory, `incomplete_parts` (each part that was
/// interrupted or has incomplete sessions, named by its folder), `complete`, `interrupted`
/// and `warnings`. When every part is open-loop, `open_loop` is the pooled open-loop section
/// (see `pool_open_loop`).
boost::json::object merge_parts(const std::vector<run_part>& parts);

/// The open-loop section of parts that ran shards of one schedule, pooled: the requests,
/// dispatch lag, latency and cap-delay distributions over every arrival of every part,
/// `schedule_kept` recomputed on the pooled dispatch lags (the parts' own thresholds), the cap
/// figures summed (`max_concurrency` 0 when any part was unlimited; `peak_in_flight` is the
/// sum of the parts' peaks, an upper bound), errors summed by message, and `schedule` (the
/// parts' common schedule, with `covered`: the pooled arrivals are exactly its arrivals).
/// Nullopt when some part is not open-loop or has no per-arrival samples.
std::optional<boost::json::object> pool_open_loop(const std::vector<run_part>& parts);

/// Parts from more than one host are aligned on their realtime clocks, so those clocks must be
/// trustworthy: each such part must have recorded a synchronised clock whose maximum error is
/// within `max_error_s`. Throws bad_input naming the first part that is not (unless
/// `allow_skew`). Parts of one host share their clocks and are never refused.
void check_clocks(const std::vector<run_part>& parts, double max_error_s, bool allow_skew);

/// A part's run identity: its `run_id`, or for a run written before pacer recorded one, its
/// host and clock pair (read once, at its start). Empty when it has neither.
std::string part_identity(const run_part& part);

/// Throws bad_input naming both parts when one part is given twice: the same folder
/// (whatever the spelling of its path, symlinks resolved), the same run (the same
/// `part_identity`, e.g. a copy of the folder), or the same share of one run twice (two parts
/// that are both shard I of N of the same session count or schedule).
void check_distinct(const std::vector<run_part>& parts);

/// Throws bad_input when the parts cannot be pooled as one run: open-loop and
/// closed-loop parts mixed, or open-loop parts of different schedules (sha256).
void check_compatible(const std::vector<run_part>& parts);

/// When a part ran on the wall clock: [realtime_s, realtime_s + wall_s] from its clock pair
/// (read as it started streaming) and its wall time, else the span of its packets. Nullopt
/// when it records neither.
struct run_window {
    double begin_s = 0;
    double end_s = 0;
};
std::optional<run_window> part_window(const run_part& part);

/// Parts must have streamed at the same time: their windows (`part_window`) must share an
/// instant. Returns nullopt when they do. Otherwise throws bad_input naming two
/// parts that did not overlap (or one whose window is unknown), or, with `allow_disjoint`,
/// returns that message as a warning.
std::optional<std::string> check_overlap(const std::vector<run_part>& parts, bool allow_disjoint);

/// What `pacer merge` prints on stdout once `merged` (merge_parts' document, of `parts` parts)
/// is written to `summary`: the parts, sessions, packets and verdict, the pooled |dev|, the
/// overlap, the pooled open loop when there is one, and the file.
std::string merge_report_text(const boost::json::object& merged, std::size_t parts,
                              const std::string& summary);

/// The parts of `merged` that were interrupted or left sessions incomplete, as one line's list
/// ("DIR (interrupted, N of M sessions incomplete), ..."); empty when there are none.
std::string incomplete_parts_text(const boost::json::object& merged);

/// `pacer merge RUN... -o DIR` as given on the command line, not yet checked.
struct merge_request {
    std::vector<std::string> inputs; ///< the run folders, in order
    std::string output;              ///< the new folder of the pooled summary.json
    bool allow_clock_skew = false;
    bool allow_disjoint = false;
    double max_clock_error_ms = 10;
    bool dry_run = false;
};

/// `pacer merge`: reads each part (`read_run_part`), checks them (`check_distinct`,
/// `check_compatible`, `check_clocks`, `check_overlap`), then prints the `--dry-run` plan, or
/// creates `output` and writes its summary.json (`merge_parts` with the checks' settings and
/// any `--allow-disjoint` warning, which stderr also gets) and prints `merge_report_text`.
/// Returns 0 pooled and paced, 1 a part was interrupted or incomplete (named on stderr),
/// 3 pacing-unqualified or the schedule not kept. Bad input (no part, an existing output, a
/// part that cannot be read or pooled) throws bad_input before anything is written.
int execute_merge(const merge_request& request);

} // namespace pacer::metrics

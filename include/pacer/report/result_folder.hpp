#pragma once
// Module `report` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns
// `report.html` (inline SVG), CSV/JSONL exports, and reading a finished result folder. It may
// include core, schedule, trace, runtime, metrics; it may not include protocol, transport, session,
// server, telemetry, record, sweep, run, http, cli, console, capacity_search (or the build fails).
//
// A finished result folder read back for `pacer report` and `pacer export`: the summary as
// written, and the per-packet evidence behind it (send receipts, raw samples, the open-loop
// schedule). Reading never changes the folder.

#include <pacer/core/bad_input.hpp>
#include <pacer/core/histogram.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pacer::report {

/// What wrote the folder.
enum class folder_kind {
    run,           ///< `pacer run`, closed loop (every session starts at once)
    open_loop,     ///< `pacer run --rate/--sessions/--schedule`
    merged,        ///< `pacer run --processes P` or `pacer merge`: pooled parts
    serve,         ///< `pacer serve`: concurrency levels
    recording,     ///< `pacer record`: run.json, one session per dataset variant
    http,          ///< `pacer http`: requests.jsonl, one row per arrival
    http_capacity, ///< `pacer http --find-capacity`: capacity.json and one folder per probe
};
const char* to_string(folder_kind k);

/// The folder is missing, is not a result folder, or its summary cannot be read: bad input (a
/// bad_input that names the folder's problem for the report module's callers and tests).
struct folder_error : bad_input {
    using bad_input::bad_input;
};

/// One append of one session. `deviation_s` is the pacing deviation of the grid,
/// start_s - (session_start_s + seq x 0.080); `late` when |deviation| > 80 ms.
struct packet {
    std::int64_t seq = 0;
    std::optional<double> scheduled_s; ///< receipts only
    double start_s = 0;
    std::optional<double> completed_s; ///< receipts only
    double deviation_s = 0;

    std::optional<double> send_time_s() const {
        return completed_s ? std::optional<double>(*completed_s - start_s) : std::nullopt;
    }
};

/// What the report needs of one session's packets, folded as they are read (independent of
/// the number of packets). Times are on the folder's common axis (`aligned`: the part's
/// monotonic seconds plus its realtime offset).
struct packet_stats {
    std::size_t count = 0;
    std::size_t late = 0;       ///< |deviation| > 80 ms
    std::size_t slow_sends = 0; ///< send time > 80 ms (a send stall)
    std::optional<double> max_abs_deviation_s, max_send_time_s;
    /// The first and last append start on the common axis; nullopt when the session has no
    /// packet or its times are unknown (samples without a session start).
    std::optional<double> first_start_s, last_start_s;
};

/// One session of a run, of a part, or of a serve level.
struct session_record {
    std::size_t part = 0;                ///< index into result_folder::parts
    std::optional<std::uint32_t> level;  ///< serve: the level's concurrency
    std::optional<std::uint32_t> repeat; ///< serve: the repeat (1-based)
    std::uint32_t index = 0;
    std::optional<double> session_start_s; ///< CLOCK_MONOTONIC seconds of the part's host
    std::optional<bool> admitted;
    bool from_receipts = false; ///< false: deviations from samples.json (µs), no send times
    /// Every packet, by seq. Empty once visited when the folder was read with a visitor
    /// (read_result_folder(dir, visit)): then only `stats` remain.
    std::vector<packet> packets;
    packet_stats stats;          ///< always filled, whether `packets` is kept or not
    boost::json::object serving; ///< serve: the session's entry of its level summary
    /// recording: the variant's sample, subset and name, its entry of run.json, and the
    /// `serving` object of its report.json case (TTFA, output duration) when it has one.
    std::string sample, subset, variant;
    boost::json::object variant_entry;
};

/// A folder whose samples or receipts were read: the run itself, or each pooled part.
struct part_info {
    std::filesystem::path dir;
    boost::json::object summary;
    /// realtime_s - monotonic_s of the part's recorded clock pair: puts parts of several
    /// hosts on one time axis. 0 when the part recorded none.
    double realtime_offset_s = 0;
    std::optional<double> clock_monotonic_s; ///< the run's clock reading just before it began
};

/// One request of a `pacer http` run (a line of requests.jsonl): times in seconds from the
/// schedule's origin, nullopt when the moment did not happen; latencies in ms as written.
struct http_request {
    std::uint64_t index = 0; ///< the arrival's index in the whole schedule
    double scheduled_s = 0;
    std::optional<double> dispatched_s, first_byte_s, first_token_s, completed_s;
    bool dropped = false;
    std::uint64_t status = 0;
    std::string error; ///< "" when the request ended without error
    std::string error_message;
    std::uint64_t input_len = 0, output_len = 0, output_tokens = 0, chunks = 0;
    std::optional<std::uint64_t> usage_prompt_tokens, usage_completion_tokens;
    std::optional<double> ttft_ms, ttft_uncorrected_ms, e2el_ms, e2el_uncorrected_ms, tpot_ms;
    std::vector<double> token_times_s;
};

/// One line of `telemetry.jsonl` (docs/telemetry.md): a reading of one source (`nvml:0`,
/// `server`) on the run's clock (`monotonic_s`) and the wall clock; absent fields nullopt.
struct telemetry_reading {
    double monotonic_s = 0, realtime_s = 0;
    std::string source;
    std::optional<double> energy_mj, power_w, utilization_pct, memory_utilization_pct,
        memory_used_bytes, memory_total_bytes, sm_clock_mhz, temperature_c;
    std::string error; ///< why the read failed ("" when it did not)
};

/// serve: one run of a level (warm-ups apart) and its folder, where its turns.jsonl is.
struct level_run_folder {
    std::uint32_t level = 0, repeat = 1;
    std::string name; ///< c<level>, c<level>-confirm<n>, c<level>-verify<n>
    std::filesystem::path dir;
};

struct result_folder {
    std::filesystem::path dir;
    folder_kind kind = folder_kind::run;
    boost::json::object summary; ///< the folder's summary.json (a recording: its run.json)
    std::vector<part_info> parts;
    std::vector<session_record> sessions;
    /// open loop: the schedule's arrival offsets from the run's start, seconds.
    std::vector<double> schedule_offsets_s;
    /// `pacer http`: every arrival's request, by arrival order. A capacity search: none (its
    /// probes are `parts`, each with its folder and summary).
    std::vector<http_request> requests;
    /// `telemetry.jsonl` of a run, serve or http folder, in file order; empty without one.
    std::vector<telemetry_reading> telemetry;
    /// serve: every run's folder, in the order of summary.json's `runs`.
    std::vector<level_run_folder> level_runs;
    /// What could not be read (a part that moved, a missing receipts file): said in the page.
    std::vector<std::string> notes;
    /// False when read with a visitor: the sessions' `packets` were freed (only `stats` remain).
    bool packets_kept = true;
    /// Every packet's |deviation| by serve level (0 for folders without levels) and every
    /// known send time, folded as read: quantiles within log_histogram::relative_precision
    /// (1/2,048) of the exact ones; count, min and max exact.
    std::map<std::uint32_t, log_histogram> abs_deviation_by_level;
    log_histogram send_time;

    std::size_t packet_count() const; ///< the sum of the sessions' stats.count
};

/// Seconds on the folder's common axis: a part's monotonic time plus its realtime offset.
double aligned(const result_folder& f, const session_record& s, double t);

/// Called once per session, in the order of result_folder::sessions, with its packets read
/// (`s.packets`) and folded (`s.stats`); `f` is the folder read so far.
using session_visitor = std::function<void(const result_folder& f, const session_record& s)>;

/// Reads a result folder. Throws folder_error (one line naming the folder or file) when `dir`
/// does not exist, has no readable summary.json (nor a recording's run.json, nor a capacity
/// search's capacity.json), or was not written by `pacer run`, `pacer merge`, `pacer serve`,
/// `pacer record` or `pacer http`. Missing per-session
/// files are notes, not errors.
result_folder read_result_folder(const std::filesystem::path& dir);

/// The same, one session's packets at a time: each session's packets are read, folded into
/// its `stats` and the folder's histograms, handed to `visit`, then freed, so memory does not
/// grow with the number of packets (the sessions keep no `packets`). `pacer report` reads
/// this way (twice: once to fold, once to bin the time plots once their span is known).
result_folder read_result_folder(const std::filesystem::path& dir, const session_visitor& visit);

/// read_result_folder(dir, visit) with a visitor that does nothing: what `report.html` needs
/// (render_report, render_comparison), without keeping any packet.
result_folder read_folded_result_folder(const std::filesystem::path& dir);

} // namespace pacer::report

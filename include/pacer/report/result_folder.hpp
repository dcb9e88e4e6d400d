#pragma once
// Module `report` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns
// `report.html` (inline SVG), CSV/JSONL exports, and reading a finished result folder. It may
// include core, schedule, trace, runtime, metrics; it may not include protocol, transport, session,
// server, record, sweep, run, cli (the build fails if it does).
//
// A finished result folder read back for `pacer report` and `pacer export`: the summary as
// written, and the per-packet evidence behind it (send receipts, raw samples, the open-loop
// schedule). Reading never changes the folder.

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
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

/// The folder is missing, is not a result folder, or its summary cannot be read: bad input.
struct folder_error : std::runtime_error {
    using std::runtime_error::runtime_error;
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

/// One session of a run, of a part, or of a serve level.
struct session_record {
    std::size_t part = 0;                ///< index into result_folder::parts
    std::optional<std::uint32_t> level;  ///< serve: the level's concurrency
    std::optional<std::uint32_t> repeat; ///< serve: the repeat (1-based)
    std::uint32_t index = 0;
    std::optional<double> session_start_s; ///< CLOCK_MONOTONIC seconds of the part's host
    std::optional<bool> admitted;
    bool from_receipts = false; ///< false: deviations from samples.json (µs), no send times
    std::vector<packet> packets;
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
    /// What could not be read (a part that moved, a missing receipts file): said in the page.
    std::vector<std::string> notes;

    std::size_t packet_count() const;
};

/// Reads a result folder. Throws folder_error (one line naming the folder or file) when `dir`
/// does not exist, has no readable summary.json (nor a recording's run.json, nor a capacity
/// search's capacity.json), or was not written by `pacer run`, `pacer merge`, `pacer serve`,
/// `pacer record` or `pacer http`. Missing per-session
/// files are notes, not errors.
result_folder read_result_folder(const std::filesystem::path& dir);

} // namespace pacer::report

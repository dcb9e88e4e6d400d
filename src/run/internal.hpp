#pragma once
// Internal to src/run: the steps that the files of `pacer run`'s execution share. One process
// of sessions is run_job.cpp (its summary.json: process_summary.cpp; its table:
// run_table.cpp); the parent of `--processes` is workers.cpp. Not installed, not part of the
// public API.

#include <pacer/metrics/pacing.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pacer::telemetry {
class recorder;
}

namespace pacer::run::detail {

/// A duration in seconds as the table prints it ("12.34 ms"; "-" for null).
std::string ms(const boost::json::value& v);

/// "1 session", "2 sessions" (`many`: the plural when it is not `one` + "s").
std::string plural(std::size_t n, std::string_view one, std::string_view many = {});

/// A random identity for a run's summary.json, so that `pacer merge` can tell a part given
/// twice (or a copy of one) from another part.
std::string new_run_id();

/// Starts `telemetry` (nullptr: none) into out/telemetry.jsonl and measures its idle
/// baseline, before any session.
void start_telemetry(telemetry::recorder* telemetry, const std::filesystem::path& out);

/// summary.json's `telemetry` for the run's window [t0, t1] (the recorder stopped first, so a
/// sample follows t1). Input audio is the appends sent x `chunk_s`, the append grid's period
/// (80 ms; vllm-omni's `--chunk-ms`).
boost::json::object telemetry_summary(telemetry::recorder& r, double t0, double t1,
                                      std::uint64_t packets_sent, double chunk_s);

/// What one process of sessions leaves besides its sessions' outcome: what was measured
/// around them, for its summary.json and its table.
struct process_run {
    session::run_outcome outcome;
    clock_pair clocks;                   ///< just before the sessions started
    double cpu_before_s = 0;             ///< the process's CPU time then
    double sessions_end_s = 0;           ///< when the last session ended
    runtime::process_usage usage;        ///< CPU time and peak RSS once they had
    bool mock = false;                   ///< whether the built-in mock served the sessions
    boost::json::object mock_stats;      ///< its stats, once stopped
    std::filesystem::path schedule_path; ///< the open loop's schedule.json
    duration timeout{};                  ///< each session's
    trace::mode trace = trace::mode::full;
    /// "disk full: …" when a trace the disk could not hold ended the run (else empty).
    std::string disk_full;
};

/// summary.json of one process of sessions (`job`, against `url`) from its run and figures.
boost::json::object process_summary(run_job& job, const std::string& url, const process_run& r,
                                    const metrics::pacing_figures& figures);

/// The table's first line, printed when the run starts: the sessions (or the open-loop plan),
/// the input, the URL.
void print_header(const run_options& s, const std::string& url, std::size_t sessions,
                  const schedule::schedule_document* open_loop);

/// The table of one process, once its summary.json is written (`report`: report.html, if
/// written).
void print_table(const run_options& s, const metrics::pacing_figures& f,
                 const boost::json::object& summary, const std::filesystem::path& out,
                 const std::optional<std::filesystem::path>& report);

/// The open-loop lines of one process's table (`summary` has `open_loop`).
void print_open_loop(const metrics::pacing_figures& f, const boost::json::object& summary);

/// The table's telemetry line, when the summary has one.
void print_telemetry(const boost::json::object& summary);

/// `--processes P`: runs `job` as the parent of P workers against `url` (the mock, if any,
/// stopped once they end) and returns the exit status.
int run_workers(run_job& job, const std::string& url, local_server* mock, double expected_s);

} // namespace pacer::run::detail

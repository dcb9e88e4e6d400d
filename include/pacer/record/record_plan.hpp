#pragma once
// `pacer record`'s options checked and resolved into a record_job (record_job.hpp), and the
// command's steps around the recording itself. plan_recording does every check that needs
// only the options and the files, in the order the first mistake is reported: --timeout, the
// exclusive options, --resume's run.json (whose settings it takes back), --profile, --url, the
// dataset's manifest and --per-subset, --workers, the descriptors; record_planned then creates
// the output folder (or resumes it), starts the built-in mock, records, writes report.html and
// the tables, and prints the closing lines.
//
// The command (src/cli/record_command.cpp) declares the options and wires in what this module
// may not include: the built-in native mock (`record_job::start_server`, module server's), the
// progress line (`record_job::observer`, module run's) and the end outputs (`record_job::end`,
// module report's). Bad input throws bad_input: one line, exit 2, nothing written.

#include <pacer/record/record_job.hpp>

namespace pacer::record {

/// Which options the command line gave: a default is not a choice.
struct given_options {
    bool postprocess = false;         ///< --postprocess
    bool postprocess_command = false; ///< --postprocess-command
    bool workers = false;             ///< --workers
};

/// `options` checked and resolved into a job: `options.timeout_s` from --timeout, a resumed
/// recording's settings and earlier load from its run.json, the profile, the endpoint of
/// --url, the dataset's selected samples and their variants' records (with what an earlier
/// attempt reached), the post-processing workers; the descriptor limit raised for the
/// sessions. The wiring (start_server, stop_server, observer, end) is left to the command.
/// Throws bad_input for bad input; creates nothing.
record_job plan_recording(record_options options, const given_options& given);

/// Records a planned job (not a dry run) as `pacer record` does: prints that there is nothing
/// to record when a resumed job has no pending variant; otherwise starts the built-in mock
/// (`job.start_server`, when set), creates the output folder (a resumed one is kept),
/// execute_recording, then report.html (unless --no-report) and --export's tables (those of
/// an earlier attempt replaced) through `job.end`, and the `results` and `INTERRUPTED` lines.
/// Returns the exit status of the verdict.
int record_planned(record_job& job);

} // namespace pacer::record

#pragma once
// The user's post-processing command of `pacer record --postprocess-command CMD`
// (docs/recording.md): run once for every recorded variant, after pacer's own post-processing,
// with the variant folder; in the pool's workers (nice 10) or, with `--postprocess inline`, by
// the recording process on the session's thread.

#include <pacer/record/postprocess.hpp>

#include <boost/json/object.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace pacer::record {

/// How much of the end of the command's stderr run.json keeps.
inline constexpr std::size_t stderr_tail_bytes = 1000;

/// The last `max_bytes` of `text`, from the start of a line when one begins in them.
std::string tail_of(std::string_view text, std::size_t max_bytes = stderr_tail_bytes);

/// Runs `/bin/sh -c COMMAND pacer-postprocess DIR` and waits for it: the variant folder is
/// `$1` and `PACER_VARIANT_DIR`, the variant's status so far is `PACER_VARIANT_STATUS`; the
/// working directory is the recorder's; stdin is /dev/null, stdout and stderr go to
/// `postprocess-command.out` and `postprocess-command.err` in the folder. It runs in its own
/// process group (a Ctrl-C at the terminal does not reach it) with default signal handling.
/// Returns `{command, exit_status (null when killed or not started), signal (when killed),
/// stderr_tail, wall_s, cpu_s, ok}`; never throws.
boost::json::object run_postprocess_command(const std::string& command,
                                            const std::filesystem::path& dir,
                                            std::string_view status);

/// A variant's whole post-processing: `process_variant` (a throw becomes status `error` with
/// the reason in `errors`), then `command` when not empty. A command that does not exit 0
/// makes the variant `error` (its failure added to `errors`; `protocol_verdict` is kept).
/// The summary gets `postprocess_command` (run_postprocess_command's result) when a command ran.
boost::json::object postprocess_variant(const variant_job& job, const std::string& command);

} // namespace pacer::record

#pragma once
// `pacer replay` executed (docs/replay.md): offline, from the kept artifacts of a run
// (trace.jsonl + input-send-receipts.json of each session), the serving metrics recomputed
// (docs/protocol.md §4) and every session checked against the native protocol oracle (§4.5)
// and against its own receipts (§3.2); report.json written, a line printed per session.
//
// The command (src/cli/replay_command.cpp) declares the options and calls replay_folder, which
// checks them, finds the session folders and the profile (the one the run recorded), prints
// the `--dry-run` plan or fills a replay_job and calls execute_replay
// (src/metrics/replay_folder.cpp).

#include <pacer/metrics/serving.hpp>
#include <pacer/protocol/events.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pacer::metrics {

/// `pacer replay DIR` as given on the command line, not yet checked.
struct replay_request {
    std::string dir;     ///< a session folder, or a run folder holding session-NNN/ folders
    std::string profile; ///< empty: the profile the run recorded, else the default
    double startup_reserve_ms = 80;
    std::string output; ///< empty: DIR/report.json
    bool dry_run = false;
};

/// A checked replay: the sessions found, the profile to judge them by, where to write.
struct replay_job {
    /// Each session's id (its folder's name) and folder, in order.
    std::vector<std::pair<std::string, std::filesystem::path>> sessions;
    const protocol::profile* profile = nullptr;
    /// report.json's `profile_source`: "recorded", "flag" or "default".
    std::string profile_source;
    /// Where the profile came from, as the first printed line says it.
    std::string profile_origin;
    std::filesystem::path source; ///< the folder as given (report.json's `source`)
    session_params context;       ///< the input's duration (if recorded), the startup reserve
    std::filesystem::path output; ///< report.json; must not exist
};

/// Replays `job`: writes its report.json, prints a line per session and the verdict; returns
/// the exit status (0 every case passed, 1 otherwise). Throws bad_input for a session
/// whose files cannot be read, std::runtime_error when report.json cannot be written.
int execute_replay(const replay_job& job);

/// `pacer replay`: checks `request` (the folder, the profile the run recorded in its
/// summary.json and any `--profile`, the startup reserve, that the output does not exist),
/// finds the session folders (DIR itself when it holds trace.jsonl or
/// input-send-receipts.json, else its session-NNN/ folders, sorted), then prints the
/// `--dry-run` plan (exit 0) or calls execute_replay. Bad input, an unreadable session
/// included, throws bad_input (one line; nothing written).
int replay_folder(const replay_request& request);

} // namespace pacer::metrics

#pragma once
// pacer's exit statuses, shared by every subcommand and read back from the workers of
// `pacer run --processes`: 0 success, 1 pacer itself failed (an unexpected error, a worker
// process that died, a session's files that could not be written; for `replay`: a case
// failed), 2 bad usage or bad input (nothing written), 3 the run finished but the client fell
// behind its schedule (pacing-unqualified), 4 the server failed or rejected sessions (or could
// not be reached), 130 interrupted. When several apply, `exit_status` picks one (see there).

namespace pacer::runtime {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_unqualified = 3;
inline constexpr int exit_server_failed = 4;
inline constexpr int exit_interrupted = 130;

/// What a finished `run` or `serve` found; `exit_status` turns it into one exit code.
struct run_verdict {
    bool interrupted = false;        ///< a signal ended it early
    bool client_fell_behind = false; ///< late packets, a missed schedule, a level not valid
    bool client_failed = false;      ///< pacer's own failure: files not written, a worker died
    bool server_failed = false;      ///< sessions failed, were rejected, or could not connect
    /// Nothing reached the server: the run measured nothing, so the client's timing gives no
    /// verdict (`client_fell_behind` is ignored) and the server is the failure.
    bool unreachable = false;
};

/// The precedence when several apply: 130 interrupted > 3 client fell behind > 1 pacer failed >
/// 4 server failed or unreachable > 0. A run whose client fell behind measured the client, not
/// the server, so nothing else it says can be trusted; a failure of pacer's own comes next for
/// the same reason; only a run whose client kept up can blame the server. A server nothing
/// reached is the exception: there was nothing to measure, so no client verdict (never 3).
int exit_status(const run_verdict& v);

} // namespace pacer::runtime

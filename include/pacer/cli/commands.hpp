#pragma once
// Module `cli` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns option
// declarations and validation, each subcommand's wiring of the modules, output folders, the
// progress line, exit statuses. It is the top: it may include every other module, and no module
// may include it (the build fails if one does).
//
// The `pacer` command line: one binary, one subcommand per job (README.md).
//
// Each `add_*_command` adds its subcommand and its flags to the application and returns the
// function that runs it once the command line has been parsed. Exit codes are shared:
// 0 success, 1 pacer itself failed (an unexpected error, a worker process that died, a
// session's files that could not be written; for `replay`: a case failed), 2 bad usage or bad
// input (nothing written), 3 the run finished but the client fell behind its schedule
// (pacing-unqualified), 4 the server failed or rejected sessions (or could not be reached),
// 130 interrupted. When several apply, `exit_status` picks one (see there).

#include <functional>
#include <stdexcept>

namespace CLI {
class App;
}

namespace pacer::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_unqualified = 3;
inline constexpr int exit_server_failed = 4;
inline constexpr int exit_interrupted = 130;

/// Bad input found after parsing (a missing file, an existing output folder...): `main`
/// prints its message as one line on stderr and exits with `exit_usage`.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// What a finished `run` or `serve` found; `exit_status` turns it into one exit code.
struct run_verdict {
    bool interrupted = false;        ///< a signal ended it early
    bool client_fell_behind = false; ///< late packets, a missed schedule, a level not valid
    bool client_failed = false;      ///< pacer's own failure: files not written, a worker died
    bool server_failed = false;      ///< sessions failed, were rejected, or could not connect
};

/// The precedence when several apply: 130 interrupted > 3 client fell behind > 1 pacer failed >
/// 4 server failed > 0. A run whose client fell behind measured the client, not the server, so
/// nothing else it says can be trusted; a failure of pacer's own comes next for the same
/// reason; only a run whose client kept up can blame the server.
int exit_status(const run_verdict& v);

/// A subcommand and what runs it.
struct [[nodiscard]] command {
    CLI::App* app;
    std::function<int()> run;
};

command add_run_command(CLI::App& app);
command add_mock_command(CLI::App& app);
command add_native_mock_command(CLI::App& app);
command add_schedule_command(CLI::App& app);
command add_merge_command(CLI::App& app);
command add_replay_command(CLI::App& app);
command add_serve_command(CLI::App& app);
command add_report_command(CLI::App& app);
command add_export_command(CLI::App& app);
command add_http_command(CLI::App& app);
command add_llm_mock_command(CLI::App& app);
command add_record_command(CLI::App& app);
command add_dataset_command(CLI::App& app);

/// The whole program: parses, runs the selected subcommand, maps errors to exit codes.
int main(int argc, char** argv);

} // namespace pacer::cli

#pragma once
// The `pacer` command line: one binary, one subcommand per job (DESIGN.md "Subcommands").
//
// Each `add_*_command` adds its subcommand and its flags to the application and returns the
// function that runs it once the command line has been parsed. Exit codes are shared:
// 0 success, 1 the job ran but failed (e.g. incomplete sessions), 2 bad usage or bad input
// (nothing written), 3 the run finished but the client fell behind its schedule
// (pacing-unqualified), 130 interrupted.

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
inline constexpr int exit_interrupted = 130;

/// Bad input found after parsing (a missing file, an existing output folder...): `main`
/// prints its message as one line on stderr and exits with `exit_usage`.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

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

/// The whole program: parses, runs the selected subcommand, maps errors to exit codes.
int main(int argc, char** argv);

} // namespace pacer::cli

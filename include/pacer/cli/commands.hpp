#pragma once
// Module `cli` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns option
// declarations and validation, each subcommand's wiring of the modules, output folders, the
// built-in mocks of `run`, `serve` and `record`, and the one place bad input (core/bad_input.hpp)
// becomes exit 2 (main). It is the top: it may include every other module, and no module may
// include it (the build fails if one does). Jobs run in their modules (`run`, `sweep`, `record`,
// `http`); the progress line is `run`'s.
//
// The `pacer` command line: one binary, one subcommand per job (README.md).
//
// Each `add_*_command` adds its subcommand and its flags to the application and returns the
// function that runs it once the command line has been parsed. Exit codes are shared:
// 0 success, 1 pacer itself failed (an unexpected error, a worker process that died, a
// session's files that could not be written; for `replay`: a case failed), 2 bad usage or bad
// input (nothing written), 3 the run finished but the client fell behind its schedule
// (pacing-unqualified), 4 the server failed or rejected sessions (or could not be reached),
// 130 interrupted. When several apply, `runtime::exit_status` picks one
// (runtime/exit_status.hpp).

#include <pacer/runtime/exit_status.hpp>

#include <functional>

namespace CLI {
class App;
}

namespace pacer::cli {

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

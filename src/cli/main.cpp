#include <pacer/cli/commands.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <exception>
#include <vector>

namespace pacer::cli {

int main(int argc, char** argv) {
    CLI::App app{"pacer: a paced load generator for realtime inference servers.\n"
                 "Streams audio on an absolute 80 ms clock over many concurrent WebSocket "
                 "sessions and proves, in every run, that the client kept its schedule.",
                 "pacer"};
    app.require_subcommand(1, 1);
    app.set_version_flag("--version", "pacer 0.1.0");
    const std::vector<command> commands = {
        add_run_command(app),      add_mock_command(app),   add_native_mock_command(app),
        add_schedule_command(app), add_merge_command(app),  add_replay_command(app),
        add_serve_command(app),    add_report_command(app), add_export_command(app)};

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // One clear line, never a usage dump: the user asked for something specific.
        fmt::print(stderr, "pacer: {}\n", e.what());
        return exit_usage;
    }

    try {
        for (const auto& c : commands)
            if (c.app->parsed())
                return c.run();
    } catch (const usage_error& e) {
        fmt::print(stderr, "pacer: {}\n", e.what());
        return exit_usage;
    } catch (const std::exception& e) {
        fmt::print(stderr, "pacer: error: {}\n", e.what());
        return exit_failed;
    }
    return exit_usage;
}

} // namespace pacer::cli

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/runtime/exit_status.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
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
        add_run_command(app),      add_mock_command(app),     add_native_mock_command(app),
        add_schedule_command(app), add_merge_command(app),    add_replay_command(app),
        add_serve_command(app),    add_report_command(app),   add_export_command(app),
        add_http_command(app),     add_llm_mock_command(app), add_record_command(app),
        add_dataset_command(app)};

    // A mistyped subcommand gets its nearest name, not CLI11's "unexpected argument". The
    // application's own options (--help, --version) take no value, so the first word that is
    // not an option is the subcommand.
    for (int i = 1; i < argc; ++i) {
        const std::string_view word = argv[i];
        if (word.empty() || word.front() == '-')
            continue;
        const auto known = app.get_subcommands(
            [&](const CLI::App* sub) { return sub->check_name(std::string(word)); });
        if (known.empty()) {
            const std::string near = nearest_command(app, std::string(word));
            if (near.empty()) {
                std::string names; // from the application itself: never out of date
                for (const auto* sub : app.get_subcommands({}))
                    names += (names.empty() ? "" : ", ") + sub->get_name();
                fmt::print(stderr,
                           "pacer: unknown command '{}'; the commands are {} (pacer --help)\n",
                           word, names);
            } else
                fmt::print(stderr, "pacer: unknown command '{}'; did you mean '{}'?\n", word, near);
            return runtime::exit_usage;
        }
        break;
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ExtrasError& e) {
        // An unknown --option gets its nearest name, as a mistyped command does.
        std::string line;
        for (const auto& c : commands)
            if (line.empty() && c.app->parsed())
                line = unknown_option_line(*c.app, argc, argv);
        fmt::print(stderr, "pacer: {}\n", line.empty() ? std::string(e.what()) : line);
        return runtime::exit_usage;
    } catch (const CLI::ArgumentMismatch& e) {
        std::string line;
        for (const auto& c : commands)
            if (line.empty() && c.app->parsed())
                line = repeated_option_line(*c.app, e.what());
        fmt::print(stderr, "pacer: {}\n", line.empty() ? std::string(e.what()) : line);
        return runtime::exit_usage;
    } catch (const CLI::ParseError& e) {
        // One clear line, never a usage dump: the user asked for something specific.
        fmt::print(stderr, "pacer: {}\n", e.what());
        return runtime::exit_usage;
    }

    try {
        for (const auto& c : commands)
            if (c.app->parsed())
                return c.run();
    } catch (const bad_input& e) {
        // Bad input, from any module (core/bad_input.hpp): its one line, nothing written. The
        // one place where it becomes an exit status.
        fmt::print(stderr, "pacer: {}\n", e.what());
        return runtime::exit_usage;
    } catch (const std::exception& e) {
        fmt::print(stderr, "pacer: error: {}\n", e.what());
        return runtime::exit_failed;
    }
    return runtime::exit_usage;
}

} // namespace pacer::cli

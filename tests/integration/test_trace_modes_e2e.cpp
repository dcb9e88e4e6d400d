// `pacer run --trace` on the command line: an unknown mode and `--keep-traces` without traces
// are bad input (one line, exit 2, nothing created); `--dry-run` names the mode's files, and
// the slots of `--stagger-slots`.

#include <gtest/gtest.h>

#include "integration/cli_process.hpp"
#include <string>
#include <utility>
#include <vector>

namespace pacer::test {
namespace {

void expect_refused(const std::vector<std::string>& args, const std::string& mentions) {
    scratch_dir cwd;
    const auto r = run_cli(args, in_dir(cwd.path()));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(lines[0].rfind("pacer: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(mentions), std::string::npos) << lines[0];
    EXPECT_EQ(cwd.listing(), "");
}

TEST(CliTraceMode, AnUnknownModeIsRefused) {
    expect_refused({"run", "-c", "1", "-d", "1s", "--trace", "lines", "-o", "out"}, "--trace");
}

TEST(CliTraceMode, KeepTracesWithoutTracesIsRefused) {
    for (const std::string mode : {"receipts", "none"})
        expect_refused(
            {"run", "-c", "1", "-d", "1s", "--trace", mode, "--keep-traces", "-o", "out"},
            "--keep-traces needs --trace full");
}

TEST(CliTraceMode, EveryModeDryRunsAndThePlanSaysWhatItWrites) {
    const std::pair<std::string, std::string> modes[] = {
        {"full", "samples.json, session-NNN/"},
        {"receipts", "session-NNN/ receipts only (--trace receipts)"},
        {"none", "no session file (--trace none)"}};
    for (const auto& [mode, plan] : modes) {
        scratch_dir cwd;
        const auto r =
            run_cli({"run", "-c", "1", "-d", "1s", "--trace", mode, "--dry-run", "-o", "out"},
                    in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 0) << mode << ": " << r.out << r.err;
        EXPECT_NE(r.out.find(plan), std::string::npos) << mode << ": " << r.out;
        EXPECT_EQ(cwd.listing(), "") << mode;
    }
}

TEST(CliStaggerSlots, ThePlanNamesTheSlots) {
    scratch_dir cwd;
    const auto r =
        run_cli({"run", "-c", "4", "-d", "1s", "--stagger-slots", "2", "--dry-run", "-o", "out"},
                in_dir(cwd.path()));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("stagger 80 ms in 2 slots"), std::string::npos) << r.out;
}

} // namespace
} // namespace pacer::test

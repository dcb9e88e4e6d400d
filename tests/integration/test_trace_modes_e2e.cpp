// `pacer run --trace` on the command line: an unknown mode and `--keep-traces` without traces
// are bad input (one line, exit 2, nothing created); `--dry-run` names the mode's files.

#include <gtest/gtest.h>

#include "integration/cli_process.hpp"
#include <string>
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

TEST(CliTraceMode, EveryModeDryRuns) {
    for (const std::string mode : {"full", "receipts", "none"}) {
        scratch_dir cwd;
        const auto r =
            run_cli({"run", "-c", "1", "-d", "1s", "--trace", mode, "--dry-run", "-o", "out"},
                    in_dir(cwd.path()));
        EXPECT_EQ(r.exit_code, 0) << mode << ": " << r.out << r.err;
        EXPECT_EQ(cwd.listing(), "") << mode;
    }
}

} // namespace
} // namespace pacer::test

// The command line a result folder records (runtime/command_line.hpp): every form of a header
// option keeps its name, never its value.

#include <pacer/runtime/command_line.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pacer::runtime {
namespace {

TEST(CommandLine, HeaderValuesAreRedactedInEveryForm) {
    const std::vector<std::string> args{"pacer",
                                        "http",
                                        "-H",
                                        "x-api-key: s3cret",
                                        "--header",
                                        "Authorization: Bearer s3cret",
                                        "--header=x-t: s3cret",
                                        "-Hx-u: s3cret",
                                        "--model",
                                        "m"};
    const auto r = redact_headers(args, {"-H", "--header"});
    EXPECT_EQ(r,
              (std::vector<std::string>{"pacer", "http", "-H", "x-api-key: <redacted>", "--header",
                                        "Authorization: <redacted>", "--header=x-t: <redacted>",
                                        "-Hx-u: <redacted>", "--model", "m"}));
    EXPECT_FALSE(recorded_command_line({"-H"}).empty()); // this test's own command line
}

} // namespace
} // namespace pacer::runtime

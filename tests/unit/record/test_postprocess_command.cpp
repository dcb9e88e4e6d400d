// The user's post-processing command of `pacer record --postprocess-command` (a real /bin/sh
// child): what it is given, what is kept of its outcome, and how its failure marks a variant.

#include <pacer/record/postprocess_command.hpp>

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace pacer::record {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

TEST(PostprocessCommand, TailKeepsTheLastBytesFromALineStart) {
    EXPECT_EQ(tail_of("short\n", 100), "short\n");
    EXPECT_EQ(tail_of("aaaa\nbbbb\ncc\n", 7), "cc\n"); // not "bbb\ncc\n": mid-line
    EXPECT_EQ(tail_of("0123456789", 4), "6789");       // no line start in it: the bytes
}

TEST(PostprocessCommand, GetsTheFolderAndStatusAndItsOutputIsKept) {
    test::scratch_folder d("pacer-ppcmd-unit");
    const auto r = run_postprocess_command(
        "echo to-stdout; echo \"$1|$PACER_VARIANT_DIR|$PACER_VARIANT_STATUS|$0\" >&2; exit 5",
        d.path, "pass");
    const std::string dir = fs::absolute(d.path).lexically_normal().string();
    EXPECT_EQ(r.at("exit_status").to_number<int>(), 5) << json::serialize(r);
    EXPECT_FALSE(r.at("ok").as_bool());
    EXPECT_EQ(r.at("stderr_tail").as_string(), dir + "|" + dir + "|pass|pacer-postprocess\n");
    EXPECT_EQ(test::read_text(d.path / "postprocess-command.out"), "to-stdout\n");
    EXPECT_TRUE(r.at("wall_s").is_double());
    EXPECT_TRUE(r.at("cpu_s").is_double());
}

TEST(PostprocessCommand, RunsInItsOwnProcessGroupAndReportsASignal) {
    test::scratch_folder d("pacer-ppcmd-unit");
    // Field 5 of /proc/PID/stat is the process group: the shell leads its own.
    auto r = run_postprocess_command("read -r _ _ _ _ g _ < /proc/$$/stat; [ \"$g\" = \"$$\" ]",
                                     d.path, "pass");
    EXPECT_TRUE(r.at("ok").as_bool()) << json::serialize(r);
    r = run_postprocess_command("kill -TERM $$", d.path, "pass");
    EXPECT_TRUE(r.at("exit_status").is_null()) << json::serialize(r);
    EXPECT_EQ(r.at("signal").to_number<int>(), 15);
    EXPECT_FALSE(r.at("ok").as_bool());
}

TEST(PostprocessCommand, AFailingCommandMakesTheVariantAnError) {
    test::scratch_folder d(
        "pacer-ppcmd-unit"); // no recording in it: pacer's own post-processing fails first
    variant_job job;
    job.dir = d.path;
    auto s = postprocess_variant(job, "");
    EXPECT_EQ(s.at("status").as_string(), "error");
    EXPECT_FALSE(s.contains("postprocess_command"));
    // The command still runs, told the status so far, and its own failure is added.
    s = postprocess_variant(job, "echo \"$PACER_VARIANT_STATUS\"; echo 'no model' >&2; exit 2");
    EXPECT_EQ(s.at("status").as_string(), "error");
    EXPECT_EQ(test::read_text(d.path / "postprocess-command.out"), "error\n");
    const auto errors = json::serialize(s.at("errors"));
    EXPECT_NE(errors.find("post-processing: "), std::string::npos) << errors;
    EXPECT_NE(errors.find("post-processing command: exited with status 2: no model"),
              std::string::npos)
        << errors;
    EXPECT_EQ(s.at("postprocess_command").at("exit_status").to_number<int>(), 2);
    // A command that succeeds adds its outcome and changes nothing else.
    s = postprocess_variant(job, "true");
    EXPECT_TRUE(s.at("postprocess_command").at("ok").as_bool());
    EXPECT_EQ(s.at("errors").as_array().size(), 1u);
}

} // namespace
} // namespace pacer::record

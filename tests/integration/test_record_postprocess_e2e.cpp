// End to end: `pacer record --postprocess pool|inline --postprocess-command CMD` against a real
// `pacer native-mock` process on loopback, with a dataset of 1 s tones (no espeak-ng needed).
// The command runs once per recorded variant, sees the finished folder, and its failure is
// recorded; --resume does not run it again for finished variants. Nothing here asserts a speed
// (exit 3, the client fell behind on a loaded host, is accepted).

#include <pacer/record/dataset.hpp>

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <cmath>
#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

// `samples` samples x 2 variants (`a`, `b`), each a 1 s tone at 44.1 kHz.
void tone_dataset(const fs::path& dir, int samples) {
    fs::create_directories(dir);
    std::vector<float> tone(44100);
    for (std::size_t i = 0; i < tone.size(); ++i)
        tone[i] = 0.3f * static_cast<float>(std::sin(double(i) * 0.05));
    runtime::write_wav_float_as_pcm16(dir / "tone.wav", tone, 44100);
    std::ofstream m(dir / "manifest.jsonl");
    for (int i = 0; i < samples; ++i)
        m << "{\"id\":\"s" << i << "\",\"variants\":{\"a\":\"tone.wav\",\"b\":\"tone.wav\"}}\n";
}

std::vector<std::string> lines_of(const fs::path& p) {
    std::vector<std::string> v;
    std::ifstream in(p);
    for (std::string l; std::getline(in, l);)
        if (!l.empty())
            v.push_back(l);
    return v;
}

// Every variant of run.json: absolute folder -> its run.json entry.
std::map<std::string, json::value> variants_of(const fs::path& out) {
    std::map<std::string, json::value> m;
    const auto run = read_json(out / "run.json");
    for (const auto& sample : at(run, {"samples"}).as_array())
        for (const auto& [name, v] : at(sample, {"variants"}).as_object())
            m[fs::absolute(out / std::string(at(v, {"directory"}).as_string()))
                  .lexically_normal()
                  .string()] = v;
    return m;
}

// The command logs its $1 and PACER_VARIANT_DIR, and fails unless pacer's own post-processing
// (report.json) is already in the folder it was given.
std::string logging_command(const fs::path& log) {
    // Field 19 of /proc/PID/stat is the nice value.
    return "read -r _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ nice _ < /proc/$$/stat; echo \"$1 "
           "$PACER_VARIANT_DIR $PACER_VARIANT_STATUS $nice\" >> '" +
           log.string() + "' && test -f \"$1/report.json\" && echo seen";
}

class RecordPostprocessE2E : public ::testing::TestWithParam<std::string> {};

TEST_P(RecordPostprocessE2E, TheCommandRunsOncePerVariantWithItsFolder) {
    temp_dir data, out, logs;
    tone_dataset(data.path(), 2);
    fs::create_directories(logs.path());
    const fs::path log = logs / "calls.txt";
    mock_process mock({}, "native-mock");
    const auto r = run_pacer({"record", "--url", mock.url(), "--dataset", data.path().string(),
                              "-c", "2", "--postprocess", GetParam(), "--postprocess-command",
                              logging_command(log), "--no-report", "-o", out.path().string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    const auto run = read_json(out / "run.json");
    EXPECT_EQ(at(run, {"config", "postprocess"}).as_string(), GetParam());
    EXPECT_EQ(at(run, {"config", "postprocess_command"}).as_string(), logging_command(log));
    EXPECT_EQ(at(run, {"load", "postprocess"}).as_string(), GetParam());
    EXPECT_EQ(at(run, {"load", "cpu", "workers"}).to_number<int>(), GetParam() == "inline" ? 0 : 1);
    const auto variants = variants_of(out.path());
    ASSERT_EQ(variants.size(), 4u);
    // One call per variant, with its absolute folder as $1 and PACER_VARIANT_DIR.
    std::map<std::string, int> calls;
    for (const auto& line : lines_of(log)) {
        std::istringstream words(line);
        std::string one, env, status;
        int nice = -100;
        words >> one >> env >> status >> nice;
        EXPECT_EQ(one, env) << line;
        EXPECT_TRUE(status == "pass" || status == "fail") << line;
        // Pool: run by a nice-10 worker; inline: by the recorder itself, at our own priority.
        EXPECT_EQ(nice, GetParam() == "pool" ? 10 : ::getpriority(PRIO_PROCESS, 0)) << line;
        ++calls[one];
    }
    EXPECT_EQ(calls.size(), 4u) << slurp(log);
    for (const auto& [dir, v] : variants) {
        SCOPED_TRACE(dir);
        EXPECT_EQ(calls[dir], 1);
        // It saw report.json (else it exits 1 and the variant is `error`), and its output and
        // status are kept.
        EXPECT_EQ(at(v, {"postprocess_command", "exit_status"}).to_number<int>(), 0)
            << json::serialize(v);
        EXPECT_NE(at(v, {"status"}).as_string(), "error") << json::serialize(v);
        EXPECT_EQ(slurp(fs::path(dir) / "postprocess-command.out"), "seen\n");
        EXPECT_TRUE(fs::exists(fs::path(dir) / "postprocess-command.err"));
        EXPECT_TRUE(fs::exists(fs::path(dir) / "continuous.jsonl"));
    }
    for (const auto& e : fs::directory_iterator(out.path()))
        EXPECT_NE(e.path().filename().string().rfind(".batch-", 0), 0u) << e.path();
}

TEST_P(RecordPostprocessE2E, AFailingCommandMakesTheVariantAnErrorWithItsStderr) {
    temp_dir data, out;
    tone_dataset(data.path(), 1);
    mock_process mock({}, "native-mock");
    const auto r = run_pacer({"record", "--url", mock.url(), "--dataset", data.path().string(),
                              "-c", "2", "--postprocess", GetParam(), "--postprocess-command",
                              "echo first >&2; echo 'scorer: no model' >&2; exit 7", "--no-report",
                              "-o", out.path().string()});
    // 4: a variant had an error (3 when the client also fell behind: 3 comes first).
    EXPECT_TRUE(r.exit_code == 4 || r.exit_code == 3) << r.out;
    const auto variants = variants_of(out.path());
    ASSERT_EQ(variants.size(), 2u);
    for (const auto& [dir, v] : variants) {
        SCOPED_TRACE(dir);
        EXPECT_EQ(at(v, {"status"}).as_string(), "error");
        EXPECT_FALSE(at(v, {"qualified"}).as_bool());
        EXPECT_EQ(at(v, {"postprocess_command", "exit_status"}).to_number<int>(), 7);
        EXPECT_EQ(at(v, {"postprocess_command", "stderr_tail"}).as_string(),
                  "first\nscorer: no model\n");
        EXPECT_NE(json::serialize(at(v, {"errors"}))
                      .find("post-processing command: exited with status 7: scorer: no model"),
                  std::string::npos)
            << json::serialize(v);
        // The recording itself was judged: its verdict stays.
        EXPECT_TRUE(at(v, {"protocol_verdict"}).is_string());
        EXPECT_TRUE(fs::exists(fs::path(dir) / "report.json"));
    }
    EXPECT_EQ(at(read_json(out / "run.json"), {"summary", "variants", "error"}).to_number<int>(),
              2);
}

INSTANTIATE_TEST_SUITE_P(Modes, RecordPostprocessE2E, ::testing::Values("pool", "inline"),
                         [](const auto& info) { return info.param; });

// An interrupted recording resumed: the command ran once for every variant, the finished ones
// included (it is read back from run.json, and not run again for what was finished).
TEST(RecordPostprocessResumeE2E, ResumeDoesNotRunTheCommandOfFinishedVariantsAgain) {
    temp_dir data, out, logs;
    tone_dataset(data.path(), 2);
    fs::create_directories(logs.path());
    const fs::path log = logs / "calls.txt";
    mock_process mock({}, "native-mock");
    child rec({PACER_BINARY, "record", "--url", mock.url(), "--dataset", data.path().string(), "-c",
               "1", "--workers", "1", "--postprocess-command", logging_command(log), "--no-report",
               "-o", out.path().string()});
    std::string text;
    for (std::string line = rec.read_line(); !line.empty(); line = rec.read_line()) {
        text += line + "\n";
        if (line.rfind("batch 1:", 0) == 0)
            break;
    }
    ASSERT_NE(text.find("batch 1:"), std::string::npos) << text;
    rec.signal(SIGINT);
    text += rec.read_all();
    ASSERT_EQ(rec.wait(), 130) << text;
    std::size_t finished_before = 0;
    for (const auto& [dir, v] : variants_of(out.path()))
        finished_before += at(v, {"status"}).as_string() != "pending";
    ASSERT_GE(finished_before, 1u);
    EXPECT_EQ(lines_of(log).size(), finished_before) << slurp(log);

    const auto r = run_pacer({"record", "--resume", out.path().string(), "--url", mock.url()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    std::map<std::string, int> calls;
    for (const auto& line : lines_of(log))
        ++calls[line.substr(0, line.find(' '))];
    const auto variants = variants_of(out.path());
    ASSERT_EQ(variants.size(), 4u);
    for (const auto& [dir, v] : variants) {
        EXPECT_EQ(calls[dir], 1) << dir << "\n" << slurp(log);
        EXPECT_EQ(at(v, {"postprocess_command", "exit_status"}).to_number<int>(), 0) << dir;
    }
}

TEST(RecordPostprocessE2E_BadInput, IsRefusedInOneLineAndWritesNothing) {
    temp_dir data, out, run;
    tone_dataset(data.path(), 1);
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--postprocess", "threads"}, "pacer: --postprocess 'threads': use pool or inline"},
        {{"--postprocess-command", " "}, "pacer: --postprocess-command is empty"},
        {{"--postprocess", "inline", "--workers", "2"}, "pacer: --workers sizes the pool"},
    };
    for (const auto& [extra, message] : cases) {
        std::vector<std::string> args = {"record", "--dataset", data.path().string(), "-o",
                                         out.path().string()};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_pacer(args);
        EXPECT_EQ(r.exit_code, 2) << r.out;
        EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
        EXPECT_FALSE(fs::exists(out.path()));
    }
    // --resume keeps the recorded post-processing: changing it is refused, run.json untouched.
    fs::create_directories(run.path());
    std::ofstream(run / "run.json") << "{}";
    const auto r =
        run_pacer({"record", "--resume", run.path().string(), "--postprocess-command", "true"});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("drop --postprocess"), std::string::npos) << r.out;
    EXPECT_EQ(slurp(run / "run.json"), "{}");
    // The dry run names the mode and the command.
    const auto d = run_pacer({"record", "--dataset", data.path().string(), "--postprocess",
                              "inline", "--postprocess-command", "true", "--dry-run"});
    EXPECT_EQ(d.exit_code, 0) << d.out;
    EXPECT_NE(d.out.find("postprocess inline"), std::string::npos) << d.out;
    EXPECT_NE(d.out.find("command    /bin/sh -c 'true'"), std::string::npos) << d.out;
}

} // namespace
} // namespace pacer::test

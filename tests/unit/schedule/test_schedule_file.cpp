// Schedule files: the SHA-256 helper, the canonical text forms, reading schedule.json back,
// and the `pacer schedule` subcommand.

#include <pacer/cli/commands.hpp>
#include <pacer/core/bad_input.hpp>
#include <pacer/core/sha256.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/schedule/arrival.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using pacer::bad_input;
using pacer::schedule::arrival_process;
using pacer::schedule::schedule_spec;
using ns = std::chrono::nanoseconds;

// The offsets of `pacer schedule --rate 10 --count 5` (pinned in test_arrival.cpp too).
const std::vector<ns> five = {91945323ns, 229688336ns, 240560506ns, 294446856ns, 426496312ns};
constexpr const char* five_sha256 =
    "8195b87548f9b23b4f1a03b6bed07ef38cffb714d87357f93a0c712aff477132";

schedule_spec five_spec() {
    schedule_spec spec;
    spec.rate = 10;
    spec.count = 5;
    return spec;
}

// ---------------------------------------------------------------------------------------
// SHA-256 (FIPS 180-2 test vectors).

TEST(ScheduleSha256, KnownVectors) {
    EXPECT_EQ(pacer::sha256_hex(""),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(pacer::sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(pacer::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(pacer::sha256_hex(std::string(1'000'000, 'a')),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    // Bytes, not C strings: an embedded NUL counts.
    EXPECT_NE(pacer::sha256_hex(std::string_view("a\0b", 3)), pacer::sha256_hex("a"));
}

// ---------------------------------------------------------------------------------------
// Canonical forms.

TEST(ScheduleFile, CanonicalOffsetsTextIsOneDecimalPerLine) {
    const std::vector<ns> offsets = {0ns, 1000ns, 2500ns, 9'000'000'000'000'000'000ns};
    EXPECT_EQ(pacer::schedule::canonical_offsets_text(offsets),
              "0\n1000\n2500\n9000000000000000000\n");
    EXPECT_EQ(pacer::schedule::canonical_offsets_text({}), "");
    EXPECT_EQ(pacer::schedule::schedule_sha256(offsets),
              pacer::sha256_hex("0\n1000\n2500\n9000000000000000000\n"));
    EXPECT_EQ(pacer::schedule::schedule_sha256(five), five_sha256);
}

TEST(ScheduleFile, CsvForm) {
    EXPECT_EQ(pacer::schedule::to_csv(five), "index,offset_ns\n"
                                             "0,91945323\n"
                                             "1,229688336\n"
                                             "2,240560506\n"
                                             "3,294446856\n"
                                             "4,426496312\n"
                                             "# sha256 " +
                                                 std::string(five_sha256) + "\n");
}

TEST(ScheduleFile, JsonForm) {
    EXPECT_EQ(pacer::schedule::to_json(five_spec(), five), "{\n"
                                                           "  \"arrival\": \"poisson\",\n"
                                                           "  \"rate\": 10,\n"
                                                           "  \"burstiness\": 1,\n"
                                                           "  \"seed\": 0,\n"
                                                           "  \"count\": 5,\n"
                                                           "  \"duration_s\": null,\n"
                                                           "  \"offsets_ns\": [\n"
                                                           "    91945323,\n"
                                                           "    229688336,\n"
                                                           "    240560506,\n"
                                                           "    294446856,\n"
                                                           "    426496312\n"
                                                           "  ],\n"
                                                           "  \"sha256\": \"" +
                                                               std::string(five_sha256) +
                                                               "\"\n"
                                                               "}\n");
}

TEST(ScheduleFile, JsonRoundTripKeepsEverything) {
    schedule_spec spec;
    spec.process = arrival_process::gamma;
    spec.rate = 12.345;
    spec.burstiness = 2.5;
    spec.seed = 18'446'744'073'709'551'615ULL; // 2^64 - 1: read back as an unsigned integer
    spec.duration = 1500ms;
    const auto offsets = pacer::schedule::make_schedule(spec);
    const auto doc = pacer::schedule::parse_schedule_json(pacer::schedule::to_json(spec, offsets));
    EXPECT_EQ(doc.spec.process, spec.process);
    EXPECT_EQ(doc.spec.rate, spec.rate);
    EXPECT_EQ(doc.spec.burstiness, spec.burstiness);
    EXPECT_EQ(doc.spec.seed, spec.seed);
    EXPECT_FALSE(doc.spec.count);
    EXPECT_EQ(doc.spec.duration, spec.duration);
    EXPECT_EQ(doc.offsets, offsets);
    EXPECT_EQ(doc.sha256, pacer::schedule::schedule_sha256(offsets));
    // The arguments read back regenerate the same schedule.
    EXPECT_EQ(pacer::schedule::make_schedule(doc.spec), offsets);
}

// Boost.JSON 1.81 does not round every decimal to the nearest double; the fractional fields are
// read from their text (found by fuzz_schedule_json: rate 93332.666666666666 came back one unit
// in the last place off, and its printed form parsed to yet another double).
TEST(ScheduleFile, FractionalFieldsAreTheNearestDoubleOfTheirText) {
    const std::vector<ns> two = {250ms, 500ms};
    const std::string text = R"({"arrival": "constant", "rate": 93332.666666666666,
        "burstiness": 1, "seed": 0, "count": 2, "duration_s": 1,
        "offsets_ns": [250000000, 500000000], "sha256": ")" +
                             pacer::schedule::schedule_sha256(two) + "\"}";
    const auto doc = pacer::schedule::parse_schedule_json(text);
    EXPECT_EQ(doc.spec.rate, 93332.666666666666);
    const auto again =
        pacer::schedule::parse_schedule_json(pacer::schedule::to_json(doc.spec, doc.offsets));
    EXPECT_EQ(again.spec.rate, doc.spec.rate);

    // Printed by `pacer schedule --format json` and read back: the same doubles, for values
    // whose shortest text has many digits.
    for (const double rate : {93332.66666666667, 0.1 + 0.2, 1.0 / 3.0, 2.0 / 3.0 * 1e5,
                              123456.78901234567, 9.999999999999999e3}) {
        schedule_spec spec;
        spec.process = arrival_process::gamma;
        spec.rate = rate;
        spec.burstiness = 1.0 + rate / 1e6;
        spec.count = 2;
        const auto offsets = pacer::schedule::make_schedule(spec);
        const auto doc2 =
            pacer::schedule::parse_schedule_json(pacer::schedule::to_json(spec, offsets));
        EXPECT_EQ(doc2.spec.rate, spec.rate) << rate;
        EXPECT_EQ(doc2.spec.burstiness, spec.burstiness) << rate;
    }
}

TEST(ScheduleFile, EmptyScheduleRoundTrips) {
    schedule_spec spec;
    spec.process = arrival_process::constant;
    spec.rate = 1;
    spec.duration = 100ms;
    const auto text = pacer::schedule::to_json(spec, {});
    EXPECT_NE(text.find("\"offsets_ns\": []"), std::string::npos);
    EXPECT_TRUE(pacer::schedule::parse_schedule_json(text).offsets.empty());
}

// Replaces the first occurrence of `from` in the canonical five-arrival JSON.
std::string five_json_with(const std::string& from, const std::string& to) {
    auto text = pacer::schedule::to_json(five_spec(), five);
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
}

std::string parse_error(std::string_view text) {
    try {
        pacer::schedule::parse_schedule_json(text, "s.json");
    } catch (const bad_input& e) {
        return e.what();
    }
    return "";
}

TEST(ScheduleFile, BadFilesGiveClearErrors) {
    const std::pair<std::string, std::string> cases[] = {
        {"{", "s.json: not valid JSON"},
        {"[1, 2]", "s.json: not a schedule: the top level must be a JSON object"},
        {five_json_with("\"arrival\"", "\"process\""), "s.json: missing field \"arrival\""},
        {five_json_with("\"poisson\"", "\"weibull\""), "s.json: unknown \"arrival\" \"weibull\""},
        {five_json_with("\"rate\": 10", "\"rate\": \"10\""), "s.json: \"rate\" must be a number"},
        {five_json_with("\"rate\": 10", "\"rate\": -10"),
         "s.json: invalid arguments in the file: --rate must be a finite number > 0"},
        {five_json_with("\"seed\": 0", "\"seed\": -1"),
         "s.json: \"seed\" must be a non-negative integer"},
        {five_json_with("\"count\": 5", "\"count\": null"),
         "s.json: invalid arguments in the file: one of --count or --duration is required"},
        {five_json_with("\"duration_s\": null", "\"duration_s\": \"60s\""),
         "s.json: \"duration_s\" must be a number or null"},
        {five_json_with("\"offsets_ns\": [", "\"offsets_ns\": {"), "s.json: not valid JSON"},
        {five_json_with("91945323", "-91945323"),
         "s.json: \"offsets_ns\"[0] must be a non-negative integer"},
        {five_json_with("240560506", "240560506.5"),
         "s.json: \"offsets_ns\"[2] must be a non-negative integer"},
        {five_json_with("240560506", "240"),
         "s.json: \"offsets_ns\" must be non-decreasing, but [2] < [1]"},
        {five_json_with("426496312", "426496313"), "s.json: sha256 mismatch: the file says"},
        {five_json_with("\"sha256\": \"", "\"sha256\": 1, \"x\": \""),
         "s.json: \"sha256\" must be a string"},
    };
    for (const auto& [text, expected] : cases) {
        const auto msg = parse_error(text);
        EXPECT_EQ(msg.rfind(expected, 0), 0u) << "got: " << msg << "\nfor:\n" << text;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    }
}

TEST(ScheduleFile, ReadsAFileAndNamesItInErrors) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pacer_test_schedule_file_" +
                      std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::filesystem::create_directories(dir);
    const auto path = dir / "schedule.json";
    {
        std::ofstream out(path, std::ios::binary);
        out << pacer::schedule::to_json(five_spec(), five);
    }
    const auto doc = pacer::schedule::read_schedule_file(path);
    EXPECT_EQ(doc.offsets, five);
    EXPECT_EQ(doc.sha256, five_sha256);

    try {
        pacer::schedule::read_schedule_file(dir / "missing.json");
        ADD_FAILURE() << "no error for a missing file";
    } catch (const bad_input& e) {
        EXPECT_NE(std::string(e.what()).find("missing.json: cannot open"), std::string::npos)
            << e.what();
    }
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << "not json";
    }
    try {
        pacer::schedule::read_schedule_file(path);
        ADD_FAILURE() << "no error for a bad file";
    } catch (const bad_input& e) {
        EXPECT_NE(std::string(e.what()).find("schedule.json: not valid JSON"), std::string::npos)
            << e.what();
    }
    std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------------------
// `pacer schedule`, run in process: parse a command line, run it, capture stdout.

struct cli_result {
    int code = -1;
    std::string out;
    std::string error_line; ///< the message of a pacer::bad_input, if thrown
};

cli_result run_schedule_cli(std::vector<std::string> args) {
    CLI::App app{"test", "pacer"};
    const auto cmd = pacer::cli::add_schedule_command(app);
    args.insert(args.begin(), "schedule");
    std::vector<const char*> argv = {"pacer"};
    for (const auto& a : args)
        argv.push_back(a.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
    cli_result r;
    ::testing::internal::CaptureStdout();
    try {
        r.code = cmd.run();
    } catch (const pacer::bad_input& e) {
        r.error_line = e.what();
    }
    r.out = ::testing::internal::GetCapturedStdout();
    return r;
}

TEST(ScheduleCommand, PrintsCsvByDefaultAndJsonOnRequest) {
    auto r = run_schedule_cli({"--rate", "10", "--count", "5"});
    EXPECT_EQ(r.code, pacer::runtime::exit_ok);
    EXPECT_EQ(r.out, pacer::schedule::to_csv(five));

    r = run_schedule_cli({"--rate", "10", "--count", "5", "--format", "json"});
    EXPECT_EQ(r.out, pacer::schedule::to_json(five_spec(), five));
    // Same hash whatever the format.
    EXPECT_NE(r.out.find(five_sha256), std::string::npos);
}

TEST(ScheduleCommand, PassesEveryFlagThrough) {
    const auto r = run_schedule_cli({"--arrival", "gamma", "--rate", "20", "--burstiness", "2",
                                     "--seed", "7", "--duration", "30s", "--format", "json"});
    ASSERT_EQ(r.code, pacer::runtime::exit_ok) << r.error_line;
    schedule_spec spec;
    spec.process = arrival_process::gamma;
    spec.rate = 20;
    spec.burstiness = 2;
    spec.seed = 7;
    spec.duration = 30s;
    EXPECT_EQ(r.out, pacer::schedule::to_json(spec, pacer::schedule::make_schedule(spec)));
}

TEST(ScheduleCommand, BadArgumentsAreUsageErrorsNamingTheFlag) {
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"--rate", "0", "--count", "5"}, "--rate must be a finite number > 0"},
        {{"--rate", "inf", "--count", "5"}, "--rate must be a finite number > 0"},
        {{"--rate", "10"}, "pacer schedule needs --count N or --duration D (or both)"},
        {{"--rate", "10", "--count", "0"}, "--count must be > 0"},
        {{"--rate", "10", "--count", "-3"}, "--count must be > 0"},
        {{"--rate", "10", "--duration", "soon"}, "--duration must be a duration such as 60s"},
        {{"--rate", "10", "--duration", "0s"}, "--duration must be > 0"},
        {{"--arrival", "gamma", "--rate", "10", "--count", "5", "--burstiness", "0"},
         "--burstiness must be a finite number > 0"},
        {{"--rate", "10", "--count", "5", "--burstiness", "2"},
         "--burstiness applies only to --arrival gamma"},
    };
    for (const auto& [args, expected] : cases) {
        const auto r = run_schedule_cli(args);
        EXPECT_EQ(r.error_line.rfind(expected, 0), 0u) << "got: " << r.error_line;
        EXPECT_TRUE(r.out.empty()) << "nothing is printed on a usage error";
    }
}

TEST(ScheduleCommand, ParserRejectsUnknownProcessAndFormat) {
    // Keep each returned command: it owns the settings the parsed options are written into.
    CLI::App app{"test", "pacer"};
    const auto cmd = pacer::cli::add_schedule_command(app);
    const char* bad_arrival[] = {"pacer",  "schedule", "--arrival", "weibull",
                                 "--rate", "1",        "--count",   "1"};
    EXPECT_THROW(app.parse(8, bad_arrival), CLI::ValidationError);
    CLI::App app2{"test", "pacer"};
    const auto cmd2 = pacer::cli::add_schedule_command(app2);
    const char* bad_format[] = {"pacer",  "schedule", "--format", "xml",
                                "--rate", "1",        "--count",  "1"};
    EXPECT_THROW(app2.parse(8, bad_format), CLI::ValidationError);
    CLI::App app3{"test", "pacer"};
    const auto cmd3 = pacer::cli::add_schedule_command(app3);
    // Without --rate (or --stages) the parse passes and the command refuses (a usage error,
    // see StagesConflictsAreUsageErrors): --rate is no longer required by itself.
    const char* no_rate[] = {"pacer", "schedule", "--count", "1"};
    EXPECT_NO_THROW(app3.parse(4, no_rate));
    EXPECT_THROW(cmd3.run(), pacer::bad_input);
}

TEST(ScheduleCommand, HelpExplainsTheVllmBurstinessMapping) {
    CLI::App app{"test", "pacer"};
    const auto cmd = pacer::cli::add_schedule_command(app);
    const std::string help = cmd.app->help();
    for (const char* flag :
         {"--arrival", "--rate", "--burstiness", "--seed", "--count", "--duration", "--format"})
        EXPECT_NE(help.find(flag), std::string::npos) << flag;
    EXPECT_NE(help.find("vLLM's value = 1/B^2"), std::string::npos) << help;
}

} // namespace

// ---------------------------------------------------------------------------------------
// Staged schedules (--stages): the JSON form carries the stages text and a null rate.

namespace {

TEST(ScheduleFile, StagedScheduleRoundTrips) {
    schedule_spec spec;
    spec.process = arrival_process::gamma;
    spec.burstiness = 2;
    spec.seed = 9;
    spec.stages = pacer::schedule::parse_stages("2s:3/s,1500ms:3-0.1/s");
    const auto offsets = pacer::schedule::make_schedule(spec);
    const auto text = pacer::schedule::to_json(spec, offsets);
    EXPECT_NE(text.find("\"rate\": null,"), std::string::npos) << text;
    EXPECT_NE(text.find("\"stages\": \"2s:3/s,1s500ms:3-0.1/s\",\n"), std::string::npos) << text;
    const auto doc = pacer::schedule::parse_schedule_json(text);
    EXPECT_EQ(doc.spec.stages, spec.stages);
    EXPECT_EQ(doc.offsets, offsets);
    EXPECT_EQ(pacer::schedule::make_schedule(doc.spec), offsets);
    EXPECT_EQ(pacer::schedule::to_json(doc.spec, doc.offsets), text);

    // A rate beside the stages, or bad stages, is refused in one line naming the file.
    auto with_rate = text;
    with_rate.replace(with_rate.find("\"rate\": null"), 12, "\"rate\": 3");
    EXPECT_THROW(
        {
            try {
                pacer::schedule::parse_schedule_json(with_rate, "s.json");
            } catch (const bad_input& e) {
                EXPECT_STREQ(e.what(), "s.json: \"rate\" must be null in a staged schedule (the "
                                       "stages give the rate)");
                throw;
            }
        },
        bad_input);
    auto bad_stages = text;
    bad_stages.replace(bad_stages.find("2s:3/s"), 6, "2s:x/s");
    EXPECT_THROW(pacer::schedule::parse_schedule_json(bad_stages), bad_input);
}

TEST(ScheduleCommand, StagesPrintTheSameBytesTwice) {
    const std::vector<std::string> args = {
        "--stages", "3s:10/s,2s:10-50/s,1s:50/s", "--seed", "4", "--format", "json"};
    const auto a = run_schedule_cli(args);
    const auto b = run_schedule_cli(args);
    ASSERT_EQ(a.code, pacer::runtime::exit_ok) << a.error_line;
    EXPECT_EQ(a.out, b.out);
    schedule_spec spec;
    spec.seed = 4;
    spec.stages = pacer::schedule::parse_stages("3s:10/s,2s:10-50/s,1s:50/s");
    EXPECT_EQ(a.out, pacer::schedule::to_json(spec, pacer::schedule::make_schedule(spec)));
    // --count ends the stages early.
    const auto capped = run_schedule_cli({"--stages", "3s:10/s,2s:10-50/s", "--count", "7"});
    ASSERT_EQ(capped.code, pacer::runtime::exit_ok) << capped.error_line;
    EXPECT_EQ(std::count(capped.out.begin(), capped.out.end(), '\n'), 9); // header, 7, sha
}

TEST(ScheduleCommand, StagesConflictsAreUsageErrors) {
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"--stages", "10s:5/s", "--rate", "5"},
         "--stages sets the rate and the length of the schedule: drop --rate and --duration"},
        {{"--stages", "10s:5/s", "--duration", "5s"},
         "--stages sets the rate and the length of the schedule: drop --rate and --duration"},
        {{"--count", "5"}, "pacer schedule needs --rate R (arrivals per second) or --stages"},
        {{"--stages", "10s:5/s"}, ""},
        {{"--stages", "10s:5"}, "--stages: stage 1 \"10s:5\" needs its rate per second"},
        {{"--stages", "10s:five/s"}, "--stages: stage 1 \"10s:five/s\" needs a rate"},
        {{"--stages", "10s:5/s", "--burstiness", "2"},
         "--burstiness applies only to --arrival gamma"},
    };
    for (const auto& [args, expected] : cases) {
        const auto r = run_schedule_cli(args);
        if (expected.empty()) {
            EXPECT_EQ(r.code, pacer::runtime::exit_ok) << r.error_line;
            continue;
        }
        EXPECT_EQ(r.error_line.rfind(expected, 0), 0u) << "got: " << r.error_line;
        EXPECT_TRUE(r.out.empty());
    }
}

} // namespace

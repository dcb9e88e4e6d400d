// End to end: `pacer dataset synth` makes a tiny dataset with espeak-ng, and `pacer record`
// records it against a real `pacer native-mock` process on loopback (skipped, with a message,
// when espeak-ng is not installed). Nothing here asserts a speed: a variant whose packets were
// late on a loaded host fails its input timing, and the run exits 3, which is accepted.

#include <pacer/record/dataset.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "integration/process.hpp"
#include <algorithm>
#include <cmath>
#include <csignal>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

const char* const variant_files[] = {"input.pcm",
                                     "input.wav",
                                     "manifest.json",
                                     "continuous.jsonl",
                                     "input-send-receipts.json",
                                     "report.json",
                                     "output-media.wav",
                                     "output-playout.wav",
                                     "playout.json",
                                     "transcript.json"};

bool have_espeak() {
    return record::find_program("espeak-ng").has_value();
}

#define SKIP_WITHOUT_ESPEAK()                                                                      \
    if (!have_espeak())                                                                            \
    GTEST_SKIP() << "espeak-ng is not installed (apt-get install espeak-ng): no synthetic dataset"

// 1 subset x 2 samples of 2-3 s: 4 variants.
void synth(const fs::path& dir, const std::string& seed = "7") {
    const auto r = run_pacer({"dataset", "synth", "--subsets", "1", "--per-subset", "2", "--min-s",
                              "2", "--max-s", "3", "--seed", seed, "-o", dir.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out;
}

// A status a variant may have after a finished recording: pass, or fail when the client fell
// behind (exit 3: its input timing was late).
void expect_recorded(const json::value& variant, int exit_code) {
    const std::string status(at(variant, {"status"}).as_string());
    if (exit_code == 3 && status == "fail")
        return;
    EXPECT_EQ(status, "pass") << json::serialize(variant);
}

TEST(RecordE2E, SynthIsReproducibleAndNormalized) {
    SKIP_WITHOUT_ESPEAK();
    temp_dir a, b, c;
    synth(a.path());
    synth(b.path());
    synth(c.path(), "8");
    EXPECT_EQ(slurp(a / "manifest.jsonl"), slurp(b / "manifest.jsonl"));
    EXPECT_NE(slurp(a / "manifest.jsonl"), slurp(c / "manifest.jsonl"));
    const auto lines = read_jsonl(a / "manifest.jsonl");
    ASSERT_EQ(lines.size(), 2u);
    for (const auto& line : lines) {
        EXPECT_FALSE(at(line, {"text"}).as_string().empty());
        for (const char* v : {"clean", "overlap"}) {
            const std::string rel(at(line, {"variants", v}).as_string());
            EXPECT_EQ(slurp(a / rel), slurp(b / rel)) << rel; // byte-identical audio
            const auto audio = record::read_wav_mono(a / rel);
            EXPECT_EQ(audio.rate, 16000);
            EXPECT_GT(audio.duration_s(), 1.0);
        }
        // The overlap is the clean speech with a second voice over it: not the same audio.
        EXPECT_NE(slurp(a / std::string(at(line, {"variants", "clean"}).as_string())),
                  slurp(a / std::string(at(line, {"variants", "overlap"}).as_string())));
    }
    const auto meta = read_json(a / "dataset.json");
    EXPECT_EQ(at(meta, {"seed"}).to_number<int>(), 7);
    EXPECT_EQ(at(meta, {"samples"}).as_array().size(), 2u);
    EXPECT_EQ(at(meta, {"samples"}).as_array()[0].at("normalization").at("resampler").as_string(),
              "libsamplerate SRC_SINC_BEST_QUALITY");
    // An existing folder is never overwritten.
    const auto again = run_pacer({"dataset", "synth", "-o", a.path().string()});
    EXPECT_EQ(again.exit_code, 2) << again.out;
    EXPECT_EQ(slurp(a / "manifest.jsonl"), slurp(b / "manifest.jsonl"));
}

TEST(RecordE2E, RecordsEveryVariantWithItsFilesStatusAndRunJson) {
    SKIP_WITHOUT_ESPEAK();
    temp_dir data, out;
    synth(data.path());
    mock_process mock({}, "native-mock");
    const auto r = run_pacer({"record", "--url", mock.url(), "--dataset", data.path().string(),
                              "--concurrency", "4", "--workers", "2", "-o", out.path().string()});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    const auto run = read_json(out / "run.json");
    EXPECT_EQ(at(run, {"status"}).as_string(), "complete");
    EXPECT_EQ(at(run, {"config", "concurrency"}).to_number<int>(), 4);
    EXPECT_EQ(at(run, {"summary", "variants_selected"}).to_number<int>(), 4);
    EXPECT_EQ(at(run, {"summary", "variants", "pending"}).to_number<int>(), 0);
    for (const char* k : {"client_loop", "pacing", "cpu", "initial_delay_s"})
        EXPECT_TRUE(at(run, {"load"}).as_object().contains(k)) << k;
    EXPECT_EQ(at(run, {"load", "sessions"}).to_number<int>(), 4);
    EXPECT_EQ(at(run, {"load", "batches"}).to_number<int>(), 1); // 4 variants, at most 4 at once
    EXPECT_EQ(at(run, {"load", "cpu", "workers"}).to_number<int>(), 2);
    EXPECT_GT(at(run, {"load", "cpu", "worker_cpu_s"}).to_number<double>(), 0.0);
    EXPECT_FALSE(fs::exists(out / "run.json.tmp"));
    const auto& samples = at(run, {"samples"}).as_array();
    ASSERT_EQ(samples.size(), 2u);
    for (const auto& sample : samples)
        for (const auto& [name, v] : at(sample, {"variants"}).as_object()) {
            SCOPED_TRACE(std::string(sample.at("id").as_string()) + "/" + std::string(name));
            expect_recorded(v, r.exit_code);
            const fs::path dir = out / std::string(at(v, {"directory"}).as_string());
            for (const char* f : variant_files)
                EXPECT_TRUE(fs::exists(dir / f)) << f;
            const auto report = read_json(dir / "report.json");
            EXPECT_EQ(at(report, {"cases"}).as_array()[0].at("status"), at(v, {"status"}));
            const auto manifest = read_json(dir / "manifest.json");
            EXPECT_EQ(at(manifest, {"dataset_sample"}), at(sample, {"id"}));
            EXPECT_EQ(at(manifest, {"dataset_variant"}).as_string(), name);
            EXPECT_EQ(at(manifest, {"input", "sample_rate"}).to_number<int>(), 16000);
            EXPECT_TRUE(at(manifest, {"normalization"}).as_object().contains("resampler"));
            // The input streamed is the source, normalized: same length as input.wav's audio.
            EXPECT_EQ(fs::file_size(dir / "input.pcm") / 2,
                      record::read_wav_mono(dir / "input.wav").samples.size());
            // The native mock answers with audio: the reconstruction holds it (22.05 kHz).
            const auto media = record::read_wav_mono(dir / "output-media.wav");
            EXPECT_EQ(media.rate, 22050);
            EXPECT_GT(media.samples.size(), 0u);
            EXPECT_GE(record::read_wav_mono(dir / "output-playout.wav").samples.size(),
                      media.samples.size());
        }
    // Nothing of the batches is left behind.
    for (const auto& e : fs::directory_iterator(out.path()))
        EXPECT_NE(e.path().filename().string().rfind(".batch-", 0), 0u) << e.path();
}

// At the end, report.html (every recorded variant a row, the pacing plots) and, with
// --export, the tables; --progress always prints each batch's live line into the pipe.
TEST(RecordE2E, WritesTheReportAndTablesAtTheEndAndShowsProgress) {
    SKIP_WITHOUT_ESPEAK();
    temp_dir data, out, quiet;
    synth(data.path());
    const auto r =
        run_pacer({"record", "--dataset", data.path().string(), "--concurrency", "2", "--progress",
                   "always", "--export", "csv", "-o", out.path().string()});
    ASSERT_TRUE(finished(r.exit_code)) << r.out;
    EXPECT_NE(r.out.find("progress batch 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("progress batch 2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find((out / "report.html").string()), std::string::npos) << r.out;
    const auto html = slurp(out / "report.html");
    for (const char* id : {"plot-deviation-cdf", "plot-heat-strip", "plot-send-time",
                           "id=\"variants\"", "data-key=\"load.pacing.packets_sent\""})
        EXPECT_NE(html.find(id), std::string::npos) << id;
    const auto run = read_json(out / "run.json");
    for (const auto& sample : at(run, {"samples"}).as_array())
        for (const auto& [name, v] : at(sample, {"variants"}).as_object())
            EXPECT_NE(
                html.find(fmt::format("<td>{}</td><td>subset-0</td><td>{}</td><td>{}</td>",
                                      std::string(sample.at("id").as_string()), std::string(name),
                                      std::string(at(v, {"status"}).as_string()))),
                std::string::npos)
                << name;
    const auto sessions = slurp(out / "tables-csv" / "sessions.csv");
    EXPECT_EQ(std::count(sessions.begin(), sessions.end(), '\n'), 1 + 4);
    EXPECT_TRUE(fs::exists(out / "tables-csv" / "packets.csv"));

    const auto q = run_pacer({"record", "--dataset", data.path().string(), "--concurrency", "4",
                              "--progress", "never", "--no-report", "-o", quiet.path().string()});
    ASSERT_TRUE(finished(q.exit_code)) << q.out;
    EXPECT_EQ(q.out.find("progress batch"), std::string::npos) << q.out;
    EXPECT_FALSE(fs::exists(quiet / "report.html"));
    EXPECT_FALSE(fs::exists(quiet / "tables-csv"));
}

TEST(RecordE2E, AnInterruptedRecordingResumesWithOnlyWhatIsMissing) {
    SKIP_WITHOUT_ESPEAK();
    temp_dir data, out;
    synth(data.path());
    mock_process mock({}, "native-mock");
    // One variant at a time: four batches; interrupted once the first is done.
    child rec({PACER_BINARY, "record", "--url", mock.url(), "--dataset", data.path().string(), "-c",
               "1", "--workers", "1", "-o", out.path().string()});
    std::string log;
    for (std::string line = rec.read_line(); !line.empty(); line = rec.read_line()) {
        log += line + "\n";
        if (line.rfind("batch 1:", 0) == 0)
            break;
    }
    ASSERT_NE(log.find("batch 1:"), std::string::npos) << log;
    rec.signal(SIGINT);
    log += rec.read_all();
    ASSERT_EQ(rec.wait(), 130) << log;
    const auto partial = read_json(out / "run.json"); // valid JSON, whatever was cut
    EXPECT_EQ(at(partial, {"status"}).as_string(), "interrupted");
    const auto pending = at(partial, {"summary", "variants", "pending"}).to_number<int>();
    EXPECT_GE(pending, 1);
    EXPECT_LE(pending, 3);
    // What was recorded stays as it is; only the pending variants are recorded.
    std::map<std::string, std::string> kept;
    for (const auto& sample : at(partial, {"samples"}).as_array())
        for (const auto& [name, v] : at(sample, {"variants"}).as_object())
            if (at(v, {"status"}).as_string() != "pending") {
                const fs::path dir = out / std::string(at(v, {"directory"}).as_string());
                kept[dir.string()] = slurp(dir / "continuous.jsonl");
                ASSERT_FALSE(kept[dir.string()].empty());
            } else {
                EXPECT_FALSE(fs::exists(out / std::string(at(v, {"directory"}).as_string())));
            }
    EXPECT_EQ(kept.size(), std::size_t(4 - pending));
    // The interrupted recording's page shows what was pending.
    const auto pending_cell = [](int n) {
        return fmt::format("data-key=\"summary.variants.pending\" data-value=\"{}\"", n);
    };
    const std::string before = slurp(out / "report.html");
    EXPECT_NE(before.find("<b>interrupted</b>"), std::string::npos);
    EXPECT_NE(before.find(pending_cell(pending)), std::string::npos);

    const auto r = run_pacer({"record", "--resume", out.path().string(), "--url", mock.url()});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    // Issue 33 item 7: --resume rewrites the report (no stale "pending", no "cannot create").
    EXPECT_EQ(r.out.find("cannot create"), std::string::npos) << r.out;
    const std::string after = slurp(out / "report.html");
    EXPECT_NE(after.find("<b>complete</b>"), std::string::npos);
    EXPECT_EQ(after.find("<b>interrupted</b>"), std::string::npos);
    EXPECT_NE(after.find(pending_cell(0)), std::string::npos);
    EXPECT_FALSE(fs::exists(out / "report.html.tmp"));
    const auto run = read_json(out / "run.json");
    EXPECT_EQ(at(run, {"status"}).as_string(), "complete");
    EXPECT_EQ(at(run, {"summary", "variants", "pending"}).to_number<int>(), 0);
    EXPECT_EQ(at(run, {"load", "sessions"}).to_number<int>(), pending);
    EXPECT_EQ(at(run, {"load", "earlier_attempts"}).as_array().size(), 1u);
    for (const auto& [dir, trace] : kept)
        EXPECT_EQ(slurp(fs::path(dir) / "continuous.jsonl"), trace) << dir;
    for (const auto& sample : at(run, {"samples"}).as_array())
        for (const auto& [name, v] : at(sample, {"variants"}).as_object()) {
            expect_recorded(v, r.exit_code);
            const fs::path dir = out / std::string(at(v, {"directory"}).as_string());
            for (const char* f : variant_files)
                EXPECT_TRUE(fs::exists(dir / f)) << dir << " " << f;
        }
    // A finished recording has nothing to resume: run.json stays as it is.
    const std::string finished = slurp(out / "run.json");
    const auto again = run_pacer({"record", "--resume", out.path().string()});
    EXPECT_EQ(again.exit_code, 0) << again.out;
    EXPECT_NE(again.out.find("nothing to record"), std::string::npos) << again.out;
    EXPECT_EQ(slurp(out / "run.json"), finished);
}

TEST(RecordE2E, BadInputExitsTwoAndWritesNothing) {
    temp_dir data, out;
    fs::create_directories(data.path());
    // No manifest.
    auto r = run_pacer({"record", "--dataset", data.path().string(), "-o", out.path().string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("pacer: --dataset"), std::string::npos) << r.out;
    // A manifest with a bad line: named, nothing created.
    std::ofstream(data / "manifest.jsonl") << "{\"id\":\"a\",\"variants\":{\"c\":\"a.wav\"}}\n"
                                           << "{\"id\":\"a\",\"variants\":{\"c\":\"b.wav\"}}\n";
    r = run_pacer({"record", "--dataset", data.path().string(), "-o", out.path().string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("manifest line 2"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out.path()));
    // --resume of a folder that holds no recording.
    fs::create_directories(out.path());
    r = run_pacer({"record", "--resume", out.path().string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_FALSE(fs::exists(out / "run.json"));
    // An existing output folder.
    r = run_pacer({"record", "--dataset", data.path().string(), "-o", out.path().string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    // A dataset that needs a subcommand.
    r = run_pacer({"dataset"});
    EXPECT_EQ(r.exit_code, 2) << r.out;
}

TEST(RecordE2E, AnUnreadableVariantIsAnErrorAndTheOthersAreRecorded) {
    temp_dir data, out;
    fs::create_directories(data.path());
    // One good 16 kHz WAV (1 s of a tone at 44.1 kHz, resampled) and one that is not a WAV.
    std::vector<float> tone(44100);
    for (std::size_t i = 0; i < tone.size(); ++i)
        tone[i] = 0.3f * static_cast<float>(std::sin(double(i) * 0.05));
    runtime::write_wav_float_as_pcm16(data / "good.wav", tone, 44100);
    std::ofstream(data / "bad.wav") << "not audio";
    std::ofstream(data / "manifest.jsonl")
        << "{\"id\":\"a\",\"variants\":{\"good\":\"good.wav\",\"bad\":\"bad.wav\"}}\n";
    mock_process mock({}, "native-mock");
    const auto r = run_pacer({"record", "--url", mock.url(), "--dataset", data.path().string(),
                              "-o", out.path().string()});
    EXPECT_TRUE(r.exit_code == 4 || r.exit_code == 3) << r.out; // a variant had an error
    const auto run = read_json(out / "run.json");
    const auto& v = at(run, {"samples"}).as_array()[0].at("variants");
    EXPECT_EQ(at(v, {"bad", "status"}).as_string(), "error");
    EXPECT_NE(json::serialize(at(v, {"bad", "errors"})).find("preparation"), std::string::npos);
    // Issue 33 item 18: the table names the variant and says why, as run.json does.
    EXPECT_NE(r.out.find("  error    a/bad: " +
                         std::string(at(v, {"bad", "errors"}).as_array()[0].as_string()) + "\n"),
              std::string::npos)
        << r.out;
    expect_recorded(at(v, {"good"}), r.exit_code);
    EXPECT_EQ(at(v, {"good", "normalization", "source_sample_rate"}).to_number<int>(), 44100);
    EXPECT_TRUE(at(v, {"good", "normalization", "resampled"}).as_bool());
}

} // namespace
} // namespace pacer::test

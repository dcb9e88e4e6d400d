// The recorder's pieces: the dataset manifest, the variant status rules, run.json (counts,
// resume, atomic checkpoints), the resampler and the output reconstruction.

#include <pacer/core/base64.hpp>
#include <pacer/record/dataset.hpp>
#include <pacer/record/postprocess.hpp>
#include <pacer/record/record_job.hpp>
#include <pacer/record/run_state.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>
#include <unistd.h>

namespace pacer::record {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

TEST(RecordManifest, ParsesSamplesVariantsAndDefaults) {
    const auto samples = parse_manifest(
        R"({"id":"a","subset":"s1","text":"hello","variants":{"clean":"a/clean.wav","overlap":"/x/o.wav"}})"
        "\n\n"
        R"({"id":"b","variants":{"clean":"b.wav"}})"
        "\n");
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[0].id, "a");
    EXPECT_EQ(samples[0].subset, "s1");
    EXPECT_EQ(samples[0].text, "hello");
    EXPECT_EQ(samples[0].variants.at("clean"), "a/clean.wav");
    EXPECT_EQ(samples[0].variants.at("overlap"), "/x/o.wav");
    EXPECT_EQ(samples[1].subset, "default");
    EXPECT_EQ(samples[1].text, "");
}

TEST(RecordManifest, RejectsBadLinesNamingTheLine) {
    auto message = [](std::string_view text) {
        try {
            parse_manifest(text);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(message("not json\n"), "manifest line 1: not a JSON object");
    EXPECT_NE(message(R"({"id":"a","variants":{}})").find("line 1: needs an object"),
              std::string::npos);
    EXPECT_NE(message("{\"id\":\"a\",\"variants\":{\"c\":\"x\"}}\n{\"id\":\"a\",\"variants\":"
                      "{\"c\":\"y\"}}")
                  .find("line 2: id \"a\" appears twice"),
              std::string::npos);
    EXPECT_NE(message(R"({"id":"../a","variants":{"c":"x"}})").find("folder name"),
              std::string::npos);
    EXPECT_NE(message(R"({"id":"a","variants":{"c":3}})").find("nonempty path"), std::string::npos);
    EXPECT_EQ(message("\n  \n"), "manifest has no samples");
}

TEST(RecordManifest, PerSubsetKeepsTheFirstKOfEachSubsetInOrder) {
    const auto all = parse_manifest(R"({"id":"a","subset":"x","variants":{"c":"1"}}
{"id":"b","subset":"y","variants":{"c":"1"}}
{"id":"c","subset":"x","variants":{"c":"1"}}
{"id":"d","subset":"x","variants":{"c":"1"}}
{"id":"e","subset":"y","variants":{"c":"1"}}
)");
    const auto one = select_per_subset(all, 1);
    ASSERT_EQ(one.size(), 2u);
    EXPECT_EQ(one[0].id, "a");
    EXPECT_EQ(one[1].id, "b");
    const auto two = select_per_subset(all, 2);
    ASSERT_EQ(two.size(), 4u);
    EXPECT_EQ(two[2].id, "c");
    EXPECT_EQ(two[3].id, "e");
    EXPECT_EQ(select_per_subset(all, 0).size(), 5u);
}

TEST(RecordStatus, FollowsThePipelineOrder) {
    EXPECT_EQ(variant_status({.preparation_error = true, .input_too_long = true, .verdict = {}}),
              "error");
    EXPECT_EQ(variant_status({.input_too_long = true, .session_error = true, .verdict = {}}),
              "invalid");
    EXPECT_EQ(variant_status({.session_error = true, .artifact_errors = 2, .verdict = "pass"}),
              "error");
    EXPECT_EQ(variant_status({.postprocess_error = true, .verdict = "pass"}), "error");
    EXPECT_EQ(variant_status({.artifact_errors = 1, .verdict = "pass"}), "fail");
    EXPECT_EQ(variant_status({.verdict = "pass"}), "pass");
    EXPECT_EQ(variant_status({.verdict = "not_exercised"}), "not_exercised");
    EXPECT_EQ(variant_status({.verdict = "fail"}), "fail");
    EXPECT_EQ(variant_status({.verdict = ""}), "error");
}

std::vector<variant_record> three_variants() {
    std::vector<variant_record> v(3);
    v[0] = {"s1", "x", "t", "clean", "a.wav", "samples/s1/clean", "pass", {{"note", 1}}};
    v[1] = {"s1", "x", "t", "overlap", "b.wav", "samples/s1/overlap", "fail", {}};
    v[2] = {"s2", "y", "", "clean", "c.wav", "samples/s2/clean", "pending", {}};
    return v;
}

TEST(RecordRunJson, CountsStatusesPairsAndSubsets) {
    const auto o = run_json({{"concurrency", 2}}, three_variants(), "running", {{"batches", 1}});
    EXPECT_EQ(o.at("status").as_string(), "running");
    const auto& summary = o.at("summary").as_object();
    EXPECT_EQ(summary.at("samples_selected").to_number<std::int64_t>(), 2);
    EXPECT_EQ(summary.at("variants_selected").to_number<std::int64_t>(), 3);
    const auto& counts = summary.at("variants").as_object();
    EXPECT_EQ(counts.size(), std::size(statuses)); // zeros included
    EXPECT_EQ(counts.at("pass").to_number<std::int64_t>(), 1);
    EXPECT_EQ(counts.at("fail").to_number<std::int64_t>(), 1);
    EXPECT_EQ(counts.at("pending").to_number<std::int64_t>(), 1);
    EXPECT_EQ(counts.at("error").to_number<std::int64_t>(), 0);
    EXPECT_EQ(summary.at("pairs_qualified").to_number<std::int64_t>(), 0);
    EXPECT_EQ(summary.at("per_subset").at("y").at("pending").to_number<std::int64_t>(), 1);
    const auto& s1 = o.at("samples").as_array()[0].as_object();
    EXPECT_EQ(s1.at("id").as_string(), "s1");
    const auto& clean = s1.at("variants").at("clean").as_object();
    EXPECT_EQ(clean.at("directory").as_string(), "samples/s1/clean");
    EXPECT_TRUE(clean.at("qualified").as_bool());
    EXPECT_EQ(clean.at("note").to_number<std::int64_t>(), 1);
}

TEST(RecordRunJson, ResumeKeepsOnlyFinishedVariants) {
    auto v = three_variants();
    const auto text = json::serialize(run_json({{"dataset", "/d"}}, v, "interrupted", {}));
    const auto r = parse_run_json(text);
    EXPECT_EQ(r.config.at("dataset").as_string(), "/d");
    ASSERT_EQ(r.finished.size(), 2u);
    EXPECT_EQ(r.finished.at("s1/clean").status, "pass");
    EXPECT_EQ(r.finished.at("s1/clean").detail.at("note").to_number<std::int64_t>(), 1);
    EXPECT_FALSE(r.finished.at("s1/clean").detail.contains("status"));
    EXPECT_EQ(r.finished.at("s1/overlap").status, "fail");
    EXPECT_FALSE(r.finished.contains("s2/clean"));
}

TEST(RecordRunJson, ResumeRefusesWhatIsNotARecording) {
    EXPECT_THROW(parse_run_json("{"), std::invalid_argument);
    EXPECT_THROW(parse_run_json(R"({"runs":[]})"), std::invalid_argument);
    EXPECT_THROW(parse_run_json(R"({"config":{},"samples":[{"id":"a","variants":{"c":{}}}]})"),
                 std::invalid_argument);
}

TEST(RecordCheckpoint, WritesTheNewestSnapshotAtomically) {
    test::scratch_folder dir("pacer-record-unit");
    const fs::path file = dir.path / "run.json";
    {
        checkpointer c(file);
        for (int i = 0; i < 50; ++i)
            c.post({{"i", i}});
        c.flush();
        EXPECT_EQ(json::parse(test::read_text(file)).at("i").to_number<std::int64_t>(), 49);
        EXPECT_EQ(c.posts(), 50u);
        EXPECT_GE(c.writes(), 1u);
        EXPECT_LE(c.writes(), 50u);
        c.post({{"i", 50}});
    } // the destructor writes what is pending
    EXPECT_EQ(json::parse(test::read_text(file)).at("i").to_number<std::int64_t>(), 50);
    EXPECT_FALSE(fs::exists(dir.path / "run.json.tmp"));
}

TEST(RecordCheckpoint, AFailedWriteIsReportedByFlush) {
    checkpointer c("/nonexistent-pacer-dir/run.json");
    c.post({{"i", 1}});
    EXPECT_THROW(c.flush(), std::runtime_error);
}

std::vector<float> tone(int rate, double hz, double seconds) {
    std::vector<float> v(static_cast<std::size_t>(rate * seconds));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>(0.5 * std::sin(2 * std::numbers::pi * hz * double(i) / rate));
    return v;
}

TEST(RecordResampler, NormalizesAnyWavAndRecordsTheConversion) {
    test::scratch_folder dir("pacer-record-unit");
    // 22.05 kHz: resampled to 16 kHz.
    const auto t = tone(22050, 300, 0.5);
    runtime::write_wav_float_as_pcm16(dir.path / "a.wav", t, 22050);
    const auto n = normalize_wav(dir.path / "a.wav");
    EXPECT_NEAR(double(n.pcm.size()) / 2, 8000.0, 2.0);
    EXPECT_EQ(n.normalization.at("source_sample_rate").to_number<std::int64_t>(), 22050);
    EXPECT_TRUE(n.normalization.at("resampled").as_bool());
    EXPECT_TRUE(n.normalization.at("converted").as_bool());
    // 16 kHz PCM16 already: bit-exact, nothing converted.
    std::vector<std::uint8_t> pcm; // full scale, both extremes included
    for (std::uint32_t i = 0; i < 4000; ++i) {
        const auto v = static_cast<std::uint16_t>(i == 0 ? 0x7fff : i == 1 ? 0x8000 : i * 7919u);
        pcm.push_back(static_cast<std::uint8_t>(v & 0xff));
        pcm.push_back(static_cast<std::uint8_t>(v >> 8));
    }
    runtime::write_wav_pcm16(dir.path / "b.wav", pcm, 16000);
    const auto m = normalize_wav(dir.path / "b.wav");
    EXPECT_EQ(m.pcm, pcm);
    EXPECT_FALSE(m.normalization.at("converted").as_bool());
    EXPECT_EQ(m.normalization.at("resampler").as_string(), "none");
    EXPECT_THROW(normalize_wav(dir.path / "missing.wav"), std::runtime_error);
}

TEST(RecordSynth, SeededTextIsReproducible) {
    EXPECT_EQ(seeded_text(7, 30), seeded_text(7, 30));
    EXPECT_NE(seeded_text(7, 30), seeded_text(8, 30));
    EXPECT_EQ(seeded_text(7, 30).back(), '.');
}

metrics::trace_line line(std::string direction, double t, json::object event) {
    return {std::move(direction), t, std::move(event), 0};
}

json::object audio_delta(std::size_t samples) {
    const std::string pcm(samples * 2, '\x01');
    return {{"type", "response.output_audio.delta"}, {"delta", base64_encode(pcm)}};
}

TEST(RecordOutput, UnderrunsBecomeSilenceInThePlayout) {
    // 1000 Hz output: 100 samples = 0.1 s. Playout starts at 1.0 + 0.08 reserve; the first
    // packet plays to 1.18; the second arrives at 1.5: 0.32 s of silence, one underrun. The
    // third arrives (at 1.55) while the second still plays (to 1.6): no underrun.
    std::vector<metrics::trace_line> trace{
        line("send", 0.5, {{"type", "input_audio_buffer.append"}}),
        line("receive", 1.0, audio_delta(100)),
        line("receive", 1.2,
             {{"type", "response.output_audio_transcript.delta"}, {"delta", "hi "}}),
        line("receive", 1.5, audio_delta(100)),
        line("receive", 1.55, audio_delta(50)),
        line("receive", 1.6,
             {{"type", "response.output_audio_transcript.delta"}, {"delta", "there"}}),
    };
    const auto r = reconstruct_output(trace, 1000, 0.08);
    EXPECT_EQ(r.media.size(), 250u * 2);
    EXPECT_EQ(r.underruns, 1u);
    EXPECT_NEAR(r.underrun_s, 0.32, 1e-9);
    EXPECT_EQ(r.playout.size(), (250u + 320u) * 2);
    EXPECT_EQ(r.playout[100 * 2], 0);   // the silence follows the first packet
    EXPECT_EQ(r.playout[99 * 2], 0x01); // the first packet's last sample
    ASSERT_TRUE(r.initial_delay_s);
    EXPECT_NEAR(*r.initial_delay_s, 0.5, 1e-12);
    EXPECT_EQ(r.transcript, "hi there");
    EXPECT_TRUE(r.errors.empty());
}

TEST(RecordOutput, AnUndecodableDeltaIsAnError) {
    std::vector<metrics::trace_line> trace{
        line("receive", 1.0, {{"type", "response.output_audio.delta"}, {"delta", "@@@"}})};
    const auto r = reconstruct_output(trace, 1000, 0.08);
    EXPECT_EQ(r.errors.size(), 1u);
    EXPECT_TRUE(r.media.empty());
}

} // namespace
} // namespace pacer::record

namespace pacer::record {
namespace {

// The worker's loop over pipes: one summary line per job line, an unreadable folder is an
// `error` summary (never a dead worker), and the loop ends at end of input.
TEST(RecordWorker, AnswersEveryJobLineAndReportsAnUnreadableFolderAsAnError) {
    int in[2], out[2];
    ASSERT_EQ(::pipe(in), 0);
    ASSERT_EQ(::pipe(out), 0);
    const std::string jobs =
        R"({"dir":"/nonexistent-pacer/a","profile":"nemotron","input_duration_s":1,)"
        R"("startup_reserve_s":0.08})"
        "\n"
        "not json\n";
    ASSERT_EQ(::write(in[1], jobs.data(), jobs.size()), static_cast<ssize_t>(jobs.size()));
    ::close(in[1]);
    EXPECT_EQ(worker_loop(in[0], out[1]), 0);
    ::close(in[0]);
    ::close(out[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;)
        text.append(buf, static_cast<std::size_t>(n));
    ::close(out[0]);
    std::istringstream lines(text);
    std::string first, second, third;
    ASSERT_TRUE(std::getline(lines, first));
    ASSERT_TRUE(std::getline(lines, second));
    EXPECT_FALSE(std::getline(lines, third));
    const auto a = json::parse(first).as_object();
    EXPECT_EQ(a.at("status").as_string(), "error");
    EXPECT_EQ(a.at("dir").as_string(), "/nonexistent-pacer/a");
    EXPECT_NE(json::serialize(a.at("errors")).find("post-processing: cannot read"),
              std::string::npos);
    EXPECT_TRUE(a.at("cpu_s").is_number());
    EXPECT_EQ(json::parse(second).at("status").as_string(), "error");
}

// A recording resumed from run.json takes back the settings run.json's config recorded; a
// run.json that lacks one is refused, naming it.
TEST(RecordJob, ConfigGivesTheSettingsBackOnResume) {
    record_options o;
    o.url = "ws://127.0.0.1:9/v1/realtime";
    o.dataset = "/data/set";
    o.concurrency = 3;
    o.per_subset = 2;
    o.profile = "minicpmo";
    o.timeout_s = 42;
    o.stagger_ms = 7;
    o.startup_reserve_ms = 120;
    o.threads = 2;
    o.postprocess = "inline";
    o.postprocess_command = "true";
    const auto config = config_json(o, 0);
    EXPECT_EQ(config.at("workers").to_number<std::size_t>(), 0u);
    EXPECT_EQ(config.at("admission").as_string(), "batches");

    record_options back;
    back.workers = 0; // not given: run.json's
    apply_config(back, config);
    EXPECT_EQ(back.url, o.url);
    EXPECT_EQ(back.dataset, "/data/set");
    EXPECT_EQ(back.concurrency, 3u);
    EXPECT_EQ(back.per_subset, 2u);
    EXPECT_EQ(back.profile, "minicpmo");
    EXPECT_EQ(back.timeout_s, 42);
    EXPECT_EQ(back.stagger_ms, 7);
    EXPECT_EQ(back.startup_reserve_ms, 120);
    EXPECT_EQ(back.threads, 2u);
    EXPECT_EQ(back.postprocess, "inline");
    EXPECT_EQ(back.postprocess_command, "true");

    // A --url given on resume wins over the recorded one.
    record_options given;
    given.url = "ws://elsewhere:1/v1/realtime";
    apply_config(given, config);
    EXPECT_EQ(given.url, "ws://elsewhere:1/v1/realtime");

    auto partial = config;
    partial.erase("timeout_s");
    try {
        apply_config(back, partial);
        ADD_FAILURE() << "a config without timeout_s was taken";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "--resume: run.json config has no timeout_s");
    }
}

// One record per variant, in the manifest's order; on resume, what an earlier attempt finished
// keeps its status and detail, and the rest is pending.
TEST(RecordJob, VariantRecordsKeepWhatAnEarlierAttemptFinished) {
    const auto samples = parse_manifest(
        R"({"id":"a","subset":"s1","text":"hi","variants":{"clean":"a.wav","noisy":"n.wav"}})"
        "\n"
        R"({"id":"b","variants":{"clean":"b.wav"}})"
        "\n");
    const auto fresh = variant_records(samples, nullptr);
    ASSERT_EQ(fresh.size(), 3u);
    EXPECT_EQ(fresh[0].directory, "samples/a/clean");
    EXPECT_EQ(fresh[1].directory, "samples/a/noisy");
    EXPECT_EQ(fresh[1].source, "n.wav");
    EXPECT_EQ(fresh[2].subset, "default");
    for (const auto& r : fresh)
        EXPECT_EQ(r.status, "pending");

    resume_state earlier;
    variant_record done;
    done.status = "pass";
    done.detail["note"] = 1;
    earlier.finished["a/noisy"] = done;
    const auto resumed = variant_records(samples, &earlier);
    ASSERT_EQ(resumed.size(), 3u);
    EXPECT_EQ(resumed[0].status, "pending");
    EXPECT_EQ(resumed[1].status, "pass");
    EXPECT_EQ(resumed[1].detail.at("note").to_number<std::int64_t>(), 1);
    EXPECT_EQ(resumed[2].status, "pending");
}

} // namespace
} // namespace pacer::record

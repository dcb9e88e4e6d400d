// `pacer record`: the options, and the wiring of what module `record` may not include: the
// built-in native mock when no `--url` is given, the progress line and the end outputs. The
// checks and the plan (record::plan_recording, record::print_plan) and the recording itself
// (record::record_planned) are module `record`'s (src/record/record_plan.cpp,
// src/record/record_job.cpp, docs/recording.md).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/console/progress.hpp>
#include <pacer/record/record_plan.hpp>
#include <pacer/report/end_report.hpp>
#include <pacer/runtime/exit_status.hpp>

#include <CLI/CLI.hpp>

#include <unistd.h>

namespace pacer::cli {

namespace fs = std::filesystem;

namespace {

struct record_settings : record::record_options {
    bool postprocess_given = false, command_given = false, workers_given = false;
    bool worker = false;
    bool dry_run = false;
};

// The progress line of each batch (run's reporter: its own thread, fed by the sessions'
// relaxed atomic totals, as pacer run's).
class batch_progress final : public record::record_observer {
public:
    explicit batch_progress(console::progress_mode mode) : progress_(mode) {}
    session::live_counters* batch_starting(const std::string& label, double expected_s) override {
        progress_.begin(label, expected_s);
        return progress_.on() ? &progress_.counters() : nullptr;
    }
    void batch_ended() override { progress_.end(); }

private:
    console::progress_reporter progress_;
};

int record(const record_settings& s) {
    if (s.worker)
        return record::run_postprocess_worker();
    auto job = record::plan_recording(s, {s.postprocess_given, s.command_given, s.workers_given});
    if (s.dry_run) {
        record::print_plan(job);
        return runtime::exit_ok;
    }
    std::unique_ptr<local_mock> mock; // no --url (nor one in a resumed run.json)
    if (job.options.url.empty()) {
        job.start_server = [&mock, profile = job.profile] {
            mock = built_in_native_mock(profile);
            return mock->url();
        };
        job.stop_server = [&mock] { return mock->stop(); };
    }
    const auto progress_mode = console::resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1);
    batch_progress progress(*progress_mode);
    job.observer = &progress;
    job.end = {
        [](const fs::path& dir, bool replace) { return report::write_end_report(dir, replace); },
        report::write_end_tables};
    return record::record_planned(job);
}

} // namespace

command add_record_command(CLI::App& app) {
    auto s = std::make_shared<record_settings>();
    auto* sub = app.add_subcommand(
        "record",
        "Record every selected variant of a dataset (pacer dataset synth makes one) as a native "
        "session: at most --concurrency at once, in batches that each start from one common "
        "start gate. Per variant, samples/<sample>/<variant>/ holds input.pcm, input.wav, "
        "manifest.json, continuous.jsonl, input-send-receipts.json, report.json, "
        "output-media.wav, output-playout.wav, playout.json and transcript.json, and a status "
        "(invalid, error, fail, not_exercised, pass). run.json is rewritten atomically as the "
        "recording goes; --resume OUT records only what is missing. Post-processing runs in "
        "child processes at nice 10 (--postprocess), followed by your own step per variant with "
        "--postprocess-command (docs/recording.md).\n"
        "Exit status: 0 every variant recorded, none failed; 2 bad input; 3 the client fell "
        "behind (a late packet or a loop stall over 80 ms); 4 some variant failed or had an "
        "error; 130 interrupted (run.json stays valid: resume it).");
    sub->add_option("--url", s->url,
                    "Server, e.g. ws://127.0.0.1:8097/v1/realtime. Default: the built-in native "
                    "mock of --profile, in this process");
    sub->add_option("--dataset", s->dataset, "Dataset folder holding manifest.jsonl");
    sub->add_option("-c,--concurrency", s->concurrency, "Variants recorded at once, at most")
        ->check(whole_number(1, session::max_sessions))
        ->capture_default_str();
    sub->add_option("--per-subset", s->per_subset,
                    "Only the first K samples of every subset (0: all)")
        ->check(whole_number(0, session::max_sessions))
        ->capture_default_str();
    sub->add_option("--profile", s->profile, "Server profile: nemotron or minicpmo")
        ->capture_default_str();
    sub->add_option("-o,--output", s->output,
                    "Result folder; must not exist. Default: pacer-results/record-<UTC time>")
        ->check(non_empty_path());
    sub->add_option("--resume", s->resume,
                    "Continue the recording in this folder with its recorded settings: only "
                    "variants still pending are recorded");
    sub->add_option("--timeout", s->timeout,
                    "Per-session deadline, a duration such as 90s or 3m like every other "
                    "duration (a bare number is seconds, as before: 180 is 180s), at most 24h; an "
                    "input not shorter is `invalid`")
        ->capture_default_str();
    sub->add_option("--stagger-ms", s->stagger_ms,
                    "Session i of a batch of N starts stagger x i/N after the common start. The "
                    "default is 0, where run's is 80: a batch starts on one grid from its start "
                    "gate, as serve's levels and the reference harness do")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_option("--startup-reserve-ms", s->startup_reserve_ms,
                    "Playback buffer of the playout reconstruction and the underrun metric")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    auto* workers_opt =
        sub->add_option("--workers", s->workers,
                        "Post-processing processes of --postprocess pool. Default: a quarter of "
                        "the CPUs, 1 to 4")
            ->check(whole_number(1, 64));
    auto* postprocess_opt = sub->add_option(
        "--postprocess", s->postprocess,
        "Where each variant is post-processed once its session has closed: pool (child processes "
        "at nice 10, started before the first session) or inline (in the recording process, on "
        "the session's thread, blocking its other sessions as the reference harness did: a "
        "diagnostic that shows why the pool exists)");
    postprocess_opt->capture_default_str();
    auto* command_opt = sub->add_option(
        "--postprocess-command", s->postprocess_command,
        "Shell command run once per recorded variant after pacer's post-processing, e.g. an ASR "
        "or scoring script: /bin/sh -c CMD with the variant folder as $1 and PACER_VARIANT_DIR "
        "(status so far: PACER_VARIANT_STATUS); stdout and stderr go to "
        "postprocess-command.out/.err in the folder. Run by the pool's workers, or by the "
        "recorder itself with --postprocess inline. A command that does not exit 0 makes the "
        "variant `error`");
    sub->add_option("-t,--threads", s->threads, "Session contexts (one thread each)")
        ->check(whole_number(1, max_threads))
        ->capture_default_str();
    add_progress_option(*sub, s->progress,
                        "each batch: elapsed and ETA, sessions active/done/failed, packets sent "
                        "and late, loop lag max and errors",
                        "the end of each batch");
    add_end_output_options(*sub, s->no_report, s->export_format);
    sub->add_flag("--worker", s->worker, "(internal) post-process variant folders read from stdin")
        ->group("");
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s, workers_opt, postprocess_opt, command_opt] {
                s->workers_given = workers_opt->count() > 0;
                s->postprocess_given = postprocess_opt->count() > 0;
                s->command_given = command_opt->count() > 0;
                return record(*s);
            }};
}

} // namespace pacer::cli

// `pacer record`: the options and their checks; the built-in native mock when no `--url` is
// given; the `--dry-run` plan (record::print_plan) and the recording itself
// (record::execute_recording) are module `record`'s (src/record/record_job.cpp,
// docs/recording.md).

#include <pacer/cli/auto_report.hpp>
#include <pacer/cli/checks.hpp>
#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/core/units.hpp>
#include <pacer/record/postprocess.hpp>
#include <pacer/record/record_job.hpp>
#include <pacer/run/progress.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/server/native_mock.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
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
    explicit batch_progress(run::progress_mode mode) : progress_(mode) {}
    session::live_counters* batch_starting(const std::string& label, double expected_s) override {
        progress_.begin(label, expected_s);
        return progress_.on() ? &progress_.counters() : nullptr;
    }
    void batch_ended() override { progress_.end(); }

private:
    run::progress_reporter progress_;
};

// --timeout as a duration, and the exclusive options; on --resume, the settings of its
// run.json. Returns what an earlier attempt left, if resumed.
std::optional<record::resume_state> check_settings(record_settings& s, fs::path& out) {
    {
        const auto t = parse_duration(s.timeout);
        if (!t || t->count() == 0 || *t > std::chrono::hours(24))
            throw usage_error(fmt::format(
                "--timeout '{}' is not a duration from 0 to 24h such as 90s or 3m", s.timeout));
        s.timeout_s = to_seconds(std::chrono::duration_cast<duration>(*t));
    }
    std::optional<record::resume_state> resumed;
    if (s.postprocess_given && s.postprocess != "pool" && s.postprocess != "inline")
        throw usage_error(fmt::format("--postprocess '{}': use pool or inline", s.postprocess));
    if (s.command_given && s.postprocess_command.find_first_not_of(" \t\n") == std::string::npos)
        throw usage_error("--postprocess-command is empty: give a shell command (the variant "
                          "folder is its $1), or leave the option out");
    if (s.resume.empty()) {
        if (s.dataset.empty())
            throw usage_error("--dataset is required (or --resume OUT)");
        out = s.output.empty() ? default_output_dir("record") : fs::path(s.output);
        if (fs::exists(out))
            throw usage_error(fmt::format(
                "--output {} already exists; pacer never overwrites results: choose a new "
                "folder, or --resume it",
                out.string()));
        return resumed;
    }
    if (!s.dataset.empty() || !s.output.empty())
        throw usage_error("--resume continues with the settings recorded in its run.json: "
                          "drop --dataset and -o");
    if (s.postprocess_given || s.command_given)
        throw usage_error(
            "--resume continues with the settings recorded in its run.json: drop "
            "--postprocess and --postprocess-command (every variant is post-processed alike)");
    out = s.resume;
    const auto text = runtime::read_file_if_exists(out / "run.json");
    if (!text)
        throw usage_error(fmt::format("--resume {}: no run.json there", out.string()));
    try {
        resumed = record::parse_run_json(*text);
    } catch (const std::invalid_argument& e) {
        throw usage_error(fmt::format("--resume {}: {}", out.string(), e.what()));
    }
    try {
        record::apply_config(s, resumed->config);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what()); // "--resume: run.json config has no X"
    }
    if (s.postprocess != "pool" && s.postprocess != "inline")
        throw usage_error(fmt::format("--resume {}: run.json config has postprocess '{}'",
                                      out.string(), s.postprocess));
    return resumed;
}

int record(record_settings s) {
    if (s.worker)
        return record::run_postprocess_worker();
    record::record_job job;
    const auto resumed = check_settings(s, job.out);
    const fs::path& out = job.out;
    job.resumed = resumed.has_value();
    job.profile = protocol::find_profile(s.profile);
    if (!job.profile || job.profile->name == "qwen3-omni-half-duplex")
        throw usage_error(
            fmt::format("--profile '{}' is not known: use nemotron or minicpmo", s.profile));
    job.endpoint = url_option(s.url);
    job.dataset = s.dataset;
    const auto manifest_text = runtime::read_file_if_exists(job.dataset / "manifest.jsonl");
    if (!manifest_text)
        throw usage_error(
            fmt::format("--dataset {}: no manifest.jsonl there (pacer dataset synth makes one)",
                        job.dataset.string()));
    std::vector<record::sample> samples;
    try {
        samples = record::select_per_subset(record::parse_manifest(*manifest_text), s.per_subset);
    } catch (const std::invalid_argument& e) {
        throw usage_error(
            fmt::format("{}: {}", (job.dataset / "manifest.jsonl").string(), e.what()));
    }
    job.records = record::variant_records(samples, resumed ? &*resumed : nullptr);
    std::size_t to_record = 0;
    for (const auto& r : job.records)
        to_record += r.status == "pending";
    const bool inline_postprocess = s.postprocess == "inline";
    if (inline_postprocess && s.workers_given)
        throw usage_error("--workers sizes the pool of --postprocess pool; --postprocess inline "
                          "post-processes in the recording process and has no workers");
    job.workers = inline_postprocess ? 0 : s.workers ? s.workers : record::default_worker_count();
    runtime::ensure_descriptors(std::min(s.concurrency, to_record) * 3 + 64);
    job.options = s;
    if (s.dry_run) {
        record::print_plan(job, samples.size(), to_record);
        return runtime::exit_ok;
    }
    if (resumed && to_record == 0) {
        fmt::print("pacer record: {} has no pending variant; nothing to record\n", out.string());
        return runtime::exit_ok;
    }
    std::unique_ptr<local_mock> mock;
    job.target = s.url;
    if (s.url.empty()) {
        const auto* profile = job.profile;
        mock = std::make_unique<local_mock>([profile](boost::asio::io_context& io) {
            server::native_mock_options o;
            o.profile = profile;
            return std::make_unique<server::native_mock>(io, o);
        });
        job.endpoint = transport::parse_ws_url(mock->url());
        job.target = mock->url() + " (built-in native mock)";
        job.stop_server = [&mock] { return mock->stop(); };
    }
    if (resumed)
        job.earlier_load = resumed->load;
    else
        create_output_dir(out);
    const auto progress_mode = run::resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1);
    batch_progress progress(*progress_mode);
    job.observer = &progress;
    const auto verdict = record::execute_recording(job);

    std::optional<fs::path> report;
    if (!s.no_report)
        report = write_end_report(out, /*replace=*/static_cast<bool>(resumed)); // the new state
    fmt::print("results    {}{}\n", (out / "run.json").string(),
               report ? ", " + report->string() : std::string());
    if (!s.export_format.empty()) {
        std::error_code ec;
        if (resumed) // the tables of the earlier attempt are replaced
            fs::remove_all(out / fmt::format("tables-{}", s.export_format), ec);
        if (const auto tables = write_end_tables(out, s.export_format))
            fmt::print("tables     {}\n", tables->string());
    }
    if (verdict.interrupted)
        fmt::print("INTERRUPTED by a signal: pacer record --resume {} records what is missing\n",
                   out.string());
    return runtime::exit_status(verdict);
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
        ->check(whole_number(1, max_sessions))
        ->capture_default_str();
    sub->add_option("--per-subset", s->per_subset,
                    "Only the first K samples of every subset (0: all)")
        ->check(whole_number(0, max_sessions))
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

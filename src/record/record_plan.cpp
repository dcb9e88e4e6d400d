// `pacer record`'s options checked and resolved into a record_job, and the command's steps
// around the recording (see record_plan.hpp).

#include <pacer/core/bad_input.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/core/units.hpp>
#include <pacer/record/postprocess.hpp>
#include <pacer/record/record_plan.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/output_dir.hpp>
#include <pacer/runtime/resources.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace pacer::record {

namespace fs = std::filesystem;

namespace {

// --timeout as a duration, and the exclusive options; on --resume, the settings of its
// run.json. Returns what an earlier attempt left, if resumed.
std::optional<resume_state> check_settings(record_options& s, const given_options& given,
                                           fs::path& out) {
    {
        const auto t = parse_duration(s.timeout);
        if (!t || t->count() == 0 || *t > std::chrono::hours(24))
            throw bad_input(fmt::format(
                "--timeout '{}' is not a duration from 0 to 24h such as 90s or 3m", s.timeout));
        s.timeout_s = to_seconds(std::chrono::duration_cast<duration>(*t));
    }
    std::optional<resume_state> resumed;
    if (given.postprocess && s.postprocess != "pool" && s.postprocess != "inline")
        throw bad_input(fmt::format("--postprocess '{}': use pool or inline", s.postprocess));
    if (given.postprocess_command &&
        s.postprocess_command.find_first_not_of(" \t\n") == std::string::npos)
        throw bad_input("--postprocess-command is empty: give a shell command (the variant "
                        "folder is its $1), or leave the option out");
    if (s.resume.empty()) {
        if (s.dataset.empty())
            throw bad_input("--dataset is required (or --resume OUT)");
        out = s.output.empty() ? runtime::default_output_dir("record") : fs::path(s.output);
        if (fs::exists(out))
            throw bad_input(fmt::format(
                "--output {} already exists; pacer never overwrites results: choose a new "
                "folder, or --resume it",
                out.string()));
        return resumed;
    }
    if (!s.dataset.empty() || !s.output.empty())
        throw bad_input("--resume continues with the settings recorded in its run.json: "
                        "drop --dataset and -o");
    if (given.postprocess || given.postprocess_command)
        throw bad_input(
            "--resume continues with the settings recorded in its run.json: drop "
            "--postprocess and --postprocess-command (every variant is post-processed alike)");
    out = s.resume;
    const auto text = runtime::read_file_if_exists(out / "run.json");
    if (!text)
        throw bad_input(fmt::format("--resume {}: no run.json there", out.string()));
    try {
        resumed = parse_run_json(*text);
    } catch (const std::invalid_argument& e) {
        throw bad_input(fmt::format("--resume {}: {}", out.string(), e.what()));
    }
    apply_config(s, resumed->config);
    if (s.postprocess != "pool" && s.postprocess != "inline")
        throw bad_input(fmt::format("--resume {}: run.json config has postprocess '{}'",
                                    out.string(), s.postprocess));
    return resumed;
}

} // namespace

record_job plan_recording(record_options s, const given_options& given) {
    record_job job;
    const auto resumed = check_settings(s, given, job.out);
    job.resumed = resumed.has_value();
    if (resumed)
        job.earlier_load = resumed->load;
    job.profile = protocol::find_profile(s.profile);
    if (!job.profile || job.profile->name == "qwen3-omni-half-duplex")
        throw bad_input(
            fmt::format("--profile '{}' is not known: use nemotron or minicpmo", s.profile));
    if (!s.url.empty()) {
        job.endpoint = transport::parse_ws_url(s.url);
    }
    job.dataset = s.dataset;
    const auto manifest_text = runtime::read_file_if_exists(job.dataset / "manifest.jsonl");
    if (!manifest_text)
        throw bad_input(
            fmt::format("--dataset {}: no manifest.jsonl there (pacer dataset synth makes one)",
                        job.dataset.string()));
    std::vector<sample> samples;
    try {
        samples = select_per_subset(parse_manifest(*manifest_text), s.per_subset);
    } catch (const std::invalid_argument& e) {
        throw bad_input(fmt::format("{}: {}", (job.dataset / "manifest.jsonl").string(), e.what()));
    }
    job.samples = samples.size();
    job.records = variant_records(samples, resumed ? &*resumed : nullptr);
    job.to_record = static_cast<std::size_t>(
        std::count_if(job.records.begin(), job.records.end(),
                      [](const auto& r) { return r.status == "pending"; }));
    const bool inline_postprocess = s.postprocess == "inline";
    if (inline_postprocess && given.workers)
        throw bad_input("--workers sizes the pool of --postprocess pool; --postprocess inline "
                        "post-processes in the recording process and has no workers");
    job.workers = inline_postprocess ? 0 : s.workers ? s.workers : default_worker_count();
    runtime::ensure_descriptors(std::min(s.concurrency, job.to_record) * 3 + 64);
    job.target = s.url;
    job.options = std::move(s);
    return job;
}

int record_planned(record_job& job) {
    const record_options& s = job.options;
    const fs::path& out = job.out;
    if (job.resumed && job.to_record == 0) {
        fmt::print("pacer record: {} has no pending variant; nothing to record\n", out.string());
        return runtime::exit_ok;
    }
    if (job.start_server) {
        const auto url = job.start_server();
        job.endpoint = transport::parse_ws_url(url);
        job.target = url + " (built-in native mock)";
    }
    if (!job.resumed)
        runtime::create_output_dir(out);
    const auto verdict = execute_recording(job);

    std::optional<fs::path> report;
    if (!s.no_report && job.end.report)
        report = job.end.report(out, /*replace=*/job.resumed); // the new state
    fmt::print("results    {}{}\n", (out / "run.json").string(),
               report ? ", " + report->string() : std::string());
    if (!s.export_format.empty() && job.end.tables) {
        std::error_code ec;
        if (job.resumed) // the tables of the earlier attempt are replaced
            fs::remove_all(out / fmt::format("tables-{}", s.export_format), ec);
        if (const auto tables = job.end.tables(out, s.export_format))
            fmt::print("tables     {}\n", tables->string());
    }
    if (verdict.interrupted)
        fmt::print("INTERRUPTED by a signal: pacer record --resume {} records what is missing\n",
                   out.string());
    return runtime::exit_status(verdict);
}

} // namespace pacer::record

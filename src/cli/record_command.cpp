// `pacer record`: every selected variant of a dataset recorded as a native session, at most C at
// once, with its trace, receipts, report and reconstructed output, post-processed in child
// processes; `run.json` checkpointed as it goes (docs/recording.md).

#include <pacer/cli/auto_report.hpp>
#include <pacer/cli/checks.hpp>
#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/core/histogram.hpp>
#include <pacer/core/sha256.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/core/units.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/record/dataset.hpp>
#include <pacer/record/postprocess.hpp>
#include <pacer/record/postprocess_command.hpp>
#include <pacer/record/run_state.hpp>
#include <pacer/run/progress.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/schedule/packet_grid.hpp>
#include <pacer/server/native_mock.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <mutex>
#include <sys/resource.h>
#include <unistd.h>

namespace pacer::cli {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

struct record_settings {
    std::string url;
    std::string dataset;
    std::size_t concurrency = 8;
    std::size_t per_subset = 0;
    std::string profile = "nemotron";
    std::string output;
    std::string resume;
    double timeout_s = 180;
    std::string timeout = "180s"; ///< --timeout as typed (a duration; a bare number is seconds)
    double stagger_ms = 0;
    double startup_reserve_ms = 80;
    std::size_t workers = 0;          // 0: the default
    std::string postprocess = "pool"; ///< --postprocess pool|inline
    std::string postprocess_command;  ///< --postprocess-command ("": none)
    bool postprocess_given = false, command_given = false, workers_given = false;
    std::size_t threads = 1;
    std::string progress = "auto";
    bool no_report = false;
    std::string export_format; ///< --export csv|jsonl: the tables at the end ("": none)
    bool worker = false;
    bool dry_run = false;
};

// The settings a run records in run.json's config, and `--resume` reads back.
json::object config_json(const record_settings& s, std::size_t workers) {
    return {{"url", s.url},
            {"dataset", fs::absolute(s.dataset).lexically_normal().string()},
            {"concurrency", s.concurrency},
            {"per_subset", s.per_subset},
            {"profile", s.profile},
            {"timeout_s", s.timeout_s},
            {"stagger_ms", s.stagger_ms},
            {"startup_reserve_ms", s.startup_reserve_ms},
            {"threads", s.threads},
            {"workers", workers},
            {"postprocess", s.postprocess},
            {"postprocess_command", s.postprocess_command.empty()
                                        ? json::value(nullptr)
                                        : json::value(s.postprocess_command)},
            {"admission", "batches"},
            {"start_lead_s", 0.2},
            {"packet_ms", 80},
            {"pacing_tolerance_s", 0.08}};
}

void settings_from_config(record_settings& s, const json::object& c) {
    auto str = [&](const char* k) {
        const auto* v = c.if_contains(k);
        if (!v || !v->is_string())
            throw usage_error(fmt::format("--resume: run.json config has no {}", k));
        return std::string(v->get_string());
    };
    auto num = [&](const char* k) {
        const auto* v = c.if_contains(k);
        if (!v || !v->is_number())
            throw usage_error(fmt::format("--resume: run.json config has no {}", k));
        return v->to_number<double>();
    };
    if (s.url.empty())
        s.url = str("url");
    s.dataset = str("dataset");
    s.concurrency = static_cast<std::size_t>(num("concurrency"));
    s.per_subset = static_cast<std::size_t>(num("per_subset"));
    s.profile = str("profile");
    s.timeout_s = num("timeout_s");
    s.stagger_ms = num("stagger_ms");
    s.startup_reserve_ms = num("startup_reserve_ms");
    s.threads = static_cast<std::size_t>(num("threads"));
    if (s.workers == 0)
        s.workers = static_cast<std::size_t>(num("workers"));
    // Recordings made before these settings existed post-processed in the pool, with no command.
    if (const auto* v = c.if_contains("postprocess"); v && v->is_string())
        s.postprocess = std::string(v->get_string());
    if (const auto* v = c.if_contains("postprocess_command"); v && v->is_string())
        s.postprocess_command = std::string(v->get_string());
}

// The load of the whole recording, accumulated batch by batch (on the main thread).
struct load_totals {
    std::size_t batches = 0, sessions = 0, admitted = 0, rejected = 0, complete = 0;
    std::size_t packets_sent = 0, late_packets = 0, sessions_with_late_packet = 0;
    double max_abs_deviation_s = 0;
    log_histogram deviation_s; // every append's, folded (bounded, whatever the recording)
    double max_loop_lag_s = 0;
    std::size_t loop_samples = 0, loop_over_80ms = 0;
    double wall_s = 0, context_cpu_s = 0, writer_cpu_s = 0;
    double command_cpu_s = 0; // the post-processing commands' (both modes)
    std::vector<double> initial_delay_s;
    std::map<std::int64_t, double> worker_cpu_by_pid; // the latest each worker reported
};

json::object load_json(const load_totals& t, const record_settings& s, std::size_t workers,
                       double recorder_cpu_s, double elapsed_s, double worker_cpu_s) {
    std::vector<double> d = t.initial_delay_s;
    auto pct = [&](double f) {
        const auto v = percentile(d, f);
        return v ? json::value(*v) : json::value(nullptr);
    };
    const double wall = std::max(elapsed_s, 1e-9);
    return {{"concurrency", s.concurrency},
            {"admission", "batches"},
            {"postprocess", s.postprocess},
            {"batches", t.batches},
            {"sessions", t.sessions},
            {"recording_wall_s", t.wall_s},
            {"client_loop", json::object{{"max_lag_s", t.max_loop_lag_s},
                                         {"over_80ms", t.loop_over_80ms},
                                         {"samples", t.loop_samples},
                                         {"monitor_interval_s", 0.01}}},
            {"pacing",
             json::object{{"sessions", t.sessions},
                          {"admitted", t.admitted},
                          {"rejected", t.rejected},
                          {"complete", t.complete},
                          {"packets_sent", t.packets_sent},
                          {"late_packets", t.late_packets},
                          {"sessions_with_late_packet", t.sessions_with_late_packet},
                          {"max_abs_deviation_s", t.max_abs_deviation_s},
                          {"deviation_s", metrics::histogram_distribution_json(t.deviation_s)},
                          {"late_threshold_s", metrics::late_threshold_s},
                          {"pacing_qualified", t.late_packets == 0 && t.sessions > 0}}},
            {"initial_delay_s",
             json::object{{"count", d.size()},
                          {"p50", pct(0.5)},
                          {"p90", pct(0.9)},
                          {"max", d.empty() ? json::value(nullptr)
                                            : json::value(*std::max_element(d.begin(), d.end()))}}},
            {"cpu", json::object{{"recorder_cpu_s", recorder_cpu_s},
                                 {"recorder_cores", recorder_cpu_s / wall},
                                 {"session_context_cpu_s", t.context_cpu_s},
                                 {"trace_writer_cpu_s", t.writer_cpu_s},
                                 {"workers", workers},
                                 {"worker_cpu_s", worker_cpu_s},
                                 {"worker_cores", worker_cpu_s / wall},
                                 {"postprocess_command_cpu_s", t.command_cpu_s},
                                 {"elapsed_s", elapsed_s}}}};
}

// A variant's input, made ready before its batch.
struct prepared {
    std::size_t index = 0; // into the records
    std::shared_ptr<const std::vector<std::uint8_t>> pcm;
    double duration_s = 0;
};

// SIGINT/SIGTERM between batches (during a batch, the runner handles them): stop before the
// next batch, as an interrupted batch does.
volatile std::sig_atomic_t stop_requested = 0;

extern "C" void request_stop(int) {
    stop_requested = 1;
}

void catch_stop_signals() {
    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
}

fs::path resolve_source(const fs::path& dataset, const std::string& source) {
    const fs::path p(source);
    return p.is_absolute() ? p : dataset / p;
}

void write_file(const fs::path& p, std::string_view text) {
    record::write_atomically(p, text);
}

int record(record_settings s) {
    if (s.worker) {
        // Below the recorder's sessions: the kernel gives this the time they do not need.
        ::setpriority(PRIO_PROCESS, 0, 10);
        std::signal(SIGINT, SIG_IGN); // the recorder ends its workers by closing their input
        return record::worker_loop(STDIN_FILENO, STDOUT_FILENO);
    }
    {
        const auto t = parse_duration(s.timeout);
        if (!t || t->count() == 0 || *t > std::chrono::hours(24))
            throw usage_error(fmt::format(
                "--timeout '{}' is not a duration from 0 to 24h such as 90s or 3m", s.timeout));
        s.timeout_s = to_seconds(std::chrono::duration_cast<duration>(*t));
    }
    std::optional<record::resume_state> resumed;
    fs::path out;
    if (s.postprocess_given && s.postprocess != "pool" && s.postprocess != "inline")
        throw usage_error(fmt::format("--postprocess '{}': use pool or inline", s.postprocess));
    if (s.command_given && s.postprocess_command.find_first_not_of(" \t\n") == std::string::npos)
        throw usage_error("--postprocess-command is empty: give a shell command (the variant "
                          "folder is its $1), or leave the option out");
    if (!s.resume.empty()) {
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
        settings_from_config(s, resumed->config);
        if (s.postprocess != "pool" && s.postprocess != "inline")
            throw usage_error(fmt::format("--resume {}: run.json config has postprocess '{}'",
                                          out.string(), s.postprocess));
    } else {
        if (s.dataset.empty())
            throw usage_error("--dataset is required (or --resume OUT)");
        out = s.output.empty() ? default_output_dir("record") : fs::path(s.output);
        if (fs::exists(out))
            throw usage_error(fmt::format(
                "--output {} already exists; pacer never overwrites results: choose a new "
                "folder, or --resume it",
                out.string()));
    }
    const auto* profile = protocol::find_profile(s.profile);
    if (!profile || profile->name == "qwen3-omni-half-duplex")
        throw usage_error(
            fmt::format("--profile '{}' is not known: use nemotron or minicpmo", s.profile));
    transport::ws_endpoint endpoint = url_option(s.url);
    const fs::path dataset(s.dataset);
    const auto manifest_text = runtime::read_file_if_exists(dataset / "manifest.jsonl");
    if (!manifest_text)
        throw usage_error(
            fmt::format("--dataset {}: no manifest.jsonl there (pacer dataset synth makes one)",
                        dataset.string()));
    std::vector<record::sample> samples;
    try {
        samples = record::select_per_subset(record::parse_manifest(*manifest_text), s.per_subset);
    } catch (const std::invalid_argument& e) {
        throw usage_error(fmt::format("{}: {}", (dataset / "manifest.jsonl").string(), e.what()));
    }
    std::vector<record::variant_record> records;
    for (const auto& smp : samples)
        for (const auto& [name, path] : smp.variants) {
            record::variant_record r;
            r.sample = smp.id;
            r.subset = smp.subset;
            r.text = smp.text;
            r.variant = name;
            r.source = path;
            r.directory = fmt::format("samples/{}/{}", smp.id, name);
            if (resumed)
                if (auto it = resumed->finished.find(smp.id + "/" + name);
                    it != resumed->finished.end()) {
                    r.status = it->second.status;
                    r.detail = it->second.detail;
                }
            records.push_back(std::move(r));
        }
    std::size_t to_record = 0;
    for (const auto& r : records)
        to_record += r.status == "pending";
    const bool inline_postprocess = s.postprocess == "inline";
    if (inline_postprocess && s.workers_given)
        throw usage_error("--workers sizes the pool of --postprocess pool; --postprocess inline "
                          "post-processes in the recording process and has no workers");
    const std::size_t workers = inline_postprocess ? 0
                                : s.workers        ? s.workers
                                                   : record::default_worker_count();
    runtime::ensure_descriptors(std::min(s.concurrency, to_record) * 3 + 64);
    if (s.dry_run) {
        fmt::print("pacer record --dry-run: checked; nothing started, nothing written\n");
        fmt::print("  target     {}\n",
                   s.url.empty() ? "the built-in native mock (in this process)" : s.url);
        fmt::print("  profile    {}\n", profile->name);
        fmt::print("  dataset    {} ({} sample(s), {} variant(s) selected, {} to record)\n",
                   dataset.string(), samples.size(), records.size(), to_record);
        fmt::print("  admission  batches of at most {} variant(s), one start gate each\n",
                   s.concurrency);
        if (inline_postprocess)
            fmt::print("  postprocess inline: in the recording process, on the session's thread "
                       "(a diagnostic: it delays the other sessions)\n");
        else
            fmt::print("  workers    {} post-processing process(es) at nice 10\n", workers);
        if (!s.postprocess_command.empty())
            fmt::print("  command    /bin/sh -c '{}' per recorded variant (its folder is $1)\n",
                       s.postprocess_command);
        fmt::print("  timeout    {:g} s per session\n", s.timeout_s);
        fmt::print("  output     {} (run.json, samples/<sample>/<variant>/){}\n", out.string(),
                   resumed ? " resumed" : "");
        return runtime::exit_ok;
    }

    if (resumed && to_record == 0) {
        fmt::print("pacer record: {} has no pending variant; nothing to record\n", out.string());
        return runtime::exit_ok;
    }
    std::unique_ptr<local_mock> mock;
    std::string target = s.url;
    if (s.url.empty()) {
        mock = std::make_unique<local_mock>([profile](boost::asio::io_context& io) {
            server::native_mock_options o;
            o.profile = profile;
            return std::make_unique<server::native_mock>(io, o);
        });
        endpoint = transport::parse_ws_url(mock->url());
        target = mock->url() + " (built-in native mock)";
    }
    if (!resumed)
        create_output_dir(out);
    // A resumed run records its pending variants afresh: whatever an interrupted attempt left
    // of them (and of its batch folders) goes.
    for (const auto& r : records)
        if (r.status == "pending")
            fs::remove_all(out / r.directory);
    for (const auto& e : fs::directory_iterator(out))
        if (e.path().filename().string().rfind(".batch-", 0) == 0)
            fs::remove_all(e.path());
    std::signal(SIGPIPE, SIG_IGN); // a worker that dies is reported, not fatal

    const auto config = config_json(s, workers);
    const double t0 = to_seconds(pacer::clock::now());
    const double cpu0 = runtime::read_process_usage().cpu_s;
    std::mutex mutex; // guards records, totals
    load_totals totals;
    record::checkpointer checkpoints(out / "run.json");
    // A resumed run keeps the load of its earlier attempts, oldest first.
    json::array earlier;
    if (resumed && !resumed->load.empty()) {
        auto previous = resumed->load;
        if (const auto* e = previous.if_contains("earlier_attempts"); e && e->is_array())
            earlier = e->get_array();
        previous.erase("earlier_attempts");
        earlier.push_back(std::move(previous));
    }
    auto snapshot = [&](std::string_view status, double worker_cpu) {
        if (worker_cpu < 0) { // while recording: what the workers reported so far
            worker_cpu = 0;
            for (const auto& [_, c] : totals.worker_cpu_by_pid)
                worker_cpu += c;
        }
        auto load = load_json(totals, s, workers, runtime::read_process_usage().cpu_s - cpu0,
                              to_seconds(pacer::clock::now()) - t0, worker_cpu);
        if (!earlier.empty())
            load["earlier_attempts"] = earlier;
        return record::run_json(config, records, status, load);
    };
    {
        std::lock_guard lock(mutex);
        checkpoints.post(snapshot("running", -1));
    }
    std::map<std::string, std::size_t> by_dir; // absolute variant folder -> record
    for (std::size_t i = 0; i < records.size(); ++i)
        by_dir[(out / records[i].directory).string()] = i;
    // A variant's post-processing summary into its record and the totals (`mutex` held).
    auto apply_summary = [&](record::variant_record& r, const json::object& summary) {
        for (const auto& [k, v] : summary)
            if (k != "dir" && k != "cpu_s" && k != "worker_pid")
                r.detail[k] = v;
        const auto* status = summary.if_contains("status");
        r.status = status && status->is_string() ? std::string(status->get_string()) : "error";
        if (const auto* d = summary.if_contains("output"))
            if (const auto* x = d->as_object().if_contains("initial_delay_s"); x && x->is_number())
                totals.initial_delay_s.push_back(x->to_number<double>());
        if (const auto* h = summary.if_contains("postprocess_command"); h && h->is_object())
            if (const auto* c = h->get_object().if_contains("cpu_s"); c && c->is_number())
                totals.command_cpu_s += c->to_number<double>();
        if (const auto* c = summary.if_contains("cpu_s"), *p = summary.if_contains("worker_pid");
            c && c->is_number() && p && p->is_number())
            totals.worker_cpu_by_pid[p->to_number<std::int64_t>()] = c->to_number<double>();
    };
    // Workers start before the first session: forking later, from a process with many live
    // sessions, would copy their pages while they stream. --postprocess inline has none.
    std::optional<record::worker_pool> pool;
    if (!inline_postprocess)
        pool.emplace("/proc/self/exe", workers,
                     [&](const json::object& job, const json::object& summary) {
                         std::lock_guard lock(mutex);
                         const auto it = by_dir.find(std::string(job.at("dir").as_string()));
                         if (it == by_dir.end())
                             return;
                         apply_summary(records[it->second], summary);
                         checkpoints.post(snapshot("running", -1));
                     });

    fmt::print("pacer record: {} variant(s) of {} against {} (profile {}), at most {} at once; "
               "{}\n",
               to_record, dataset.string(), target, profile->name, s.concurrency,
               inline_postprocess
                   ? std::string("post-processing inline, on the sessions' threads (a diagnostic)")
                   : fmt::format("{} post-processing worker(s)", workers));
    std::fflush(stdout);
    // The live line of each batch: on its own thread, fed by the sessions' relaxed atomic
    // totals (as pacer run's); its ETA is the batch's longest input and the stagger.
    const auto progress_mode = run::resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1);
    run::progress_reporter progress(*progress_mode);
    bool interrupted = false;
    std::size_t next = 0, batch_no = 0;
    catch_stop_signals();
    while (!interrupted) {
        // Prepare the next batch: up to C variants whose input is ready.
        std::vector<prepared> batch;
        while (next < records.size() && batch.size() < s.concurrency) {
            auto& r = records[next];
            const std::size_t index = next++;
            if (r.status != "pending")
                continue;
            const fs::path dir = out / r.directory;
            const fs::path source = resolve_source(dataset, r.source);
            try {
                fs::create_directories(dir);
                auto n = record::normalize_wav(source);
                const std::string_view bytes(reinterpret_cast<const char*>(n.pcm.data()),
                                             n.pcm.size());
                const double duration = double(n.pcm.size()) / 32000.0;
                const std::string source_bytes = runtime::read_file_if_exists(source).value_or("");
                write_file(dir / "input.pcm", bytes);
                record::write_wav_pcm16(dir / "input.wav", n.pcm, record::input_rate);
                json::object manifest{
                    {"schema_version", 1},
                    {"profile", profile->name},
                    {"dataset_sample", r.sample},
                    {"dataset_variant", r.variant},
                    {"source",
                     json::object{{"file", source.string()}, {"sha256", sha256_hex(source_bytes)}}},
                    {"normalization", n.normalization},
                    {"config", json::object{{"packet_ms", 80},
                                            {"paced", true},
                                            {"timeout_s", s.timeout_s},
                                            {"input_duration_s", duration},
                                            {"target", target}}},
                    {"input", json::object{{"file", "input.pcm"},
                                           {"sha256", sha256_hex(bytes)},
                                           {"sample_rate", record::input_rate}}},
                    {"cases", json::array{json::object{{"id", "continuous"},
                                                       {"scenario", "continuous"},
                                                       {"trace_file", "continuous.jsonl"}}}}};
                write_file(dir / "manifest.json", json::serialize(manifest) + "\n");
                std::lock_guard lock(mutex);
                r.detail["normalization"] = n.normalization;
                r.detail["input"] =
                    json::object{{"sha256", sha256_hex(bytes)}, {"duration_s", duration}};
                if (duration >= s.timeout_s) {
                    r.status = record::variant_status({.input_too_long = true, .verdict = {}});
                    r.detail["errors"] = json::array{
                        fmt::format("input {:.2f} s is not shorter than the timeout {:g} s",
                                    duration, s.timeout_s)};
                    continue;
                }
                batch.push_back(
                    {index, std::make_shared<const std::vector<std::uint8_t>>(std::move(n.pcm)),
                     duration});
            } catch (const std::exception& e) {
                std::lock_guard lock(mutex);
                r.status = record::variant_status({.preparation_error = true, .verdict = {}});
                r.detail["errors"] = json::array{fmt::format("preparation: {}", e.what())};
            }
        }
        if (stop_requested) {
            // Not recorded: pending again, for --resume.
            std::lock_guard lock(mutex);
            for (const auto& p : batch) {
                records[p.index].status = "pending";
                records[p.index].detail = {};
                fs::remove_all(out / records[p.index].directory);
            }
            interrupted = true;
            break;
        }
        if (batch.empty())
            break;
        ++batch_no;
        const fs::path batch_dir = out / fmt::format(".batch-{}", batch_no);
        fs::create_directories(batch_dir);
        session::run_options ro;
        ro.sessions = batch.size();
        ro.threads = std::min(s.threads, batch.size());
        ro.endpoint = endpoint;
        for (const auto& p : batch)
            ro.inputs.push_back(p.pcm);
        ro.timeout = from_seconds(s.timeout_s);
        ro.trace_root = batch_dir;
        ro.stagger = from_seconds(s.stagger_ms / 1e3);
        ro.start_gate_lead = std::chrono::milliseconds(200);
        ro.profile = profile;
        if (progress.on())
            ro.live = &progress.counters();
        // --postprocess inline: each session's post-processing (and command) on its own thread
        // as it ends, as the reference harness did in its event loop; the other sessions of
        // that thread wait. Its files are linked into the variant folder first (the runner still
        // reads the receipts from the batch folder, and the renames below find them in place).
        std::map<std::size_t, json::object> inline_summaries; // by batch position
        if (inline_postprocess)
            ro.on_session_end = [&](std::size_t i, const session::session_result& x) {
                if (!x.trace_error.empty())
                    return; // its files were not written: an error, decided below
                const auto& r = records[batch[i].index];
                const fs::path dir = out / r.directory;
                const fs::path from =
                    batch_dir / trace::session_folder_name(static_cast<std::uint32_t>(i));
                json::object summary;
                try {
                    for (const auto& [a, b] :
                         {std::pair{"trace.jsonl", "continuous.jsonl"},
                          {"input-send-receipts.json", "input-send-receipts.json"}}) {
                        std::error_code ec;
                        fs::create_hard_link(from / a, dir / b, ec);
                        if (ec)
                            fs::copy_file(from / a, dir / b, fs::copy_options::overwrite_existing);
                    }
                    record::variant_job job;
                    job.dir = dir;
                    job.profile = profile;
                    job.input_duration_s = batch[i].duration_s;
                    job.startup_reserve_s = s.startup_reserve_ms / 1e3;
                    for (const auto& e : x.errors)
                        job.session_errors.push_back("session: " + e);
                    summary = record::postprocess_variant(job, s.postprocess_command);
                } catch (const std::exception& e) {
                    summary = {
                        {"status", "error"},
                        {"errors", json::array{fmt::format("post-processing: {}", e.what())}}};
                }
                std::lock_guard lock(mutex);
                inline_summaries[i] = std::move(summary);
            };
        double longest_s = 0;
        for (const auto& p : batch)
            longest_s = std::max(longest_s, p.duration_s);
        progress.begin(fmt::format("batch {}", batch_no), longest_s + s.stagger_ms / 1e3);
        auto outcome = session::run_duplex(ro);
        progress.end();       // the terminal line is cleared before the batch's line
        catch_stop_signals(); // the runner's own handling ends with the batch
        interrupted = outcome.interrupted;
        const auto pacing =
            metrics::summarize_pacing(outcome.sessions, outcome.receipts, outcome.loop_lag_s);
        {
            std::lock_guard lock(mutex);
            auto& t = totals;
            ++t.batches;
            t.sessions += pacing.sessions;
            t.admitted += pacing.admitted;
            t.rejected += pacing.rejected;
            t.complete += pacing.complete;
            t.packets_sent += pacing.packets_sent;
            t.late_packets += pacing.late_packets;
            t.sessions_with_late_packet += pacing.sessions_with_late_packet;
            // A run keeps no receipt (it folds them as sent): the batch's receipts files give
            // the deviations back, one session at a time.
            for (const auto& x : outcome.sessions) {
                std::vector<double> deviations;
                if (x.appends_sent > 0)
                    trace::read_receipt_deviations(batch_dir / trace::session_folder_name(x.index) /
                                                       "input-send-receipts.json",
                                                   deviations);
                for (double d : deviations) {
                    t.max_abs_deviation_s = std::max(t.max_abs_deviation_s, std::abs(d));
                    t.deviation_s.record(d);
                }
            }
            for (const auto& l : outcome.loop_lag_s)
                for (double v : l) {
                    ++t.loop_samples;
                    t.loop_over_80ms += v > 0.08;
                    t.max_loop_lag_s = std::max(t.max_loop_lag_s, v);
                }
            t.wall_s += outcome.wall_s;
            for (double c : outcome.context_cpu_s)
                t.context_cpu_s += c;
            t.writer_cpu_s += outcome.writer_cpu_s;
        }
        for (std::size_t i = 0; i < batch.size(); ++i) {
            auto& r = records[batch[i].index];
            const fs::path dir = out / r.directory;
            const fs::path from =
                batch_dir / trace::session_folder_name(static_cast<std::uint32_t>(i));
            const auto& x = outcome.sessions.at(i);
            if (interrupted) {
                // Cut short: recorded afresh by --resume.
                fs::remove_all(dir);
                std::lock_guard lock(mutex);
                r.detail = {};
                continue;
            }
            std::error_code ec1, ec2;
            fs::rename(from / "trace.jsonl", dir / "continuous.jsonl", ec1);
            fs::rename(from / "input-send-receipts.json", dir / "input-send-receipts.json", ec2);
            json::array errors;
            for (const auto& e : x.errors)
                errors.emplace_back(e);
            std::lock_guard lock(mutex);
            r.detail["session"] =
                json::object{{"admitted", x.admitted},
                             {"rejected", x.rejected},
                             {"complete", x.complete},
                             {"admission_denials", x.admission_denials},
                             {"started_s", x.session_start_s ? json::value(*x.session_start_s)
                                                             : json::value(nullptr)},
                             {"batch", batch_no},
                             {"errors", errors}};
            if (ec1 || ec2 || !x.trace_error.empty()) {
                r.status = record::variant_status({.session_error = true, .verdict = {}});
                r.detail["errors"] = json::array{
                    fmt::format("session: its files were not written{}",
                                x.trace_error.empty() ? "" : " (" + x.trace_error + ")")};
                continue;
            }
            json::array session_errors;
            for (const auto& e : x.errors)
                session_errors.emplace_back("session: " + e);
            r.status = "pending";
            if (inline_postprocess) {
                if (auto it = inline_summaries.find(i); it != inline_summaries.end())
                    apply_summary(r, it->second);
                else
                    apply_summary(r, {{"status", "error"},
                                      {"errors", json::array{"post-processing did not run"}}});
                continue;
            }
            pool->submit(json::object{{"dir", dir.string()},
                                      {"profile", profile->name},
                                      {"input_duration_s", batch[i].duration_s},
                                      {"startup_reserve_s", s.startup_reserve_ms / 1e3},
                                      {"session_errors", std::move(session_errors)},
                                      {"command", s.postprocess_command}});
        }
        fs::remove_all(batch_dir);
        {
            std::lock_guard lock(mutex);
            checkpoints.post(snapshot("running", -1));
        }
        fmt::print("batch {}: {} session(s), {} admitted, {} late packet(s)\n", batch_no,
                   pacing.sessions, pacing.admitted, pacing.late_packets);
        std::fflush(stdout);
    }
    const double worker_cpu = pool ? pool->finish() : 0.0;
    json::object mock_stats;
    if (mock)
        mock_stats = mock->stop();
    std::lock_guard lock(mutex);
    auto final_json = snapshot(interrupted ? "interrupted" : "complete", worker_cpu);
    if (mock)
        final_json["mock"] = mock_stats;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    final_json["provenance"] = json::object{{"pacer", "0.1.0"},
                                            {"host", host},
                                            {"clock", "CLOCK_MONOTONIC seconds"},
                                            {"target", target}};
    checkpoints.post(final_json);
    checkpoints.flush();

    std::map<std::string, std::size_t> counts;
    for (const auto& r : records)
        ++counts[r.status];
    std::string line;
    for (auto st : record::statuses)
        line += fmt::format("{}{} {}", line.empty() ? "" : ", ", counts[std::string(st)], st);
    fmt::print("variants   {}\n", line);
    // Which variants ended in error, and why (the first of their errors; all are in run.json).
    std::size_t said = 0, errored = counts["error"];
    for (const auto& r : records) {
        if (r.status != "error")
            continue;
        if (said == 10) {
            fmt::print("  error    and {} more: see run.json\n", errored - said);
            break;
        }
        const auto* errors = r.detail.if_contains("errors");
        const bool any = errors && errors->is_array() && !errors->as_array().empty() &&
                         errors->as_array().front().is_string();
        fmt::print("  error    {}/{}: {}\n", r.sample, r.variant,
                   any ? std::string(errors->as_array().front().as_string())
                       : std::string("no reason recorded"));
        ++said;
    }
    fmt::print("client     {} late packet(s) of {}, loop lag max {:.1f} ms ({} over 80 ms)\n",
               totals.late_packets, totals.packets_sent, totals.max_loop_lag_s * 1e3,
               totals.loop_over_80ms);
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
    if (interrupted)
        fmt::print("INTERRUPTED by a signal: pacer record --resume {} records what is missing\n",
                   out.string());
    runtime::run_verdict v;
    v.interrupted = interrupted;
    v.client_fell_behind = totals.late_packets > 0 || totals.loop_over_80ms > 0;
    v.server_failed = counts["fail"] + counts["error"] > 0;
    return runtime::exit_status(v);
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
    sub->add_option("--progress", s->progress,
                    "Live progress of each batch on stderr: elapsed and ETA, sessions "
                    "active/done/failed, packets sent and late, loop lag max and errors. auto: on "
                    "when stderr is a terminal; always: also into a pipe or file (a line every "
                    "10 s and one at the end of each batch); never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
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

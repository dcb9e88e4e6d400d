// `pacer record` executed: batches of native sessions, their files moved into the variant
// folders, post-processed in the pool (or inline), run.json checkpointed as it goes.

#include <pacer/core/bad_input.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/core/failure.hpp>
#include <pacer/core/histogram.hpp>
#include <pacer/core/sha256.hpp>
#include <pacer/core/stats.hpp>
#include <pacer/metrics/pacing.hpp>
#include <pacer/record/postprocess.hpp>
#include <pacer/record/postprocess_command.hpp>
#include <pacer/record/record_job.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/session/runner.hpp>
#include <pacer/trace/receipts.hpp>
#include <pacer/trace/writer.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <sys/resource.h>
#include <unistd.h>

namespace pacer::record {

namespace fs = std::filesystem;
namespace json = boost::json;

json::object config_json(const record_options& s, std::size_t workers) {
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

void apply_config(record_options& s, const json::object& c) {
    auto str = [&](const char* k) {
        const auto* v = c.if_contains(k);
        if (!v || !v->is_string())
            throw bad_input(fmt::format("--resume: run.json config has no {}", k));
        return std::string(v->get_string());
    };
    auto num = [&](const char* k) {
        const auto* v = c.if_contains(k);
        if (!v || !v->is_number())
            throw bad_input(fmt::format("--resume: run.json config has no {}", k));
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

std::vector<variant_record> variant_records(const std::vector<sample>& samples,
                                            const resume_state* resumed) {
    std::vector<variant_record> records;
    for (const auto& smp : samples)
        for (const auto& [name, path] : smp.variants) {
            variant_record r;
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
    return records;
}

namespace {

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

json::object load_json(const load_totals& t, const record_options& s, double recorder_cpu_s,
                       double elapsed_s, double worker_cpu_s, std::size_t workers) {
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

// One recording: its records and totals (guarded by `mutex_`: the pool's thread and, with
// --postprocess inline, the sessions' threads report into them), run.json's checkpoints and
// the pool of post-processing workers.
class recording {
public:
    explicit recording(const record_job& job);
    runtime::run_verdict run();

private:
    json::object snapshot(std::string_view status, double worker_cpu);  // mutex_ held
    void apply_summary(variant_record& r, const json::object& summary); // mutex_ held
    void start_pool();
    std::vector<prepared> prepare_batch();
    void prepare_variant(std::size_t index, std::vector<prepared>& batch);
    bool run_batch(const std::vector<prepared>& batch); // false: interrupted
    json::object postprocess_inline(const std::vector<prepared>& batch, const fs::path& batch_dir,
                                    std::size_t i, const session::session_result& x);
    void fold_batch(const session::run_outcome& outcome, const metrics::pacing_figures& pacing,
                    const fs::path& batch_dir);
    void collect_variant(const prepared& p, const fs::path& from, const session::session_result& x,
                         std::size_t batch_no,
                         std::map<std::size_t, json::object>& inline_summaries, std::size_t i);
    runtime::run_verdict finish();

    const record_job& job_;
    const record_options& s_;
    std::vector<variant_record> records_;
    bool inline_postprocess_;
    json::object config_;
    double t0_, cpu0_;
    std::mutex mutex_; // guards records_, totals_
    load_totals totals_;
    checkpointer checkpoints_;
    json::array earlier_;
    std::map<std::string, std::size_t> by_dir_; // absolute variant folder -> record
    bool interrupted_ = false;
    std::size_t next_ = 0, batch_no_ = 0;
    std::optional<worker_pool> pool_; // last: its thread stops before what it reports into
};

recording::recording(const record_job& job)
    : job_(job), s_(job.options), records_(job.records),
      inline_postprocess_(job.options.postprocess == "inline"),
      config_(config_json(job.options, job.workers)), t0_(to_seconds(pacer::clock::now())),
      cpu0_(runtime::read_process_usage().cpu_s), checkpoints_(job.out / "run.json") {
    // A resumed run keeps the load of its earlier attempts, oldest first.
    if (job.resumed && !job.earlier_load.empty()) {
        auto previous = job.earlier_load;
        if (const auto* e = previous.if_contains("earlier_attempts"); e && e->is_array())
            earlier_ = e->get_array();
        previous.erase("earlier_attempts");
        earlier_.push_back(std::move(previous));
    }
}

json::object recording::snapshot(std::string_view status, double worker_cpu) {
    if (worker_cpu < 0) { // while recording: what the workers reported so far
        worker_cpu = 0;
        for (const auto& [_, c] : totals_.worker_cpu_by_pid)
            worker_cpu += c;
    }
    auto load = load_json(totals_, s_, runtime::read_process_usage().cpu_s - cpu0_,
                          to_seconds(pacer::clock::now()) - t0_, worker_cpu, job_.workers);
    if (!earlier_.empty())
        load["earlier_attempts"] = earlier_;
    return run_json(config_, records_, status, load);
}

// A variant's post-processing summary into its record and the totals.
void recording::apply_summary(variant_record& r, const json::object& summary) {
    for (const auto& [k, v] : summary)
        if (k != "dir" && k != "cpu_s" && k != "worker_pid")
            r.detail[k] = v;
    const auto* status = summary.if_contains("status");
    r.status = status && status->is_string() ? std::string(status->get_string()) : "error";
    if (const auto* d = summary.if_contains("output"))
        if (const auto* x = d->as_object().if_contains("initial_delay_s"); x && x->is_number())
            totals_.initial_delay_s.push_back(x->to_number<double>());
    if (const auto* h = summary.if_contains("postprocess_command"); h && h->is_object())
        if (const auto* c = h->get_object().if_contains("cpu_s"); c && c->is_number())
            totals_.command_cpu_s += c->to_number<double>();
    if (const auto* c = summary.if_contains("cpu_s"), *p = summary.if_contains("worker_pid");
        c && c->is_number() && p && p->is_number())
        totals_.worker_cpu_by_pid[p->to_number<std::int64_t>()] = c->to_number<double>();
}

// Workers start before the first session: forking later, from a process with many live
// sessions, would copy their pages while they stream. --postprocess inline has none.
void recording::start_pool() {
    if (inline_postprocess_)
        return;
    pool_.emplace("/proc/self/exe", job_.workers,
                  [this](const json::object& job, const json::object& summary) {
                      std::lock_guard lock(mutex_);
                      const auto it = by_dir_.find(std::string(job.at("dir").as_string()));
                      if (it == by_dir_.end())
                          return;
                      apply_summary(records_[it->second], summary);
                      checkpoints_.post(snapshot("running", -1));
                  });
}

runtime::run_verdict recording::run() {
    const fs::path& out = job_.out;
    // A resumed run records its pending variants afresh: whatever an interrupted attempt left
    // of them (and of its batch folders) goes.
    for (const auto& r : records_)
        if (r.status == "pending")
            fs::remove_all(out / r.directory);
    for (const auto& e : fs::directory_iterator(out))
        if (e.path().filename().string().rfind(".batch-", 0) == 0)
            fs::remove_all(e.path());
    std::signal(SIGPIPE, SIG_IGN); // a worker that dies is reported, not fatal
    {
        std::lock_guard lock(mutex_);
        checkpoints_.post(snapshot("running", -1));
    }
    for (std::size_t i = 0; i < records_.size(); ++i)
        by_dir_[(out / records_[i].directory).string()] = i;
    start_pool();

    std::size_t to_record = 0;
    for (const auto& r : records_)
        to_record += r.status == "pending";
    fmt::print("pacer record: {} variant(s) of {} against {} (profile {}), at most {} at once; "
               "{}\n",
               to_record, job_.dataset.string(), job_.target, job_.profile->name, s_.concurrency,
               inline_postprocess_
                   ? std::string("post-processing inline, on the sessions' threads (a diagnostic)")
                   : fmt::format("{} post-processing worker(s)", job_.workers));
    std::fflush(stdout);
    catch_stop_signals();
    while (!interrupted_) {
        auto batch = prepare_batch();
        if (stop_requested) {
            // Not recorded: pending again, for --resume.
            std::lock_guard lock(mutex_);
            for (const auto& p : batch) {
                records_[p.index].status = "pending";
                records_[p.index].detail = {};
                fs::remove_all(out / records_[p.index].directory);
            }
            interrupted_ = true;
            break;
        }
        if (batch.empty())
            break;
        interrupted_ = !run_batch(batch);
    }
    return finish();
}

// The next batch: up to C variants whose input is ready.
std::vector<prepared> recording::prepare_batch() {
    std::vector<prepared> batch;
    while (next_ < records_.size() && batch.size() < s_.concurrency) {
        const std::size_t index = next_++;
        if (records_[index].status != "pending")
            continue;
        prepare_variant(index, batch);
    }
    return batch;
}

// The variant's input.pcm, input.wav and manifest.json; into `batch` unless it cannot be
// recorded (its status says why).
void recording::prepare_variant(std::size_t index, std::vector<prepared>& batch) {
    auto& r = records_[index];
    const fs::path dir = job_.out / r.directory;
    const fs::path source = resolve_source(job_.dataset, r.source);
    try {
        fs::create_directories(dir);
        auto n = normalize_wav(source);
        const std::string_view bytes(reinterpret_cast<const char*>(n.pcm.data()), n.pcm.size());
        const double duration = double(n.pcm.size()) / 32000.0;
        const std::string source_bytes = runtime::read_file_if_exists(source).value_or("");
        write_atomically(dir / "input.pcm", bytes);
        runtime::write_wav_pcm16(dir / "input.wav", n.pcm, input_rate);
        json::object manifest{
            {"schema_version", 1},
            {"profile", job_.profile->name},
            {"dataset_sample", r.sample},
            {"dataset_variant", r.variant},
            {"source",
             json::object{{"file", source.string()}, {"sha256", sha256_hex(source_bytes)}}},
            {"normalization", n.normalization},
            {"config", json::object{{"packet_ms", 80},
                                    {"paced", true},
                                    {"timeout_s", s_.timeout_s},
                                    {"input_duration_s", duration},
                                    {"target", job_.target}}},
            {"input", json::object{{"file", "input.pcm"},
                                   {"sha256", sha256_hex(bytes)},
                                   {"sample_rate", input_rate}}},
            {"cases", json::array{json::object{{"id", "continuous"},
                                               {"scenario", "continuous"},
                                               {"trace_file", "continuous.jsonl"}}}}};
        write_atomically(dir / "manifest.json", json::serialize(manifest) + "\n");
        std::lock_guard lock(mutex_);
        r.detail["normalization"] = n.normalization;
        r.detail["input"] = json::object{{"sha256", sha256_hex(bytes)}, {"duration_s", duration}};
        if (duration >= s_.timeout_s) {
            r.status = variant_status({.input_too_long = true, .verdict = {}});
            r.detail["errors"] = json::array{fmt::format(
                "input {:.2f} s is not shorter than the timeout {:g} s", duration, s_.timeout_s)};
            return;
        }
        batch.push_back(
            {index, std::make_shared<const std::vector<std::uint8_t>>(std::move(n.pcm)), duration});
    } catch (const std::exception& e) {
        std::lock_guard lock(mutex_);
        r.status = variant_status({.preparation_error = true, .verdict = {}});
        r.detail["errors"] = json::array{fmt::format("preparation: {}", e.what())};
    }
}

// --postprocess inline: a session's post-processing (and command) on its own thread as it
// ends, as the reference harness did in its event loop; the other sessions of that thread wait.
// Its files are linked into the variant folder first (the runner still reads the receipts from
// the batch folder, and collect_variant's renames find them in place).
json::object recording::postprocess_inline(const std::vector<prepared>& batch,
                                           const fs::path& batch_dir, std::size_t i,
                                           const session::session_result& x) {
    const auto& r = records_[batch[i].index];
    const fs::path dir = job_.out / r.directory;
    const fs::path from = batch_dir / trace::session_folder_name(static_cast<std::uint32_t>(i));
    try {
        for (const auto& [a, b] : {std::pair{"trace.jsonl", "continuous.jsonl"},
                                   {"input-send-receipts.json", "input-send-receipts.json"}}) {
            std::error_code ec;
            fs::create_hard_link(from / a, dir / b, ec);
            if (ec)
                fs::copy_file(from / a, dir / b, fs::copy_options::overwrite_existing);
        }
        variant_job vj;
        vj.dir = dir;
        vj.profile = job_.profile;
        vj.input_duration_s = batch[i].duration_s;
        vj.startup_reserve_s = s_.startup_reserve_ms / 1e3;
        for (const auto& f : x.failures) // as the trace's `error` lines word them
            vj.session_errors.push_back("session: " + reference_text(f));
        return postprocess_variant(vj, s_.postprocess_command);
    } catch (const std::exception& e) {
        return {{"status", "error"},
                {"errors", json::array{fmt::format("post-processing: {}", e.what())}}};
    }
}

// Runs one batch from its start gate and hands its variants on.
bool recording::run_batch(const std::vector<prepared>& batch) {
    const std::size_t batch_no = ++batch_no_;
    const fs::path batch_dir = job_.out / fmt::format(".batch-{}", batch_no);
    fs::create_directories(batch_dir);
    session::run_options ro;
    ro.sessions = batch.size();
    ro.threads = std::min(s_.threads, batch.size());
    ro.endpoint = job_.endpoint;
    for (const auto& p : batch)
        ro.inputs.push_back(p.pcm);
    ro.timeout = from_seconds(s_.timeout_s);
    ro.trace_root = batch_dir;
    ro.stagger = from_seconds(s_.stagger_ms / 1e3);
    ro.start_gate_lead = std::chrono::milliseconds(200);
    ro.profile = job_.profile;
    std::map<std::size_t, json::object> inline_summaries; // by batch position
    if (inline_postprocess_)
        ro.on_session_end = [&](std::size_t i, const session::session_result& x) {
            if (!x.trace_error.empty())
                return; // its files were not written: an error, decided in collect_variant
            auto summary = postprocess_inline(batch, batch_dir, i, x);
            std::lock_guard lock(mutex_);
            inline_summaries[i] = std::move(summary);
        };
    // The live line of each batch: its ETA is the batch's longest input and the stagger.
    double longest_s = 0;
    for (const auto& p : batch)
        longest_s = std::max(longest_s, p.duration_s);
    if (job_.observer)
        ro.live = job_.observer->batch_starting(fmt::format("batch {}", batch_no),
                                                longest_s + s_.stagger_ms / 1e3);
    auto outcome = session::run_duplex(ro);
    if (job_.observer)
        job_.observer->batch_ended(); // the terminal line is cleared before the batch's line
    catch_stop_signals();             // the runner's own handling ends with the batch
    const bool interrupted = outcome.interrupted;
    const auto pacing =
        metrics::summarize_pacing(outcome.sessions, outcome.receipts, outcome.loop_lag_s);
    fold_batch(outcome, pacing, batch_dir);
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const fs::path from = batch_dir / trace::session_folder_name(static_cast<std::uint32_t>(i));
        if (interrupted) {
            // Cut short: recorded afresh by --resume.
            auto& r = records_[batch[i].index];
            fs::remove_all(job_.out / r.directory);
            std::lock_guard lock(mutex_);
            r.detail = {};
            continue;
        }
        collect_variant(batch[i], from, outcome.sessions.at(i), batch_no, inline_summaries, i);
    }
    fs::remove_all(batch_dir);
    {
        std::lock_guard lock(mutex_);
        checkpoints_.post(snapshot("running", -1));
    }
    fmt::print("batch {}: {} session(s), {} admitted, {} late packet(s)\n", batch_no,
               pacing.sessions, pacing.admitted, pacing.late_packets);
    std::fflush(stdout);
    return !interrupted;
}

// The batch's load into the totals.
void recording::fold_batch(const session::run_outcome& outcome,
                           const metrics::pacing_figures& pacing, const fs::path& batch_dir) {
    std::lock_guard lock(mutex_);
    auto& t = totals_;
    ++t.batches;
    t.sessions += pacing.sessions;
    t.admitted += pacing.admitted;
    t.rejected += pacing.rejected;
    t.complete += pacing.complete;
    t.packets_sent += pacing.packets_sent;
    t.late_packets += pacing.late_packets;
    t.sessions_with_late_packet += pacing.sessions_with_late_packet;
    // A run keeps no receipt (it folds them as sent): the batch's receipts files give the
    // deviations back, one session at a time.
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

// A finished session's files into its variant folder, its record updated, and its
// post-processing submitted to the pool (or its inline summary applied).
void recording::collect_variant(const prepared& p, const fs::path& from,
                                const session::session_result& x, std::size_t batch_no,
                                std::map<std::size_t, json::object>& inline_summaries,
                                std::size_t i) {
    auto& r = records_[p.index];
    const fs::path dir = job_.out / r.directory;
    std::error_code ec1, ec2;
    fs::rename(from / "trace.jsonl", dir / "continuous.jsonl", ec1);
    fs::rename(from / "input-send-receipts.json", dir / "input-send-receipts.json", ec2);
    json::array errors;
    for (const auto& f : x.failures) // as the trace's `error` lines word them
        errors.emplace_back(reference_text(f));
    std::lock_guard lock(mutex_);
    r.detail["session"] = json::object{
        {"admitted", x.admitted},
        {"rejected", x.rejected},
        {"complete", x.complete},
        {"admission_denials", x.admission_denials},
        {"started_s", x.session_start_s ? json::value(*x.session_start_s) : json::value(nullptr)},
        {"batch", batch_no},
        {"errors", errors}};
    if (ec1 || ec2 || !x.trace_error.empty()) {
        r.status = variant_status({.session_error = true, .verdict = {}});
        r.detail["errors"] =
            json::array{fmt::format("session: its files were not written{}",
                                    x.trace_error.empty() ? "" : " (" + x.trace_error + ")")};
        return;
    }
    json::array session_errors;
    for (const auto& f : x.failures) // as the trace's `error` lines word them
        session_errors.emplace_back("session: " + reference_text(f));
    r.status = "pending";
    if (inline_postprocess_) {
        if (auto it = inline_summaries.find(i); it != inline_summaries.end())
            apply_summary(r, it->second);
        else
            apply_summary(
                r, {{"status", "error"}, {"errors", json::array{"post-processing did not run"}}});
        return;
    }
    pool_->submit(json::object{{"dir", dir.string()},
                               {"profile", job_.profile->name},
                               {"input_duration_s", p.duration_s},
                               {"startup_reserve_s", s_.startup_reserve_ms / 1e3},
                               {"session_errors", std::move(session_errors)},
                               {"command", s_.postprocess_command}});
}

// The last run.json and the closing lines.
runtime::run_verdict recording::finish() {
    const double worker_cpu = pool_ ? pool_->finish() : 0.0;
    json::object mock_stats;
    if (job_.stop_server)
        mock_stats = job_.stop_server();
    std::lock_guard lock(mutex_);
    auto final_json = snapshot(interrupted_ ? "interrupted" : "complete", worker_cpu);
    if (job_.stop_server)
        final_json["mock"] = mock_stats;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    final_json["provenance"] = json::object{{"pacer", "0.1.0"},
                                            {"host", host},
                                            {"clock", "CLOCK_MONOTONIC seconds"},
                                            {"target", job_.target}};
    checkpoints_.post(final_json);
    checkpoints_.flush();

    std::map<std::string, std::size_t> counts;
    for (const auto& r : records_)
        ++counts[r.status];
    std::string line;
    for (auto st : statuses)
        line += fmt::format("{}{} {}", line.empty() ? "" : ", ", counts[std::string(st)], st);
    fmt::print("variants   {}\n", line);
    // Which variants ended in error, and why (the first of their errors; all are in run.json).
    std::size_t said = 0, errored = counts["error"];
    for (const auto& r : records_) {
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
               totals_.late_packets, totals_.packets_sent, totals_.max_loop_lag_s * 1e3,
               totals_.loop_over_80ms);
    runtime::run_verdict v;
    v.interrupted = interrupted_;
    v.client_fell_behind = totals_.late_packets > 0 || totals_.loop_over_80ms > 0;
    v.server_failed = counts["fail"] + counts["error"] > 0;
    return v;
}

} // namespace

int run_postprocess_worker() {
    // Below the recorder's sessions: the kernel gives this the time they do not need.
    ::setpriority(PRIO_PROCESS, 0, 10);
    std::signal(SIGINT, SIG_IGN); // the recorder ends its workers by closing their input
    return worker_loop(STDIN_FILENO, STDOUT_FILENO);
}

runtime::run_verdict execute_recording(const record_job& job) {
    recording r(job);
    return r.run();
}

void print_plan(const record_job& job) {
    const record_options& s = job.options;
    fmt::print("pacer record --dry-run: checked; nothing started, nothing written\n");
    fmt::print("  target     {}\n",
               s.url.empty() ? "the built-in native mock (in this process)" : s.url);
    fmt::print("  profile    {}\n", job.profile->name);
    fmt::print("  dataset    {} ({} sample(s), {} variant(s) selected, {} to record)\n",
               job.dataset.string(), job.samples, job.records.size(), job.to_record);
    fmt::print("  admission  batches of at most {} variant(s), one start gate each\n",
               s.concurrency);
    if (s.postprocess == "inline")
        fmt::print("  postprocess inline: in the recording process, on the session's thread "
                   "(a diagnostic: it delays the other sessions)\n");
    else
        fmt::print("  workers    {} post-processing process(es) at nice 10\n", job.workers);
    if (!s.postprocess_command.empty())
        fmt::print("  command    /bin/sh -c '{}' per recorded variant (its folder is $1)\n",
                   s.postprocess_command);
    fmt::print("  timeout    {:g} s per session\n", s.timeout_s);
    fmt::print("  output     {} (run.json, samples/<sample>/<variant>/){}\n", job.out.string(),
               job.resumed ? " resumed" : "");
}

} // namespace pacer::record

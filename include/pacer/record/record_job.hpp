#pragma once
// The execution of `pacer record` (docs/recording.md): every selected variant of a dataset
// recorded as a native session, at most --concurrency at once, in batches that each start from
// one start gate; each variant's input prepared before its batch, its files moved into its
// folder, post-processed by the pool of worker processes (or inline), and `run.json`
// checkpointed as it goes. SIGINT/SIGTERM end the recording after (or during) a batch; what was
// cut short is pending again, for `--resume`.
//
// record_plan.hpp checks the options, reads the manifest and any run.json to resume and fills a
// record_job (plan_recording), and around execute_recording creates the output folder, writes
// report.html and the tables and maps the verdict to the exit status (record_planned). The
// command (src/cli/record_command.cpp) declares the options, prints the `--dry-run` plan
// (print_plan) and wires in the built-in native mock when no `--url` is given, the progress
// line and the end outputs.

#include <pacer/protocol/events.hpp>
#include <pacer/record/dataset.hpp>
#include <pacer/record/run_state.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/session/live_counters.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::record {

/// The options of `pacer record`, as given (a resumed recording takes its settings back from
/// its run.json: apply_config).
struct record_options {
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
    std::size_t workers = 0;          ///< 0: the default
    std::string postprocess = "pool"; ///< --postprocess pool|inline
    std::string postprocess_command;  ///< --postprocess-command ("": none)
    std::size_t threads = 1;
    std::string progress = "auto";
    bool no_report = false;
    std::string export_format; ///< --export csv|jsonl: the tables at the end ("": none)
};

/// run.json's `config`: the settings a recording records and `--resume` reads back.
boost::json::object config_json(const record_options& o, std::size_t workers);

/// Takes a resumed recording's settings back from its run.json `config` (`url` only when
/// `o.url` is empty, `workers` only when `o.workers` is 0). Throws bad_input
/// ("--resume: run.json config has no X") when a setting is missing.
void apply_config(record_options& o, const boost::json::object& config);

/// One record per variant of `samples`, in order, with the status and detail an earlier
/// attempt reached (`resumed`: nullptr when none).
std::vector<variant_record> variant_records(const std::vector<sample>& samples,
                                            const resume_state* resumed);

/// What the command is told of each batch, for its progress line.
class record_observer {
public:
    virtual ~record_observer() = default;
    /// Batch `label` ("batch 3") is about to start; `expected_s`: its longest input and the
    /// stagger. Returns the totals its sessions bump, or nullptr.
    virtual session::live_counters* batch_starting(const std::string& label, double expected_s) = 0;
    /// Its sessions have ended.
    virtual void batch_ended() = 0;
};

/// What a recording writes at its end besides run.json: module report's, which this module
/// may not include (the command passes them). Each returns what it wrote, or nullopt.
struct end_writers {
    /// report.html into `dir`; `replace`: an earlier attempt's page is replaced.
    std::function<std::optional<std::filesystem::path>(const std::filesystem::path& dir,
                                                       bool replace)>
        report;
    /// --export's tables (`format`: csv or jsonl) into `dir`.
    std::function<std::optional<std::filesystem::path>(const std::filesystem::path& dir,
                                                       std::string_view format)>
        tables;
};

/// A checked recording: every value resolved (record_plan.hpp's plan_recording), and what the
/// command wires in.
struct record_job {
    record_options options; ///< resolved: `timeout_s`, and run.json's settings on --resume
    std::filesystem::path out;
    std::filesystem::path dataset;
    const protocol::profile* profile = nullptr;
    transport::ws_endpoint endpoint;
    std::string target; ///< what the sessions talk to, in words (first line, run.json)
    /// Starts the built-in native mock of `profile` and returns its URL (record_planned calls
    /// it); empty with --url.
    std::function<std::string()> start_server;
    /// Stops the built-in mock once the sessions and the post-processing are over and returns
    /// its stats (run.json's `mock`); empty with --url.
    std::function<boost::json::object()> stop_server;
    std::size_t workers = 0; ///< post-processing processes (0: --postprocess inline)
    std::vector<variant_record> records;
    std::size_t samples = 0;   ///< samples selected from the manifest
    std::size_t to_record = 0; ///< variants of `records` still pending
    bool resumed = false;
    boost::json::object earlier_load; ///< the resumed run.json's `load` (empty: none)
    record_observer* observer = nullptr;
    end_writers end; ///< report.html and the tables (record_planned)
};

/// Prints what `job` would do (`pacer record --dry-run`; `job.options` resolved): the target,
/// profile, dataset (the samples read, the variants pending), admission, post-processing,
/// timeout and output.
void print_plan(const record_job& job);

/// Records `job`'s pending variants into `job.out` (see the top of this file) and prints its
/// lines: the start, one per batch, the variants by status, the errors, the client's pacing.
/// Returns the verdict (interrupted, the client fell behind, a variant failed). Installs its
/// own SIGINT/SIGTERM handlers (and ignores SIGPIPE); call from the main thread.
runtime::run_verdict execute_recording(const record_job& job);

/// The process of a post-processing worker (`pacer record --worker`, started by the pool):
/// at nice 10, SIGINT ignored (the recorder ends its workers by closing their input),
/// record::worker_loop on stdin and stdout. Returns its exit status.
int run_postprocess_worker();

} // namespace pacer::record

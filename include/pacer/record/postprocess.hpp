#pragma once
// Post-processing of one recorded variant (docs/recording.md): the protocol oracle and the
// serving metrics (`report.json`), the artifact checks, the reconstructed output audio
// (`output-media.wav`, `output-playout.wav` with underruns as silence, `playout.json`) and
// `transcript.json`. It runs in worker processes (`worker_pool`), never on the sessions' loops.

#include <pacer/metrics/serving.hpp>
#include <pacer/protocol/events.hpp>

#include <boost/json/object.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace pacer::record {

/// The output as the server sent it and as a player would have played it.
struct output_reconstruction {
    std::vector<std::uint8_t> media;   ///< every output audio delta, concatenated (PCM16 LE)
    std::vector<std::uint8_t> playout; ///< the media with each underrun filled with silence
    std::size_t underruns = 0;
    double underrun_s = 0;
    std::optional<double> initial_delay_s; ///< first audio receipt - first append send
    std::string transcript;                ///< output transcript or text deltas, concatenated
    std::vector<std::string> errors;       ///< undecodable deltas
};

/// Rebuilds the output of a parsed trace: the player starts `reserve_s` after the first audio
/// packet arrives and plays at `rate`; whenever the next packet has not arrived when the
/// previous ends, the gap is silence (an underrun) and play resumes at its arrival.
output_reconstruction reconstruct_output(std::span<const metrics::trace_line> trace, int rate,
                                         double reserve_s);

/// The status of a variant from its stages (docs/recording.md): `error` when preparation,
/// the session or post-processing threw; `invalid` when the input is not shorter than the
/// timeout; else `fail` when the artifact checks or the reconstruction found errors; else the
/// oracle's verdict (`pass`, `fail`, `not_exercised`).
struct status_inputs {
    bool preparation_error = false;
    bool input_too_long = false;
    bool session_error = false;
    bool postprocess_error = false;
    std::size_t artifact_errors = 0;
    std::string verdict; ///< the oracle's
};
std::string variant_status(const status_inputs& in);

/// The statuses a run counts, in report order; `pending` is a variant not recorded yet.
inline constexpr std::string_view statuses[] = {"pending", "invalid",       "error",
                                                "fail",    "not_exercised", "pass"};

/// What `process_variant` needs besides the folder.
struct variant_job {
    std::filesystem::path dir;
    const protocol::profile* profile = nullptr;
    double input_duration_s = 0;
    double startup_reserve_s = 0.08;
    std::vector<std::string> session_errors; ///< errors the runner saw (trace error, ...)
};

/// Processes a recorded variant folder (continuous.jsonl, input-send-receipts.json, input.pcm):
/// writes report.json, output-media.wav, output-playout.wav, playout.json and transcript.json,
/// and returns the small summary the recorder keeps in run.json: `status`,
/// `protocol_verdict`, `errors`, `violations`, `input_timing`, `output`. Throws on an
/// unreadable folder (the recorder then records `error`).
boost::json::object process_variant(const variant_job& job);

/// The `record --worker` loop: reads one JSON job a line from `in` (`{"dir", "profile",
/// "input_duration_s", "startup_reserve_s", "session_errors"}`, and `command`: the user's
/// post-processing command, see postprocess_variant), writes one JSON summary a
/// line to `out` (the summary, or `{"dir", "status":"error", "errors":[...]}`, plus the
/// worker's own `cpu_s` so far and its `worker_pid`). Returns 0 at end of input, 1 when `out`
/// cannot be written. (`pacer record --worker` renices itself to 10 first.)
int worker_loop(int in_fd, int out_fd);

/// Child processes that post-process variants: `workers` processes of `argv` (the recorder's own
/// binary with `record --worker`), spawned at once at nice 10. `submit` queues a job; one thread
/// per worker feeds it a job at a time and calls `done` with the summary (on that thread).
class worker_pool {
public:
    using done_fn =
        std::function<void(const boost::json::object& job, const boost::json::object& summary)>;
    worker_pool(const std::string& binary, std::size_t workers, done_fn done);
    ~worker_pool(); ///< finish() if not yet called
    worker_pool(const worker_pool&) = delete;
    worker_pool& operator=(const worker_pool&) = delete;

    void submit(boost::json::object job);
    /// Waits for every queued job, ends the workers; returns their CPU seconds (reaped children).
    double finish();
    std::size_t size() const { return workers_.size(); }

private:
    struct worker {
        pid_t pid = -1;
        int to = -1, from = -1;
        std::thread feeder;
    };
    void feed(worker& w);

    done_fn done_;
    std::vector<std::unique_ptr<worker>> workers_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<boost::json::object> queue_;
    bool closing_ = false;
    bool finished_ = false;
    double cpu_s_ = 0;
};

/// At most 4 workers and a quarter of the CPUs this process may use (at least 1).
std::size_t default_worker_count();

} // namespace pacer::record

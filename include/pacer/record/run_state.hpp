#pragma once
// The state of a recording and its `run.json` (docs/recording.md): every selected variant with
// its status, the summary counts, and a checkpointer that rewrites run.json atomically (temp file
// + rename) off the sessions' threads, coalescing updates that come faster than it writes.

#include <boost/json/object.hpp>

#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace pacer::record {

/// One variant of one sample.
struct variant_record {
    std::string sample, subset, text, variant;
    std::string source;    ///< the WAV path as the manifest gives it
    std::string directory; ///< relative to the output: samples/<sample>/<variant>
    std::string status = "pending";
    boost::json::object detail; ///< what recording and post-processing found
};

/// `{schema_version, status, config, summary, load, samples:[{id, subset, text, variants:{name:
/// {directory, source, status, qualified, ...detail}}}]}`; `summary` counts the statuses (all
/// of them, zeros included), `variants_selected`, `samples_selected`, `pairs_qualified` (samples
/// whose every variant passed) and `per_subset` counts.
boost::json::object run_json(const boost::json::object& config,
                             const std::vector<variant_record>& variants, std::string_view status,
                             const boost::json::object& load);

/// What `--resume` keeps from an earlier run.json: its config and every variant that reached a
/// final status (anything but `pending`), by "sample/variant". Throws std::invalid_argument
/// naming what is wrong.
struct resume_state {
    boost::json::object config;
    boost::json::object load; ///< the earlier attempt's `load` (empty if none)
    std::map<std::string, variant_record> finished;
};
resume_state parse_run_json(std::string_view text);

/// Writes `text` to `path` through `path.tmp`, fsync and rename: a reader (or a crash) sees the
/// old file or the new one, never a part.
void write_atomically(const std::filesystem::path& path, std::string_view text);

/// A thread that writes the latest snapshot it was given; snapshots posted while it writes
/// replace each other (only the newest is written).
class checkpointer {
public:
    explicit checkpointer(std::filesystem::path path);
    ~checkpointer(); ///< writes what is pending, then stops
    checkpointer(const checkpointer&) = delete;
    checkpointer& operator=(const checkpointer&) = delete;

    void post(boost::json::object snapshot);
    /// Waits until everything posted so far is on disk; rethrows a write error.
    void flush();
    std::size_t writes() const;
    std::size_t posts() const;

private:
    void loop();

    std::filesystem::path path_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::optional<boost::json::object> pending_;
    bool busy_ = false, stop_ = false;
    std::size_t writes_ = 0, posts_ = 0;
    std::string error_;
    std::thread thread_;
};

} // namespace pacer::record

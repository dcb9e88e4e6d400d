#pragma once
// Pooling the results of runs that streamed at the same time (worker processes of one host,
// or shards on several hosts) as if one client had run them: percentiles are computed over
// every packet of every part, never averaged.

#include <boost/json/object.hpp>

#include <filesystem>
#include <optional>
#include <vector>

namespace pacer::metrics {

struct session_samples {
    std::optional<double> session_start_s;
    std::vector<double> deviation_s;
};

/// One run's folder: its `summary.json` and `samples.json`.
struct run_part {
    std::filesystem::path dir;
    boost::json::object summary;
    std::vector<session_samples> sessions;
};

/// Reads a run folder. Throws std::runtime_error naming the file that is missing or malformed.
run_part read_run_part(const std::filesystem::path& dir);

/// The pooled summary of `parts`: sessions and packets summed, deviation percentiles over all
/// packets, late packets, loop lag (worst part), peak overlapping input streams across parts
/// on the wall clock (each part's own monotonic/realtime pair aligns it), and one entry per
/// part with its CPU and memory.
boost::json::object merge_parts(const std::vector<run_part>& parts);

/// Parts from more than one host are aligned on their realtime clocks, so those clocks must be
/// trustworthy: each such part must have recorded a synchronised clock whose maximum error is
/// within `max_error_s`. Throws std::runtime_error naming the first part that is not (unless
/// `allow_skew`). Parts of one host share their clocks and are never refused.
void check_clocks(const std::vector<run_part>& parts, double max_error_s, bool allow_skew);

} // namespace pacer::metrics

#pragma once
// `--metrics-listen`: the live totals of a run (the progress line's) in the Prometheus text
// format, for people who watch load tests in Grafana. `pacer serve` can add its level.

#include <pacer/session/live_counters.hpp>

#include <optional>
#include <string>

namespace pacer::run {

/// What a scrape of `--metrics-listen` returns: sessions started/active/done/failed, packets
/// sent and late, errors, the loop monitors' largest lag, and `level` (the concurrency of the
/// level running, serve) when given. Reads relaxed atomics only: safe from any thread.
std::string live_metrics_text(const session::live_counters& c,
                              std::optional<std::size_t> level = std::nullopt);

} // namespace pacer::run

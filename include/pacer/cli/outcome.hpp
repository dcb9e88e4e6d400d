#pragma once
// What `pacer run` and `pacer serve` say about the server once a run is over: the pure
// functions of the sessions' error messages live in `metrics` (metrics/outcome.hpp, so that
// `sweep` shares them); the command line names them here as well.

#include <pacer/metrics/outcome.hpp>

namespace pacer::cli {

using metrics::connect_failure;
using metrics::connect_outcome;
using metrics::count_errors;
using metrics::error_count;
using metrics::error_kind;
using metrics::unreachable_reason;

} // namespace pacer::cli

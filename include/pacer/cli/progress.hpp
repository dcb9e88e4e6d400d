#pragma once
// The live progress line of `pacer run`, `pacer serve` and `pacer http` is module `run`'s
// (run/progress.hpp: it reads only the sessions' live totals); the command line names it here
// as well.

#include <pacer/run/progress.hpp>

namespace pacer::cli {

using run::format_progress;
using run::plain_period_s;
using run::progress_due;
using run::progress_mode;
using run::progress_reporter;
using run::progress_snapshot;
using run::progress_view;
using run::resolve_progress;
using run::short_duration;
using run::take_snapshot;
using run::terminal_period_s;

} // namespace pacer::cli

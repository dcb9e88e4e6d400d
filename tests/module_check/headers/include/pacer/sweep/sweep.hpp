#pragma once
// Module `sweep` (fixture: the comment sweep/sweep.hpp had before issue 32, schedule where the
// table says telemetry). It may include core, schedule, trace, runtime, protocol, transport,
// session, metrics; it may not include server, report, record, run, cli (the build fails if it
// does).

#pragma once
// The kind of an error message read back from a run's artifacts (summary.json's session
// errors), for report.html's error table. A run groups its sessions' failures by code
// (metrics::count_kinds); a report has only the text its artifacts hold, so it reads the kind
// off the reference client's wording here, at the edge where that text is read back.

#include <string>
#include <string_view>

namespace pacer::report {

/// The kind a message is grouped under, named as summary.json's `errors_by_kind` names it
/// (pacer::failure_kind): the exception-type word before the first ':' ("OSError",
/// "ConnectionClosedError", "ValueError", "InvalidStatus", "RuntimeError"...), "Timeout" for
/// "Session timeout after ...", "admission rejected" for a 503 rejection, "wrong protocol" for
/// another protocol's first event, "other" for anything else.
std::string error_kind(std::string_view message);

} // namespace pacer::report

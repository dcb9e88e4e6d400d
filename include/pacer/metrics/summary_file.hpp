#pragma once
// `summary.json` read back: the one reader of a result folder's summary (a run or one of its
// parts, a merge, a serve sweep or one of its levels, `pacer http`), and what the readers look
// up in it. `pacer merge` (read_run_part), `pacer replay` and `pacer report`/`export` read
// summaries here and nowhere else. Like the rest of metrics it may include core, schedule,
// trace, runtime and protocol only.

#include <pacer/runtime/json_file.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pacer::metrics {

/// A folder's `summary.json`, as read (runtime::read_json_file): `path`, `json` or `why`,
/// `missing`, `object()`.
using summary_file = runtime::json_file;

/// Reads `dir/summary.json`. Never throws for a missing, unreadable or malformed file.
summary_file read_summary(const std::filesystem::path& dir);

/// The input duration a run or a serving level recorded (`config.input_duration_s`).
std::optional<double> recorded_input_duration(const boost::json::object& summary);

/// The profile a serving level (`profile`) or a run (`config.profile`) recorded, as recorded
/// (any JSON value); null when none.
const boost::json::value* recorded_profile_name(const boost::json::object& summary);

/// The wire protocol a serving level (`protocol`) or a run (`config.protocol`) recorded;
/// nullopt when none or not a string.
std::optional<std::string_view> recorded_protocol(const boost::json::object& summary);

} // namespace pacer::metrics

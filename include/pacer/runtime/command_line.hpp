#pragma once
// The command line a result folder records (`command_line` in summary.json, shown by
// report.html), with every secret taken out: the value of a header option (`-H 'Name: value'`,
// `--header=Name: value`) keeps its name only. `pacer run`, `serve` and `http` record it.

#include <boost/json/array.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace pacer::runtime {

/// `args` with the value of every header option after its name replaced by "<redacted>".
/// `header_options` are the option's spellings, e.g. {"-H", "--header"}.
std::vector<std::string> redact_headers(std::vector<std::string> args,
                                        const std::vector<std::string_view>& header_options);

/// This process's command line (/proc/self/cmdline), redacted as above; empty when unreadable.
boost::json::array recorded_command_line(const std::vector<std::string_view>& header_options);

} // namespace pacer::runtime

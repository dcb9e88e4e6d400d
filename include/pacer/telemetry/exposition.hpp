#pragma once
// The Prometheus text exposition format (version 0.0.4), read and written. Debian has no
// parser of it for C or C++ (prometheus-cpp only writes it), so this is a small one, fuzzed
// (fuzz/fuzz_exposition.cpp).
//
// Read: `# HELP` and `# TYPE` lines, other comments (ignored), samples
// `name{label="value",…} value [timestamp]` with escaped label values (\\, \", \n), values
// such as 1e3, NaN, +Inf, -Inf. A line that is none of these is skipped with one warning
// naming its number; the rest of the text is used.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace pacer::telemetry {

enum class metric_type { untyped, counter, gauge, histogram, summary };

/// "untyped", "counter", "gauge", "histogram", "summary".
std::string_view to_string(metric_type t) noexcept;

using label_list = std::vector<std::pair<std::string, std::string>>;

struct metric_sample {
    std::string name;
    label_list labels; ///< in the order written
    double value = 0;  ///< may be NaN or ±infinity
    std::optional<std::int64_t> timestamp_ms;
};

struct exposition {
    std::vector<metric_sample> samples;
    std::unordered_map<std::string, metric_type> types; ///< from `# TYPE`, by metric family
    std::unordered_map<std::string, std::string> help;  ///< from `# HELP`, unescaped
    /// One line per malformed line: `line N: why: 'the line'` (the line cut at 80 bytes).
    std::vector<std::string> warnings;

    /// The type of the family `sample_name` belongs to: its own `# TYPE`, or its histogram's or
    /// summary's (for `_bucket`, `_sum`, `_count`), else untyped.
    metric_type type_of(std::string_view sample_name) const;
};

/// Parses a whole scrape. Never throws; a malformed line is a warning.
exposition parse_exposition(std::string_view text);

/// `name{labels} value` as the format writes it (no newline): label values escaped, the value
/// in the shortest form that reads back to the same double, NaN/+Inf/-Inf spelled so.
std::string format_sample(const metric_sample& s);

/// One metric family to expose: its help, its type and its series.
struct metric_family {
    std::string name;
    std::string help;
    metric_type type = metric_type::gauge;
    std::vector<std::pair<label_list, double>> series;
};

/// The text a scrape of `families` returns (`# HELP`, `# TYPE`, then each series).
std::string format_exposition(const std::vector<metric_family>& families);

} // namespace pacer::telemetry

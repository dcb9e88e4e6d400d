#pragma once
// A JSON file of a result folder read whole (summary.json, run.json, capacity.json,
// schedule.json, a variant's report.json): the value, or why there is none. Readers that must
// refuse a file say so with `path` and `why`; readers that go on note them.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace pacer::runtime {

/// A JSON file, as read.
struct json_file {
    std::filesystem::path path;             ///< the file
    std::optional<boost::json::value> json; ///< the parsed file; nullopt: see `why`
    bool missing = false;                   ///< there is no such file
    /// Why `json` is empty, to follow the path in a message: "cannot be read" (missing, or not
    /// readable) or "is not valid JSON: <reason>".
    std::string why;

    /// The file's object; null when the file is unread or is not a JSON object.
    const boost::json::object* object() const { return json ? json->if_object() : nullptr; }
};

/// Reads and parses `path`. Never throws for a missing, unreadable or malformed file.
json_file read_json_file(const std::filesystem::path& path);

} // namespace pacer::runtime

#pragma once
// One plain HTTP/1.1 GET, blocking, for what pacer reads between levels (a server's own stats
// or metrics endpoint): never on a session context. Errors are data, never exceptions.

#include <chrono>
#include <string>
#include <string_view>

namespace pacer::transport {

/// A URL to GET: `http://host[:port]/path[?query]` split for the request.
struct get_target {
    std::string host;
    std::string port = "80";
    std::string target = "/"; ///< path and query, as sent
    /// The same target with `key=value` added to its query.
    std::string with_query(std::string_view key_value) const;
};

/// Parses `http://host[:port][/path][?query]` (IPv6 hosts in brackets). Throws
/// std::invalid_argument naming `flag` for anything else (https://, credentials, a fragment, an
/// empty host, a port outside 1..65535).
get_target parse_get_url(std::string_view url, std::string_view flag);

struct get_result {
    unsigned status = 0; ///< 0 when no answer was read
    std::string body;
    std::string error; ///< empty when the answer was read to its end
    bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

/// GETs `target` within `timeout` (connect included), on an io_context of its own.
get_result http_get(const get_target& url, std::string_view target,
                    std::chrono::milliseconds timeout);

} // namespace pacer::transport

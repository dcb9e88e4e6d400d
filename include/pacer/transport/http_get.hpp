#pragma once
// One plain HTTP/1.1 GET, blocking, for what pacer reads between levels (a server's own stats
// endpoint): never on a session context. It is pacer's one HTTP client (http_pool,
// http_client.hpp) run to its end on an io_context of its own, as `--server-metrics` scrapes
// are. Errors are data, never exceptions.

#include <pacer/transport/http_client.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace pacer::transport {

struct get_result {
    unsigned status = 0; ///< 0 when no answer was read
    std::string body;    ///< a 2xx answer's body
    std::string error;   ///< empty when the answer was read to its end
    bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

/// GETs `target` from `url`'s server (a URL parsed with url_use::get; http:// only) within
/// `timeout`, connect included.
get_result http_get(const http_endpoint& url, std::string_view target,
                    std::chrono::milliseconds timeout);

} // namespace pacer::transport

#pragma once
// One request of `pacer http`: the prompt of its arrival, the streamed answer read as OpenAI
// SSE chunks, every moment and any error recorded as data (docs/http.md).

#include <pacer/core/awaitable.hpp>
#include <pacer/http/http_job.hpp>
#include <pacer/metrics/llm.hpp>
#include <pacer/transport/http_client.hpp>

#include <optional>
#include <string>
#include <vector>

namespace pacer::http {

/// Sends the request of arrival `r.index` of `plan` on `pool` and streams its answer into `r`
/// (input and output lengths, first byte, tokens, usage, connect and TLS times, completion and
/// any error as `r.error` and `r.error_message`). Errors are data: it throws only what the pool
/// throws.
awaitable<void> one_request(transport::http_pool& pool, const http_plan& plan,
                            metrics::llm_request& r);

/// When no request got an answer and the most frequent error is a connect failure (refused,
/// unresolvable, a TLS handshake that failed), its message; otherwise nullopt.
std::optional<std::string> unreachable(const std::vector<metrics::llm_request>& records);

} // namespace pacer::http

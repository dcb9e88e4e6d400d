#pragma once
// Metrics of streaming LLM requests (`pacer http`): what one request recorded, and the
// summary a vLLM-bench user expects, anchored to the schedule.
//
// Per request: scheduled (the latency anchor), dispatched, first byte, first token, each
// token's arrival, completed. Then, in milliseconds:
//   TTFT  = first token - scheduled          (uncorrected: first token - dispatched)
//   E2EL  = completed - scheduled            (uncorrected: completed - dispatched)
//   TPOT  = (completed - first token) / (output tokens - 1), for requests with 2+ tokens
//   ITL   = the gaps between consecutive token arrivals (every gap of every request)
// TPOT and ITL do not depend on the anchor. A token arrival is an SSE chunk with text; the
// output token count is the server's `usage.completion_tokens` when it sent one, else the
// number of such chunks. Only requests that ended without error enter the latencies.

#include <pacer/core/clock.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::metrics {

/// What one request of the schedule recorded.
struct llm_request {
    std::size_t index = 0;        ///< the arrival's index in the whole (unsharded) schedule
    std::uint64_t input_len = 0;  ///< prompt tokens asked (approximated, see docs/http.md)
    std::uint64_t output_len = 0; ///< max_tokens asked
    time_point scheduled{};
    std::optional<time_point> dispatched;
    std::optional<time_point> first_byte; ///< the response's status line arrived
    /// The setup of the new connection this request opened, in seconds (nullopt over a reused
    /// connection): TCP connect, and the TLS handshake for https://. Part of first_byte.
    std::optional<double> connect_s, tls_handshake_s;
    std::optional<time_point> first_token; ///< the first chunk with text arrived
    std::optional<time_point> completed;
    std::vector<time_point> token_times; ///< every chunk with text, in order
    bool dropped = false;                ///< skipped by `--cap-policy drop`
    /// "" or one of: connect, http_status, timeout, disconnect, malformed_sse, server_error.
    std::string error;
    std::string error_message;
    unsigned status = 0; ///< HTTP status, 0 when none arrived
    std::optional<std::uint64_t> usage_prompt_tokens;
    std::optional<std::uint64_t> usage_completion_tokens;

    bool ok() const { return completed.has_value() && error.empty(); }
    /// `usage.completion_tokens` when sent, else the chunks with text.
    std::uint64_t output_tokens() const {
        return usage_completion_tokens.value_or(token_times.size());
    }
};

/// The error kinds, in the order summaries list them.
inline constexpr std::string_view llm_error_kinds[] = {
    "connect", "http_status", "timeout", "disconnect", "malformed_sse", "server_error"};

/// Service-level objectives for goodput, in milliseconds; an absent one is not checked.
struct goodput_slo {
    std::optional<double> ttft_ms, tpot_ms, e2el_ms;
    bool empty() const { return !ttft_ms && !tpot_ms && !e2el_ms; }
};

/// Parses `ttft:500,tpot:50,e2el:2000` (any subset, each once, finite values > 0). Throws
/// bad_input with a one-line message naming `--goodput`.
goodput_slo parse_goodput(std::string_view text);

/// True when a request ended without error and meets every SLO given (TTFT and E2EL
/// anchored to the schedule; a request of fewer than 2 tokens has no TPOT and passes it).
bool meets(const llm_request& r, const goodput_slo& slo);

/// The percentile `p` in [0, 100] of sorted values with linear interpolation between closest
/// ranks (numpy's default, as vLLM's bench uses); 0 for an empty sample.
double percentile(std::span<const double> sorted, double p);

/// One line of requests.jsonl: times in seconds from `start` (the schedule's origin), null
/// when the moment did not happen; ttft/e2el (both views), tpot in ms; tokens; the error.
boost::json::object llm_request_json(const llm_request& r, time_point start);

/// The summary (see docs/http.md for every key): duration (s, from `start` to the last
/// completion), completed, failed, dropped, errors by kind, total_input_tokens,
/// total_output_tokens, request_throughput, output_throughput, total_token_throughput,
/// request_goodput (when `slo` is not empty), and mean/median/std/p90/p95/p99 of ttft, tpot,
/// itl and e2el in ms (`mean_ttft_ms`...; null when no request has the figure), with the same
/// from dispatch under `uncorrected`.
boost::json::object llm_summary(std::span<const llm_request> requests, time_point start,
                                const goodput_slo& slo);

} // namespace pacer::metrics

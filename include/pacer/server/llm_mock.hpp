#pragma once
// `pacer llm-mock`: an OpenAI-compatible streaming LLM server for tests and benchmarks of
// `pacer http` (docs/http.md describes it for users).
//
// - `POST /v1/completions` and `POST /v1/chat/completions`, streaming (`"stream": true`: SSE
//   `data:` chunks, one per token, then `data: [DONE]`; a last chunk with `usage` when
//   `stream_options.include_usage`) or not; `GET /v1/models` and `GET /health`. HTTP/1.1
//   keep-alive. Every model name is accepted.
// - Timing: the first token leaves `ttft` after the request was read, each next one `itl`
//   after the previous, and each of those delays grows by `batch_cost` per other request in
//   flight when the token is due (a batch-capacity model: a rate sweep finds a knee).
// - Admission: over `max_concurrency` requests in flight, HTTP 503.
// - Faults, for the generation requests chosen by arrival order (all by default): HTTP 500;
//   `stall` (the first token, then nothing until the client goes); `malformed_sse` (a data
//   line that is not JSON after the first token); `disconnect` (the connection closed half-way
//   through the tokens, without the end of the chunked body).
// - Pauses: for `pause` out of every `pause_every` no token leaves (a stalling server, to show
//   what a closed-loop tool's coordinated omission hides).
// - TLS: with a certificate and key, every connection is https:// (Beast's SSL stream).

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/server/native_mock.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace pacer::server {

enum class llm_fault { none, server_error, stall, malformed_sse, disconnect };

/// "none", "server_error", "stall", "malformed_sse", "disconnect".
std::string_view to_string(llm_fault f) noexcept;
/// The inverse of `to_string`; throws bad_input naming `--fault` otherwise.
llm_fault parse_llm_fault(std::string_view name);

struct llm_mock_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0; ///< 0: any free port
    duration ttft = std::chrono::milliseconds(20);
    duration itl = std::chrono::milliseconds(5);
    duration batch_cost{};           ///< added to every token's delay per other request in flight
    std::size_t max_concurrency = 0; ///< 0: no admission limit
    llm_fault fault = llm_fault::none;
    std::optional<session_set> fault_requests; ///< by arrival order from 0; none: all
    std::uint64_t default_max_tokens = 16;     ///< when a request gives no max_tokens
    /// Periodic pauses (a garbage-collection-like stall of the whole server): from the mock's
    /// start, for `pause` out of every `pause_every`, no token leaves; a token due inside a
    /// pause leaves when it ends. Zero: no pauses.
    duration pause_every{}, pause{};
    /// PEM certificate (chain) and key: serve https:// (both or neither).
    std::string tls_cert, tls_key;
};

/// When a token due at `due` leaves under periodic pauses of `pause` out of every `every`
/// counted from `origin`: `due` itself outside a pause, else the end of its pause. No pause
/// when either is zero or `due` is before `origin`.
time_point after_pause(time_point due, time_point origin, duration every, duration pause);

/// The mock on one io_context (run it on one thread: no strand, no lock).
class llm_mock {
public:
    /// Throws bad_input for options it cannot serve (a TLS certificate or key
    /// that cannot be loaded, or only one of them).
    llm_mock(boost::asio::io_context& io, llm_mock_options options);
    ~llm_mock();
    llm_mock(const llm_mock&) = delete;
    llm_mock& operator=(const llm_mock&) = delete;

    /// Binds and listens; throws std::system_error when the address cannot be used.
    void listen();
    std::uint16_t port() const;
    /// Serving https:// (a certificate was given).
    bool tls() const;
    /// Accepts connections until `stop()`.
    pacer::awaitable<void> serve();
    /// Stops accepting (open connections end with the io_context).
    void stop();
    /// requests, completed, rejected (503), faulted, bad_requests, peak_in_flight, connections,
    /// tokens, fault, with_bearer_token (requests that carried `Authorization: Bearer`; the
    /// token itself is never kept), tls, tls_handshake_failures, paused_tokens (tokens held by a
    /// pause).
    boost::json::object stats() const;

private:
    struct state;
    std::shared_ptr<state> st_;
};

} // namespace pacer::server

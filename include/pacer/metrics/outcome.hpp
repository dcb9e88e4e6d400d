#pragma once
// What `pacer run` and `pacer serve` say about the server once a run is over: an unreachable
// server named as such, errors grouped by kind, the most frequent error. Pure functions of the
// sessions' error messages, unit-tested in tests/unit/metrics/test_outcome.cpp.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::metrics {

/// The reason a session could not reach the server, from one of its error messages, or
/// nullopt when the message is not about connecting: "connection refused" (from "OSError:
/// connect to HOST:PORT: Connection refused"), "cannot resolve HOST: ...", "WebSocket
/// handshake failed: ...", "the server declined the WebSocket upgrade: HTTP 404", "no
/// connection within the 2s session timeout" (a timeout of a session that was never admitted).
std::optional<std::string> connect_failure(std::string_view message);

/// One session as far as reaching the server goes.
struct connect_outcome {
    bool admitted = false; ///< the WebSocket handshake succeeded
    bool rejected = false; ///< the server answered 503 to every handshake
    std::span<const std::string> errors;
};

/// When no session reached the server (none admitted, none rejected: a 503 is an answer) and
/// each has a connect failure, the most frequent reason; otherwise nullopt.
std::optional<std::string> unreachable_reason(std::span<const connect_outcome> sessions);

/// The kind an error message is grouped under: the exception-type word before the first ':'
/// ("OSError", "ConnectionClosedError", "ValueError", "InvalidStatus", "RuntimeError"...),
/// "Timeout" for "Session timeout after ...", "admission rejected" for a 503 rejection,
/// "other" for anything else.
std::string error_kind(std::string_view message);

/// A message (or a kind) and how many sessions had it.
struct error_count {
    std::string what;
    std::size_t sessions = 0;
};

/// Counts each session once per distinct message (or per kind, with `by_kind`), most frequent
/// first, ties in message order.
std::vector<error_count> count_errors(std::span<const std::vector<std::string>> per_session,
                                      bool by_kind);

} // namespace pacer::metrics

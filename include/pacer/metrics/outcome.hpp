#pragma once
// What `pacer run` and `pacer serve` say about the server once a run is over: an unreachable
// server named as such, errors grouped by kind, the most frequent error. Pure functions of the
// sessions' failures (codes, pacer/core/failure.hpp: grouped by their conditions, never by
// their text), unit-tested in tests/unit/metrics/test_outcome.cpp.

#include <pacer/core/failure.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pacer::metrics {

/// The reason a session could not reach the server, from one of its failures, or nullopt when
/// the failure is not about connecting (its code is equivalent to no reach_failure):
/// "connection refused" (connect to HOST:PORT refused), "cannot resolve HOST: ...", "WebSocket
/// handshake failed: ...", "the server declined the WebSocket upgrade: HTTP 404", "no
/// connection within the 2s session timeout" (a timeout of a session never admitted).
std::optional<std::string> connect_failure(const failure& f);

/// One session as far as reaching the server goes.
struct connect_outcome {
    bool admitted = false; ///< the WebSocket handshake succeeded
    bool rejected = false; ///< the server answered 503 to every handshake
    std::span<const failure> failures;
};

/// When no session reached the server (none admitted, none rejected: a 503 is an answer) and
/// each has a connect failure, the most frequent reason; otherwise nullopt.
std::optional<std::string> unreachable_reason(std::span<const connect_outcome> sessions);

/// A message (or a kind) and how many sessions had it.
struct error_count {
    std::string what;
    std::size_t sessions = 0;
};

/// Counts each session once per kind of its failures (failure_kind: the code's default error
/// condition), most frequent first, ties in the order of the kinds' names; `what` is the
/// kind's name in summary.json ("OSError", "Timeout", "admission rejected"...).
std::vector<error_count> count_kinds(std::span<const std::vector<failure>> per_session);

/// Counts each session once per distinct message, most frequent first, ties in message order.
std::vector<error_count> count_messages(std::span<const std::vector<std::string>> per_session);

} // namespace pacer::metrics

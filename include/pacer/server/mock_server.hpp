#pragma once
// Module `server` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns the mock
// servers (probe, native, LLM) and their host. It may include core, runtime, protocol, transport;
// it may not include schedule, trace, session, metrics, telemetry, report, record, sweep, run,
// http, cli, console, capacity_search (the build fails if it does).
//
// What every mock server of pacer offers, so that one process runner (`pacer mock`,
// `pacer native-mock`) or an in-process caller (`pacer run`, `pacer serve`) can drive any of them.

#include <pacer/core/awaitable.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace pacer::server {

/// Where a mock listens and whom it admits (docs/protocol.md §1.2, server side).
struct host_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;       ///< 0: any free port
    std::size_t max_sessions = 0; ///< open sessions before handshakes get HTTP 503; 0: no limit
    std::size_t reject_first = 0; ///< answer the first N handshakes with HTTP 503
    /// Set on the listener (accepted sockets inherit them): SO_RCVBUF and TCP_MAXSEG in bytes;
    /// 0 keeps the system's. Small values make a peer's send window fill within seconds.
    int receive_buffer = 0;
    int max_segment = 0;
    /// PEM certificate (chain) and private key: serve wss:// (TLS) instead of ws://. Both or
    /// neither; the mock refuses to start (bad_input) when they cannot be loaded.
    std::string tls_cert;
    std::string tls_key;
    /// Also served beside /v1/realtime (vllm-omni's alias `/v1/duplex`); empty: none.
    std::string alias_path;
    /// Over --max-sessions, accept the upgrade and let the session say so (vllm-omni's
    /// `resource_exhausted` error event) instead of answering HTTP 503.
    bool capacity_error_in_session = false;
};

namespace detail {
class mock_sessions;
}

/// A mock realtime server on one io_context. The accept loop, the admission answers and the
/// common stats are shared (`detail::mock_host`); each mock brings its sessions and its own
/// stats (`detail::mock_sessions`) through its constructor.
///
/// @par Thread safety
/// Run each io_context on one thread: a session lives on one context and uses no strand and
/// no lock. Every member is called on the first context's thread (post `stop()` there from
/// elsewhere), except `listen()` and `port()`, which may be called before the contexts run,
/// and `stats()`, which is read once every context has stopped running (or, with one
/// context, on its thread). A mock built on several contexts (`pacer mock --threads N`)
/// accepts on the first and hands each connection to the next context in turn.
///
/// @par Object lifetimes
/// The sessions keep the mock's state alive; the object itself may go once `serve()` has
/// returned and its context has stopped.
class mock_server {
public:
    virtual ~mock_server();

    /// Binds and listens; throws std::system_error when the address cannot be used.
    void listen();
    /// The bound port (after `listen`).
    std::uint16_t port() const;
    /// Accepts sessions until `stop()`.
    ///
    /// @par Cancellation
    /// Through `stop()` only: it closes the acceptor and every open session's connection.
    pacer::awaitable<void> serve();
    /// Stops accepting and the loop monitor, and closes every open session's connection (a
    /// stopped server has no sessions; their peers see the connection end).
    void stop();
    /// The `--stats-output` document: sessions, loop lag, CPU, and what the mock measures.
    boost::json::object stats() const;

protected:
    explicit mock_server(std::shared_ptr<detail::mock_sessions> sessions);

private:
    std::shared_ptr<detail::mock_sessions> sessions_;
};

} // namespace pacer::server

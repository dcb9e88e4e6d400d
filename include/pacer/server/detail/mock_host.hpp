#pragma once
// What the mock servers share, below their protocol: the accept loop, the HTTP upgrade with its
// admission answers (404, 400, 503 "connection capacity exhausted"), raw server frames, the loop
// monitor and the common stats. Only the mocks' own sources include it.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/runtime/loop_monitor.hpp>
#include <pacer/server/mock_server.hpp>
#include <pacer/transport/detail/maybe_tls_stream.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/json/object.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::server::detail {

/// A session's WebSocket: over TLS when the host has a certificate, plain TCP otherwise. Raw
/// frames go to `ws.next_layer()` (through TLS when on); `get_lowest_layer(ws)` is the TCP socket.
using ws_stream = boost::beast::websocket::stream<transport::detail::maybe_tls_stream>;

/// The mocks' completion token: expected I/O errors come back as values.
using pacer::use_tuple;

/// Appends one unmasked, final RFC 6455 server frame (section 5.2) carrying `payload`: text
/// (opcode 0x1) unless `binary`. Mocks write these straight to the socket, several in one write,
/// beneath Beast, which then only reads and closes.
void append_frame(std::string& out, std::string_view payload, bool binary = false);
/// Appends the header alone of such a frame, for a payload of `payload_size` bytes that the
/// caller appends next (in pieces, with no copy of the whole).
void append_frame_header(std::string& out, std::size_t payload_size, bool binary = false);

/// The base64 of a run of identical PCM16 samples (a mock's output audio: DuplexPeer's value
/// 1, or silence), kept from one call to the next: a session's audio deltas are nearly all the
/// same length, so each is encoded once, not once a unit (the mock's largest per-packet cost).
class constant_audio {
public:
    /// `samples` little-endian samples of `value`, base64-encoded; valid until the next call.
    const std::string& base64(std::size_t samples, std::int16_t value);

private:
    // What `base64_` encodes; it starts as the (empty) text of no samples.
    std::size_t samples_ = 0;
    std::int16_t value_ = 0;
    std::string base64_;
};

/// The index of `name` in `names`; throws std::invalid_argument
/// "`flag` must be one of a, b, c (got 'name')" otherwise.
std::size_t parse_choice(std::span<const std::string_view> names, std::string_view name,
                         std::string_view flag);

/// What a session handler is told of its session: its index (admitted sessions in accept order
/// from 0), the upgrade's target (path and query), and whether it came over --max-sessions
/// (only with `host_options::capacity_error_in_session`: such a session is not counted as
/// open, and should tell its client and end).
struct session_start {
    std::size_t index = 0;
    std::string target;
    bool over_capacity = false;
};

/// The accept loop and the upgrade of one mock, with its session counters and loop monitors.
///
/// @par Threads
/// The host spreads sessions over one or more io_contexts (its shards), each run by its own
/// thread: the first accepts, and each accepted connection goes to the next shard in turn
/// (round robin) and lives there for good, so a session needs no strand and no lock. One
/// acceptor handing sockets out was chosen over SO_REUSEPORT acceptors on every shard because
/// the kernel spreads those by a hash of the client's address and port: a few sessions could
/// all land on one thread, while round robin is even (and testable) at any count; accepting
/// is a few microseconds a session, far below the sessions' own work.
///
/// @par Thread safety
/// Counters shared by the shards are atomics; the header names and nothing else take a mutex
/// (once a connection). Each shard's open sockets, monitor and stop signal are touched only
/// on that shard's thread. `listen`, `port`, `serve` and `stop` are called on the first
/// shard's thread (or before the contexts run); `stats()` once every shard has stopped running
/// (or, with one shard, on its thread).
///
/// @par Object lifetimes
/// Create it with `std::make_shared`: every connection coroutine holds it.
class mock_host : public std::enable_shared_from_this<mock_host> {
public:
    /// Runs one admitted session; its index counts admitted sessions in accept order from 0.
    /// The stream is open and owned by the host until the handler returns.
    using session_handler = std::function<pacer::awaitable<void>(ws_stream&, const session_start&)>;
    /// Answers a plain HTTP GET (not an upgrade) for `target` (path and query): a JSON body, or
    /// nullopt for "not mine" (the host then answers as it would without the handler).
    using get_handler =
        std::function<pacer::awaitable<std::optional<std::string>>(std::string target)>;

    /// One shard: sessions run on `ctx` alone.
    mock_host(boost::asio::io_context& ctx, host_options options);
    /// Sessions spread over `contexts` (at least one; the first accepts). The contexts must
    /// outlive the host's work on them.
    mock_host(std::span<boost::asio::io_context* const> contexts, host_options options);
    ~mock_host();

    void listen();
    std::uint16_t port() const;
    /// Whether it serves wss:// (a certificate and key were given).
    bool tls() const { return tls_ != nullptr; }
    /// Accepts until `stop()`, running `handler` for every admitted session on its shard, and
    /// a loop monitor on every shard. Each connection is its own coroutine (with its copy of
    /// `handler`): its failure ends only itself. `handler` and `get` (may be empty) must
    /// outlive the returned awaitable.
    pacer::awaitable<void> serve(const session_handler& handler, const get_handler& get = {});
    /// Closes the acceptor and every open session's connection, stops the monitors, records
    /// the CPU and wall time so far of every shard's thread, and ends every `until_stopped()`
    /// wait; on other shards than the caller's this happens on their own threads, soon after.
    /// A stopped mock therefore always returns from `run()`, even for a session whose peer
    /// vanished unseen (an operation started on a socket after its error was reported could
    /// wait forever).
    void stop();
    /// Completes once `stop()` has reached the caller's shard: a session that no longer reads
    /// its socket (and so cannot see its peer leave) waits on this instead.
    pacer::awaitable<void> until_stopped();

    /// Sessions open now (admitted, not yet ended), on every shard.
    std::size_t open_sessions() const { return active_.load(std::memory_order_relaxed); }
    /// Counts a session that ended with `session.closed` answering the client's close.
    void session_completed() { completed_.fetch_add(1, std::memory_order_relaxed); }

    /// How many shards (threads) sessions are spread over.
    std::size_t shard_count() const { return shards_.size(); }
    /// The shard whose context `ex` belongs to (0 when none: a caller outside the host's).
    std::size_t shard_of(const pacer::executor& ex) const;
    /// The executor of shard `i`.
    pacer::executor shard_executor(std::size_t i) const;
    /// Sessions admitted on each shard so far (any thread may read it).
    std::vector<std::size_t> sessions_per_shard() const;

    /// `{sessions_seen, sessions_completed, sessions_rejected, tls, request_header_names,
    /// loop_lag_s{…, over_80ms}, wall_s, thread_cpu_s, thread_cpu_cores}` (the last two once
    /// stopped), plus `threads` and `sessions_per_thread`. `request_header_names` lists, sorted
    /// and lower-cased, the names of the headers the upgrade requests carried (never their
    /// values, which may be secrets). `request_query_names` lists the names of the targets'
    /// query parameters likewise, `request_models` the values of their `model` parameter
    /// (percent-decoded), and `openai_beta` the values of the `OpenAI-Beta` header (a protocol
    /// version, not a secret). With several shards, the loop lags are every shard's ticks
    /// together and the CPU is the shards' threads' sum (`thread_cpu_s_per_thread`).
    boost::json::object stats() const;

private:
    struct shard;
    pacer::awaitable<void> handle(transport::detail::tcp_socket socket, session_handler handler,
                                  get_handler get, shard& where);
    shard& my_shard(const pacer::executor& ex);
    void stop_shard(shard& s);
    void record_query(std::string_view target); // with names_mutex_ held
    bool take_slot();

    host_options options_;
    std::unique_ptr<boost::asio::ssl::context> tls_; // set when serving wss://
    std::vector<std::unique_ptr<shard>> shards_;
    transport::detail::tcp_acceptor acceptor_; // on the first shard
    std::atomic<bool> stopped_{false};
    time_point started_;
    double stopped_wall_s_ = 0; // written by stop(), read by stats() afterwards
    std::atomic<std::size_t> handshakes_{0};
    std::atomic<std::size_t> seen_{0};
    std::atomic<std::size_t> active_{0};
    std::atomic<std::size_t> rejected_{0};
    std::atomic<std::size_t> completed_{0};
    mutable std::mutex names_mutex_;
    std::set<std::string> header_names_; // lower-cased, names only; under names_mutex_
    std::set<std::string> query_names_, models_, openai_beta_; // under names_mutex_
};

/// What a mock adds to its host: how it runs a session, and its stats.
class mock_sessions {
public:
    explicit mock_sessions(std::shared_ptr<mock_host> h) : host(std::move(h)) {}
    virtual ~mock_sessions() = default;
    mock_sessions(const mock_sessions&) = delete;
    mock_sessions& operator=(const mock_sessions&) = delete;

    /// Runs one admitted session (see `mock_host::session_handler`).
    virtual pacer::awaitable<void> run_session(ws_stream& ws, const session_start& start) = 0;
    /// The host's stats plus the mock's own.
    virtual boost::json::object stats() const = 0;
    /// A plain HTTP GET of `target` (see `mock_host::get_handler`); by default none is served.
    virtual pacer::awaitable<std::optional<std::string>> get(std::string target);

    const std::shared_ptr<mock_host> host;
};

/// A mock's sessions on a new host that listens and admits as `options` say, its sessions
/// spread over `contexts` (the first accepts).
template <class Sessions, class Options>
std::shared_ptr<Sessions> make_sessions(std::span<boost::asio::io_context* const> contexts,
                                        Options options) {
    auto host = std::make_shared<mock_host>(contexts, options);
    return std::make_shared<Sessions>(std::move(host), std::move(options));
}

/// The same on one context.
template <class Sessions, class Options>
std::shared_ptr<Sessions> make_sessions(boost::asio::io_context& ctx, Options options) {
    boost::asio::io_context* const one[] = {&ctx};
    return make_sessions<Sessions>(std::span<boost::asio::io_context* const>(one),
                                   std::move(options));
}

} // namespace pacer::server::detail

#pragma once
// The trace writer: the only code that touches trace files. It runs on its own io_context
// thread, fed by the strand-free trace channel, so a session never waits on the disk.
//
// Lines are batched per session and written every `flush_interval` (0.5 s); session ends that
// fall within `end_grouping` (50 ms) of each other are written in one batch. When a session's
// last line and its `input-send-receipts.json` are written, the writer signals that session's
// `done_channel`, with the first write error of that session if there was one. A failed write
// affects only its own session: every other session's files stay intact.

#include <pacer/core/awaitable.hpp>
#include <pacer/core/clock.hpp>
#include <pacer/trace/receipt_spool.hpp>
#include <pacer/trace/record.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace pacer::trace {

/// What a run writes per session (`pacer run --trace`): `full` both files, `receipts` only
/// `input-send-receipts.json` (no `trace.jsonl`), `none` no session file at all: the writer then
/// keeps the receipts in an unnamed spool file (`receipt_spool`, `take_receipts`) for samples.json.
enum class mode : std::uint8_t { full, receipts, none };

/// `full`, `receipts` or `none`; nullopt for anything else.
std::optional<mode> parse_mode(std::string_view text);
std::string_view to_string(mode m);

struct writer_options {
    std::filesystem::path root; ///< holds `session-NNN/` folders; must exist
    mode what = mode::full;     ///< lines arriving when it is not `full` are dropped
    duration flush_interval = std::chrono::milliseconds(500);
    duration end_grouping = std::chrono::milliseconds(50);
    /// Bytes of a trace between two write-behind calls (`write_behind`); 0: none, the kernel's
    /// flusher threads write the traces back when they see fit.
    std::uint64_t write_behind_window = 1024 * 1024;
    /// Opens a new file for writing and returns its descriptor, or -1 with errno set. The
    /// default creates it exclusively (`O_CREAT|O_EXCL`): an existing file is never overwritten.
    std::function<int(const std::filesystem::path&)> open_file;
};

struct writer_stats {
    std::uint64_t lines = 0;
    std::uint64_t bytes = 0;
    std::uint64_t writes = 0; ///< write(2) batches
    std::uint64_t sessions_closed = 0;
    std::uint64_t write_errors = 0; ///< sessions whose files could not be written
    std::uint64_t peak_buffered_bytes = 0;
};

/// Write-behind for one file, the arithmetic only: once `window` bytes were written since the
/// last call it says to start their writeback (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, which
/// does not wait for it) and to drop the window before them from the page cache (written back
/// by then; a trace is not read during the run). So a trace holds at most about two windows of
/// the page cache, and the disk gets whole windows rather than each batch: with 33 kB batches
/// the calls per batch tripled what writing the traces cost the machine (docs/changelog.md,
/// BM_TraceWriteFloor). The first window is `first_window` long, so that the files of sessions
/// started together do not all reach their window's end at once.
class write_behind {
public:
    struct range {
        std::uint64_t offset = 0;
        std::uint64_t length = 0;
        bool operator==(const range&) const = default;
    };
    struct step {
        range start_writeback;
        range drop; ///< empty (length 0) when nothing is to be dropped yet
        bool operator==(const step&) const = default;
    };

    write_behind(std::uint64_t window, std::uint64_t first_window)
        : window_(window), next_(first_window) {}

    /// `length` more bytes were written at the end of the file; what to do now, if anything.
    std::optional<step> wrote(std::uint64_t length);

    /// Does what `s` says to file `fd`. Advice only: errors (a file system that does not
    /// support it) are ignored, and nothing changes then.
    static void apply(int fd, const step& s);

    /// The first window of the n-th file opened: a fraction of `window` spread by the golden
    /// ratio (n·0.618… mod 1), so that files written at the same rate reach their windows' ends
    /// evenly spread over a window's time rather than together (the disk then gets a steady
    /// stream of windows, not 1,024 of them at once). In [1, window].
    static std::uint64_t first_window(std::uint64_t window, std::size_t n);

private:
    std::uint64_t window_;
    std::uint64_t next_;            // the call is due once `written_` reaches it
    std::uint64_t written_ = 0;     // bytes written so far
    std::uint64_t behind_ = 0;      // writeback started for the bytes before this
    std::uint64_t last_window_ = 0; // where the window written back last starts
    std::uint64_t cached_from_ = 0; // bytes before this were dropped from the page cache
};

/// `session-007` for 7: three digits at least, as the reference harness names them.
std::string session_folder_name(std::uint32_t session);

/// The batching and file logic, driven with explicit times (sans-io clock): the coroutine
/// `run_writer` feeds it from the channel, and tests drive it by hand with a manual time.
class writer_core {
public:
    explicit writer_core(writer_options options);
    ~writer_core();
    writer_core(const writer_core&) = delete;
    writer_core& operator=(const writer_core&) = delete;

    /// Creates session `session`'s folder and opens its files now (what `on_record` would do at
    /// its first record, and `flush_due` at its first receipts): a run prepares every session
    /// before its sessions start, so that the writer creates no file while they stream (at
    /// 1,024 sessions, 3,072 file system calls in the first second, while the trace channel
    /// fills behind them). A failure is the session's write error, as it would be later.
    void prepare(std::uint32_t session, time_point now);

    /// Takes one record that arrived at `now`.
    void on_record(time_point now, const record& r);

    /// Writes every batch that is due at `now`; returns how many sessions it flushed.
    std::size_t flush_due(time_point now);

    /// Writes everything still buffered and ends every open session (channel closed).
    void flush_all();

    /// The earliest time a batch becomes due, or `time_point::max()` when nothing is buffered.
    time_point next_due() const;

    const writer_stats& stats() const { return stats_; }

    /// `mode::none`: the receipts of session `session` (the bytes `input-send-receipts.json`
    /// would hold), once that session was finished; empty when there are none. Moves them out.
    std::string take_receipts(std::uint32_t session);

    /// `mode::none`: the spool holding every session's receipts (null in the other modes); it
    /// outlives the core when shared, so that samples.json can take them after the run.
    std::shared_ptr<receipt_spool> kept_receipts() const { return kept_receipts_; }

private:
    struct session_state;
    session_state& state_for(std::uint32_t session, time_point now);
    void write_pending(std::uint32_t id, session_state& s);
    void write_receipts(session_state& s);
    void finish(std::uint32_t id, session_state& s);

    writer_options options_;
    std::map<std::uint32_t, session_state> sessions_;
    std::shared_ptr<receipt_spool> kept_receipts_; // mode::none
    std::uint64_t buffered_ = 0;
    writer_stats stats_;
};

/// What one `drain` took from the channel.
struct drain_result {
    std::size_t taken = 0; ///< records handed to the core (a `shutdown` is not counted)
    bool stopping = false; ///< a `shutdown` record arrived, or the channel was closed
};

/// Hands records waiting in `ch` to `core` until the channel is empty, a `shutdown` arrives, or
/// `budget` records were taken. The budget keeps the writer writing when sessions refill the
/// channel as fast as it is drained: an unbounded drain would then never reach the disk,
/// buffering without limit while every session waits on a full channel.
drain_result drain(channel& ch, writer_core& core, std::size_t budget);

/// Drains the channel every 10 ms (at most `drain_budget` records a pass) until a `shutdown` record
/// (or a closed channel), batching records through `core` and writing batches when they are due.
/// A pass that hits the budget is followed at once by the next, through the executor's queue, so
/// other handlers of the writer's context (the run's signal handler) run while it is behind.
/// Returns once everything received has been written. Cancellation: none; send a `shutdown` record.
pacer::awaitable<void> run_writer(channel& ch, writer_core& core, std::size_t drain_budget = 4096);

} // namespace pacer::trace

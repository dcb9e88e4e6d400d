#pragma once
// Module `console` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns what
// a job command shows the user while and after it runs, for `run`, `serve`, `http` and `record`
// alike: the live progress line (this file) and the writers of a finished folder's report.html
// and tables (end_writers.hpp). It may include core, session; it may not include schedule,
// trace, runtime, protocol, transport, capacity_search, metrics, server, telemetry, report,
// record, sweep, run, http, cli (the build fails if it does).
//
// The live progress line of `pacer run`, `pacer serve` and `pacer http` on stderr (`--progress`):
// on a terminal one line rewritten in place at most 4 times a second, elsewhere (CI logs) a plain
// line every 10 s and a last one when the run ends. It runs on a thread of its own and reads
// only the relaxed atomic totals the sessions bump (session::live_counters): it never runs on a
// session context and never makes one wait.

#include <pacer/session/live_counters.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace pacer::console {

enum class progress_mode {
    off,
    terminal, ///< one line, rewritten in place (`\r` + clear to the end of the line)
    plain,    ///< a line every 10 s and one at the end
};

/// `--progress auto|always|never` given whether stderr is a terminal; nullopt for another word.
std::optional<progress_mode> resolve_progress(std::string_view option, bool stderr_is_terminal);

/// The totals at one instant, as plain numbers.
struct progress_snapshot {
    std::uint64_t started = 0, done = 0, failed = 0;
    std::uint64_t packets_sent = 0, late_packets = 0, errors = 0;
    double loop_lag_max_s = 0;
};

progress_snapshot take_snapshot(const session::live_counters& c);

/// What the line says besides the totals.
struct progress_view {
    double elapsed_s = 0;
    std::optional<double> expected_s; ///< the phase's expected length, for the ETA
    std::string label;                ///< e.g. "level c8 (2 of 4)"; may be empty
    /// When the sessions still waiting for the server after their input give up (their
    /// --timeout), from the phase's start: said once the expected length has passed.
    std::optional<double> deadline_s;
};

/// The line: terminal form ("\r\033[K" + text, no newline; cut to `width` - 1 columns when
/// `width` is known, since a wrapped line could not be rewritten in place) or plain form
/// (text + "\n").
std::string format_progress(const progress_snapshot& s, const progress_view& v, bool terminal,
                            std::size_t width = 0);

/// Whole seconds for a progress line: "7s", "1m05s", "2h03m04s".
std::string short_duration(double s);

/// The periods between two lines.
inline constexpr double terminal_period_s = 0.25;
inline constexpr double plain_period_s = 10;

/// Whether a line is due at `now_s` (seconds since the phase began), the last one having been
/// printed at `last_s` (nullopt: none yet). A terminal gets one at once, then every 0.25 s at
/// most; plain output every 10 s; off, never.
bool progress_due(progress_mode mode, std::optional<double> last_s, double now_s);

/// The progress thread. `begin` starts a phase (a run, or a serve level) and `end` closes it:
/// the terminal line is cleared (so the table that follows starts on a clean line), the plain
/// mode prints its last line. Call from one thread (the command's), never from a session context.
class progress_reporter {
public:
    explicit progress_reporter(progress_mode mode, std::FILE* out = stderr);
    ~progress_reporter();
    progress_reporter(const progress_reporter&) = delete;
    progress_reporter& operator=(const progress_reporter&) = delete;

    /// Whether lines are printed at all (not `progress_mode::off`).
    bool on() const { return mode_ != progress_mode::off; }

    /// The totals the run updates (pass to session::run_options::live).
    session::live_counters& counters() { return counters_; }

    /// Takes each line's totals from `source` instead of counters(), e.g. the pooled totals of
    /// the workers of `--processes` (see live_file.hpp). It runs on the progress thread, once a
    /// line. Call before `begin`.
    void set_source(std::function<progress_snapshot()> source);

    /// Makes each line itself from the phase's view (e.g. `pacer http`'s line): `terminal`
    /// says which form, `width` the terminal's columns (0: unknown). It runs on the progress
    /// thread with the reporter's lock held, once a line. Call before `begin`.
    using line_maker =
        std::function<std::string(const progress_view& view, bool terminal, std::size_t width)>;
    void set_line(line_maker make);

    /// Starts a phase: totals back to zero, elapsed from now. No session may be running.
    /// `deadline_s`: see progress_view.
    void begin(std::string label, std::optional<double> expected_s,
               std::optional<double> deadline_s = std::nullopt);
    /// Ends the phase (see above); nothing is printed until the next `begin`.
    void end();

private:
    void loop();
    void print_locked(double now_s); // with mutex_ held

    progress_mode mode_;
    std::FILE* out_;
    session::live_counters counters_;
    std::function<progress_snapshot()> source_;
    line_maker make_line_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    bool active_ = false;
    std::chrono::steady_clock::time_point phase_start_{};
    std::optional<double> last_printed_s_;
    bool line_shown_ = false; // terminal: a line is on screen
    progress_view view_;
    std::thread thread_;
};

} // namespace pacer::console

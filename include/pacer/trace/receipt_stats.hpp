#pragma once
// What a run keeps of its append receipts: each receipt is folded, as the session produces
// it, into the session's counters (`session_result`) and into its session context's
// histograms, then dropped. Nothing at the end of a run reads the receipts back, so the
// memory of a run does not grow with its length (docs/performance.md, "End of a run").

#include <pacer/core/histogram.hpp>
#include <pacer/trace/receipts.hpp>

#include <cmath>

namespace pacer::trace {

/// The distributions of a set of appends. One per session context, touched only by its thread
/// (no locks); merged once the contexts have stopped.
struct receipt_statistics {
    log_histogram deviation_s; ///< start_s - scheduled_s (|deviation|: `deviation_s.absolute()`)
    log_histogram send_time_s; ///< completed_s - start_s

    void merge(const receipt_statistics& other) {
        deviation_s.merge(other.deviation_s);
        send_time_s.merge(other.send_time_s);
    }
};

/// Folds one append's receipt into its session's counters and (when given) the statistics; an
/// append further than `late_s` from its deadline is late (schedule::late_threshold_s).
///
/// A late append is the server's (`late_appends_after_send_stall`) when it is late because the
/// session was held in a send stall: the previous write ended more than `late_s` after this
/// append's deadline, and that write was itself a stall (longer than `late_s`, the send-stall
/// threshold, also 80 ms) or the previous late append was the server's (the catch-up sends
/// after a stall). Any other late append (the client started it late) is the client's.
inline void fold_receipt(session_result& r, const append_receipt& a, receipt_statistics* statistics,
                         double late_s) {
    const double deviation = a.start_s - a.scheduled_s;
    if (std::abs(deviation) > late_s) {
        ++r.late_appends;
        const bool held =
            r.last_append_completed_s && *r.last_append_completed_s - a.scheduled_s > late_s;
        if (!held)
            r.late_run_from_send_stall = false; // the client started it late by itself
        else if (r.last_append_start_s &&
                 *r.last_append_completed_s - *r.last_append_start_s > late_s)
            r.late_run_from_send_stall = true; // the write before it stalled
        r.late_appends_after_send_stall += r.late_run_from_send_stall;
    } else {
        r.late_run_from_send_stall = false;
    }
    if (!r.first_append_start_s)
        r.first_append_start_s = a.start_s;
    r.last_append_start_s = a.start_s;
    r.last_append_completed_s = a.completed_s;
    if (statistics) {
        statistics->deviation_s.record(deviation);
        statistics->send_time_s.record(a.completed_s - a.start_s);
    }
}

} // namespace pacer::trace

#pragma once
// The table `pacer serve` prints on stdout while it runs: a line per warm-up, then a header and
// a row per run of a level (its verdict, in red on a terminal when the client's timing was not
// valid), with the lines beneath a row that the run has figures for (the realtime protocols'
// latencies, the turns of a conversation, the server's own view, the most frequent error).

#include <pacer/sweep/sweep.hpp>

#include <cstddef>
#include <optional>

namespace pacer::sweep {

/// A sweep_observer that prints the table (and nothing on the progress line: the command adds
/// that in a class of its own, derived from this one).
class table_printer : public sweep_observer {
public:
    /// `color`: the verdict of a run that is not valid in red (stdout is a terminal).
    explicit table_printer(bool color) : color_(color) {}

    void warmup_done(std::size_t index, const level_run& run) override;
    void canary_baseline(std::optional<double> seconds) override;
    void levels_starting() override;
    void run_done(const level_run& run) override;
    void stopped_unreachable() override;

private:
    bool color_;
};

} // namespace pacer::sweep

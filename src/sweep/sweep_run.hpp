#pragma once
// The sweep's insides shared by its sources (private to src/sweep): one run of a level
// (sweep.cpp) and the wait for the server's recovery before a run (recovery_run.cpp).

#include <pacer/sweep/recovery.hpp>
#include <pacer/sweep/sweep.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>

namespace pacer::sweep::detail {

/// One run of `concurrency` sessions into `dir` (new): its sessions judged, its summary.json
/// written (sweep.cpp's run_level).
level_run run_once(const sweep_options& s, sweep_observer& observer,
                   const std::filesystem::path& dir, std::size_t concurrency, std::size_t repeat,
                   bool warmup);

/// Waits `d` unless SIGINT or SIGTERM arrives first (true then).
bool idle(duration d);

/// `--recovery` of a sweep: the canary's baseline, measured once before the first level, and
/// the wait before a run. Canaries run in `out`/recovery/ (baseline/, canary-<n>/), one session
/// streaming the first `canary_input_s` of the first input, alone (no scenario, no SLO, no
/// server stats, no telemetry window), their traces dropped.
class recovery_watch {
public:
    recovery_watch(const sweep_options& s, const std::filesystem::path& out,
                   sweep_observer& observer);

    /// The baseline canary (with `--recovery canary`); returns it (nullopt: no figure).
    std::optional<double> measure_baseline();
    std::optional<double> baseline() const { return baseline_; }
    /// Looks until the server is recovered, or `--recovery-max` (wait_for_recovery).
    recovery_record wait();

private:
    recovery_look look();
    std::optional<double> canary(const std::filesystem::path& dir);

    const sweep_options& s_;
    sweep_options canary_options_;
    std::filesystem::path dir_;
    sweep_observer& observer_;
    std::optional<double> baseline_;
    std::size_t canaries_ = 0;
};

} // namespace pacer::sweep::detail

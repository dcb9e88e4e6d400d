#pragma once
// Module `telemetry` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns what
// the server spent while pacer loaded it: GPUs read through NVML (loaded at run time, no build
// dependency), a server's Prometheus metrics endpoint scraped over HTTP, the sampling threads that
// read both, `telemetry.jsonl`, the energy and power of a time window, the Prometheus text format
// (parsed and written) and the `--metrics-listen` endpoint. It may include core, runtime,
// transport; it may not include schedule, trace, protocol, session, metrics, server, report,
// record, sweep, run, http, cli, console, capacity_search (see docs/telemetry.md).
//
// One reading of one source at one instant, on pacer's clock (CLOCK_MONOTONIC) and the wall
// clock, as `telemetry.jsonl` holds it (one line each).

#include <pacer/core/bad_input.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pacer::telemetry {

/// Telemetry that cannot start: a library that does not load, a GPU index NVML does not have,
/// a URL that is not http://, an address that cannot be bound. The message is one line, for
/// the user: bad input (exit 2).
struct telemetry_error : bad_input {
    using bad_input::bad_input;
};

struct sample {
    double monotonic_s = 0; ///< pacer's clock when the source was read
    double realtime_s = 0;  ///< the wall clock, read with it
    /// Which source: `nvml:<index>` for a local GPU, `server` for `--server-metrics`.
    std::string source;
    /// The energy counter since the driver (or exporter) started, mJ; absent where the GPU or
    /// exporter has none (energy is then integrated from `power_w`).
    std::optional<std::uint64_t> energy_mj;
    std::optional<double> power_w;
    std::optional<double> utilization_pct;        ///< GPU busy time over the driver's period
    std::optional<double> memory_utilization_pct; ///< memory controller busy time
    std::optional<double> memory_used_bytes;
    std::optional<double> memory_total_bytes;
    std::optional<double> sm_clock_mhz;
    std::optional<double> temperature_c;
    /// `--server-metrics`: the GPUs the exporter reports (each DCGM series' `UUID`, else its
    /// `gpu` label, counted once); 0 for NVML's samples (one per GPU) and a failed scrape.
    std::size_t gpus = 0;
    /// `--server-metrics`: every other gauge of the scrape, as `name{labels}` and its value.
    std::vector<std::pair<std::string, double>> gauges;
    std::string error; ///< why the read failed ("" when it did not)
};

/// The sample as one line of `telemetry.jsonl` (JSON, with its '\n'); absent fields are left
/// out, non-finite gauges are null.
std::string to_jsonl(const sample& s);

/// Reads one source (NVML's GPUs, a metrics endpoint). A source is read by one thread at a time.
class sample_source {
public:
    virtual ~sample_source() = default;
    /// Reads the source once, appending a sample for each thing it measures (each stamped with
    /// the clocks when it was read). Never throws for a failed read: the sample says why.
    virtual void read(std::vector<sample>& out) = 0;
    /// What it reads, in words (the summary's `read_from`, --dry-run).
    virtual std::string describe() const = 0;
};

} // namespace pacer::telemetry

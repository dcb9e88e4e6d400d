#pragma once
// The energy, power, utilisation and memory of a time window [t0, t1] on pacer's clock, from
// the samples of each source (docs/telemetry.md gives the formulas):
// - with an energy counter: E = C(t1) − C(t0), C read by linear interpolation between the
//   samples around each edge, the counter made continuous first (a wrap of the 64-bit counter
//   is added back; a reset, where it restarts lower, counts the interval's integrated power,
//   or the new reading when there is no power);
// - without one: the trapezoidal integral of power over [t0, t1], power interpolated at the
//   edges;
// - mean power E / (t1 − t0); peak power, utilisation and memory over the samples inside.

#include <pacer/telemetry/sample.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pacer::telemetry {

/// One source over one window.
struct source_window {
    std::string source;
    std::size_t samples = 0; ///< samples inside [t0, t1]
    std::optional<double> energy_j;
    std::string energy_method; ///< "counter", "power_integration" or "" (none)
    std::optional<double> mean_power_w;
    std::optional<double> peak_power_w;
    std::optional<double> utilization_p50, utilization_max;
    std::optional<double> memory_used_p50, memory_used_max; ///< bytes
    std::optional<double> temperature_max_c;
    std::size_t counter_wraps = 0, counter_resets = 0;
    /// The part of the window the samples span (a window they do not cover is extrapolated
    /// flat from the nearest sample: the figures say so through this).
    double covered_s = 0;
};

/// The figures of one source's samples (time-ordered, one source) over [t0, t1].
source_window summarize_window(std::span<const sample> samples, double t0, double t1);

/// What the energy is divided by; each absent one gives null.
struct window_denominators {
    std::optional<double> input_audio_s;  ///< session-seconds of input sent
    std::optional<double> output_audio_s; ///< seconds of output audio received
    std::optional<double> requests;       ///< successful requests (pacer http)
};

/// The idle baseline: each source's mean power over a window before the load.
struct idle_baseline {
    double start_s = 0, end_s = 0;
    std::vector<std::pair<std::string, double>> power_w; ///< by source
};

/// Measures the baseline from `samples` over [t0, t1].
idle_baseline measure_idle(const std::vector<sample>& samples, double t0, double t1);

/// summary.json's `telemetry` for [t0, t1]: each source's figures, the total over the GPUs
/// (NVML's, or the server's when NVML is not read), the idle baseline's share and the energy per
/// second of input, of output and per request.
boost::json::object window_json(const std::vector<sample>& samples, double t0, double t1,
                                const window_denominators& d, const idle_baseline* idle);

} // namespace pacer::telemetry

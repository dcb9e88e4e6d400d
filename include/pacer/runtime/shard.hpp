#pragma once
// Shards: how one run is split over processes and hosts. A worker takes shard I of N from
// `--shard I/N` or from the launcher's environment (MPI, Slurm, a Kubernetes Indexed Job), and
// its share is fixed arithmetic, so the shards together are exactly the single-host run.

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::runtime {

struct shard {
    std::size_t index = 0;
    std::size_t count = 1;
    std::string source; ///< where it came from: "--shard", "OMPI_COMM_WORLD_RANK", ...
};

/// Parses `I/N` with 0 <= I < N; nullopt otherwise.
std::optional<shard> parse_shard(std::string_view text);

/// The shard from the launcher's environment, in this order: OpenMPI
/// (`OMPI_COMM_WORLD_RANK/SIZE`), PMI (`PMI_RANK/PMI_SIZE`), Slurm (`SLURM_PROCID/
/// SLURM_NTASKS`), Kubernetes Indexed Job (`JOB_COMPLETION_INDEX` with `shards` given by
/// `--shards N`). `getenv` is injectable for tests. Throws bad_input for a
/// malformed or inconsistent environment.
std::optional<shard> shard_from_environment(const std::function<const char*(const char*)>& getenv,
                                            std::optional<std::size_t> shards);

/// The global session indices of a shard out of `total`: I, I+N, I+2N, ... (round-robin, so
/// shard sizes differ by at most one and nothing is lost or duplicated).
std::vector<std::size_t> shard_sessions(const shard& s, std::size_t total);

/// Arrivals I, I+N, ... of one seeded schedule: the shards' arrivals pooled are exactly the
/// single-host schedule.
std::vector<std::chrono::nanoseconds>
shard_arrivals(const shard& s, const std::vector<std::chrono::nanoseconds>& all);

/// Parses `--start-at`: RFC 3339 UTC (`2026-11-30T17:00:00Z`, fractional seconds allowed) or
/// Unix seconds (`1796050800.5`). Returns Unix seconds, nullopt if malformed.
std::optional<double> parse_start_at(std::string_view text);

} // namespace pacer::runtime

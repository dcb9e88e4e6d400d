#pragma once
// `samples.json` read as a stream (strict rules): the file is parsed in pieces and each
// session is handed over as soon as its entry ends, so that no more than one session's
// deviations are in memory, however long the run. The parent of `pacer run --processes` pools
// its workers' files this way (`read_run_part_folded`, metrics/merge.hpp).

#include <pacer/metrics/samples_file.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

namespace pacer::metrics {

/// Reads `file` with `samples_rules::strict`, calling `on_session` with each entry of
/// `sessions` in file order (the same entries `read_samples` returns), and returns the
/// `open_loop` arrivals (nullopt when the file has none). Throws std::runtime_error as
/// `read_samples` does ("cannot read <file>", "<file> is not valid JSON: …", "<file> has no
/// sessions array", "<file> is malformed: …"); `on_session` may have been called before.
std::optional<std::vector<arrival_sample>>
stream_samples(const std::filesystem::path& file,
               const std::function<void(samples_session&&)>& on_session);

} // namespace pacer::metrics

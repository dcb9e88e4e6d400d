#pragma once
// `samples.json` read as a stream: the file is parsed in 64 kB pieces and each session is
// handed over as soon as its entry ends, so that no more than one session's deviations are in
// memory, however long the run. The same reader serves both rules of read_samples
// (metrics/samples_file.hpp): strict for the parent of `pacer run --processes` pooling its
// workers' files (`read_run_part_folded`, metrics/merge.hpp), lenient for `pacer report`
// (report::read_folded_result_folder).

#include <pacer/metrics/samples_file.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

namespace pacer::metrics {

/// Reads `file` as read_samples(file, rules) does, but calls `on_session` with each entry of
/// `sessions` in file order (the entries read_samples returns, handshakes included), and
/// returns the `open_loop` arrivals (nullopt when the file has none, or, lenient, when that
/// section cannot be read). Throws std::runtime_error with read_samples' messages for `rules`.
///
/// When the text is checked: lenient reads the file twice, first checking that it is one
/// complete JSON document, so `on_session` is never called for a file that is then refused
/// (only text that is not JSON is refused, and a report keeps what it was handed). Strict
/// reads it once: it also refuses JSON that breaks its rules, which only shows where it is
/// read, so `on_session` may have been called before it throws and the caller must discard
/// what it was handed (the merge refuses the whole part).
///
/// One difference from read_samples: a key repeated in the same object is read where it
/// comes (within a session the last one wins, as with read_samples; a repeated `sessions`
/// array at the top level is read twice, read_samples keeps the last).
std::optional<std::vector<arrival_sample>>
stream_samples(const std::filesystem::path& file, samples_rules rules,
               const std::function<void(samples_session&&)>& on_session);

} // namespace pacer::metrics

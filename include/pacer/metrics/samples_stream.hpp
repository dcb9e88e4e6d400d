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

/// Reads `file` as read_samples(file, samples_rules::lenient) does, but hands each session
/// entry to `visit` in file order (its `index`, `session_start_s` and `deviation_s`, with
/// lenient's rules: a session that is not an object is skipped, a deviation that is not a
/// number is 0, a `deviation_s` that is not an array is empty; a file that is not an object or
/// has no `sessions` array has no sessions). Handshakes and open-loop arrivals are not read.
/// The file is streamed twice: first checked whole, so `visit` is never called for a file that
/// is not JSON. Throws std::runtime_error with read_samples' lenient messages ("<file> cannot
/// be read", "<file> is not valid JSON: <reason>").
void for_each_samples_session(const std::filesystem::path& file,
                              const std::function<void(samples_session&)>& visit);

} // namespace pacer::metrics

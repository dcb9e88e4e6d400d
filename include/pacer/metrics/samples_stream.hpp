#pragma once
// `samples.json` read one session at a time, for readers that must not hold every packet of a
// run (`pacer report`): the file is streamed in chunks through a SAX parser, so memory holds
// one session's deviations, never the whole file nor its JSON tree.

#include <pacer/metrics/samples_file.hpp>

#include <filesystem>
#include <functional>

namespace pacer::metrics {

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

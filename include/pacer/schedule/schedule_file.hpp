#pragma once
// The canonical text forms of an arrival schedule, and reading a schedule back.
//
// A schedule is printed as CSV or JSON (`pacer schedule --format`), and `--schedule FILE`
// replays a JSON one. Both forms carry the same fingerprint:
//
//   sha256 = SHA-256 of the canonical offsets text, in lowercase hex, where the canonical
//   offsets text is every offset in nanoseconds as a base-10 integer (ASCII digits, no sign,
//   no leading zeros, "0" for zero) followed by one '\n', in schedule order. An empty
//   schedule is the empty text.
//
// The hash covers the offsets only, not the arguments that produced them nor the print
// format, so a CSV and a JSON print of the same schedule show the same hash, and two
// argument sets that give the same offsets share it. Example: offsets {1000, 2500} have
// the canonical text "1000\n2500\n".
//
// `pacer schedule` prints a schedule in one of these forms (`print_schedule`,
// arrival_options.hpp).

#include <pacer/schedule/arrival.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::schedule {

/// A schedule with the arguments that produced it, as written in a schedule.json.
struct schedule_document {
    schedule_spec spec;
    std::vector<std::chrono::nanoseconds> offsets;
    std::string sha256; ///< of `offsets`, see the file comment
};

/// The canonical offsets text (see the file comment). Offsets are never negative.
std::string canonical_offsets_text(std::span<const std::chrono::nanoseconds> offsets);

/// `sha256_hex(canonical_offsets_text(offsets))`.
std::string schedule_sha256(std::span<const std::chrono::nanoseconds> offsets);

/// The CSV form: the header `index,offset_ns`, one `i,offset` line per arrival (i from 0),
/// then `# sha256 <hex>`; every line ends with '\n'.
std::string to_csv(std::span<const std::chrono::nanoseconds> offsets);

/// The JSON form, one field per line in this order: `arrival` (string), `rate`,
/// `burstiness` (shortest round-trip decimal), `seed` (integer), `count` (integer or null),
/// `duration_s` (seconds, or null), `stages` (only in a staged schedule, whose `rate` is then
/// null: the canonical `--stages` text), `offsets_ns` (array of integers, one per line) and
/// `sha256`; ends with '\n'. The same inputs give the same bytes.
std::string to_json(const schedule_spec& spec, std::span<const std::chrono::nanoseconds> offsets);

/// Reads the JSON form back. Checks that it is a JSON object with every field of `to_json`
/// of the right type, that the arguments are valid (`validate`), that the offsets are
/// non-negative and non-decreasing integers, and that `sha256` matches them. Throws
/// `bad_input` whose message starts with `source` (e.g. the file name).
schedule_document parse_schedule_json(std::string_view text,
                                      std::string_view source = "schedule file");

/// Reads and parses a schedule.json (`--schedule FILE`). Throws `bad_input` when
/// the file cannot be read or is not a valid schedule.
schedule_document read_schedule_file(const std::filesystem::path& path);

} // namespace pacer::schedule

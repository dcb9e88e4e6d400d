#pragma once
// The name a user meant: the known name nearest to a mistyped one ("did you mean"), for
// subcommands, options and built-in names alike.

#include <string>
#include <vector>

namespace pacer {

/// Levenshtein distance where swapping two neighbouring letters is one edit (optimal string
/// alignment), so "rnu" is one edit from "run".
std::size_t typo_distance(const std::string& a, const std::string& b);

/// The name of `names` nearest to `typed`, when close enough to be a typo: at most 2 edits,
/// and fewer than half the letters typed; "" otherwise.
std::string nearest_name(const std::vector<std::string>& names, const std::string& typed);

} // namespace pacer

// Layer base: small utilities every layer may use; includes nothing above base.
// Names close to a mistyped one, for "did you mean" suggestions.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadvisor {

// Levenshtein distance: single-character insertions, deletions, substitutions.
size_t edit_distance(std::string_view a, std::string_view b);
// Up to `limit` of `candidates` closest to `name`: those that begin with it
// first, then by edit distance.
std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates, size_t limit = 3);
// `text` cut to at most `max_chars` UTF-8 characters with "..." after, never
// inside a character (an error message echoes what a user typed).
std::string shortened(std::string_view text, size_t max_chars);
// `text` as one line a terminal or a file comment shows as written: a newline
// as \n, other control characters as \xNN, and the bidirectional overrides
// (U+202A-U+202E, U+2066-U+2069) as \uNNNN, so what a user or a file gave
// cannot forge a line or reverse one.
std::string one_line(std::string_view text);

}  // namespace gpuadvisor

// Writing output files safely (docs/reliability.md §Files written).
#pragma once
#include <string>

namespace gpuadvisor {

// Writes `text` to a temporary file beside `path` and renames it over `path`,
// so readers never see a half-written file. Throws InputError naming the path
// if the directory is missing or not writable.
void write_file_atomically(const std::string& path, const std::string& text);

// Reads a whole input file (at most kMaxInputFileBytes); InputError naming the
// path if it is missing, unreadable, a directory or too large.
std::string read_input_file(const std::string& path, const char* what);

// Checks that a file to be streamed (no size limit) exists, is not a
// directory and can be opened; returns the path. InputError otherwise.
std::string checked_input_path(const std::string& path, const char* what);

}  // namespace gpuadvisor
